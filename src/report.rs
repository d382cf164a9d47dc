//! The summary of a finished job (`solve` and `coordinator`): one JSON
//! object, or a readable report.

use solve2048_coordinator::{Phase, Summary};
use solve2048_core::task::JobSpec;

use crate::progress::{peak_rss_bytes, Reporter};

/// Print a finished job's summary: one JSON object, or a readable report.
pub fn print_summary(
    job: &JobSpec,
    location: &str,
    summary: &Summary,
    reporter: &Reporter,
    threads: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let game = job.game;
    let (enum_peak, solve_peak) = (reporter.peak(Phase::Enumerate), reporter.peak(Phase::Solve));
    let peak = enum_peak.max(solve_peak).max(peak_rss_bytes());
    if json {
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
            "chunk_size": job.chunk_size,
            "store": location,
            "tasks_run": summary.tasks_run,
            "tasks_skipped": summary.tasks_skipped,
            "orphans_removed": summary.orphans_removed,
        });
        println!("{out}");
    } else {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let cores = threads.unwrap_or(1) as f64;
        let per = if threads.is_some() {
            "states/s/core"
        } else {
            "states/s"
        };
        let rate = |secs: f64| summary.states as f64 / secs.max(1e-9) / cores;
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
            "  enumerate: {:8.2} s  {:>10.0} {per}  peak RSS {:.2} GiB",
            summary.enumerate_seconds,
            rate(summary.enumerate_seconds),
            gib(enum_peak)
        );
        println!(
            "  solve:     {:8.2} s  {:>10.0} {per}  peak RSS {:.2} GiB",
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
