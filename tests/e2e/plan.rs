//! `solve2048 plan`: the resource plan of a job, estimated for 4x4 to 64 and
//! exact from a solved store.

use std::collections::BTreeMap;

use crate::cli::bin;
use crate::reference::solved;

fn plan(args: &[&str]) -> std::process::Output {
    bin().arg("plan").args(args).output().unwrap()
}

fn plan_json(args: &[&str]) -> serde_json::Value {
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

#[test]
fn plan_4x4_to_64_adds_up_to_the_published_total() {
    let p = plan_json(&["--board", "4", "--target", "64", "--worker-memory", "32"]);
    for key in [
        "game",
        "states",
        "exact_states",
        "parts",
        "layers",
        "largest_part",
        "memory",
        "fits",
        "store",
        "duration",
        "options",
        "recommended",
        "notes",
        "cluster",
    ] {
        assert!(p.get(key).is_some(), "no {key} in {p}");
    }
    assert_eq!(p["game"], "4x4-to-64");
    assert_eq!(p["states"], 40_652_843_433u64);
    let layers = p["layers"].as_array().unwrap();
    let sum: u64 = layers.iter().map(|l| l["states"].as_u64().unwrap()).sum();
    assert_eq!(sum, 40_652_843_433);
    assert!(layers
        .iter()
        .all(|l| l["source"] == "exact" || l["source"] == "estimated"));
    assert!(layers.iter().any(|l| l["source"] == "estimated"));
    assert_eq!(p["largest_part"]["sum"], 164);
    assert_eq!(p["largest_part"]["max_exp"], 5);
    // A 32 GiB worker cannot hold the largest solve step (two adjacent layers
    // of about 0.85 billion states each, at 24 bytes a state).
    assert_eq!(p["fits"], false);
    assert!(p["memory"]["peak_bytes"].as_u64().unwrap() > 32 << 30);
    assert_eq!(p["options"].as_array().unwrap().len(), 4);
    assert!(p["duration"]["total_seconds"].as_f64().unwrap() > 0.0);
    assert!(p["store"]["total_bytes"].as_u64().unwrap() > 0);
    // The human form says so too.
    let out = plan(&["--board", "4", "--target", "64", "--worker-memory", "32"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("warning: a 32 GiB worker is too small"),
        "{text}"
    );
    assert!(text.contains("<- recommended"), "{text}");
    assert!(
        text.contains("estimated: model calibrated on published totals"),
        "{text}"
    );
    // The default 64 GiB worker fits.
    let p = plan_json(&["--board", "4", "--target", "64"]);
    assert_eq!(p["fits"], true);
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
        (vec!["--board", "5", "--target", "64"], "board size 5"),
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
