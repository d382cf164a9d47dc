//! `solve2048 verify`: read back every object of a store, solved or not,
//! concurrently, and report every damaged or missing one (not only the
//! first); once solved, check the states and result digest against the
//! summary.

use std::time::{Duration, Instant};

use solve2048_store::check::{check_store, CheckProgress, CheckReport};

use crate::args::SolvedStoreArgs;
use crate::human::{bytes, clock, eprint_line, print_out};
use crate::runtime::{open_existing, runtime};

/// Arguments of `verify`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Objects read at once.
    #[arg(long, default_value_t = 16)]
    jobs: usize,
    /// Print one JSON object on stdout (every rejected object listed).
    #[arg(long)]
    json: bool,
}

/// Run `verify`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.jobs >= 1, "--jobs must be at least 1");
    let rt = runtime()?;
    let store = open_existing(&args.store.store)?;
    let meter = Meter::new("verifying");
    let report = rt.block_on(check_store(&store, args.jobs, &|p| meter.show(p)))?;
    meter.finish();
    let rate = report.bytes as f64 / report.seconds.max(1e-9);
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["ok"] = report.rejected.is_empty().into();
        v["store"] = args.store.store.clone().into();
        v["bytes_per_second"] = rate.into();
        if let Some(t) = &report.totals {
            v["chunks"] = t.chunks.into();
            v["states"] = t.states.into();
            v["digest"] = t.digest.clone().into();
            v["layers"] = t.layers.into();
        }
        print_out(&format!("{v}\n"));
    } else if report.rejected.is_empty() {
        print_out(&format!("{}\n", ok_line(&args.store.store, &report, rate)));
    } else {
        for r in &report.rejected {
            eprint_line(&format!("rejected {}: {}", r.object, r.reason));
        }
    }
    anyhow::ensure!(
        report.rejected.is_empty(),
        "{} damaged or missing objects in {}; rerun the job's own command (solve or coordinator, same arguments) with --repair to set them aside in quarantine/ and redo the tasks that wrote them",
        report.rejected.len(),
        args.store.store
    );
    Ok(())
}

/// The one-line verdict on a sound store.
fn ok_line(store: &str, r: &CheckReport, rate: f64) -> String {
    let read = format!(
        "{} objects ({}) read in {:.1} s ({}/s)",
        r.objects,
        bytes(r.bytes),
        r.seconds,
        bytes(rate as u64)
    );
    let game = r.game.as_deref().unwrap_or("job");
    match &r.totals {
        Some(t) => format!(
            "{game} in {store}: OK, {} layers, {} chunks, {} states, digest {} (checksums, order and totals verified); {read}",
            t.layers, t.chunks, t.states, t.digest
        ),
        None => format!(
            "{game} in {store}: not solved yet, {} tasks committed; every object sound; {read}",
            r.committed_tasks
        ),
    }
}

/// Progress of a long read on stderr: redrawn on a terminal, a plain line
/// every minute otherwise.
pub struct Meter {
    what: &'static str,
    tty: bool,
    start: Instant,
    // std Mutex: held only to draw, never across an await.
    last: std::sync::Mutex<Option<Instant>>,
}

impl Meter {
    /// A meter for `what` ("verifying").
    pub fn new(what: &'static str) -> Meter {
        Meter {
            what,
            tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            start: Instant::now(),
            last: std::sync::Mutex::new(None),
        }
    }

    /// Show `p`, at most every 200 ms on a terminal and every minute elsewhere.
    pub fn show(&self, p: CheckProgress) {
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(60)
        };
        let mut last = self.last.lock().unwrap();
        let now = Instant::now();
        if now - last.unwrap_or(self.start) < every {
            return;
        }
        *last = Some(now);
        let secs = (now - self.start).as_secs_f64().max(1e-9);
        let rate = p.bytes as f64 / secs;
        let left = p.bytes_total.saturating_sub(p.bytes) as f64 / rate.max(1.0);
        let line = format!(
            "{}: {}/{} objects, {} of {} ({:.1}%), {}/s, ETA {}",
            self.what,
            p.objects,
            p.objects_total,
            bytes(p.bytes),
            bytes(p.bytes_total),
            100.0 * p.bytes as f64 / p.bytes_total.max(1) as f64,
            bytes(rate as u64),
            clock(left)
        );
        if self.tty {
            use std::io::Write;
            let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
        } else {
            eprint_line(&line);
        }
    }

    /// End the terminal's progress line.
    pub fn finish(&self) {
        if self.tty && self.last.lock().unwrap().is_some() {
            eprint_line("");
        }
    }
}
