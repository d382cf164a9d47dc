//! `solve2048 plan`: the resource plan of a job, estimated for 4x4 to 64 and
//! exact from a solved store.

use std::collections::BTreeMap;

use crate::cli::bin;
use crate::reference::solved;

fn plan(args: &[&str]) -> std::process::Output {
    bin().arg("plan").args(args).output().unwrap()
}

pub(crate) fn plan_json(args: &[&str]) -> serde_json::Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = plan(&args);
    assert!(
        out.status.success(),
        "plan {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("exactly one JSON object on stdout")
}

/// 4x4 to 64 fits 16 GiB workers: a worker's memory follows its largest
/// task, not the layers; a worker too small for its slots is told what it
/// needs.
#[test]
fn plan_sizes_4x4_to_64_workers_by_their_tasks() {
    let p = plan_json(&["--board", "4", "--target", "64", "--worker-memory", "16"]);
    for key in [
        "game",
        "states",
        "exact_states",
        "extrapolated",
        "parts",
        "layers",
        "largest_part",
        "memory",
        "fits",
        "store",
        "store_peak_bytes",
        "store_final_bytes",
        "duration",
        "duration_range",
        "cost",
        "chunk_size_hint",
        "options",
        "recommended",
        "recommendation_rule",
        "states_range",
        "infeasible",
        "notes",
        "cluster",
    ] {
        assert!(p.get(key).is_some(), "no {key} in {p}");
    }
    assert_eq!(p["game"], "4x4-to-64");
    assert_eq!(p["fits"], true, "{}", p["memory"]);
    assert_eq!(p["extrapolated"], false);
    let m = &p["memory"];
    let minimum = m["minimum_bytes"].as_u64().unwrap();
    assert!(minimum < 16 << 30, "{m}");
    let kinds: Vec<&str> = m["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["enumerate", "expand", "merge", "ask", "gather", "solve"]
    );
    // Layers are labelled; the max-tile-16 parts are exact, the rest estimated.
    let layers = p["layers"].as_array().unwrap();
    assert_eq!(layers[0]["source"], "exact");
    assert!(layers.iter().any(|l| l["source"] == "estimated"));
    // The store size comes from measured bytes a state: its values nearly
    // all exact (assumed from 4x4 to 32), under a byte a state, the peak in
    // the backward pass with its transients.
    let store = p["store_final_bytes"].as_u64().unwrap();
    let peak = p["store_peak_bytes"].as_u64().unwrap();
    let states = p["states"].as_u64().unwrap();
    assert!(store > states / 4 && store < states, "{}", p["store"]);
    assert!(peak > store && peak < 2 * store, "{}", p["store"]);
    assert_eq!(p["store"]["total_bytes"], p["store_final_bytes"]);
    assert_eq!(p["store"]["peak"]["phase"], "solve", "{}", p["store"]);
    assert_eq!(p["store"]["exact_value_share_measured"], false);
    assert!(p["recommended"].is_u64() && p["infeasible"].is_null());
    // A duration range, a machine cost at list prices, and the asked shape
    // in the table beside the offered ones.
    let d = &p["duration_range"];
    assert!(
        d["low"].as_f64().unwrap() < d["high"].as_f64().unwrap(),
        "{d}"
    );
    let machines = p["cost"]["machines_usd"]["low"].as_f64().unwrap();
    assert!(machines > 0.1 && machines < 100.0, "{}", p["cost"]);
    assert_eq!(p["cost"]["prices"]["core_hour_usd"], 0.0504);
    let p = plan_json(&[
        "--board",
        "4",
        "--target",
        "64",
        "--workers",
        "5",
        "--price-per-core-hour",
        "1",
    ]);
    let asked: Vec<u64> = p["options"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["asked"] == true)
        .map(|o| o["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(asked, [5]);
    assert_eq!(p["cost"]["prices"]["core_hour_usd"], 1.0);
    let out = plan(&["--board", "4", "--target", "64", "--price-per-core-hour=-1"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--price-per-core-hour -1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A worker of less than its slots need is told what it needs.
    let out = plan(&["--board", "4", "--target", "64", "--worker-memory", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("DOES NOT FIT"), "{text}");
    assert!(
        text.contains("warning: a 1 GiB worker is too small for 15 slots"),
        "{text}"
    );
    assert!(text.contains("<- recommended"), "{text}");
    assert!(
        text.contains("estimated: 4x4 max tile 32 modelled on its published total"),
        "{text}"
    );
}

/// 4x4 to 128 is planned, within 64 GiB workers, and says its counts are
/// extrapolated and by how much they may be off; a game no cluster could
/// solve gets a clear statement instead of a recommendation.
#[test]
fn plan_labels_extrapolation_and_refuses_to_recommend_the_impossible() {
    let p = plan_json(&["--board", "4", "--target", "128", "--worker-memory", "64"]);
    assert_eq!(p["extrapolated"], true);
    assert_eq!(p["fits"], true, "{}", p["memory"]);
    let notes: Vec<&str> = p["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("extrapolated:") && n.contains("max tile 64: ")),
        "{notes:?}"
    );
    // Its states and duration as ranges, and, at the default chunk size,
    // requests that cost more than the machines: a larger chunk is hinted.
    let s = &p["states_range"];
    let states = p["states"].as_f64().unwrap();
    assert!(s["low"].as_f64().unwrap() < states && states < s["high"].as_f64().unwrap());
    let hint = &p["chunk_size_hint"];
    assert!(hint["chunk_size"].as_u64().unwrap() > 4 << 20, "{hint}");
    // Its values never measured, its store is a range, each end saying
    // what it assumes; the low end is the store's figures, and the cost
    // of keeping the store spans both.
    let r = &p["store"]["range"];
    let at = |k: &str| r[k].as_u64().unwrap();
    assert_eq!(
        at("final_low_bytes"),
        p["store_final_bytes"].as_u64().unwrap()
    );
    assert_eq!(
        at("peak_low_bytes"),
        p["store_peak_bytes"].as_u64().unwrap()
    );
    assert!(at("final_high_bytes") > 2 * at("final_low_bytes"), "{r}");
    assert!(at("peak_high_bytes") >= at("final_high_bytes"), "{r}");
    for end in ["low", "high"] {
        assert!(
            r[end]["assumes"]
                .as_str()
                .unwrap()
                .contains("exactly 0 or 1"),
            "{r}"
        );
    }
    let keep = &p["cost"]["keep_usd_a_month"];
    assert!(
        keep["high"].as_f64().unwrap() > keep["low"].as_f64().unwrap(),
        "{keep}"
    );
    let text = String::from_utf8(plan(&["--board", "4", "--target", "128"]).stdout).unwrap();
    assert!(text.contains("store, range: final "), "{text}");
    assert!(
        text.contains("extrapolated beyond every published figure"),
        "{text}"
    );
    assert!(text.contains("hint: the store requests cost more than the machines; --chunk-size "));
    let p = plan_json(&["--board", "4", "--target", "2048"]);
    assert!(p["recommended"].is_null(), "{}", p["recommended"]);
    // Its time, its largest task's memory, its store or its requests' bill.
    let why = p["infeasible"].as_str().unwrap();
    assert!(
        ["days", "TiB", "PiB", "store requests would cost"]
            .iter()
            .any(|w| why.contains(w)),
        "{why}"
    );
    let text = String::from_utf8(plan(&["--board", "4", "--target", "2048"]).stdout).unwrap();
    assert!(text.contains("NOT FEASIBLE"), "{text}");
    assert!(!text.contains("<- recommended"), "{text}");
}

/// `plan`'s store peak and final are within 25% of those measured on the
/// games this machine solves (`tests/data/store-calibration.csv`, rerun by
/// `scripts/store-calibrate.sh`), and the readable plan says when the peak
/// comes.
#[test]
fn plan_store_peak_and_final_match_the_measured_runs() {
    let csv = include_str!("../data/store-calibration.csv");
    let mut games = 0;
    for line in csv.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (board, target, objective) = (f[0], f[1], f[7]);
        let number = |i: usize| f[i].parse::<u64>().unwrap();
        let p = plan_json(&[
            "--board",
            board,
            "--target",
            target,
            "--objective",
            objective,
        ]);
        assert_eq!(
            p["states"].as_u64(),
            Some(number(2)),
            "{board}x{board} to {target}"
        );
        for (key, measured) in [
            ("store_peak_bytes", number(3)),
            ("store_final_bytes", number(4)),
        ] {
            let planned = p[key].as_u64().unwrap();
            let ratio = planned as f64 / measured as f64;
            assert!(
                (0.75..=1.25).contains(&ratio),
                "{board}x{board} to {target} ({objective}): {key} {planned} vs {measured} measured \
                 ({ratio:.3})"
            );
        }
        games += 1;
    }
    assert_eq!(games, 4);
    let text = String::from_utf8(plan(&["--board", "4", "--target", "32"]).stdout).unwrap();
    assert!(
        text.contains("store, peak: ")
            && text.contains("after the merge of layer 112 (forward pass)"),
        "{text}"
    );
    assert!(
        text.contains("99.98% of values exactly 0 or 1, measured"),
        "{text}"
    );
}

#[test]
fn plan_from_a_solved_store_is_exact() {
    let reference = solved(&["--board", "3", "--target", "64"]);
    let (store, solved) = (&reference.store, &reference.summary);
    let mut want: BTreeMap<u64, u64> = BTreeMap::new();
    for part in solved["parts"].as_array().unwrap() {
        *want.entry(part["sum"].as_u64().unwrap()).or_default() += part["states"].as_u64().unwrap();
    }
    let p = plan_json(&[
        "--board",
        "3",
        "--target",
        "64",
        "--store",
        store.to_str().unwrap(),
    ]);
    let layers = p["layers"].as_array().unwrap();
    assert!(layers.iter().all(|l| l["source"] == "exact"), "{p}");
    let got: BTreeMap<u64, u64> = layers
        .iter()
        .map(|l| (l["sum"].as_u64().unwrap(), l["states"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(p["states"], solved["states"]);
    let read = format!("exact: {} layers read from the store", want.len());
    assert!(
        p["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.starts_with(&read))),
        "{p}"
    );
    // Another game's store is refused.
    let out = plan(&[
        "--board",
        "3",
        "--target",
        "128",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds a different job"), "{err}");
}

#[test]
fn plan_refuses_bad_input() {
    for (args, says) in [
        (
            vec!["--board", "5", "--target", "64"],
            "board \"5\" is not supported",
        ),
        (
            vec!["--board", "4", "--target", "100"],
            "not a power of two",
        ),
        (vec!["--board", "3", "--target", "65536"], "out of range"),
        (
            vec!["--board", "4", "--target", "64", "--workers", "0"],
            "--workers",
        ),
        (
            vec!["--board", "4", "--target", "64", "--worker-memory", "0"],
            "--worker-memory",
        ),
        (
            vec!["--board", "4", "--target", "64", "--worker-memory=-2"],
            "--worker-memory",
        ),
        (
            vec![
                "--board",
                "4",
                "--target",
                "64",
                "--threads-per-worker",
                "0",
            ],
            "--threads-per-worker",
        ),
        (
            vec![
                "--board",
                "4",
                "--target",
                "64",
                "--store",
                "/nonexistent/s",
            ],
            "does not exist",
        ),
    ] {
        let out = plan(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// The store requests `plan` gives a game are the ones a run of it makes:
/// 3x3 to 512 solved on a local store (its hundreds of chunks counted by
/// the job) against `plan --json`'s `store_requests`, per pass, within 5%.
#[test]
fn plan_counts_the_store_requests_a_run_makes() {
    let args = ["--board", "3", "--target", "512"];
    let run = &solved(&args).summary["store_requests"];
    let p = plan_json(&args);
    let planned = &p["store_requests"];
    for (pass, ran) in [("enumerate", "enumerate"), ("solve", "solve")] {
        let made: u64 = run[ran]["requests"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        let plan = planned[pass]["total"].as_u64().unwrap();
        let ratio = plan as f64 / made as f64;
        assert!(made > 1000, "{run}");
        assert!(
            (0.95..=1.05).contains(&ratio),
            "{pass}: plan {plan} requests, the run made {made}"
        );
    }
}

/// The object bytes under the top folders of a local store (files removed
/// while it is read are skipped).
fn object_bytes(store: &std::path::Path) -> u64 {
    fn walk(dir: &std::path::Path) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path()),
                Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
                _ => 0,
            })
            .sum()
    }
    let Ok(entries) = std::fs::read_dir(store) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| walk(&e.path()))
        .sum()
}

/// A real solve of 3x3 to 256 (a game the calibration did not measure),
/// its store sampled as it runs: `plan`'s peak and final are within 25%.
#[test]
fn plan_store_matches_a_live_3x3_to_256() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let mut child = bin()
        .args(["solve", "--board", "3", "--target", "256", "--store"])
        .arg(&store)
        .arg("--json")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut peak = 0;
    let status = loop {
        peak = peak.max(object_bytes(&store));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success());
    let last = object_bytes(&store);
    let peak = peak.max(last);
    let p = plan_json(&["--board", "3", "--target", "256"]);
    for (key, measured) in [("store_peak_bytes", peak), ("store_final_bytes", last)] {
        let planned = p[key].as_u64().unwrap();
        let ratio = planned as f64 / measured as f64;
        assert!(
            (0.75..=1.25).contains(&ratio),
            "3x3 to 256: {key} {planned} vs {measured} measured ({ratio:.3})"
        );
    }
}
