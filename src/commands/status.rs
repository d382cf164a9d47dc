//! `solve2048 status`: a job's progress, live from its coordinator or from
//! the store while the coordinator is down.

use std::fmt::Write;
use std::path::PathBuf;

use solve2048_coordinator::client::live_status;
use solve2048_coordinator::lock::unix_ms;
use solve2048_coordinator::scheduler::WorkerHealth;
use solve2048_coordinator::status::{self, JobStatus, Liveness, StoredStatus};
use solve2048_coordinator::Records;

use crate::args::TokenArgs;
use crate::human::eta;
use crate::runtime::{open_existing, read_file, runtime};

/// Arguments of `status`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["coordinator", "store"])))]
pub struct Args {
    /// Ask a running coordinator (live).
    #[arg(long)]
    coordinator: Option<String>,
    /// Read the store (works while the coordinator is down).
    #[arg(long)]
    store: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    /// CA certificate (PEM) to trust for an https:// coordinator.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Show every part, not only those with work left.
    #[arg(long)]
    all: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Show the job's status.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rt = runtime()?;
    if let Some(url) = &args.coordinator {
        let token = args.token.token()?;
        let ca = args.tls_ca.as_deref().map(read_file).transpose()?;
        let doc: JobStatus = rt.block_on(live_status(url, &token, ca.as_deref()))?;
        if args.json {
            println!("{}", serde_json::to_string(&doc)?);
        } else {
            print!("{}", render_status(&doc, args.all));
        }
        return Ok(());
    }
    let location = args.store.as_deref().unwrap_or_default();
    let store = open_existing(location)?;
    let records = Records::new(store);
    let stored: StoredStatus = rt.block_on(status::read_stored(&records))?;
    if args.json {
        println!("{}", serde_json::to_string(&stored)?);
        return Ok(());
    }
    match (&stored.status, &stored.lock) {
        (None, _) => println!("store {location}: no coordinator has written a status yet"),
        (Some(doc), lock) => {
            let age = stored.age_seconds.unwrap_or(0.0);
            let who = match (stored.coordinator, lock) {
                _ if doc.state == status::JobState::Done => {
                    "the job is finished; no coordinator or worker is running".to_string()
                }
                (Liveness::Alive, Some(l)) => {
                    format!("coordinator alive: pid {} on {}, serving {}", l.pid, l.host, l.listen)
                }
                (Liveness::Dead, Some(l)) => format!(
                    "coordinator dead: pid {} on {} was killed or crashed (its lock is {:.0} s old); \
                     rerun the same coordinator command to resume",
                    l.pid,
                    l.host,
                    unix_ms().saturating_sub(l.renewed_unix_ms) as f64 / 1000.0
                ),
                _ if doc.state == status::JobState::Failed => {
                    "the job failed (see below); no coordinator is running".to_string()
                }
                _ => "coordinator stopped cleanly; rerun the same command to resume".to_string(),
            };
            println!("status from the store, written {age:.0} s ago; {who}");
            print!("{}", render_status(doc, args.all));
        }
    }
    Ok(())
}

/// The human form of a status document.
pub fn render_status(doc: &JobStatus, all: bool) -> String {
    let mut out = String::new();
    job_lines(&mut out, doc);
    parts_table(&mut out, doc, all);
    workers_table(&mut out, doc);
    out
}

/// The job, its value once known, its progress and counters, and its store
/// requests.
fn job_lines(out: &mut String, doc: &JobStatus) {
    let state = match (&doc.state, &doc.error) {
        (status::JobState::Failed, Some(e)) => format!("FAILED: {e}"),
        (s, _) => format!("{s:?}").to_lowercase(),
    };
    let _ = writeln!(
        out,
        "job {} in {} (coordinator {}, epoch {}): {state}, phase {:?}",
        doc.game, doc.store, doc.coordinator, doc.epoch, doc.phase
    );
    if let Some(v) = doc.start_value {
        let _ = writeln!(out, "value of the game: {v:.10}");
    }
    let c = &doc.counters;
    let _ = writeln!(
        out,
        "{} | rate {:.0} states/s | {} | ETA {} | tasks run {} skipped {} | failed attempts {} | leases expired {} | results discarded {} | {:.1} MiB read, {:.1} MiB written",
        doc.percent_done
            .map_or("progress unknown yet".into(), |p| format!("{p:.1}% done")),
        doc.states_per_second,
        work_left(doc),
        match doc.state {
            status::JobState::Running => eta(doc.eta_seconds),
            _ => "-".into(),
        },
        c.tasks_run,
        c.tasks_skipped,
        c.attempts_failed,
        c.leases_expired,
        c.results_discarded,
        c.bytes_read as f64 / (1 << 20) as f64,
        c.bytes_written as f64 / (1 << 20) as f64
    );
    let _ = writeln!(out, "store: {}", c.store_requests.line());
}

/// The states of work left, once the forward pass has ended.
fn work_left(doc: &JobStatus) -> String {
    match doc.percent_done {
        // The work known so far is not the job's: no figure.
        None => "work left unknown yet (the job's size is not estimated yet)".to_string(),
        Some(_) => format!(
            "{} states of work left{}",
            doc.states_remaining,
            if doc.progress.estimated && doc.state != status::JobState::Done {
                " (estimated for layers not enumerated yet)"
            } else {
                ""
            }
        ),
    }
}

/// The stage-parts with work left (all of them with `all`), one a row.
fn parts_table(out: &mut String, doc: &JobStatus, all: bool) {
    let _ = writeln!(
        out,
        "\n{:<10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>14} {:>14}",
        "stage",
        "sum",
        "max_tile",
        "pending",
        "leased",
        "done",
        "failed",
        "states_done",
        "states_total"
    );
    let rows: Vec<_> = doc
        .parts
        .iter()
        .filter(|r| all || r.pending + r.leased + r.failed > 0)
        .collect();
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>14} {:>14}",
            r.stage,
            r.sum,
            r.max_tile,
            r.pending,
            r.leased,
            r.done,
            r.failed,
            r.states_done,
            r.states_total
        );
    }
    let hidden = doc.parts.len() - rows.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} finished stage-parts not shown; --all shows them)"
        );
    }
}

/// The workers, one a row.
fn workers_table(out: &mut String, doc: &JobStatus) {
    let _ = writeln!(
        out,
        "\n{:<10} {:<28} {:>7} {:>9} {:>9} {:>5} {:>10} {:>9}  tasks",
        "worker", "name", "threads", "memory", "peak_rss", "alive", "last_seen", "completed"
    );
    let gib = |b: u64| format!("{:.2}G", b as f64 / (1u64 << 30) as f64);
    for w in &doc.workers {
        let _ = writeln!(
            out,
            "{:<10} {:<28} {:>7} {:>9} {:>9} {:>5} {:>9.1}s {:>9}  {}",
            w.id,
            w.name,
            w.threads,
            gib(w.memory_bytes),
            gib(w.peak_rss_bytes),
            match (w.health, w.alive) {
                (WorkerHealth::Lost, _) => "lost",
                (WorkerHealth::Silent, true) => "silent",
                (_, true) => "yes",
                (_, false) => "no",
            },
            w.last_seen_seconds,
            w.completed,
            w.tasks.join(" ")
        );
    }
}
