//! Specifies: every 2x2 and 3x3 game's state count equals the published
//! one (`tests/data/published.csv`), start values equal the published ones
//! to their 5 decimals, results are bit-identical whatever the thread
//! count and chunk size, and the README's table of solved games is what
//! the solves print.

use crate::cli::solve_json;
use crate::reference::solved;

fn published() -> Vec<(u32, u64, u64)> {
    let csv = include_str!("../data/published.csv");
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| {
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

/// Solve the game (shared with the other tests of this binary) and check its
/// count against the published one.
fn check_game(n: u32, target: u64) -> serde_json::Value {
    let out = &solved(&["--board", &n.to_string(), "--target", &target.to_string()]).summary;
    let want = published()
        .into_iter()
        .find(|&(a, b, _)| a == n && b == target)
        .unwrap()
        .2;
    assert_eq!(out["states"], want, "{n}x{n} to {target}");
    let parts: u64 = out["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["states"].as_u64().unwrap())
        .sum();
    assert_eq!(parts, want, "parts add up");
    out.clone()
}

fn value(out: &serde_json::Value) -> f64 {
    out["start_value"].as_f64().unwrap()
}

/// Published values are printed to 5 decimals.
fn assert_published(v: f64, published: f64) {
    assert!(
        (v - published).abs() <= 0.5e-5,
        "{v} vs published {published}"
    );
}

#[test]
fn two_by_two_games_match_published() {
    for target in [8, 16, 32, 64] {
        let out = check_game(2, target);
        match target {
            8 => assert_eq!(value(&out), 1.0, "2x2 to 8 cannot be lost"),
            16 => assert_published(value(&out), 0.96251),
            32 => assert_published(value(&out), 0.08289),
            _ => {}
        }
    }
}

#[test]
fn three_by_three_small_games_match_published() {
    for target in [8, 16, 32, 64, 128, 256] {
        check_game(3, target);
    }
}

#[test]
fn three_by_three_to_512_matches_published() {
    assert_published(value(&check_game(3, 512)), 0.73677);
}

#[test]
fn three_by_three_to_1024_matches_published() {
    assert_published(value(&check_game(3, 1024)), 0.01134);
}

#[test]
fn four_by_four_to_16_discounted_matches_published() {
    let out = &solved(&["--board", "4", "--target", "16", "--discount", "0.99"]).summary;
    assert_published(value(out), 0.91430);
    assert_eq!(out["discount"], 0.99);
}

#[test]
fn results_are_identical_whatever_threads_and_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let a = solve_json(
        &dir.path().join("a"),
        &[
            "--board",
            "3",
            "--target",
            "128",
            "--threads",
            "1",
            "--chunk-size",
            "50000",
        ],
    );
    let b = solve_json(
        &dir.path().join("b"),
        &[
            "--board",
            "3",
            "--target",
            "128",
            "--threads",
            "2",
            "--chunk-size",
            "3001",
        ],
    );
    assert_eq!(a["digest"], b["digest"]);
    assert_eq!(a["states"], b["states"]);
    assert_eq!(
        a["parts"].as_array().unwrap().len(),
        b["parts"].as_array().unwrap().len()
    );
    assert_eq!(
        a["start_value"].as_f64().unwrap().to_bits(),
        b["start_value"].as_f64().unwrap().to_bits()
    );
    // Smaller chunks really did split the parts differently.
    let chunks = |v: &serde_json::Value| -> u64 {
        v["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["chunks"].as_u64().unwrap())
            .sum()
    };
    assert!(chunks(&b) > chunks(&a));
}

/// The README's table of solved games holds what a solve prints: each 2x2
/// and 3x3 row's states, start value and digest (its 4x4 rows come from
/// runs too large for the suite: the Benchmarks page gives their commands).
#[test]
fn the_readmes_solved_games_are_what_solves_print() {
    let readme = include_str!("../../README.md");
    let mut checked = 0;
    for row in readme.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some((board, target)) = cells[1].split_once(" to ") else {
            continue;
        };
        if !["2x2", "3x3"].contains(&board) {
            continue;
        }
        let out = &solved(&["--board", &board[..1], "--target", target]).summary;
        assert_eq!(
            out["states"].as_u64().unwrap().to_string(),
            cells[2].replace(',', ""),
            "{row}"
        );
        assert_eq!(value(out).to_string(), cells[3], "{row}");
        assert_eq!(
            format!("`{}`", out["digest"].as_str().unwrap()),
            cells[5],
            "{row}"
        );
        checked += 1;
    }
    assert_eq!(checked, 4, "the README's 2x2 and 3x3 rows");
}
