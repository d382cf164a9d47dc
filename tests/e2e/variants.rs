//! Specifies the game variants: another chance of a 4 (`--four-probability
//! P`, the variants issue's spawn rule).
//!
//! - The stored solve's start value equals, to 1e-12, a slow, obvious
//!   memoised recursion over boards as they lie (no symmetry, no layers:
//!   `SlowOptimal` through `players::slow_value`) for P = 0, 0.25,
//!   0.5 and 1 on 2x2 to 16 and 32, and 0.25 and 0.5 on 3x3 to 64, with and
//!   without a discount.
//! - `evaluate` values a player under the store's rule exactly (P = 0.5, 0
//!   and 1).
//! - With only 4s the game to 2T has the states and value of the only-2s
//!   game to T: only the states the rule reaches are enumerated.
//! - `solve --json` reports the rule (and the shape and objective); the rule
//!   is part of the game: a store of another rule is refused by `solve` and
//!   by `play --four-probability`, and `play` plays the store's rule.
//! - Bad input gets one line: P outside [0, 1], finer than a millionth, or
//!   not a number.

use solve2048_core::Game;
use solve2048_players::{parse, slow_value, Parsed};

use crate::cli::{bin, solve_json};
use crate::evaluate::{evaluate_json, SlowOptimal};
use crate::players::{fails_in_one_line, play, play_json};
use crate::use_solution::query;

/// The games of the tests: (board, target, probability of a 4, discount).
/// The slow recursion takes about 25 s on each 3x3 game.
const GAMES: [(u32, u64, f64, f64); 9] = [
    (2, 16, 0.0, 1.0),
    (2, 16, 0.5, 1.0),
    (2, 16, 1.0, 1.0),
    (2, 32, 0.0, 1.0),
    (2, 32, 0.25, 1.0),
    (2, 32, 0.5, 0.9),
    (2, 32, 1.0, 1.0),
    (3, 64, 0.5, 1.0),
    (3, 64, 0.25, 0.95),
];

