//! `solve2048 solve`: a whole job on this machine (the embedded coordinator
//! and one in-process worker).

use solve2048_store::{Access, Store};

use crate::args::{JobArgs, LeaseArgs, MemoryArgs};
use crate::embedded::run_embedded;
use crate::progress::Reporter;
use crate::report::print_summary;
use crate::runtime::{job_runtime, start_threads};

/// Arguments of `solve`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    job: JobArgs,
    /// Store: a local directory or s3://BUCKET/PREFIX [default: solve2048-store/<game>].
    #[arg(long)]
    store: Option<String>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    memory: MemoryArgs,
    #[command(flatten)]
    lease: LeaseArgs,
    /// Check every object of the store first, set the damaged ones aside in
    /// quarantine/ (with the reason) and redo the tasks that wrote them.
    #[arg(long)]
    repair: bool,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `solve`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let job = args.job.spec()?;
    let task_budget = args.memory.task_budget()?;
    let threads = start_threads(args.threads)?;
    let location = args
        .store
        .clone()
        .unwrap_or_else(|| format!("solve2048-store/{}", job.game.name()));
    let store = Store::open(&location, Access::ReadWrite)?;
    let reporter = Reporter::new();
    let rt = job_runtime(threads)?;
    let result = rt.block_on(run_embedded(
        &store,
        job.clone(),
        threads,
        task_budget,
        &args.lease,
        args.repair,
        &|p| reporter.event(p),
    ));
    if result.is_err() {
        // Kernels of abandoned tasks may still be running on blocking
        // threads: the process ends without waiting for them (a rerun
        // redoes their tasks).
        rt.shutdown_background();
        reporter.clear_line();
    }
    let summary = result?;
    print_summary(
        &job,
        &location,
        &summary,
        &reporter,
        Some(threads),
        args.json,
    )
}
