//! Specifies rectangular boards (`--board RxC`, the variants issue): R rows
//! of C cells, moves along rows of C cells and columns of R cells, 4
//! symmetries.
//!
//! - The stored solve's start value equals, to 1e-12 relatively, a slow,
//!   obvious memoised recursion over boards as they lie (no symmetry, no
//!   layers: `SlowOptimal` through `players::slow_value`): 2x3, 3x2 and 2x4
//!   to targets, another chance of a 4 and a discount, and the score
//!   objective on 2x3 and 3x2 played to the end.
//! - A board and its transpose (2x3 and 3x2) give the same value and the
//!   same number of states.
//! - `solve --json` reports the shape; `evaluate`, `query`, `play`,
//!   `occupancy`, `export-policy`, `export` and `verify` take it from the
//!   store; a board of another shape is refused.
//! - Bad input gets one line.

use solve2048_core::{Game, Objective, Shape};
use solve2048_players::{parse, slow_value, Parsed};

use crate::cli::{bin, command_json, command_ok, solve_json};
use crate::evaluate::{evaluate_json, SlowOptimal};
use crate::players::{fails_in_one_line, play_json};
use crate::use_solution::query;

/// The games of the tests: (board, target or None for the end with the
/// score objective, probability of a 4, discount).
const GAMES: [(&str, Option<u64>, f64, f64); 8] = [
    ("2x3", Some(64), 0.1, 1.0),
    ("3x2", Some(64), 0.1, 1.0),
    ("2x3", Some(128), 0.1, 1.0),
    ("3x2", Some(128), 0.1, 1.0),
    ("2x4", Some(64), 0.1, 1.0),
    ("2x3", Some(64), 0.5, 0.95),
    ("2x3", None, 0.1, 1.0),
    ("3x2", None, 0.1, 1.0),
];

