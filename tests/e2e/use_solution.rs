//! Specifies: using a solved store: `query` gives hand-checked answers in any
//! orientation and refuses bad boards, `play` of the optimal player is
//! reproducible, agrees with `query` and wins at the start value,
//! `occupancy` ends surely, `export-policy` agrees with `query`, `plot`
//! draws every series, `verify` names a damaged chunk, and none of
//! these writes to the store (it may be read-only).

use std::path::Path;

use crate::cli::{bin, command_json, command_ok, fails_with, object_named, solve_json};
use crate::reference::{copy_store, solved};

/// `query --store STORE --board BOARD --json`, which must succeed.
pub(crate) fn query(store: &Path, board: &str) -> serde_json::Value {
    command_json("query", store, &["--board", board])
}

fn close(v: &serde_json::Value, want: f64) -> bool {
    (v.as_f64().unwrap() - want).abs() < 1e-12
}

#[test]
fn query_answers_hand_checked_2x2_boards() {
    let s16 = &solved(&["--board", "2", "--target", "16"]).store;
    // 8 4 / 2 . : left and up change nothing. Right gives 8 4 / . 2, then a 2
    // (8 4 / 2 2, won by right, up, left) or a 4 (8 4 / 4 2, lost): 0.9. Down
    // gives 8 . / 2 4, then a 2 (lost) or a 4 (8 4 / 2 4, won): 0.1.
    let a = query(s16, "8 4 / 2 .");
    assert!(close(&a["value"], 0.9), "{a}");
    assert!(close(&a["actions"]["right"], 0.9));
    assert!(close(&a["actions"]["down"], 0.1));
    assert!(a["actions"]["left"].is_null() && a["actions"]["up"].is_null());
    assert_eq!(a["best"], "right");
    assert_eq!(a["status"], "playing");
    // The same board transposed (not the canonical orientation): right
    // becomes down, and the hex form is accepted too.
    let t = query(s16, "8 2 / 4 .");
    assert_eq!(t["best"], "down");
    assert!(close(&t["actions"]["down"], 0.9) && close(&t["actions"]["right"], 0.1));
    assert_eq!(query(s16, t["hex"].as_str().unwrap())["best"], "down");

    let s8 = &solved(&["--board", "2", "--target", "8"]).store;
    // 4 4 / . . : left and right both make the 8 at once (a tie at 1); up
    // changes nothing; down moves the row and must still win.
    let tie = query(s8, "4 4 / . .");
    assert!(close(&tie["actions"]["left"], 1.0) && close(&tie["actions"]["right"], 1.0));
    assert!(tie["actions"]["up"].is_null());
    assert_eq!(tie["best"], "left", "ties go to the first action");
    assert_eq!(query(s8, "8 . / . 2")["status"], "won");
    assert_eq!(query(s16, "2 4 / 4 2")["status"], "lost");
}

#[test]
fn query_refuses_bad_boards_and_unsolved_stores() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    copy_store(&solved(&["--board", "2", "--target", "16"]).store, &s);
    let q = |board: &str, store: &Path| {
        bin()
            .args(["query", "--board", board])
            .arg("--store")
            .arg(store)
            .output()
            .unwrap()
    };
    fails_with(
        &q("2 4 / 8", &s),
        "expected 2 to 4 rows of 2 to 4 cells each",
    );
    fails_with(&q("2 3 / . .", &s), "cell \"3\" is not a tile");
    fails_with(
        &q("2 . . / . . . / . . .", &s),
        "the board is 3x3 but the store solves 2x2-to-16",
    );
    fails_with(&q("8 8 / 8 8", &s), "is not reachable in 2x2-to-16");
    fails_with(&q("2 . / . 2", &dir.path().join("none")), "does not exist");
    std::fs::remove_file(s.join("summary.json")).unwrap();
    fails_with(&q("2 . / . 2", &s), "is not solved yet");
}

