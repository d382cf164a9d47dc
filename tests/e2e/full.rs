//! Specifies a store that fills up mid-run (a full disk or an S3 quota,
//! simulated by the `SOLVE2048_TEST_STORE_QUOTA` test hook: puts fail once
//! the process has written that many bytes):
//! - the job stops with an error naming the object it could not write and
//!   the cause;
//! - nothing committed is lost: `verify` finds every object sound;
//! - the same command once there is room again finishes with the digest and
//!   the chunks of an undisturbed run.

use std::path::Path;

use crate::cli::{bin, chunk_objects, fails_with, solve_json};
use crate::reference::solved;

const ARGS: [&str; 6] = ["--board", "3", "--target", "256", "--chunk-size", "20000"];

/// Bytes of every file under `dir`.
fn size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                total += e.metadata().unwrap().len();
            }
        }
    }
    total
}

#[test]
fn a_store_that_fills_up_stops_the_job_cleanly_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let clean = solved(&ARGS);
    let store = dir.path().join("full");
    let quota = size(&clean.store) / 2;
    let out = bin()
        .arg("solve")
        .args(ARGS)
        .arg("--store")
        .arg(&store)
        .env("SOLVE2048_TEST_STORE_QUOTA", quota.to_string())
        .output()
        .unwrap();
    fails_with(&out, "No space left on device");
    fails_with(&out, "cannot write ");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".chunk") || stderr.contains(".json") || stderr.contains(".runs"),
        "the object is not named: {stderr}"
    );
    assert!(!store.join("summary.json").exists());
    // What was committed is whole.
    let v = bin()
        .args(["verify", "--json", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert!(report["committed_tasks"].as_u64().unwrap() > 0, "{report}");
    // Room again: the same command finishes the job.
    let resumed = solve_json(&store, &ARGS);
    assert_eq!(resumed["digest"], clean.summary["digest"]);
    assert!(resumed["tasks_skipped"].as_u64().unwrap() > 0);
    let (a, b) = (chunk_objects(&clean.store), chunk_objects(&store));
    assert!(a.len() == b.len() && a.keys().eq(b.keys()));
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs after the resume");
    }
}
