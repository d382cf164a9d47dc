//! Command-line arguments and the subcommands behind them.

use anyhow::Context;
use clap::{Parser, Subcommand};
use futures_util::FutureExt;
use solve2048_coordinator::{Executor, Phase, Records};
use solve2048_core::task::{JobSpec, Task, TaskOutput};
use solve2048_core::Game;
use solve2048_worker::{Store, Worker};

use crate::progress::{peak_rss_bytes, Reporter};

/// Provably optimal 2048 policies by exhaustive enumeration and backward induction.
#[derive(Parser)]
#[command(name = "solve2048", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Enumerate every reachable state and solve the game, on this machine.
    Solve(SolveArgs),
}

#[derive(clap::Args)]
struct SolveArgs {
    /// Board side: 2, 3 or 4.
    #[arg(long)]
    board: u32,
    /// Target tile: a power of two (8 to 32768; smaller boards hold less).
    #[arg(long)]
    target: u64,
    /// Discount per move, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    discount: f64,
    /// Store: a local directory [default: solve2048-store/<game>].
    #[arg(long)]
    store: Option<String>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Largest number of states in one chunk.
    #[arg(long, default_value_t = 1 << 20)]
    chunk_size: u64,
    /// zstd level of stored chunks.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Run the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Solve(args) => solve(args),
    }
}

struct InProcess(Worker);

impl Executor for InProcess {
    fn run<'a>(
        &'a self,
        task: &'a Task,
    ) -> futures_util::future::BoxFuture<'a, Result<TaskOutput, String>> {
        async move { self.0.run(task).await.map_err(|e| e.to_string()) }.boxed()
    }
}

fn solve(args: SolveArgs) -> anyhow::Result<()> {
    let game = Game::new(args.board, args.target, args.discount)?;
    anyhow::ensure!(args.chunk_size >= 1, "--chunk-size must be at least 1");
    anyhow::ensure!(
        (1..=22).contains(&args.zstd_level),
        "--zstd-level must be 1 to 22"
    );
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    anyhow::ensure!(threads >= 1, "--threads must be at least 1");
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting threads")?;
    let location = args
        .store
        .unwrap_or_else(|| format!("solve2048-store/{}", game.name()));
    let store = Store::open(&location)?;
    let job = JobSpec {
        game,
        chunk_size: args.chunk_size,
        zstd_level: args.zstd_level,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let reporter = Reporter::new();
    let records = Records::new(store.object_store(), &location);
    let executor = InProcess(Worker::new(store, job));
    let summary = runtime.block_on(solve2048_coordinator::run(
        records,
        job,
        &executor,
        threads.max(2),
        3,
        &|p| reporter.event(p),
    ))?;
    let (enum_peak, solve_peak) = (reporter.peak(Phase::Enumerate), reporter.peak(Phase::Solve));
    let peak = enum_peak.max(solve_peak).max(peak_rss_bytes());
    if args.json {
        let out = serde_json::json!({
            "board": game.n,
            "target": game.target(),
            "discount": game.discount,
            "states": summary.states,
            "parts": summary.parts,
            "start_value": summary.start_value,
            "digest": summary.digest,
            "enumerate_seconds": summary.enumerate_seconds,
            "solve_seconds": summary.solve_seconds,
            "peak_rss_bytes": peak,
            "enumerate_peak_rss_bytes": enum_peak,
            "solve_peak_rss_bytes": solve_peak,
            "threads": threads,
            "chunk_size": args.chunk_size,
            "store": location,
            "tasks_run": summary.tasks_run,
            "tasks_skipped": summary.tasks_skipped,
        });
        println!("{out}");
    } else {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let rate = |secs: f64| summary.states as f64 / secs.max(1e-9) / threads as f64;
        println!("solved {} in store {location}", game.name());
        println!("  states (non-terminal, canonical): {}", summary.states);
        println!(
            "  parts: {}  layers: {}",
            summary.parts.len(),
            summary
                .parts
                .iter()
                .map(|p| p.sum)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
        println!(
            "  value of the game (win probability): {:.10}",
            summary.start_value
        );
        println!("  result digest: {}", summary.digest);
        println!(
            "  enumerate: {:8.2} s  {:>10.0} states/s/core  peak RSS {:.2} GiB",
            summary.enumerate_seconds,
            rate(summary.enumerate_seconds),
            gib(enum_peak)
        );
        println!(
            "  solve:     {:8.2} s  {:>10.0} states/s/core  peak RSS {:.2} GiB",
            summary.solve_seconds,
            rate(summary.solve_seconds),
            gib(solve_peak)
        );
        if summary.tasks_skipped > 0 {
            println!(
                "  resumed: {} tasks were already committed, {} run now",
                summary.tasks_skipped, summary.tasks_run
            );
        }
    }
    Ok(())
}
