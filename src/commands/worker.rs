//! `solve2048 worker`: pull tasks from a coordinator and run them until the
//! job is done or the process is told to stop.

use std::path::PathBuf;
use std::time::Duration;

use solve2048_worker::{run_agent, AgentConfig};

use crate::args::{MemoryArgs, TokenArgs};
use crate::human::{eprint_line, print_out};
use crate::runtime::{job_runtime, process_name, read_file, shutdown_signal, start_threads};

/// Arguments of `worker`.
#[derive(clap::Args)]
pub struct Args {
    /// The coordinator: http://HOST:PORT (https:// with TLS).
    #[arg(long)]
    coordinator: String,
    /// Kernel threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Tasks run at once [default: enough to keep 90% of the threads busy
    /// by the plan's model, at least 2 (one computes while another reads or
    /// writes)].
    #[arg(long)]
    slots: Option<u32>,
    /// Local directory for a bounded cache of fetched chunks (useful with a
    /// remote store; a local store is read in place).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Most GiB the cache holds; least recently used chunks go first.
    #[arg(long, default_value_t = 8.0)]
    cache_gib: f64,
    #[command(flatten)]
    memory: MemoryArgs,
    #[command(flatten)]
    token: TokenArgs,
    /// CA certificate (PEM) to trust for an https:// coordinator.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Give up after the coordinator has been unreachable this many seconds.
    #[arg(long, default_value_t = 600)]
    give_up_after: u64,
    /// On SIGTERM, let running tasks finish for this many seconds, then hand
    /// their leases back.
    #[arg(long, default_value_t = 20)]
    drain_seconds: u64,
    /// Print one JSON object with what it did on stdout.
    #[arg(long)]
    json: bool,
}

/// Run a worker process until the job is done or it is told to stop.
pub fn run(args: Args) -> anyhow::Result<()> {
    let threads = start_threads(args.threads)?;
    let slots = args
        .slots
        .unwrap_or_else(|| solve2048_plan::default_slots(threads as u32));
    anyhow::ensure!(slots >= 1, "--slots must be at least 1");
    anyhow::ensure!(
        args.cache_gib.is_finite() && args.cache_gib >= 0.0,
        "--cache-gib must be 0 or more"
    );
    let cache = args
        .cache_dir
        .clone()
        .map(|dir| (dir, (args.cache_gib * (1u64 << 30) as f64) as u64));
    let config = AgentConfig {
        task_budget: args.memory.task_budget()?,
        coordinator: args.coordinator.clone(),
        token: args.token.token()?,
        tls_ca: args.tls_ca.as_deref().map(read_file).transpose()?,
        threads: threads as u32,
        slots,
        cache,
        name: process_name(),
        give_up_after: Duration::from_secs(args.give_up_after),
        drain: Duration::from_secs(args.drain_seconds),
        store: None,
    };
    let rt = job_runtime(threads)?;
    let report = rt.block_on(run_agent(config, shutdown_signal()))?;
    if args.json {
        print_out(&format!("{}\n", serde_json::to_string(&report)?));
    } else {
        eprint_line(&format!(
            "worker done: {} tasks completed, {} failed, {} abandoned, {} handed back",
            report.completed, report.failed, report.abandoned, report.released
        ));
    }
    Ok(())
}
