//! Specifies: a solve under a memory budget smaller than its largest
//! layer's value table gives the same result digest as an unbounded one (no
//! task holds a whole layer), and a worker whose budget fits no task says so
//! clearly instead of dying.

use crate::cli::{fails_with, solve, solve_json};
use crate::reference::solved;

#[test]
fn a_budget_below_the_largest_layer_gives_the_same_digest() {
    let game = ["--board", "4", "--target", "16", "--discount", "0.99"];
    let unbounded = &solved(&game).summary;
    let mut layers = std::collections::BTreeMap::<u64, u64>::new();
    for p in unbounded["parts"].as_array().unwrap() {
        *layers.entry(p["sum"].as_u64().unwrap()).or_default() += p["states"].as_u64().unwrap();
    }
    let largest = *layers.values().max().unwrap();
    // The value table of the largest layer (16-byte slots, 1.5 a state),
    // two of which every worker held before.
    let table_bytes = 24 * largest;
    let gib = 0.095;
    let memory = (gib * (1u64 << 30) as f64) as u64;
    let budget = memory - solve2048_core::footprint::PROCESS_BYTES;
    assert!(
        budget < table_bytes,
        "the test needs a budget ({budget} B) below the largest table ({table_bytes} B)"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut args = game.to_vec();
    let gib_text = gib.to_string();
    args.extend(["--chunk-size", "50000", "--memory", &gib_text]);
    let bounded = solve_json(&dir.path().join("s"), &args);
    assert_eq!(bounded["digest"], unbounded["digest"]);
    assert_eq!(bounded["states"], unbounded["states"]);
    assert_eq!(bounded["start_value"], unbounded["start_value"]);
    // The process stayed near its budget (allocator and thread slack).
    let peak = bounded["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        peak < memory * 3 / 2,
        "peak RSS {peak} B for --memory {gib}"
    );
    // No solve-phase task read a whole layer: the most a gather or solve
    // task read is far below the largest layer's states and values.
    let stages = bounded["stages"].as_array().unwrap();
    assert!(stages.iter().any(|s| s["stage"] == "gather"), "{bounded}");
    for s in stages {
        if s["phase"] == "solve" {
            let most = s["max_task_bytes_read"].as_u64().unwrap();
            assert!(most < 4 * largest, "{s}");
        }
    }
}

#[test]
fn a_budget_that_fits_no_task_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = solve(
        &dir.path().join("s"),
        &[
            "--board",
            "3",
            "--target",
            "256",
            "--memory",
            "0.0627",
            "--max-attempts",
            "1",
        ],
    );
    fails_with(&out, "but this worker's memory budget is");
    fails_with(&out, "(--memory)");
    let out = solve(
        &dir.path().join("t"),
        &["--board", "2", "--target", "16", "--memory", "0.05"],
    );
    fails_with(&out, "--memory must leave room for the process itself");
    let out = solve(
        &dir.path().join("u"),
        &["--board", "2", "--target", "16", "--memory", "0"],
    );
    fails_with(&out, "--memory 0 must be more than 0 GiB");
}
