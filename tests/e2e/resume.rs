//! A solve killed with SIGKILL at some instant and rerun finishes with
//! byte-identical objects (one copy of each), skipping the work already
//! committed.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cli::{bin, chunk_objects as objects, solve_json};

fn commits(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("commits")).map_or(0, |r| r.count())
}

fn kill_and_resume(kill_after_commits: usize) {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--board", "3", "--target", "256", "--chunk-size", "20000"];
    let clean = solve_json(&dir.path().join("clean"), &args);
    let store = dir.path().join("killed");
    let mut child = bin()
        .arg("solve")
        .args(args)
        .arg("--store")
        .arg(&store)
        .arg("--json")
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while commits(&store) < kill_after_commits {
        assert!(
            child.try_wait().unwrap().is_none(),
            "finished before it could be killed"
        );
        assert!(t0.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done_before = commits(&store);
    let resumed = solve_json(&store, &args);
    assert_eq!(resumed["digest"], clean["digest"]);
    assert_eq!(resumed["states"], clean["states"]);
    assert!(resumed["tasks_skipped"].as_u64().unwrap() >= done_before as u64 - 1);
    assert_eq!(
        resumed["tasks_run"].as_u64().unwrap() + resumed["tasks_skipped"].as_u64().unwrap(),
        clean["tasks_run"].as_u64().unwrap(),
        "every task ran exactly once across the two runs, except the one in flight"
    );
    let (a, b) = (objects(&dir.path().join("clean")), objects(&store));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs after resume");
    }
}

#[test]
fn killed_during_enumeration_resumes_identically() {
    kill_and_resume(100);
}

#[test]
fn killed_during_solve_resumes_identically() {
    // 3x3 to 256 with these chunks commits ~900 forward tasks first.
    kill_and_resume(1100);
}
