//! The summary of a finished job (`solve` and `coordinator`): one JSON
//! object, or a readable report.

use solve2048_coordinator::{Phase, Summary};
use solve2048_core::task::JobSpec;
use solve2048_store::RequestCounts;

use std::fmt::Write;

use crate::human::print_out;
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
    let facts = Facts::new(job, location, summary, reporter, threads);
    let text = if json { facts.json() } else { facts.text() };
    print_out(&text);
    Ok(())
}

/// What both forms of the summary are made of, gathered once.
struct Facts<'a> {
    job: &'a JobSpec,
    location: &'a str,
    summary: &'a Summary,
    threads: Option<usize>,
    /// Whether the solve ran its worker in this process.
    embedded: bool,
    enum_peak: u64,
    solve_peak: u64,
    own_peak: u64,
    /// The peak RSS the summary reports: this process's, or its workers'.
    peak: u64,
    req_e: RequestCounts,
    req_s: RequestCounts,
}

impl<'a> Facts<'a> {
    /// Gather the peaks and store requests of a finished job.
    fn new(
        job: &'a JobSpec,
        location: &'a str,
        summary: &'a Summary,
        reporter: &Reporter,
        threads: Option<usize>,
    ) -> Facts<'a> {
        // The embedded solve runs its worker in this process; a coordinator's
        // own memory says nothing of its workers', which they report.
        let embedded = threads.is_some();
        let (enum_peak, solve_peak) = if embedded {
            (reporter.peak(Phase::Enumerate), reporter.peak(Phase::Solve))
        } else {
            (0, 0)
        };
        let own_peak = peak_rss_bytes();
        let peak = if embedded {
            enum_peak.max(solve_peak).max(own_peak)
        } else {
            summary.workers_peak_rss_bytes
        };
        Facts {
            job,
            location,
            summary,
            threads,
            embedded,
            enum_peak,
            solve_peak,
            own_peak,
            peak,
            req_e: summary.store_requests(Phase::Enumerate),
            req_s: summary.store_requests(Phase::Solve),
        }
    }

    /// `b` over the number of states.
    fn per_state(&self, b: u64) -> f64 {
        b as f64 / self.summary.states.max(1) as f64
    }

    /// The summary as one JSON object on a line.
    fn json(&self) -> String {
        let (game, summary) = (self.job.game, self.summary);
        let (req_e, req_s) = (self.req_e, self.req_s);
        let out = serde_json::json!({
            "board": game.shape,
            "rows": game.shape.rows(),
            "columns": game.shape.cols(),
            "target": game.target_tile(),
            "discount": game.discount,
            "four_probability": game.four_probability(),
            "objective": game.objective.name(),
            "states": summary.states,
            "parts": summary.parts,
            "start_value": summary.start_value,
            "digest": summary.digest,
            "enumerate_seconds": summary.enumerate_seconds,
            "solve_seconds": summary.solve_seconds,
            "peak_rss_bytes": self.peak,
            "enumerate_peak_rss_bytes": self.enum_peak,
            "solve_peak_rss_bytes": self.solve_peak,
            "threads": self.threads,
            "chunk_size": self.job.chunk_size,
            "store": self.location,
            "tasks_run": summary.tasks_run,
            "tasks_skipped": summary.tasks_skipped,
            "orphans_removed": summary.orphans_removed,
            "workers_peak_rss_bytes": summary.workers_peak_rss_bytes,
            "coordinator_peak_rss_bytes": self.own_peak,
            "bytes_read": {
                "enumerate": summary.bytes_read(Phase::Enumerate),
                "solve": summary.bytes_read(Phase::Solve),
            },
            "store_requests": {
                "enumerate": req_e,
                "solve": req_s,
                "total": req_e.plus(&req_s),
                "per_state": {
                    "enumerate": self.per_state(req_e.requests.total()),
                    "solve": self.per_state(req_s.requests.total()),
                },
            },
            "stages": summary.stage_kinds(),
        });
        let mut text = String::new();
        let _ = writeln!(text, "{out}");
        text
    }

    /// The summary as a readable report.
    fn text(&self) -> String {
        let mut text = String::new();
        self.solved(&mut text);
        self.timings(&mut text);
        self.reads(&mut text);
        self.tails(&mut text);
        text
    }

    /// The game, its states, parts, layers, value and digest.
    fn solved(&self, text: &mut String) {
        let (game, summary) = (self.job.game, self.summary);
        let _ = writeln!(text, "solved {} in store {}", game.name(), self.location);
        let _ = writeln!(
            text,
            "  states (non-terminal, canonical): {}",
            summary.states
        );
        let _ = writeln!(
            text,
            "  parts: {}  layers: {}",
            summary.parts.len(),
            summary
                .parts
                .iter()
                .map(|p| p.sum)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
        let _ = writeln!(
            text,
            "  value of the game ({}): {:.10}",
            game.value_name(),
            summary.start_value
        );
        let _ = writeln!(text, "  result digest: {}", summary.digest);
    }

    /// Each phase's time, rate and peak RSS (the workers' without an
    /// embedded solve).
    fn timings(&self, text: &mut String) {
        let summary = self.summary;
        let cores = self.threads.unwrap_or(1) as f64;
        let per = if self.threads.is_some() {
            "states/s/core"
        } else {
            "states/s"
        };
        let rate = |secs: f64| summary.states as f64 / secs.max(1e-9) / cores;
        let peak_of = |b: u64| {
            if self.embedded {
                format!("  peak RSS {:.2} GiB", gib(b))
            } else {
                String::new()
            }
        };
        let _ = writeln!(
            text,
            "  enumerate: {:8.2} s  {:>10.0} {per}{}",
            summary.enumerate_seconds,
            rate(summary.enumerate_seconds),
            peak_of(self.enum_peak)
        );
        let _ = writeln!(
            text,
            "  solve:     {:8.2} s  {:>10.0} {per}{}",
            summary.solve_seconds,
            rate(summary.solve_seconds),
            peak_of(self.solve_peak)
        );
        if !self.embedded {
            let _ = writeln!(
                text,
                "  workers' peak RSS: {:.2} GiB (the largest any worker reported)",
                gib(summary.workers_peak_rss_bytes)
            );
        }
    }

    /// Bytes read from the store and requests made of it, by phase.
    fn reads(&self, text: &mut String) {
        let (req_e, req_s) = (self.req_e, self.req_s);
        let (read_e, read_s) = (
            self.summary.bytes_read(Phase::Enumerate),
            self.summary.bytes_read(Phase::Solve),
        );
        let _ = writeln!(text,
            "  read from the store: enumerate {:.1} MiB ({:.2} B/state), solve {:.1} MiB ({:.2} B/state)",
            read_e as f64 / (1 << 20) as f64,
            self.per_state(read_e),
            read_s as f64 / (1 << 20) as f64,
            self.per_state(read_s)
        );
        let _ = writeln!(
            text,
            "  store requests: enumerate {} ({:.4}/state); solve {} ({:.4}/state)",
            req_e.line(),
            self.per_state(req_e.requests.total()),
            req_s.line(),
            self.per_state(req_s.requests.total())
        );
    }

    /// The worst layer's longest task per stage, and what a resume skipped.
    fn tails(&self, text: &mut String) {
        let summary = self.summary;
        let tails: Vec<String> = summary
            .stage_kinds()
            .iter()
            .filter_map(|k| k.worst_tail.as_ref())
            .map(|s| {
                format!(
                    "{} {:.2} s vs median {:.2} s (layer {})",
                    s.stage, s.longest_seconds, s.median_seconds, s.sum
                )
            })
            .collect();
        if !tails.is_empty() {
            let _ = writeln!(
                text,
                "  longest task against the median, worst layer per stage: {}",
                tails.join("; ")
            );
        }
        if summary.tasks_skipped > 0 {
            let _ = writeln!(
                text,
                "  resumed: {} tasks were already committed, {} run now",
                summary.tasks_skipped, summary.tasks_run
            );
        }
    }
}

/// Bytes in GiB.
fn gib(b: u64) -> f64 {
    b as f64 / (1u64 << 30) as f64
}
