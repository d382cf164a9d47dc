//! Specifies the score objective (`--objective score`, the variants issue):
//! values are expected scores, the sum of the tiles that merges make.
//!
//! - The stored solve's start value equals, to 1e-12 relatively, a slow,
//!   obvious memoised recursion over boards as they lie (`SlowOptimal`
//!   through `players::slow_value`, which reads scores from the move tables,
//!   not from the kernels' formula): 2x2 and 3x3 to the end and to a target,
//!   with another chance of a 4 and a discount.
//! - `evaluate` gives a player's exact expected score; `query`, `play` and
//!   `solve --json` speak of expected scores.
//! - The objective is part of the game: a store of the other objective is
//!   refused; a score game to a target has the win game's states.
//! - Bad input gets one line.

use solve2048_core::{Game, Objective, Shape};
use solve2048_players::{parse, slow_value, Parsed};

use crate::cli::{bin, solve_json};
use crate::evaluate::{evaluate_json, SlowOptimal};
use crate::plan::plan_json;
use crate::players::{fails_in_one_line, play_json};
use crate::use_solution::query;

/// The games of the tests: (board, target or None for the end, probability
/// of a 4, discount).
const GAMES: [(u32, Option<u64>, f64, f64); 6] = [
    (2, None, 0.1, 1.0),
    (2, None, 0.5, 0.9),
    (2, None, 1.0, 1.0),
    (2, Some(32), 0.1, 1.0),
    (3, Some(64), 0.1, 1.0),
    (3, Some(32), 0.25, 0.95),
];

/// The game of a row of [`GAMES`] and the arguments that solve it.
fn game_and_args(row: (u32, Option<u64>, f64, f64)) -> (Game, Vec<String>) {
    let (n, target, p, discount) = row;
    let game = match target {
        Some(t) => Game::new(n, t, discount)
            .unwrap()
            .with_objective(Objective::Score)
            .unwrap(),
        None => Game::to_the_end(Shape::square(n as u8), discount).unwrap(),
    }
    .with_four_probability(p)
    .unwrap();
    let mut args = vec!["--board".to_string(), n.to_string()];
    if let Some(t) = target {
        args.extend(["--target".to_string(), t.to_string()]);
    }
    for (flag, value) in [
        ("--objective", "score".to_string()),
        ("--four-probability", p.to_string()),
        ("--discount", discount.to_string()),
        ("--chunk-size", "3000".to_string()),
    ] {
        args.extend([flag.to_string(), value]);
    }
    (game, args)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

#[test]
fn expected_scores_equal_a_slow_recursion_over_boards_as_they_lie() {
    let dir = tempfile::tempdir().unwrap();
    for (i, row) in GAMES.into_iter().enumerate() {
        let (game, args) = game_and_args(row);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = solve_json(&dir.path().join(format!("s{i}")), &args);
        assert_eq!(out["objective"].as_str(), Some("score"), "{out}");
        assert_eq!(out["target"].as_u64(), row.1, "{out}");
        let got = out["start_value"].as_f64().unwrap();
        let slow = slow_value(&game, &mut SlowOptimal::new(game)).unwrap();
        assert!(close(got, slow), "{}: {got} vs {slow}", game.name());
        // Every game makes a few merges: each scores at least 4.
        assert!(got > 8.0, "{}: {got}", game.name());
        // To a target, the states are the win game's: the objective changes
        // what a state is worth, not which states there are.
        if let Some(target) = row.1 {
            let win = solve_json(
                &dir.path().join(format!("w{i}")),
                &[
                    "--board",
                    &row.0.to_string(),
                    "--target",
                    &target.to_string(),
                    "--four-probability",
                    &row.2.to_string(),
                    "--chunk-size",
                    "3000",
                ],
            );
            assert_eq!(win["states"], out["states"], "{}", game.name());
            assert_eq!(win["objective"].as_str(), Some("win"));
        }
    }
}

#[test]
fn evaluate_query_and_play_speak_expected_scores() {
    let dir = tempfile::tempdir().unwrap();
    let (game, args) = game_and_args(GAMES[0]);
    let store = dir.path().join("end");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let solved = solve_json(&store, &args);
    let optimal = solved["start_value"].as_f64().unwrap();
    // `evaluate`: a player's exact expected score, below the optimal one.
    for spec in ["random", "order:LDRU"] {
        let out = dir.path().join(spec.replace(':', "-"));
        let got = evaluate_json(&store, spec, &out, &[]);
        let Parsed::Player(mut player) = parse(spec, game.shape, &game.spawn_rule(), 0).unwrap()
        else {
            unreachable!()
        };
        let slow = slow_value(&game, player.as_mut()).unwrap();
        let value = got["value"].as_f64().unwrap();
        assert!(close(value, slow), "{spec}: {value} vs {slow}");
        assert!(value < optimal, "{spec}: {value} vs {optimal}");
    }
    // `query`: a move's value is its score plus what follows. Left on
    // 2 2 / . . merges two 2s (4 points) into 4 . / . ., then a 2 (0.9) or a
    // 4 (0.1) lands on one of its 3 empty cells.
    let value = |board: &str| query(&store, board)["value"].as_f64().unwrap();
    let q = query(&store, "2 2 / . .");
    let left = q["actions"]["left"].as_f64().unwrap();
    let follows: f64 = ["4 {} / . .", "4 . / {} .", "4 . / . {}"]
        .iter()
        .map(|b| 0.9 * value(&b.replace("{}", "2")) + 0.1 * value(&b.replace("{}", "4")))
        .sum::<f64>()
        / 3.0;
    assert!(close(left, 4.0 + follows), "{left} vs 4 + {follows}");
    assert_eq!(
        q["actions"]["right"].as_f64(),
        Some(left),
        "the mirror image"
    );
    // A board holding no move scores nothing more.
    let lost = query(&store, "2 4 / 4 2");
    assert_eq!(lost["value"].as_f64(), Some(0.0), "{lost}");
    // `play`: optimal games score about the exact expectation.
    let store_arg = store.to_str().unwrap();
    let played = play_json(&["--store", store_arg, "--games", "200"]);
    assert!(close(played["start_value"].as_f64().unwrap(), optimal));
    let mean = played["summary"]["mean_score"].as_f64().unwrap();
    assert!(
        (mean - optimal).abs() < 0.1 * optimal,
        "{mean} vs {optimal}"
    );
    assert_eq!(played["target"], serde_json::Value::Null, "{played}");
}

#[test]
fn the_objective_is_part_of_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let store_arg = store.to_str().unwrap();
    solve_json(
        &store,
        &["--board", "2", "--target", "32", "--objective", "score"],
    );
    let out = bin()
        .args([
            "solve", "--board", "2", "--target", "32", "--store", store_arg,
        ])
        .output()
        .unwrap();
    fails_in_one_line(&out, "2x2-to-32-score");
}

