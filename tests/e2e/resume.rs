//! Specifies: a solve killed with SIGKILL in the forward pass or in the
//! backward pass, then rerun, finishes with byte-identical objects (one copy
//! of each), skipping the work already committed. A solve stopped with
//! Ctrl-C (SIGINT) exits within a second with status 130, one line and no
//! worker's complaint, and resumes the same way.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cli::{bin, chunk_objects as objects, commits, solve_json};
use crate::reference::solved;

const ARGS: [&str; 6] = ["--board", "3", "--target", "256", "--chunk-size", "20000"];

/// How a solve is stopped.
#[derive(PartialEq)]
enum Stop {
    /// SIGKILL.
    Kill,
    /// SIGINT, as Ctrl-C sends it.
    CtrlC,
}

/// Stop a solve once `n` tasks of the kind `prefix` are committed, check
/// where it was, resume it, and compare with an uninterrupted solve.
fn kill_and_resume(prefix: &str, n: usize, stop: Stop) {
    let dir = tempfile::tempdir().unwrap();
    let clean = solved(&ARGS);
    let store = dir.path().join("killed");
    let mut child = bin()
        .arg("solve")
        .args(ARGS)
        .arg("--store")
        .arg(&store)
        .arg("--json")
        .stdout(Stdio::null())
        .stderr(if stop == Stop::CtrlC {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while commits(&store, prefix) < n {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be killed"
        );
        assert!(t0.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(5));
    }
    match stop {
        Stop::Kill => {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        Stop::CtrlC => {
            let at = Instant::now();
            // SAFETY: a signal to our own child, not yet reaped.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            let status = child.wait().unwrap();
            let took = at.elapsed();
            assert_eq!(status.code(), Some(130), "{status:?}: {stderr}");
            assert!(took < Duration::from_secs(2), "{took:?} to stop: {stderr}");
            assert_eq!(
                stderr.trim(),
                "interrupted; rerun the same command to resume",
                "one line, no worker complaining of its coordinator"
            );
        }
    }
    let done_before = commits(&store, "");
    let solves_before = commits(&store, "solve-");
    assert!(!store.join("summary.json").exists(), "killed after the end");
    if prefix == "solve-" {
        assert!(solves_before >= n, "the kill landed in the backward pass");
    } else {
        assert_eq!(solves_before, 0, "the kill landed in the forward pass");
    }
    let resumed = solve_json(&store, &ARGS);
    let clean_summary = &clean.summary;
    assert_eq!(resumed["digest"], clean_summary["digest"]);
    assert_eq!(resumed["states"], clean_summary["states"]);
    assert!(resumed["tasks_skipped"].as_u64().unwrap() >= done_before as u64 - 1);
    assert_eq!(
        resumed["tasks_run"].as_u64().unwrap() + resumed["tasks_skipped"].as_u64().unwrap(),
        clean_summary["tasks_run"].as_u64().unwrap(),
        "every task ran exactly once across the two runs, except the one in flight"
    );
    let (a, b) = (objects(&clean.store), objects(&store));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs after resume");
    }
    assert!(!store.join("runs").exists(), "runs are swept at the end");
}

#[test]
fn killed_during_enumeration_resumes_identically() {
    kill_and_resume("enumerate-", 60, Stop::Kill);
}

#[test]
fn killed_during_solve_resumes_identically() {
    kill_and_resume("solve-", 40, Stop::Kill);
}

#[test]
fn ctrl_c_stops_at_once_with_status_130_and_resumes_identically() {
    kill_and_resume("enumerate-", 60, Stop::CtrlC);
}