/// The game of a row of [`GAMES`] and the arguments that solve it.
fn game_and_args(row: (&str, Option<u64>, f64, f64)) -> (Game, Vec<String>) {
    let (board, target, p, discount) = row;
    let shape: Shape = board.parse().unwrap();
    let mut args = vec!["--board".to_string(), board.to_string()];
    let game = match target {
        Some(t) => {
            args.extend(["--target".to_string(), t.to_string()]);
            Game::on(shape, t, discount).unwrap()
        }
        None => {
            args.extend(["--objective".to_string(), "score".to_string()]);
            Game::to_the_end(shape, discount).unwrap()
        }
    }
    .with_four_probability(p)
    .unwrap();
    for (flag, value) in [
        ("--four-probability", p.to_string()),
        ("--discount", discount.to_string()),
        ("--chunk-size", "2000".to_string()),
    ] {
        args.extend([flag.to_string(), value]);
    }
    (game, args)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn start_values_equal_a_slow_recursion_and_transposes_agree() {
    let dir = tempfile::tempdir().unwrap();
    let mut solved = Vec::new();
    for (i, row) in GAMES.into_iter().enumerate() {
        let (game, args) = game_and_args(row);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = solve_json(&dir.path().join(format!("s{i}")), &args);
        let shape = game.shape;
        assert_eq!(out["board"].as_str(), Some(row.0), "{out}");
        assert_eq!(out["rows"].as_u64(), Some(shape.rows() as u64));
        assert_eq!(out["columns"].as_u64(), Some(shape.cols() as u64));
        let got = out["start_value"].as_f64().unwrap();
        let slow = slow_value(&game, &mut SlowOptimal::new(game)).unwrap();
        assert!(close(got, slow), "{}: {got} vs {slow}", game.name());
        assert!(got > 0.0, "{}", game.name());
        solved.push((game, out["states"].as_u64().unwrap(), got));
    }
    // A board and its transpose: the same game turned a quarter.
    for (a, b) in [(0, 1), (2, 3), (6, 7)] {
        let ((ga, sa, va), (gb, sb, vb)) = (solved[a], solved[b]);
        assert_eq!(ga.shape.transposed(), gb.shape);
        assert_eq!(sa, sb, "{} and {}", ga.name(), gb.name());
        assert!(close(va, vb), "{} {va} vs {} {vb}", ga.name(), gb.name());
    }
    // Played to the end, the score game scores more than any target allows.
    assert!(solved[6].2 > 200.0, "{}", solved[6].2);
    assert_eq!(solved[6].0.objective, Objective::Score);
}

#[test]
fn every_command_takes_the_shape_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (game, args) = game_and_args(GAMES[0]);
    let store = dir.path().join("2x3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let solved = solve_json(&store, &args);
    let optimal = solved["start_value"].as_f64().unwrap();

    // `evaluate`: a player's exact win probability, the slow recursion's.
    for spec in ["random", "greedy"] {
        let got = evaluate_json(&store, spec, &dir.path().join(spec), &[]);
        let Parsed::Player(mut player) = parse(spec, game.shape, &game.spawn_rule(), 0).unwrap()
        else {
            unreachable!()
        };
        let slow = slow_value(&game, player.as_mut()).unwrap();
        let value = got["value"].as_f64().unwrap();
        assert!(close(value, slow), "{spec}: {value} vs {slow}");
        assert!(value < optimal, "{spec}");
        assert_eq!(got["board"].as_str(), Some("2x3"), "{got}");
    }

    // `query`: a board written as 2 rows of 3; its transpose is refused.
    let q = query(&store, "2 . 4 / . . 2");
    assert_eq!(q["status"].as_str(), Some("playing"), "{q}");
    assert_eq!(q["board"].as_str(), Some("2 . 4 / . . 2"));
    let best = q["actions"][q["best"].as_str().unwrap()].as_f64().unwrap();
    assert!(close(q["value"].as_f64().unwrap(), best), "{q}");
    let wrong = bin()
        .args(["query", "--store"])
        .arg(&store)
        .args(["--board", "2 . / . 4 / . 2"])
        .output()
        .unwrap();
    fails_in_one_line(&wrong, "the board is 3x2 but the store solves 2x3-to-64");

    // `play`: the store's game, the optimal player, the exact expectation.
    let played = play_json(&[
        "--store",
        store.to_str().unwrap(),
        "--games",
        "200",
        "--seed",
        "1",
    ]);
    assert_eq!(played["board"].as_str(), Some("2x3"), "{played}");
    let rate = played["summary"]["win_rate"].as_f64().unwrap();
    assert!((rate - optimal).abs() < 0.1, "{rate} vs {optimal}");
    // And without a store, a heuristic player on a rectangle.
    let free = play_json(&["--board", "3x4", "--player", "schain", "--games", "5"]);
    assert_eq!(free["board"].as_str(), Some("3x4"), "{free}");

    // `occupancy`, `export-policy`, `export`, `verify`.
    let occ = command_json("occupancy", &store, &[]);
    let win = occ["win"].as_f64().unwrap();
    assert!(close(win, optimal), "{occ}");
    let policy = dir.path().join("policy.bin");
    command_ok(
        "export-policy",
        &store,
        &[
            "--threshold".as_ref(),
            "0".as_ref(),
            "--out".as_ref(),
            policy.as_os_str(),
        ],
    );
    let file =
        solve2048_core::formats::policy_file::PolicyFile::decode(&std::fs::read(&policy).unwrap())
            .unwrap();
    assert_eq!(file.shape, game.shape);
    let parquet = dir.path().join("parquet");
    command_ok(
        "export",
        &store,
        &[
            "--format".as_ref(),
            "parquet".as_ref(),
            "--out".as_ref(),
            parquet.as_os_str(),
        ],
    );
    command_ok("verify", &store, &[]);
}

#[test]
fn bad_shapes_get_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    for (board, needle) in [
        ("5x2", "board \"5x2\" is not supported"),
        ("1x4", "board \"1x4\" is not supported"),
        ("5", "board \"5\" is not supported"),
        ("3x", "board \"3x\" is not supported"),
    ] {
        let out = bin()
            .args(["solve", "--board", board, "--target", "64", "--store"])
            .arg(&store)
            .output()
            .unwrap();
        fails_in_one_line(&out, needle);
    }
    let out = bin()
        .args(["solve", "--board", "2x3", "--target", "512", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    fails_in_one_line(
        &out,
        "target 512 is out of range for 2x3: use a power of two from 8 to 256",
    );
    // A store of one shape is not another's.
    solve_json(&store, &["--board", "2x3", "--target", "16"]);
    let out = bin()
        .args(["solve", "--board", "3x2", "--target", "16", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2x3-to-16") && err.contains("3x2-to-16"),
        "{err}"
    );
}