#[test]
fn a_bad_objective_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    for (args, needle) in [
        (
            &["--board", "2", "--target", "16", "--objective", "speed"][..],
            "objective \"speed\" is not supported: use win or score",
        ),
        (
            &["--board", "2", "--target", "3", "--objective", "score"],
            "target 3 is not a power of two",
        ),
        (
            &["--board", "4", "--objective", "score"],
            "4x4 cannot be played to the end",
        ),
        (&["--board", "3"], "--target is required"),
        (
            &["--board", "2", "--target", "16", "--objective", "Score"],
            "use win or score",
        ),
    ] {
        let out = bin()
            .arg("solve")
            .args(args)
            .arg("--store")
            .arg(&store)
            .output()
            .unwrap();
        fails_in_one_line(&out, needle);
    }
    assert!(!store.exists(), "nothing is written for bad input");
}

/// `plan` takes the variant: a small game's boards are counted for it
/// exactly (the same count `solve` finds), and a 4x4 game with only 2s is
/// modelled on the standard game's counts, which it says are upper bounds.
#[test]
fn plan_counts_the_variants() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--board", "2", "--objective", "score"][..],
        &["--board", "2", "--target", "32", "--four-probability", "1"],
        &["--board", "3", "--target", "16", "--objective", "score"],
    ] {
        let planned = plan_json(args);
        let solved = solve_json(&dir.path().join(args.join("-")), args);
        assert_eq!(planned["states"], solved["states"], "{args:?}");
        assert_eq!(planned["exact_states"], solved["states"], "{args:?}");
        let notes = planned["notes"].to_string();
        assert!(notes.contains("counted exactly for this game"), "{notes}");
    }
    let only_twos = plan_json(&["--board", "4", "--target", "64", "--four-probability", "0"]);
    assert_eq!(only_twos["exact_states"].as_u64(), Some(0), "{only_twos}");
    let notes = only_twos["notes"].to_string();
    assert!(notes.contains("upper bounds (estimated)"), "{notes}");
    let standard = plan_json(&["--board", "4", "--target", "64"]);
    assert!(!standard["notes"].to_string().contains("variant"));
}
