//! Specifies: `solve --recompute-values` keeps the values of only two
//! layers in every five (the others deleted at the job's end), with the
//! same digest and start value as a store that keeps them all; every
//! reader answers from it bit for bit as from that store (the export with
//! each move's value, the plot's statistics, occupancy, queries); `verify`
//! checks it, also with values a crash left undeleted, which a rerun
//! deletes; a solved store's `--repair` and `evaluate` refuse it and say
//! why.

use std::ffi::OsStr;
use std::path::Path;

use crate::cli::{bin, command_json, command_ok, fails_with, solve, solve_json};

/// 3x3 to 64, scored: values that vary from state to state (a win
/// probability there is mostly 1).
const GAME: [&str; 6] = ["--board", "3", "--target", "64", "--objective", "score"];

/// Whether the layer of tile sum `sum` holds values objects (at any depth).
fn holds_values(store: &Path, sum: u32) -> bool {
    walkdir(&store.join(format!("values/s{sum:05}")))
}

/// Whether `dir` holds a file, at any depth.
fn walkdir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|r| {
        r.flatten()
            .any(|e| e.path().is_file() || (e.path().is_dir() && walkdir(&e.path())))
    })
}

/// `SUB --store STORE ARGS`'s stdout.
fn stdout(sub: &str, store: &Path, args: &[&str]) -> Vec<u8> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    command_ok(sub, store, &args).stdout
}

#[test]
fn recomputed_values_answer_as_stored_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (all, some) = (dir.path().join("all"), dir.path().join("some"));
    let a = solve_json(&all, &GAME);
    let s = solve_json(&some, &[&GAME[..], &["--recompute-values"]].concat());
    assert_eq!(s["digest"], a["digest"]);
    assert_eq!(s["start_value"].as_f64(), a["start_value"].as_f64());
    assert_eq!(s["orphans_removed"], 0, "{s}");

    // Two layers in five keep their values, and the start layers.
    let layers: std::collections::BTreeSet<u32> = (a["parts"].as_array().unwrap().iter())
        .map(|p| p["sum"].as_u64().unwrap() as u32)
        .collect();
    assert!(layers.len() > 20, "{layers:?}");
    for &sum in &layers {
        let kept = sum <= 8 || (sum / 2) % 5 < 2;
        assert!(holds_values(&all, sum), "s{sum}");
        assert_eq!(holds_values(&some, sum), kept, "s{sum}");
    }

    // Every reader gives the same bytes.
    let v = command_json("verify", &some, &[]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["digest"], a["digest"], "{v}");
    let (ea, es) = (dir.path().join("ea"), dir.path().join("es"));
    for (store, out) in [(&all, &ea), (&some, &es)] {
        let out = out.to_str().unwrap();
        stdout(
            "export",
            store,
            &["--format", "parquet", "--out", out, "--with-moves"],
        );
    }
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut f: Vec<_> = (std::fs::read_dir(d).unwrap().flatten())
            .map(|e| {
                (
                    e.file_name().into_string().unwrap(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        f.sort();
        f
    };
    let exported = files(&ea);
    assert_eq!(exported.len(), layers.len());
    assert!(exported == files(&es), "the exports differ");
    let (pa, ps) = (dir.path().join("a.svg"), dir.path().join("s.svg"));
    stdout("plot", &all, &["--out", pa.to_str().unwrap()]);
    stdout("plot", &some, &["--out", ps.to_str().unwrap()]);
    assert!(std::fs::read(pa).unwrap() == std::fs::read(ps).unwrap());
    assert_eq!(
        stdout("occupancy", &some, &["--json"]),
        stdout("occupancy", &all, &["--json"])
    );
    // A board of each kind of layer: held (sum 22), recomputed from held
    // ones (sum 18), from one recomputed layer (16), from two (14).
    for board in [
        "8 8 4 / . 2 . / . . .",
        "8 4 2 / 4 . . / . . .",
        "4 8 . / 2 2 . / . . .",
        "8 2 2 / 2 . . / . . .",
    ] {
        let q = |store| stdout("query", store, &["--board", board, "--json"]);
        assert_eq!(q(&some), q(&all), "{board}");
    }

    // A rerun of the finished job changes nothing. Values of a recomputed
    // layer that a crash left (here a copy) are checked as unreferenced and
    // ignored by readers; a rerun deletes them.
    let again = solve_json(&some, &[&GAME[..], &["--recompute-values"]].concat());
    assert_eq!(again["digest"], a["digest"]);
    let _ = std::fs::remove_dir_all(some.join("values/s00014"));
    crate::reference::copy_store(&all.join("values/s00014"), &some.join("values/s00014"));
    assert!(holds_values(&some, 14));
    let v = command_json("verify", &some, &[]);
    assert_eq!(
        (v["ok"].as_bool(), v["digest"].clone()),
        (Some(true), a["digest"].clone())
    );
    let q = |store| {
        stdout(
            "query",
            store,
            &["--board", "8 2 2 / 2 . . / . . .", "--json"],
        )
    };
    assert_eq!(q(&some), q(&all));
    let resumed = solve_json(&some, &[&GAME[..], &["--recompute-values"]].concat());
    assert_eq!(resumed["digest"], a["digest"]);
    assert_eq!(resumed["start_value"].as_f64(), a["start_value"].as_f64());
    assert!(!holds_values(&some, 14));
    assert_eq!(command_json("verify", &some, &[])["ok"], true);

    // Another job, and an evaluation, are refused.
    fails_with(&solve(&some, &GAME), "--recompute-values");
    let out = bin()
        .args(["evaluate", "--store"])
        .arg(&some)
        .args(["--player", "greedy"])
        .output()
        .unwrap();
    fails_with(&out, "keeps the values of only two layers in five");

    // Damage is found, but not repaired: a redone solve would read values
    // the store no longer holds.
    let policy = std::fs::read_dir(some.join("policy/s00014/m03")).unwrap();
    let damaged = policy.flatten().next().unwrap().path();
    let mut bytes = std::fs::read(&damaged).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&damaged, bytes).unwrap();
    let v = bin()
        .arg("verify")
        .arg("--store")
        .arg(&some)
        .output()
        .unwrap();
    fails_with(&v, "policy/s00014/m03/");
    let repair = [&GAME[..], &["--recompute-values", "--repair"]].concat();
    fails_with(&solve(&some, &repair), "cannot be repaired");
}