#[test]
fn seeded_play_is_reproducible_and_wins_at_the_start_value() {
    let reference = solved(&["--board", "3", "--target", "512"]);
    let (s, solved) = (&reference.store, &reference.summary);
    let play = |args: &[&str]| command_json("play", s, args);
    // With a store and no player named, the player is the optimal one.
    let a = play(&["--seed", "42"]);
    assert_eq!(a["player"], "optimal");
    assert_eq!(
        a["games"],
        play(&["--seed", "42"])["games"],
        "same seed, same game"
    );
    let steps = a["games"][0]["steps"].as_array().unwrap();
    // Moves are named as `query` names them, and each board's value is the
    // one `query` gives, its move the best one.
    for step in steps {
        let action = step["action"].as_str().unwrap();
        assert!(["left", "right", "up", "down"].contains(&action), "{step}");
    }
    for step in steps.iter().step_by(25) {
        let q = query(s, step["board"].as_str().unwrap());
        assert_eq!(q["best"], step["action"], "{step}");
        assert!(
            close(&q["value"], step["value"].as_f64().unwrap()),
            "{step}"
        );
    }
    // Shown move by move: each board with its win probability.
    let text = command_ok("play", s, &["--seed".as_ref(), "42".as_ref()]).stdout;
    let text = String::from_utf8_lossy(&text);
    assert!(
        text.starts_with("optimal on 3x3 to 512, seed 42, store "),
        "{text}"
    );
    assert_eq!(
        text.matches("\nwin probability under optimal play ")
            .count(),
        steps.len() + 1,
        "the start and every move"
    );
    let b = play(&["--seed", "43"]);
    assert_ne!(a["games"][0]["steps"], b["games"][0]["steps"]);
    assert!(steps.len() > 10);
    // The forward pass under the optimal policy: the game ends won or lost
    // with certainty, and at discount 1 it is won with the start value.
    let occ = occupancy(s);
    let (win, lose) = (occ["win"].as_f64().unwrap(), occ["lose"].as_f64().unwrap());
    assert!((win + lose - 1.0).abs() < 1e-9, "{occ}");
    assert!(
        (win - solved["start_value"].as_f64().unwrap()).abs() < 1e-9,
        "{occ}"
    );
    assert!(occ["expected_moves"].as_f64().unwrap() > 100.0);
    export_matches_query(s, occ["visited_states"].as_u64().unwrap());
    let many = play(&["--games", "10000", "--seed", "1"]);
    let (rate, start) = (
        many["summary"]["win_rate"].as_f64().unwrap(),
        solved["start_value"].as_f64().unwrap(),
    );
    let won = many["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["won"] == true)
        .count();
    assert_eq!(rate, won as f64 / 10000.0);
    let se = (start * (1.0 - start) / 10000.0).sqrt();
    assert!(
        (rate - start).abs() < 3.0 * se,
        "win rate {rate} vs start value {start} (se {se})"
    );
    assert_eq!(many["start_value"], solved["start_value"]);
}

fn occupancy(store: &Path) -> serde_json::Value {
    command_json("occupancy", store, &[])
}

/// Export the policy at threshold 0 (every visited state) and 1e-4, read it
/// back with the core reader, and check actions against the store.
fn export_matches_query(store: &Path, visited: u64) {
    use solve2048_core::formats::policy_file::PolicyFile;
    use solve2048_core::rules::canonical::canonical;
    let dir = tempfile::tempdir().unwrap();
    let export = |threshold: &str| {
        let out_file = dir.path().join(format!("p{threshold}.bin"));
        let args = [
            "--threshold".as_ref(),
            threshold.as_ref(),
            "--out".as_ref(),
            out_file.as_os_str(),
        ];
        command_ok("export-policy", store, &args);
        PolicyFile::decode(&std::fs::read(&out_file).unwrap()).unwrap()
    };
    let all = export("0");
    assert_eq!(all.entries.len() as u64, visited);
    let some = export("1e-4");
    assert!(!some.entries.is_empty() && some.entries.len() < all.entries.len());
    for &(s, a) in some.entries.iter().take(20) {
        assert_eq!(
            canonical(s, solve2048_core::Shape::square(3)),
            s,
            "states are canonical"
        );
        assert_eq!(all.action(s), Some(a));
        let hex = format!("{s:#018x}");
        assert_eq!(query(store, &hex)["best"], a.name(), "state {hex}");
    }
}

#[test]
fn occupancy_of_a_discounted_game_still_ends_surely() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let solved = solve_json(&s, &["--board", "2", "--target", "32", "--discount", "0.9"]);
    let occ = occupancy(&s);
    let (win, lose) = (occ["win"].as_f64().unwrap(), occ["lose"].as_f64().unwrap());
    assert!((win + lose - 1.0).abs() < 1e-9, "{occ}");
    // Discounting makes values smaller than the win probability they reach.
    assert!(solved["start_value"].as_f64().unwrap() < win);
}

