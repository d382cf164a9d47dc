//! Specifies: a solve under a memory budget smaller than its largest
//! layer's value table gives the same result digest as an unbounded one (no
//! task holds a whole layer), a worker whose budget fits no task says so
//! clearly instead of dying, and the store holds no layer's requests during
//! the forward pass and at most two layers' during the backward one.

use std::path::Path;
use std::process::Stdio;

use crate::cli::{bin, fails_with, solve, solve_json};
use crate::reference::solved;

/// The layer folders of `requests/` that hold at least one object.
fn request_layers(store: &Path) -> Vec<String> {
    let Ok(dirs) = std::fs::read_dir(store.join("requests")) else {
        return Vec::new();
    };
    dirs.flatten()
        .filter(|d| std::fs::read_dir(d.path()).is_ok_and(|mut f| f.next().is_some()))
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Whether `runs/` holds any object (any layer).
fn holds_runs(store: &Path) -> bool {
    let Ok(dirs) = std::fs::read_dir(store.join("runs")) else {
        return false;
    };
    dirs.flatten()
        .any(|d| std::fs::read_dir(d.path()).is_ok_and(|mut f| f.next().is_some()))
}

/// Requests are made in the backward pass, just before the gathers that
/// read them (once the layer above has solved and freed its own), and kept
/// until their chunk's solve: the store, watched all through a solve, never
/// holds a request while the forward pass still has runs, nor requests of
/// more than two layers at once (the forward pass once wrote every layer's;
/// asks beside the solve held three).
#[test]
fn requests_live_two_layers_at_a_time() {
    let game = ["--board", "3", "--target", "512"];
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let mut child = bin()
        .arg("solve")
        .arg("--store")
        .arg(&store)
        .args(game)
        .args(["--chunk-size", "20000", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (mut most, mut during_forward, mut looks) = (Vec::new(), Vec::new(), 0);
    while child.try_wait().unwrap().is_none() {
        // Requests first: runs never come back once the forward pass ends,
        // so requests seen before runs were both there at once.
        let layers = request_layers(&store);
        if !layers.is_empty() && holds_runs(&store) {
            during_forward = layers.clone();
        }
        if layers.len() > most.len() {
            most = layers;
        }
        looks += 1;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["digest"], solved(&game).summary["digest"]);
    assert!(looks > 100, "the solve ended before it could be watched");
    assert!(
        during_forward.is_empty(),
        "requests {during_forward:?} while the forward pass had runs"
    );
    assert_eq!(most.len(), 2, "at most, requests of {most:?} at once");
    let stages = summary["stages"].as_array().unwrap();
    let asks: u64 = stages
        .iter()
        .filter(|s| s["stage"] == "ask")
        .map(|s| s["tasks"].as_u64().unwrap())
        .sum();
    let solves: u64 = stages
        .iter()
        .filter(|s| s["stage"] == "solve")
        .map(|s| s["tasks"].as_u64().unwrap())
        .sum();
    assert_eq!(asks, solves, "one ask a chunk");
}

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
    let budget = memory - solve2048_core::task::footprint::PROCESS_BYTES;
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

/// The runs of states (those a merge takes: not an enumerate's runs of
/// afterstates, which an expand spawns) that every seed and expand commit of
/// `store` wrote, as JSON.
fn committed_state_runs(store: &Path) -> Vec<serde_json::Value> {
    fn walk(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
        match v {
            serde_json::Value::Object(o) if o.contains_key("samples") => out.push(v.clone()),
            serde_json::Value::Object(o) => o.values().for_each(|v| walk(v, out)),
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut runs = Vec::new();
    for f in std::fs::read_dir(store.join("commits")).unwrap().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if name.starts_with("seed") || name.starts_with("expand") {
            let text = std::fs::read_to_string(f.path()).unwrap();
            walk(&serde_json::from_str(&text).unwrap(), &mut runs);
        }
    }
    assert!(runs.iter().all(|r| r.get("spawns").is_none()));
    runs
}

/// A group of many chunks is expanded into sorted runs of states, a few
/// chunks each, and merged in key-range pieces; each piece reads of each
/// run only the frames that hold its range (and at most two more): no merge
/// task reads the group's runs whole, however large the group, and the
/// result is the default run's.
#[test]
fn a_group_of_many_chunks_merges_in_bounded_pieces() {
    let game = ["--board", "3", "--target", "64", "--discount", "0.99"];
    let default_store = tempfile::tempdir().unwrap();
    let default = solve_json(&default_store.path().join("s"), &game);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let mut args = game.to_vec();
    args.extend(["--chunk-size", "400"]);
    let small = solve_json(&store, &args);
    assert_eq!(small["digest"], default["digest"]);
    assert_eq!(small["start_value"], default["start_value"]);
    // The largest group, by its chunks.
    let mut chunks = std::collections::BTreeMap::<String, u64>::new();
    for f in std::fs::read_dir(store.join("layers")).unwrap().flatten() {
        let text = std::fs::read_to_string(f.path()).unwrap();
        let layer: serde_json::Value = serde_json::from_str(&text).unwrap();
        for p in layer["record"]["parts"].as_array().unwrap() {
            for c in p["chunks"].as_array().unwrap() {
                *chunks
                    .entry(format!("{} {}", p["part"], c["id"]["group"]))
                    .or_default() += 1;
            }
        }
    }
    let (largest, spans) = chunks.iter().max_by_key(|(_, &n)| n).unwrap();
    assert!(*spans > 10, "the largest group spans {spans} chunks");
    let runs: Vec<_> = committed_state_runs(&store)
        .into_iter()
        .filter(|r| &format!("{} {}", r["part"], r["group"]) == largest)
        .collect();
    let run_bytes: u64 = runs.iter().map(|r| r["len"].as_u64().unwrap()).sum();
    assert!(
        runs.iter()
            .any(|r| r["frames"].as_array().is_some_and(|f| f.len() > 1)),
        "no run of the largest group is framed"
    );
    let merges: Vec<_> = small["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["stage"] == "merge")
        .collect();
    let most = merges
        .iter()
        .map(|s| s["max_task_bytes_read"].as_u64().unwrap())
        .max()
        .unwrap();
    // Its runs, read whole, are what a merge of it read before pieces. Its
    // expand deduplicated each run's keys already (fewer keys than the
    // successor runs of enumerates had), so a piece of 8 chunks of keys reads
    // under half of them.
    assert!(
        most * 2 < run_bytes,
        "a merge read {most} B; the largest group's {} runs hold {run_bytes} B",
        runs.len()
    );
}
