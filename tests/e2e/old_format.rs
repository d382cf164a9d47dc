//! Specifies: a store written in chunk format version 4 (values as plain
//! f64, a byte a policy code), by the build before values were coded by
//! afterstate (commit 2945ca1), still verifies and answers queries with its
//! own figures; a solve will not add to it, and says why; the same game
//! solved now has the same digest and start value.

use std::ffi::OsStr;
use std::path::Path;

use crate::cli::{command_json, command_ok, fails_with, solve, solve_json};
use crate::reference::copy_store;

/// `query --json` of `board`: its stdout as printed (floats printed as the
/// shortest text that reads back to the same bits, so comparing text
/// compares bits).
fn query(store: &Path, board: &str) -> String {
    let args = ["--board", board, "--json"].map(OsStr::new);
    String::from_utf8(command_ok("query", store, &args).stdout).unwrap()
}

/// 2x2 to 16 as `solve --board 2 --target 16` of commit 2945ca1 wrote it.
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/store-v4-2x2-to-16");

#[test]
fn a_version_4_store_still_verifies_and_answers_queries() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    copy_store(Path::new(FIXTURE), &s);
    let job = std::fs::read_to_string(s.join("job.json")).unwrap();
    assert!(job.contains("\"format_version\": 4"), "{job}");

    let v = command_json("verify", &s, &[]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["digest"], "a4843c6e21daa081", "{v}");
    assert_eq!(
        (v["states"].as_u64(), v["chunks"].as_u64()),
        (Some(35), Some(15))
    );

    // What the old build answered, bit for bit (its output).
    let a = query(&s, "2 2 / . .");
    assert_eq!(
        a.trim(),
        r#"{"game":"2x2-to-16","board":"2 2 / . .","hex":"0x0000000000000011","status":"playing","value":0.9626128750000001,"actions":{"left":0.9626128750000001,"right":0.9626128750000001,"up":null,"down":0.9626128750000001},"best":"left"}"#
    );
    let b = query(&s, "4 2 / . 2");
    assert_eq!(
        b.trim(),
        r#"{"game":"2x2-to-16","board":"4 2 / . 2","hex":"0x0000000000100012","status":"playing","value":0.9727750000000001,"actions":{"left":0.8545499999999999,"right":null,"up":0.9727750000000001,"down":0.9727750000000001},"best":"up"}"#
    );

    // A solve does not add chunks of another version to it.
    fails_with(
        &solve(&s, &["--board", "2", "--target", "16"]),
        "was written in chunk format version 4",
    );

    // Solved now: the same digest and start value, in version 5.
    let fresh = dir.path().join("fresh");
    let out = solve_json(&fresh, &["--board", "2", "--target", "16"]);
    assert_eq!(out["digest"], "a4843c6e21daa081");
    assert!((out["start_value"].as_f64().unwrap() - 0.9625112537500004).abs() < 1e-15);
    let job = std::fs::read_to_string(fresh.join("job.json")).unwrap();
    assert!(job.contains("\"format_version\": 5"), "{job}");
    assert_eq!(query(&fresh, "4 2 / . 2"), b);
}
