//! Numbers and messages for people: durations, byte counts, error chains,
//! and writes to stdout and stderr that never panic.

use std::io::Write;

use crate::advice;

/// Bytes in a GiB.
pub const GIB: f64 = (1u64 << 30) as f64;

/// A duration in seconds, minutes, hours or days (`plan`).
pub fn duration(secs: f64) -> String {
    match secs {
        s if s < 100.0 => format!("{s:.0} s"),
        s if s < 6000.0 => format!("{:.0} min", s / 60.0),
        s if s < 72.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// A short clock-like duration: `42s`, `12m05s`, `3h07m` (`status`).
pub fn clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        6000..=172_799 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86400, (s % 86400) / 3600),
    }
}

/// An ETA: `unknown` when none can be estimated, `<1s` when under a
/// second (never `0s` while work is left), else a [`clock`].
pub fn eta(secs: Option<f64>) -> String {
    match secs {
        None => "unknown".into(),
        Some(s) if s < 1.0 => "<1s".into(),
        Some(s) => clock(s),
    }
}

/// An error and its causes on one line (each error prints its own words
/// and exposes its cause as `source()`, so each cause appears once), each
/// in the command line's words ([`advice::message`]), then what to do about
/// it ([`advice::hint`]).
pub fn error_chain(e: &anyhow::Error) -> String {
    let words = |c: &(dyn std::error::Error + 'static)| advice::message(c).unwrap_or(c.to_string());
    let mut out = e.chain().map(words).collect::<Vec<_>>().join(": ");
    out.extend(e.chain().find_map(advice::hint));
    out
}

/// Write `text` to stdout; a closed or failing stdout is ignored (a service
/// that printed its summary into a closed pipe has still done its job).
pub fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Write one line to stderr; a closed or failing stderr is ignored.
pub fn eprint_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// A byte count in KiB, MiB, GiB or TiB.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b < 1024.0 * 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b if b < GIB => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
        b if b < 1024.0 * GIB => format!("{:.1} GiB", b / GIB),
        b => format!("{:.2} TiB", b / (1024.0 * GIB)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(600.0), "10 min");
        assert_eq!(duration(7200.0), "2.0 h");
        assert_eq!(duration(3.0 * 86400.0), "3.0 days");
        assert_eq!(clock(42.0), "42s");
        assert_eq!(clock(725.0), "12m05s");
        assert_eq!(clock(11220.0), "3h07m");
        assert_eq!(clock(3.0 * 86400.0 + 7200.0), "3d02h");
        assert_eq!(eta(None), "unknown");
        assert_eq!(eta(Some(0.3)), "<1s");
        assert_eq!(eta(Some(725.0)), "12m05s");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}

#[cfg(test)]
mod chain_tests {
    use super::error_chain;

    /// A damaged chunk met by a solve task, as the job reports it: the
    /// worker's error with its causes travels as the failure's text, the
    /// coordinator's errors wrap it; each part is said once.
    #[test]
    fn each_cause_is_printed_once() {
        use solve2048_coordinator::CoordinatorError;
        use solve2048_core::chain::Chain;
        use solve2048_core::formats::chunk::FormatError;
        use solve2048_core::task::{Failure, FailureKind};
        use solve2048_store::StoreError;
        use solve2048_worker::WorkerError;
        let rejected = WorkerError::Store(StoreError::Rejected {
            object: "x.chunk".into(),
            source: FormatError::PayloadChecksum {
                expected: 1,
                found: 2,
            },
        });
        assert_eq!(rejected.kind(), FailureKind::Damaged);
        let fatal = CoordinatorError::TaskFatal {
            task: "solve-x".into(),
            failure: Failure {
                kind: rejected.kind(),
                message: Chain(&rejected).to_string(),
            },
        };
        assert!(fatal.is_damage());
        let damaged = CoordinatorError::StoreDamaged {
            location: "s".into(),
            source: Box::new(fatal),
        };
        let e = anyhow::Error::new(damaged).context("solving 3x3-to-64");
        let line = error_chain(&e);
        assert_eq!(
            line.lines().next().unwrap(),
            "solving 3x3-to-64: store s is damaged: task solve-x cannot succeed: rejected x.chunk: \
             payload checksum mismatch: header 0x0000000000000001, computed 0x0000000000000002 \
             (file damaged)"
        );
        let e = anyhow::Error::new(std::io::Error::other("disk full")).context("writing a.json");
        assert_eq!(error_chain(&e), "writing a.json: disk full");
    }

    /// The libraries' errors name no flags: the chain says them, and what
    /// mends the error follows it.
    #[test]
    fn flags_and_hints_are_the_command_lines() {
        use solve2048_coordinator::CoordinatorError;
        use solve2048_worker::budget::BudgetError;
        let e = anyhow::Error::new(BudgetError::NotPositive { gib: 0.0 });
        assert_eq!(error_chain(&e), "--memory 0 must be more than 0 GiB");
        let damaged = CoordinatorError::StoreDamaged {
            location: "s".into(),
            source: Box::new(CoordinatorError::Unsound {
                count: 1,
                object: "x.chunk".into(),
                reason: "payload checksum mismatch".into(),
            }),
        };
        assert!(!damaged.to_string().contains("--"), "{damaged}");
        let e = anyhow::Error::new(damaged).context("solving 3x3-to-64");
        assert_eq!(
            error_chain(&e),
            "solving 3x3-to-64: store s is damaged: 1 damaged or missing objects, the first \
             x.chunk: payload checksum mismatch\n\
             `solve2048 verify --store s` lists every damaged object; rerun this same command \
             with --repair to set them aside in quarantine/ and redo the tasks that wrote them"
        );
    }
}
