//! Specifies: `play` with every kind of player and `train`. Heuristic
//! players need no store and play any game, to a target or to the end, the
//! same game for the same seed; one game is shown with numbered moves, the
//! new tile marked and the score. `train` resumes to the same bytes as a run
//! never stopped, and its file plays. The optimal player of a store wins,
//! computed exactly, with the store's start value. Bad input (an unknown
//! player or parameter, `optimal` without a store, a store of another game,
//! a damaged weights file or one for another board) gets a one-line error
//! and exit status 1.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use solve2048_players::{parse, slow_value, Parsed};
use solve2048_solution::{OptimalPlayer, Solution};

use crate::cli::{bin, fails_with};
use crate::reference::solved;

pub(crate) fn play(args: &[&str]) -> Output {
    bin().arg("play").args(args).output().unwrap()
}

pub(crate) fn play_json(args: &[&str]) -> serde_json::Value {
    let out = play(&[args, &["--json"]].concat());
    assert!(
        out.status.success(),
        "play {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("exactly one JSON object on stdout")
}

/// A failure with one line on stderr that contains `needle`.
pub(crate) fn fails_in_one_line(out: &Output, needle: &str) {
    fails_with(out, needle);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

fn train(out: &Path, games: &str, extra: &[&str]) -> Output {
    let out = bin()
        .args(["train", "--board", "3", "--games", games, "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "train: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn heuristic_players_play_any_game_the_same_for_a_seed() {
    // The full 4x4 game, no target: every game ends lost, and a seed gives
    // the same games.
    let a = play_json(&["--player", "greedy", "--board", "4", "--games", "30"]);
    let b = play_json(&["--player", "greedy", "--board", "4", "--games", "30"]);
    assert_eq!(a["games"], b["games"]);
    assert_eq!(a["target"], serde_json::Value::Null);
    assert_eq!(a["store"], serde_json::Value::Null);
    let games = a["games"].as_array().unwrap();
    assert_eq!(games.len(), 30);
    assert_eq!(games[0]["seed"], 1);
    assert!(games
        .iter()
        .all(|g| g["outcome"] == "lost" && g["won"] == false));
    let summary = &a["summary"];
    assert_eq!(summary["games"], 30);
    assert_eq!(summary["won"], serde_json::Value::Null);
    // Shares of games reaching each tile: from 128 (or less) up, falling.
    let reached = summary["reached"].as_array().unwrap();
    assert!(reached[0]["tile"].as_u64().unwrap() <= 128);
    assert_eq!(reached[0]["share"], 1.0);
    let shares: Vec<f64> = reached
        .iter()
        .map(|r| r["share"].as_f64().unwrap())
        .collect();
    assert!(shares.windows(2).all(|w| w[0] >= w[1]), "{shares:?}");
    let max = games.iter().map(|g| g["max_tile"].as_u64().unwrap()).max();
    assert_eq!(reached.last().unwrap()["tile"].as_u64(), max);
    let mean = games
        .iter()
        .map(|g| g["score"].as_f64().unwrap())
        .sum::<f64>()
        / 30.0;
    assert!((summary["mean_score"].as_f64().unwrap() - mean).abs() < 1e-9);
    // Another first seed, other games.
    let c = play_json(&[
        "--player", "greedy", "--board", "4", "--games", "30", "--seed", "2",
    ]);
    assert_eq!(c["games"][0], a["games"][1]);
    // A target stops games when the tile appears: expectimax on 3x3 to 128
    // wins most of them.
    let t = play_json(&[
        "--player",
        "expectimax:2",
        "--board",
        "3",
        "--target",
        "128",
        "--games",
        "20",
    ]);
    let won = t["summary"]["won"].as_u64().unwrap();
    assert!(won >= 10, "{}", t["summary"]);
    assert_eq!(
        t["summary"]["win_rate"].as_f64().unwrap(),
        won as f64 / 20.0
    );
    for g in t["games"].as_array().unwrap() {
        assert_eq!(g["won"], g["max_tile"] == 128, "{g}");
    }
}

#[test]
fn one_game_is_shown_move_by_move() {
    let out = play(&["--player", "order:LDRU", "--board", "3", "--seed", "5"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let game = play_json(&["--player", "order:LDRU", "--board", "3", "--seed", "5"]);
    let game = &game["games"][0];
    let moves = game["moves"].as_u64().unwrap();
    assert!(
        text.starts_with("order:LDRU on 3x3 to the end, seed 5\n"),
        "{text}"
    );
    // Every move numbered, each board with its new tile in brackets.
    for m in 1..=moves {
        assert!(text.contains(&format!("\nmove {m}: ")), "move {m}: {text}");
    }
    assert!(!text.contains(&format!("\nmove {}: ", moves + 1)));
    assert_eq!(text.matches('[').count() as u64, moves);
    assert!(text.trim_end().ends_with(&format!(
        "lost after {moves} moves (seed 5): score {}, largest tile {}",
        game["score"], game["max_tile"]
    )));
    assert!(text.contains(&format!(", score {}\n", game["score"])));
    // The steps chain: each spawn is where the text marks it.
    let steps = game["steps"].as_array().unwrap();
    assert_eq!(steps.len() as u64, moves);
    let first = &steps[0]["spawn"];
    assert!(["2", "4"].contains(&first["tile"].to_string().as_str()));
    assert_eq!(
        play(&["--player", "order:LDRU", "--board", "3", "--seed", "5"]).stdout,
        out.stdout
    );
}

#[test]
fn train_resumes_to_the_same_bytes_and_its_network_plays() {
    let dir = tempfile::tempdir().unwrap();
    let straight = dir.path().join("straight.weights");
    let resumed = dir.path().join("resumed.weights");
    let out = train(&straight, "600", &["--checkpoint-every", "200"]);
    // Not a terminal: a plain line at each checkpoint.
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(progress.contains("200/600 games"), "{progress}");
    assert!(progress.contains("600/600 games"), "{progress}");
    train(&resumed, "250", &["--checkpoint-every", "100"]);
    let out = train(&resumed, "600", &["--checkpoint-every", "200"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("resuming from"));
    assert_eq!(
        std::fs::read(&straight).unwrap(),
        std::fs::read(&resumed).unwrap()
    );
    let json = bin()
        .args(["train", "--board", "3", "--games", "600", "--json", "--out"])
        .arg(&resumed)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["games"], 600);
    assert_eq!(json["games_this_run"], 0);
    assert_eq!(json["learning_rate"], 0.003125);
    let spec = format!("ntuple:{}", straight.display());
    let g = play_json(&["--player", &spec, "--board", "3", "--games", "5"]);
    assert_eq!(g["player"], spec.as_str());
    // Another seed cannot resume this file.
    let other = bin()
        .args([
            "train", "--board", "3", "--games", "700", "--seed", "2", "--out",
        ])
        .arg(&straight)
        .output()
        .unwrap();
    fails_in_one_line(&other, "was made with seed 1, this run has 2");
}

#[test]
fn bad_players_and_files_get_one_line_errors() {
    for (args, needle) in [
        (
            &["--player", "minimax", "--board", "3"][..],
            "unknown player \"minimax\"",
        ),
        (
            &["--player", "expectimax:x", "--board", "3"],
            "bad parameter \"x\" for player \"expectimax\"",
        ),
        (
            &["--player", "expectimax:9", "--board", "3"],
            "the depth is a number of moves from 1 to 8",
        ),
        (
            &["--player", "order:LLRU", "--board", "3"],
            "L appears twice",
        ),
        (&["--player", "mc", "--board", "3"], "needs a parameter"),
        (
            &["--player", "greedy:2", "--board", "3"],
            "greedy takes no parameter",
        ),
        (
            &["--player", "optimal", "--board", "3"],
            "the optimal player needs a solved store",
        ),
        (&["--board", "3"], "name a player with --player"),
        (&["--player", "greedy"], "name the game with --board"),
        (
            &["--player", "greedy", "--board", "5"],
            "board \"5\" is not supported",
        ),
        (
            &["--player", "greedy", "--board", "3", "--target", "100"],
            "target 100 is not a power of two",
        ),
        (
            &["--player", "greedy", "--board", "3", "--games", "0"],
            "--games must be at least 1",
        ),
        (
            &["--player", "ntuple:/nonexistent/w.weights", "--board", "3"],
            "weights file /nonexistent/w.weights: No such file",
        ),
    ] {
        fails_in_one_line(&play(args), needle);
    }
    // A store of another game, and a store that is not there.
    let s16 = solved(&["--board", "2", "--target", "16"])
        .store
        .to_str()
        .unwrap();
    fails_in_one_line(
        &play(&["--store", s16, "--board", "3"]),
        &format!("store {s16} solves 2x2-to-16, not 3x3 to 16"),
    );
    fails_in_one_line(
        &play(&["--store", s16, "--player", "greedy", "--target", "32"]),
        "solves 2x2-to-16, not 2x2 to 32",
    );
    fails_in_one_line(&play(&["--store", "/nonexistent/store"]), "does not exist");
    // A weights file damaged, or for another board, named.
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.weights");
    train(&w, "50", &[]);
    let spec = format!("ntuple:{}", w.display());
    fails_in_one_line(
        &play(&["--player", &spec, "--board", "4"]),
        &format!("weights file {} is for 3x3, not 4x4", w.display()),
    );
    let mut bytes = std::fs::read(&w).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&w, &bytes).unwrap();
    fails_in_one_line(
        &play(&["--player", &spec, "--board", "3"]),
        &format!("rejected weights file {}: checksum mismatch", w.display()),
    );
    std::fs::write(&w, &bytes[..40]).unwrap();
    fails_in_one_line(
        &play(&["--player", &spec, "--board", "3"]),
        "truncated: 40 bytes",
    );
    std::fs::write(&w, b"not a network").unwrap();
    fails_in_one_line(&play(&["--player", &spec, "--board", "3"]), "bad magic");
    // train refuses what it cannot do before it starts.
    for (args, needle) in [
        (
            &["--board", "5", "--games", "9"][..],
            "board size 5 is not supported",
        ),
        (&["--board", "3", "--games", "0"], "train at least 1 game"),
        (
            &["--board", "3", "--games", "9", "--tuples", "00-01-99"],
            "cell 99 is outside the 3x3 board",
        ),
        (
            &[
                "--board",
                "3",
                "--games",
                "9",
                "--tuples",
                "4x4-rows-squares",
            ],
            "preset 4x4-rows-squares is for 4x4",
        ),
    ] {
        let out = bin()
            .arg("train")
            .args(args)
            .arg("--out")
            .arg(dir.path().join("t.weights"))
            .output()
            .unwrap();
        fails_with(&out, needle);
    }
    let out = bin()
        .args([
            "train",
            "--board",
            "3",
            "--games",
            "9",
            "--out",
            "/nonexistent/dir/t.weights",
        ])
        .output()
        .unwrap();
    fails_in_one_line(&out, "the directory /nonexistent/dir does not exist");
}

/// The optimal player of a store, evaluated exactly by the players' slow
/// evaluator over actual boards, wins with the store's start value; the
/// store's values of boards as they lie agree with it.
#[test]
fn the_optimal_player_wins_with_the_start_value_exactly() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    for args in [
        &["--board", "2", "--target", "16"][..],
        &["--board", "3", "--target", "64"],
    ] {
        let reference = solved(args);
        let store = solve2048_store::Store::open(
            reference.store.to_str().unwrap(),
            solve2048_store::Access::ReadOnly,
        )
        .unwrap();
        let solution = Arc::new(rt.block_on(Solution::open(store)).unwrap());
        let game = *solution.game();
        let mut optimal = OptimalPlayer::new(
            solution.clone(),
            rt.handle().clone(),
            game.shape,
            game.target_exp,
        )
        .unwrap();
        let start = reference.summary["start_value"].as_f64().unwrap();
        let exact = slow_value(&game, &mut optimal).unwrap();
        assert!(
            (exact - start).abs() < 1e-12,
            "{}: {exact} vs {start}",
            game.name()
        );
        // Heuristic players do worse, exactly.
        let Parsed::Player(mut greedy) =
            parse("greedy", game.shape, &game.spawn_rule(), 0).unwrap()
        else {
            unreachable!()
        };
        let g = slow_value(&game, greedy.as_mut()).unwrap();
        assert!(g < start, "greedy {g} vs optimal {start}");
        // Another game is refused.
        let other = OptimalPlayer::new(
            solution,
            rt.handle().clone(),
            solve2048_core::Shape::square(4),
            game.target_exp,
        );
        assert!(other.err().unwrap().to_string().contains("not 4x4"));
    }
}
