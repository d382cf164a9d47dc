//! Progress on the terminal and peak memory per phase.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Instant;

use solve2048_coordinator::{Phase, Progress};

pub use solve2048_worker::peak_rss_bytes;

/// Start a new peak-memory window (Linux: writing 5 to clear_refs resets VmHWM).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Phase timings and peaks, gathered from progress events.
#[derive(Default)]
struct State {
    phase: Option<Phase>,
    stage: &'static str,
    sum: u32,
    stage_tasks: usize,
    stage_done: usize,
    states: u64,
    phase_states: u64,
    phase_start: Option<Instant>,
    skipped: u64,
    peaks: Vec<(Phase, u64)>,
    last_draw: Option<Instant>,
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
            Progress::PhaseStart(phase) => {
                reset_peak_rss();
                s.phase = Some(*phase);
                s.phase_start = Some(Instant::now());
                s.phase_states = 0;
            }
            Progress::PhaseEnd(phase) => {
                s.peaks.push((*phase, peak_rss_bytes()));
                if self.tty {
                    eprint!("\r\x1b[2K");
                }
            }
            Progress::Stage {
                stage, sum, tasks, ..
            } => {
                s.stage = stage;
                s.sum = *sum;
                s.stage_tasks = *tasks;
                s.stage_done = 0;
            }
            Progress::TaskDone { states, skipped } => {
                s.stage_done += 1;
                s.phase_states += states;
                if matches!(s.stage, "merge") {
                    s.states += states;
                }
                if *skipped {
                    s.skipped += 1;
                }
            }
        }
        if self.tty {
            let now = Instant::now();
            if s.last_draw
                .is_none_or(|t| now.duration_since(t).as_millis() >= 200)
            {
                s.last_draw = Some(now);
                let secs = s
                    .phase_start
                    .map_or(0.0, |t| t.elapsed().as_secs_f64())
                    .max(1e-9);
                let phase = match s.phase {
                    Some(Phase::Enumerate) => "enumerate",
                    Some(Phase::Solve) => "solve",
                    None => "",
                };
                eprint!(
                    "\r\x1b[2K{phase}: layer {} {} {}/{} | {} states found | {:.0} states/s{}",
                    s.sum,
                    s.stage,
                    s.stage_done,
                    s.stage_tasks,
                    s.states,
                    s.phase_states as f64 / secs,
                    if s.skipped > 0 {
                        format!(" | {} tasks already done", s.skipped)
                    } else {
                        String::new()
                    }
                );
                let _ = std::io::stderr().flush();
            }
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
