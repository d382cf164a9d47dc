//! The embedded run behind `solve`: the same coordinator as `solve2048
//! coordinator`, serving one in-process worker on a loopback port with a
//! random token.

use std::io::Read;
use std::time::Duration;

use anyhow::Context;
use solve2048_coordinator::{serve_job, Progress, Records, ServerConfig, Summary};
use solve2048_core::task::JobSpec;
use solve2048_store::Store;
use solve2048_worker::{run_agent, AgentConfig};

use crate::args::LeaseArgs;
use crate::runtime::{process_name, shutdown_signal};

/// A random token for the embedded run (never leaves the process).
fn random_token() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    let salt = std::process::id() as u128
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
    format!("{:032x}", u128::from_le_bytes(bytes) ^ salt)
}

/// Run the job with one in-process worker of `threads` kernel threads whose
/// tasks may hold `task_budget` bytes: the coordinator serves on a loopback port
/// with a random token.
pub async fn run_embedded(
    store: &Store,
    job: JobSpec,
    threads: usize,
    task_budget: u64,
    lease: &LeaseArgs,
    repair: bool,
    progress: &(dyn Fn(&Progress) + Sync),
) -> anyhow::Result<Summary> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding a loopback port for the in-process worker")?;
    let url = format!("http://{}", listener.local_addr()?);
    let token = random_token();
    let config = ServerConfig {
        job,
        store: store.shared_location(),
        lease: lease.config()?,
        max_attempts: lease.max_attempts,
        token: token.clone(),
        tls: None,
        take_over: false,
        repair,
        status_every: Duration::from_secs(5),
    };
    let records = Records::new(store.clone());
    let agent = agent_config(store, url, token, threads, task_budget);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // Ctrl-C or SIGTERM: the in-process worker stops first (it hands its
    // leases back and abandons its running tasks, whose uncommitted outputs
    // a rerun redoes), so that it never sees its coordinator vanish; then
    // the coordinator stops.
    let (interrupt_tx, mut interrupt_rx) = tokio::sync::watch::channel(false);
    let signals = tokio::spawn(async move {
        shutdown_signal().await;
        let _ = interrupt_tx.send(true);
    });
    let mut worker_interrupt = interrupt_rx.clone();
    let (worker_done_tx, worker_done_rx) = tokio::sync::oneshot::channel::<()>();
    // The worker starts once the coordinator serves the job (its first
    // progress event): a job refused as it opens (a store of another game,
    // a lock held) then prints its refusal alone, with no worker retrying.
    let (start_tx, start_rx) = tokio::sync::oneshot::channel::<()>();
    let start_tx = std::sync::Mutex::new(Some(start_tx));
    let started = move |p: &Progress| {
        if let Some(tx) = start_tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(());
        }
        progress(p)
    };
    let worker = tokio::spawn(async move {
        if start_rx.await.is_ok() {
            let _ = run_agent(agent, async {
                tokio::select! {
                    _ = stop_rx => {}
                    _ = worker_interrupt.wait_for(|&i| i) => {}
                }
            })
            .await;
        }
        let _ = worker_done_tx.send(());
    });
    let shutdown = async move {
        let _ = interrupt_rx.wait_for(|&i| i).await;
        // The worker's hand-backs are local calls: a moment is plenty.
        let _ = tokio::time::timeout(WORKER_STOPS_WITHIN, worker_done_rx).await;
    };
    let result = serve_job(records, listener, None, config, &started, shutdown).await;
    drop(started);
    signals.abort();
    let _ = stop_tx.send(());
    // The worker exits on its own once told the job is over; after an error
    // or interruption it is simply stopped with the process.
    if result.is_ok() {
        let _ = tokio::time::timeout(Duration::from_secs(10), worker).await;
    }
    Ok(result?)
}

/// The in-process worker's settings: `threads` kernel threads, tasks of
/// `task_budget` bytes, the coordinator at `url` with `token`, and the
/// coordinator's `store`, shared.
fn agent_config(
    store: &Store,
    url: String,
    token: String,
    threads: usize,
    task_budget: u64,
) -> AgentConfig {
    AgentConfig {
        task_budget,
        coordinator: url,
        token,
        tls_ca: None,
        threads: threads as u32,
        slots: solve2048_plan::default_slots(threads as u32),
        cache: None,
        name: process_name(),
        give_up_after: Duration::from_secs(30),
        drain: Duration::ZERO,
        store: Some(store.clone()),
    }
}

/// How long an interrupted run waits for its in-process worker to stop
/// before the coordinator stops anyway.
const WORKER_STOPS_WITHIN: Duration = Duration::from_millis(500);