#[test]
fn plot_draws_every_max_tile_and_the_value_map() {
    let dir = tempfile::tempdir().unwrap();
    let s = &solved(&["--board", "3", "--target", "64"]).store;
    let plot = |file: &Path| {
        bin()
            .arg("plot")
            .arg("--store")
            .arg(s)
            .arg("--out")
            .arg(file)
            .output()
            .unwrap()
    };
    let svg = dir.path().join("space.svg");
    command_ok("plot", s, &["--out".as_ref(), svg.as_os_str()]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    // 3x3 to 64 has parts with max tiles 2 to 32: one series each, drawn on
    // the linear and the log panel.
    for m in [2, 4, 8, 16, 32] {
        assert!(text.contains(&format!(">max tile {m}<")), "legend for {m}");
    }
    assert!(!text.contains(">max tile 64<"), "won states are not stored");
    assert_eq!(text.matches("<polyline").count(), 10);
    assert!(text.matches("<rect").count() > 50, "value heat map");
    let png = dir.path().join("space.png");
    let out = plot(&png);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 10_000, "a drawn figure, not a blank page");
    fails_with(
        &plot(&dir.path().join("space.jpg")),
        "must end in .svg or .png",
    );
}

#[test]
fn verify_reads_back_every_chunk_and_names_a_damaged_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let solved = solve_json(
        &s,
        &["--board", "3", "--target", "16", "--chunk-size", "500"],
    );
    let v = command_json("verify", &s, &[]);
    assert_eq!(v["ok"], true);
    assert_eq!(v["states"], solved["states"]);
    assert_eq!(v["digest"], solved["digest"]);
    let chunks: u64 = solved["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["chunks"].as_u64().unwrap())
        .sum();
    assert_eq!(v["chunks"].as_u64().unwrap(), chunks);
    // One flipped byte in one values chunk: refused, and the object named.
    let path = object_named(&s, "values/s00030/m03/g0000-c0000-a");
    let name = path.strip_prefix(&s).unwrap().to_string_lossy().to_string();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    let out = bin().args(["verify", "--store"]).arg(&s).output().unwrap();
    fails_with(&out, &format!("rejected {name}: payload checksum mismatch"));
}

/// Every file under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            out.push((e.path(), meta.len(), meta.modified().unwrap()));
            if meta.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn reading_a_store_writes_nothing_and_works_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    copy_store(&solved(&["--board", "2", "--target", "16"]).store, &s);
    let before = snapshot(&s);
    let plot = dir.path().join("p.svg");
    let export = dir.path().join("p.bin");
    let read_all = || {
        query(&s, "2 . / . 2");
        command_json("play", &s, &["--seed", "3"]);
        command_json("verify", &s, &[]);
        command_json("occupancy", &s, &[]);
        command_json("status", &s, &[]);
        command_ok("chunks", &s, &[]);
        command_ok("plot", &s, &["--out".as_ref(), plot.as_os_str()]);
        command_ok(
            "export-policy",
            &s,
            &[
                "--threshold".as_ref(),
                "0".as_ref(),
                "--out".as_ref(),
                export.as_os_str(),
            ],
        );
        let out = bin()
            .args(["plan", "--board", "2", "--target", "16", "--store"])
            .arg(&s)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    read_all();
    assert_eq!(before, snapshot(&s), "reading changed the store");
    // As a user who may not write there (root may write anywhere, so this
    // part only runs for other users).
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout;
    if String::from_utf8_lossy(&root).trim() != "0" {
        let chmod = |mode: &str| {
            assert!(std::process::Command::new("chmod")
                .args(["-R", mode])
                .arg(&s)
                .status()
                .unwrap()
                .success())
        };
        chmod("a-w");
        read_all();
        chmod("u+w");
    }
}
