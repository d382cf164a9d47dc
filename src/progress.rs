//! Progress on stderr and peak memory per phase: on a terminal a line
//! redrawn in place; elsewhere (a file, `nohup`, a pod's log) a plain line
//! every minute. Both give the whole job's percentage and ETA once its size
//! is known or estimated.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use solve2048_coordinator::scheduler::OverallProgress;
use solve2048_coordinator::{Phase, Progress};
use solve2048_core::task::StageKind;

use crate::human::{eprint_line, eta};

pub use solve2048_worker::peak_rss_bytes;

/// Start a new peak-memory window (Linux: writing 5 to clear_refs resets VmHWM).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Phase timings and peaks, gathered from progress events.
#[derive(Default)]
struct State {
    phase: Option<Phase>,
    stage: Option<StageKind>,
    sum: u32,
    stage_tasks: usize,
    stage_done: usize,
    states: u64,
    phase_states: u64,
    phase_start: Option<Instant>,
    skipped: u64,
    peaks: Vec<(Phase, u64)>,
    last_draw: Option<Instant>,
    first_event: Option<Instant>,
    overall: OverallProgress,
    /// (time, states done, work done) when this process started counting,
    /// for the rates.
    since: Option<(Instant, u64, f64)>,
}

/// Renders progress to stderr when it is a terminal; records per-phase peaks.
pub struct Reporter {
    tty: bool,
    state: Mutex<State>,
}

impl Reporter {
    /// A reporter that draws only when stderr is a terminal.
    pub fn new() -> Reporter {
        Reporter {
            tty: std::io::stderr().is_terminal(),
            state: Mutex::new(State::default()),
        }
    }

    /// Handle one event.
    pub fn event(&self, p: &Progress) {
        let mut s = self.state.lock().unwrap();
        match p {
            Progress::Serving => return,
            Progress::PhaseStart(phase) => {
                reset_peak_rss();
                s.phase = Some(*phase);
                s.phase_start = Some(Instant::now());
                s.phase_states = 0;
            }
            Progress::PhaseEnd(phase) => {
                s.peaks.push((*phase, peak_rss_bytes()));
                if self.tty {
                    let _ = write!(std::io::stderr(), "\r\x1b[2K");
                }
            }
            Progress::Stage {
                stage, sum, tasks, ..
            } => {
                s.stage = Some(*stage);
                s.sum = *sum;
                s.stage_tasks = *tasks;
                s.stage_done = 0;
            }
            Progress::TaskDone {
                states,
                skipped,
                overall,
            } => {
                let before = (s.overall.done, s.overall.work_done);
                s.overall = *overall;
                if !*skipped && s.since.is_none() {
                    // The rate counts work done here, not work found done.
                    s.since = Some((Instant::now(), before.0, before.1));
                }
                s.stage_done += 1;
                s.phase_states += states;
                if matches!(s.stage, Some(StageKind::Expand | StageKind::Merge)) {
                    s.states += states;
                }
                if *skipped {
                    s.skipped += 1;
                }
            }
        }
        let now = Instant::now();
        let every = if self.tty {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(60)
        };
        let start = *s.first_event.get_or_insert(now);
        let due = match s.last_draw {
            Some(t) => now.duration_since(t) >= every,
            None => now.duration_since(start) >= every || self.tty,
        };
        if !due || matches!(p, Progress::PhaseEnd(_)) {
            return;
        }
        s.last_draw = Some(now);
        let line = render(&s, now);
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprint_line(&line);
        }
    }

    /// Erase the progress line (on a terminal), before a last message.
    pub fn clear_line(&self) {
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }

    /// Peak RSS of a finished phase.
    pub fn peak(&self, phase: Phase) -> u64 {
        let s = self.state.lock().unwrap();
        s.peaks
            .iter()
            .find(|(p, _)| *p == phase)
            .map_or(0, |(_, b)| *b)
    }
}

/// One progress line: the whole job's percentage and ETA (when its size is
/// known or estimated), the phase, layer and stage, and the rate.
fn render(s: &State, now: Instant) -> String {
    let phase = match s.phase {
        Some(Phase::Enumerate) => "enumerate",
        Some(Phase::Solve) => "solve",
        None => "starting",
    };
    let o = s.overall;
    let seconds = |t: Instant| now.duration_since(t).as_secs_f64().max(1e-3);
    let (rate, work_rate) = s.since.map_or((0.0, 0.0), |(t, d, w)| {
        (
            o.done.saturating_sub(d) as f64 / seconds(t),
            (o.work_done - w).max(0.0) / seconds(t),
        )
    });
    let whole = match o.percent {
        Some(p) => format!(
            "{p:.1}% of the job{} | ETA {} | ",
            if o.estimated { " (size estimated)" } else { "" },
            eta(o.eta_seconds(work_rate))
        ),
        // Larger 3x3 games: the size is known once the forward pass ends.
        None => "ETA unknown yet (the job's size is not estimated yet) | ".to_string(),
    };
    format!(
        "{whole}{phase}: layer {} {} {}/{} | {} states found | {:.0} states/s{}",
        s.sum,
        s.stage.map_or("", StageKind::as_str),
        s.stage_done,
        s.stage_tasks,
        s.states,
        rate,
        if s.skipped > 0 {
            format!(" | {} tasks already done", s.skipped)
        } else {
            String::new()
        }
    )
}