#[test]
fn start_values_equal_a_slow_recursion_over_boards_as_they_lie() {
    let dir = tempfile::tempdir().unwrap();
    let mut values = Vec::new();
    for (i, (n, target, p, discount)) in GAMES.into_iter().enumerate() {
        let game = Game::new(n, target, discount)
            .unwrap()
            .with_four_probability(p)
            .unwrap();
        let store = dir.path().join(format!("s{i}"));
        let args = [
            "--board".to_string(),
            n.to_string(),
            "--target".into(),
            target.to_string(),
            "--four-probability".into(),
            p.to_string(),
            "--discount".into(),
            discount.to_string(),
            "--chunk-size".into(),
            "3000".into(),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = solve_json(&store, &args);
        assert_eq!(out["four_probability"].as_f64(), Some(p), "{out}");
        assert_eq!(out["rows"].as_u64(), Some(n as u64));
        assert_eq!(out["columns"].as_u64(), Some(n as u64));
        assert_eq!(out["objective"].as_str(), Some("win"));
        let got = out["start_value"].as_f64().unwrap();
        let slow = slow_value(&game, &mut SlowOptimal::new(game)).unwrap();
        assert!(
            (got - slow).abs() < 1e-12,
            "{}: {got} vs {slow}",
            game.name()
        );
        values.push(got);
    }
    // The rule matters: 2x2 to 32 is worth something else at each P. Only
    // 2s on 2x2 never make 32 (a full board of 16, 8, 4, 2 is lost); only
    // 4s play 2x2 to 16 with every tile doubled: always won.
    assert!(values[3..7].windows(2).all(|w| w[0] != w[1]), "{values:?}");
    assert_eq!(values[3], 0.0);
    assert_eq!(values[6], 1.0);
}

#[test]
fn evaluate_values_a_player_under_the_stores_rule() {
    let dir = tempfile::tempdir().unwrap();
    for (n, target, p) in [(3u32, 64u64, 0.5), (2, 32, 0.0), (2, 32, 1.0)] {
        let game = Game::new(n, target, 1.0)
            .unwrap()
            .with_four_probability(p)
            .unwrap();
        let store = dir.path().join(game.name());
        let (n_arg, t_arg, p_arg) = (n.to_string(), target.to_string(), p.to_string());
        solve_json(
            &store,
            &[
                "--board",
                &n_arg,
                "--target",
                &t_arg,
                "--four-probability",
                &p_arg,
            ],
        );
        for spec in ["random", "order:LDRU"] {
            let out = dir.path().join(format!("{}-{spec}", game.name()));
            let got = evaluate_json(&store, spec, &out, &[]);
            let rule = game.spawn_rule();
            let Parsed::Player(mut player) = parse(spec, game.shape, &rule, 0).unwrap() else {
                unreachable!()
            };
            let slow = slow_value(&game, player.as_mut()).unwrap();
            let value = got["value"].as_f64().unwrap();
            let what = format!("{spec} on {}", game.name());
            assert!((value - slow).abs() < 1e-12, "{what}: {value} vs {slow}");
            assert_eq!(got["four_probability"].as_f64(), Some(p), "{what}");
        }
    }
}

/// With only 4s every tile is doubled: the game to 2T is the only-2s game
/// to T, state for state. The stored solves find the same number of states
/// and the same value, and only the states the rule reaches (fewer than the
/// standard game's).
#[test]
fn only_fours_to_twice_the_target_is_only_twos() {
    let dir = tempfile::tempdir().unwrap();
    let solve = |n: &str, target: &str, p: &str| {
        let store = dir.path().join(format!("{n}-{target}-{p}"));
        let args = ["--board", n, "--target", target, "--four-probability", p];
        solve_json(&store, &[&args[..], &["--chunk-size", "2000"]].concat())
    };
    for (n, t, twice) in [("2", "16", "32"), ("3", "32", "64"), ("3", "64", "128")] {
        let (twos, fours) = (solve(n, t, "0"), solve(n, twice, "1"));
        assert_eq!(twos["states"], fours["states"], "{n}x{n} to {t}");
        assert_eq!(twos["start_value"], fours["start_value"], "{n}x{n} to {t}");
        // `query` answers a board and its double alike, looking up only the
        // spawns each rule makes (the store holds no others).
        let (board, doubled) = match n {
            "2" => ("2 2 / . .", "4 4 / . ."),
            _ => ("2 . 2 / . . . / . . .", "4 . 4 / . . . / . . ."),
        };
        let store = |target: &str, p: &str| dir.path().join(format!("{n}-{target}-{p}"));
        let (q, qd) = (
            query(&store(t, "0"), board),
            query(&store(twice, "1"), doubled),
        );
        assert_eq!(q["value"], qd["value"], "{q} {qd}");
        assert_eq!(q["actions"], qd["actions"], "{q} {qd}");
        assert!(q["actions"]["left"].as_f64().is_some(), "{q}");
        let standard = solve(n, t, "0.1");
        assert!(
            twos["states"].as_u64() < standard["states"].as_u64(),
            "{twos} {standard}"
        );
    }
}

#[test]
fn the_spawn_rule_is_part_of_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    let store_arg = store.to_str().unwrap();
    solve_json(
        &store,
        &[
            "--board",
            "2",
            "--target",
            "32",
            "--four-probability",
            "0.5",
        ],
    );
    // Resuming with another rule (the default one) is refused, naming both.
    let out = bin()
        .args([
            "solve", "--board", "2", "--target", "32", "--store", store_arg,
        ])
        .output()
        .unwrap();
    fails_in_one_line(&out, "2x2-to-32-four-0.5");
    // `play` plays the store's rule and refuses another.
    let played = play_json(&["--store", store_arg, "--games", "3"]);
    assert_eq!(played["four_probability"].as_f64(), Some(0.5));
    let out = play(&["--store", store_arg, "--four-probability", "0.1"]);
    fails_in_one_line(&out, "the store solves 2x2-to-32-four-0.5");
    // Without a store, only 4s: every tile a game makes is 4 or more, so a
    // greedy game on 2x2 ends with a score of at least 8 a move.
    let played = play_json(&[
        "--board",
        "2",
        "--player",
        "greedy",
        "--four-probability",
        "1",
        "--games",
        "20",
    ]);
    assert_eq!(played["four_probability"].as_f64(), Some(1.0));
    let games = played["games"].as_array().unwrap();
    assert!(
        games.iter().all(|g| g["score"].as_u64().unwrap() % 8 == 0),
        "{played}"
    );
    assert!(
        games.iter().any(|g| g["score"].as_u64().unwrap() > 0),
        "{played}"
    );
}

#[test]
fn a_bad_spawn_rule_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    for p in ["1.5", "-0.1", "0.1234567", "NaN", "inf"] {
        let flag = format!("--four-probability={p}");
        let out = bin()
            .args(["solve", "--board", "2", "--target", "16", &flag])
            .arg("--store")
            .arg(&store)
            .output()
            .unwrap();
        fails_in_one_line(&out, "is not supported: use a number from 0 to 1");
        let out = play(&["--board", "2", "--player", "greedy", &flag]);
        fails_in_one_line(&out, "is not supported: use a number from 0 to 1");
    }
    let out = bin()
        .args([
            "solve",
            "--board",
            "2",
            "--target",
            "16",
            "--four-probability",
            "half",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!store.exists(), "nothing is written for bad input");
}
