//! Specifies damage and its repair on a solved store:
//! - one flipped byte in each of 100 random objects of every kind (states,
//!   values and policy chunks, commit records, layer indexes, the summary,
//!   the job manifest, the lock and status) is refused and named by
//!   `verify`, every one of them, and by nothing else;
//! - a rerun without `--repair` says the store is damaged and how to repair
//!   it, and changes nothing;
//! - `solve --repair` sets each one aside in `quarantine/` with its reason,
//!   redoes the tasks that wrote them, and ends with the undisturbed run's
//!   digest and byte-identical chunks, which `verify` then passes.

use std::collections::BTreeSet;
use std::path::Path;

use crate::cli::{bin, chunk_objects, fails_with, solve};
use crate::reference::{copy_store, solved};

const ARGS: [&str; 6] = ["--board", "3", "--target", "256", "--chunk-size", "20000"];

/// A seeded splitmix64 generator, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Every file under `dir`, relative to it.
fn objects(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// The kind of an object, for picking some of each.
fn kind(object: &str) -> &str {
    match object.split('/').next().unwrap() {
        k @ ("states" | "values" | "policy" | "commits" | "layers") => k,
        _ => object,
    }
}

/// Flip one random bit in each of `n` random objects of `store`, at least
/// one of each kind; returns their names.
fn damage(store: &Path, n: usize, rng: &mut Rng) -> BTreeSet<String> {
    let all = objects(store);
    let kinds: BTreeSet<&str> = all.iter().map(|o| kind(o)).collect();
    let mut picked = BTreeSet::new();
    for k in &kinds {
        let of_kind: Vec<&String> = all.iter().filter(|o| kind(o) == *k).collect();
        picked.insert(of_kind[rng.below(of_kind.len())].clone());
    }
    while picked.len() < n {
        picked.insert(all[rng.below(all.len())].clone());
    }
    for object in &picked {
        let path = store.join(object);
        let mut bytes = std::fs::read(&path).unwrap();
        let i = rng.below(bytes.len());
        bytes[i] ^= 1 << rng.below(8);
        std::fs::write(&path, bytes).unwrap();
    }
    picked
}

fn verify_json(store: &Path) -> (bool, serde_json::Value) {
    let out = bin()
        .args(["verify", "--json", "--store"])
        .arg(store)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), v)
}

#[test]
fn a_hundred_flipped_objects_are_all_named_and_repaired() {
    let seed = std::env::var("SOLVE2048_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261124u64);
    eprintln!("damage seed {seed} (SOLVE2048_TEST_SEED replays it)");
    let dir = tempfile::tempdir().unwrap();
    let clean = solved(&ARGS);
    let store = dir.path().join("damaged");
    copy_store(&clean.store, &store);
    let before = objects(&store);
    let flipped = damage(&store, 100, &mut Rng(seed));
    let kinds: BTreeSet<&str> = flipped.iter().map(|o| kind(o)).collect();
    for k in [
        "states",
        "values",
        "policy",
        "commits",
        "layers",
        "summary.json",
        "job.json",
    ] {
        assert!(kinds.contains(k), "no {k} among the damaged objects");
    }

    // verify names every damaged object, and only those.
    let (ok, report) = verify_json(&store);
    assert!(!ok, "verify passed a damaged store");
    assert_eq!(report["ok"], false);
    let named: BTreeSet<String> = report["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["object"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        named, flipped,
        "verify named other objects than the damaged ones"
    );

    // A rerun without --repair refuses, says how to repair, changes nothing.
    let out = solve(&store, &ARGS);
    fails_with(&out, "is damaged");
    fails_with(&out, "--repair");
    assert_eq!(objects(&store), before);

    // The repair restores the undisturbed run.
    let out = bin()
        .arg("solve")
        .args(ARGS)
        .arg("--repair")
        .arg("--json")
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "repair failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let repaired: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(repaired["digest"], clean.summary["digest"]);
    assert_eq!(repaired["states"], clean.summary["states"]);
    assert_eq!(repaired["start_value"], clean.summary["start_value"]);
    // What it ran again is counted (at least a task a damaged chunk).
    let run = repaired["tasks_run"].as_u64().unwrap();
    assert!(
        run > 0,
        "a repair that redid tasks says it ran none: {repaired}"
    );
    let a = chunk_objects(&clean.store);
    let mut b = chunk_objects(&store);
    b.retain(|k, _| !k.starts_with("quarantine/"));
    assert!(
        a.len() == b.len() && a.keys().eq(b.keys()),
        "other chunks after the repair"
    );
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs after the repair");
    }
    let (ok, report) = verify_json(&store);
    assert!(ok, "verify after the repair: {report}");
    assert_eq!(report["digest"], clean.summary["digest"]);
    // Every damaged object is in quarantine/, with its reason.
    for object in &flipped {
        let aside = store.join("quarantine").join(object);
        assert!(aside.exists(), "{object} not in quarantine/");
        let reason = std::fs::read_to_string(format!("{}.reason.txt", aside.display())).unwrap();
        assert!(!reason.trim().is_empty());
    }
    assert!(!store.join("runs").exists(), "runs are swept at the end");
}
