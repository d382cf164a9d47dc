//! A worker process: registers with the coordinator, pulls tasks as leases,
//! keeps them alive with heartbeats, runs them with [`Worker`] and reports
//! the outputs.
//!
//! - A coordinator URL that is not `http://HOST:PORT` or `https://...` is
//!   refused at once.
//! - A coordinator that cannot be reached is retried with backoff (it may be
//!   restarting) for up to `give_up_after`; each failure is logged with its
//!   error, at a decreasing rate (after 1 s, 2 s, 4 s, ... then every minute).
//! - A coordinator that no longer knows this worker (it restarted) gets a new
//!   registration; tasks in flight are abandoned, since their leases died
//!   with the old coordinator.
//! - A lease the coordinator says is lost is abandoned at once; a result it
//!   refuses (stale lease) has its outputs deleted when the coordinator says
//!   no record can name them (it issued the lease itself). They were written
//!   under this attempt's own names, so no one else's output is touched. A
//!   lease of a previous coordinator may have been committed just before it
//!   died, so those outputs stay; the job's end sweeps them if unreferenced.
//! - On shutdown (SIGTERM, Ctrl-C) it leases nothing more, lets running
//!   tasks finish for up to `drain`, then hands the remaining leases back. A
//!   worker running no task (waiting for work, or for an unreachable
//!   coordinator) stops at once.
//!
//! Shutdown, the end of a session and a lost lease are cancellation tokens;
//! the leases being run are a task tracker, which a stop drains. Modules:
//! `session` (one registration: heartbeats and slots), `lease` (one lease,
//! run and reported), `runner` (what runs a task), `shared` (what the loops
//! share, and the backoff), `connection` (which failures are retried).

use std::future::Future;
use std::time::Duration;

use solve2048_core::formats::chunk::FORMAT_VERSION;
use solve2048_core::task::JobSpec;
use solve2048_proto as pb;
use solve2048_proto::client::connect;

use solve2048_store::{Access, ChunkCache, Store};

use crate::exec::Worker;

mod config;
mod connection;
mod error;
mod lease;
mod report;
mod runner;
mod session;
mod shared;

pub use config::AgentConfig;
use connection::{plain_to_tls, refused, transient, PLAIN_TO_TLS_AFTER};
pub use error::{AgentError, CallError};
pub use report::AgentReport;
use runner::Runner;
use session::SessionEnd;
use shared::Shared;

/// Run a worker process until the job is over, an unrecoverable error, or
/// `shutdown` resolves (then drain and hand back).
pub async fn run_agent(
    config: AgentConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<AgentReport, AgentError> {
    run_with(config, shutdown, open_worker).await
}

/// [`run_agent`], its tasks run by the runner that `open` makes for the
/// coordinator's store and job.
async fn run_with<R: Runner>(
    config: AgentConfig,
    shutdown: impl Future<Output = ()>,
    open: impl Fn(&AgentConfig, &str, &JobSpec) -> Result<R, AgentError>,
) -> Result<AgentReport, AgentError> {
    let client = connect(&config.coordinator, &config.token, config.tls_ca.as_deref())?;
    let shared = Shared::new(client, config);
    tokio::select! {
        r = work(&shared, open) => r?,
        () = stop(&shared, shutdown) => {}
    }
    Ok(shared.report())
}

/// Registers, and registers again each time the coordinator forgets this
/// worker, until the job is over. The runner is made at the first
/// registration, for the store and job of every later one.
async fn work<R: Runner>(
    shared: &Shared,
    open: impl Fn(&AgentConfig, &str, &JobSpec) -> Result<R, AgentError>,
) -> Result<(), AgentError> {
    let mut joined: Option<(String, JobSpec, R)> = None;
    loop {
        let reg = register(shared).await?;
        let job: JobSpec = serde_json::from_str(&reg.job_json)
            .map_err(|source| AgentError::UnreadableJob { source })?;
        match &joined {
            Some((store, j, _)) if *store != reg.store || *j != job => {
                return Err(AgentError::JobChanged)
            }
            Some(_) => {}
            None => {
                let runner = open(&shared.config, &reg.store, &job)?;
                joined = Some((reg.store.clone(), job.clone(), runner));
            }
        }
        let runner = &joined.as_ref().expect("opened above").2;
        tracing::info!(worker = %reg.worker_id, game = %job.game.name(), store = %reg.store, "registered");
        match session::run(shared, runner, &reg).await? {
            SessionEnd::Done => return Ok(()),
            SessionEnd::Lost => {
                tracing::warn!("the coordinator no longer knows this worker; registering again")
            }
        }
    }
}

/// A worker on the store `store` (or the one `config` holds, with counters
/// of its own) for `job`, with the chunk cache of `config` if it has one.
fn open_worker(config: &AgentConfig, store: &str, job: &JobSpec) -> Result<Worker, AgentError> {
    let mut store = match &config.store {
        Some(shared) => shared.with_own_counters(),
        None => Store::open(store, Access::ReadWrite)?,
    };
    if let Some((dir, bytes)) = &config.cache {
        let cache = ChunkCache::open(dir, *bytes).map_err(|source| AgentError::Cache {
            dir: dir.clone(),
            source,
        })?;
        store = store.with_cache(cache);
    }
    Ok(Worker::new(store, job.clone(), config.task_budget))
}

/// Once `shutdown` resolves: takes no new tasks, lets running ones finish
/// for the drain time, then hands back what still runs and waits a little
/// for the hand-backs to be sent.
async fn stop(shared: &Shared, shutdown: impl Future<Output = ()>) {
    shutdown.await;
    shared.stop.cancel();
    shared.running.close();
    if shared.running.is_empty() {
        tracing::info!("shutting down: no task running");
        return;
    }
    let drain = shared.config.drain;
    tracing::info!(
        ?drain,
        "shutting down: no new tasks; running ones may finish"
    );
    if tokio::time::timeout(drain, shared.running.wait())
        .await
        .is_ok()
    {
        return;
    }
    shared.hand_back.cancel();
    // Hand-backs are one call each; a coordinator that is away does not
    // keep the worker: its leases lapse on their own.
    let _ = tokio::time::timeout(HAND_BACK_FOR, shared.running.wait()).await;
}

/// How long a stopping worker waits for its hand-backs to reach the
/// coordinator.
const HAND_BACK_FOR: Duration = Duration::from_secs(5);

/// Registers with the coordinator, retrying while it is unreachable.
async fn register(shared: &Shared) -> Result<pb::RegisterReply, AgentError> {
    let c = &shared.config;
    let mut attempt = 0;
    // Plain-HTTP calls that reach a server which then drops or garbles the
    // exchange, in a row: what a TLS coordinator does to them.
    let mut garbled = 0;
    loop {
        let req = pb::RegisterRequest {
            protocol_version: pb::PROTOCOL_VERSION,
            format_version: FORMAT_VERSION as u32,
            name: c.name.clone(),
            threads: c.threads,
            slots: c.slots,
            memory_bytes: c.task_budget,
        };
        match shared.client.clone().register(req).await {
            Ok(r) => {
                shared.reachable();
                shared.count(|r| r.registrations += 1);
                return Ok(r.into_inner());
            }
            Err(s)
                if plain_to_tls(c, &s) && {
                    garbled += 1;
                    garbled >= PLAIN_TO_TLS_AFTER
                } =>
            {
                return Err(AgentError::ServesTls {
                    url: c.coordinator.clone(),
                    call: s.into(),
                })
            }
            Err(s) if transient(&s) => shared.backoff(s, &mut attempt).await?,
            Err(s) => return Err(refused(s)),
        }
    }
}

#[cfg(test)]
mod tests;
