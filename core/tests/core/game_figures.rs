//! Specifies: whole small games through the fast kernels, driven layer by
//! layer in memory (`in_memory`), equal to the slow breadth-first reference
//! and to the published counts and values (`tests/data/published.csv`).
//! (The stored, chunked pipeline is tested end to end in the workspace tests.)

use std::collections::BTreeMap;

use solve2048_core::kernel::in_memory::solve as solve_in_memory;
use solve2048_core::{rules::slow, Game, Objective, Shape};

fn published_count(n: u8, target: u64) -> u64 {
    let csv = include_str!("../../../tests/data/published.csv");
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[0] == n.to_string() && f[1] == target.to_string())
        .map(|f| f[2].parse().unwrap())
        .expect("game listed in published.csv")
}

#[test]
fn small_games_match_slow_reference_exactly() {
    for (n, target) in [(2, 8), (2, 16), (2, 32), (2, 64), (3, 8), (3, 16)] {
        let game = Game::new(n, target, 1.0).unwrap();
        let fast = solve_in_memory(&game);
        let slow_parts = slow::enumerate(&game);
        let fast_parts: BTreeMap<(u32, u8), Vec<u64>> = fast
            .parts
            .iter()
            .map(|(p, s)| ((p.sum, p.max_exp), s.clone()))
            .collect();
        let slow_parts: BTreeMap<(u32, u8), Vec<u64>> = slow_parts
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().collect()))
            .collect();
        assert_eq!(fast_parts, slow_parts, "{}", game.name());
        let slow_values = slow::solve(&game);
        for (s, v) in &fast.values {
            assert!(
                (v - slow_values[s]).abs() < 1e-12,
                "{} state {s:#x}",
                game.name()
            );
        }
    }
}

/// Another chance of a 4, only 2s or only 4s: the states the rule reaches
/// and their values are the slow reference's.
#[test]
fn other_spawn_rules_match_slow_reference() {
    for (n, target) in [(2, 16), (2, 32), (3, 16)] {
        for p in [0.0, 0.25, 0.5, 0.9, 1.0] {
            let game = Game::new(n, target, 1.0)
                .unwrap()
                .with_four_probability(p)
                .unwrap();
            assert_matches_slow_reference(&game);
        }
    }
}

/// Rectangles (4 symmetries, rows and columns of different lengths), to
/// targets and, for the score, to the end: the states and values are the
/// slow reference's, and a board and its transpose (2x3 and 3x2) have the
/// same value.
#[test]
fn rectangles_match_slow_reference() {
    let shape = |text: &str| text.parse::<Shape>().unwrap();
    let to = |s: &str, target| Game::on(shape(s), target, 1.0).unwrap();
    let end = |s: &str| Game::to_the_end(shape(s), 1.0).unwrap();
    let mut start_values = BTreeMap::new();
    for game in [
        to("2x3", 16),
        to("2x3", 64),
        to("2x3", 256),
        to("3x2", 64),
        to("3x2", 256),
        to("2x4", 32),
        to("4x2", 32),
        to("2x4", 64).with_four_probability(0.5).unwrap(),
        end("2x3"),
        end("3x2"),
    ] {
        let fast = assert_matches_slow_reference(&game);
        start_values.insert(game.name(), fast.start_value);
    }
    for (a, b) in [
        ("2x3-to-64", "3x2-to-64"),
        ("2x3-to-256", "3x2-to-256"),
        ("2x4-to-32", "4x2-to-32"),
        ("2x3-to-the-end-score", "3x2-to-the-end-score"),
    ] {
        let (va, vb) = (start_values[a], start_values[b]);
        assert!(
            (va - vb).abs() <= 1e-12 * va.max(1.0),
            "{a} {va} vs {b} {vb}"
        );
    }
    assert!(start_values["2x3-to-the-end-score"] > 100.0);
}

/// The score objective, to a target and to the end, with other rules and a
/// discount: the states and their values (expected scores) are the slow
/// reference's, and the states are those of the win game to the same target
/// (the objective changes the values, not the game's moves).
#[test]
fn score_objective_matches_slow_reference() {
    let to_the_end = |n, discount, p| {
        Game::to_the_end(Shape::square(n), discount)
            .unwrap()
            .with_four_probability(p)
            .unwrap()
    };
    let to = |n, target, p| {
        Game::new(n, target, 1.0)
            .unwrap()
            .with_four_probability(p)
            .unwrap()
            .with_objective(Objective::Score)
            .unwrap()
    };
    for game in [
        to_the_end(2, 1.0, 0.1),
        to_the_end(2, 0.9, 0.1),
        to_the_end(2, 1.0, 0.5),
        to_the_end(2, 1.0, 0.0),
        to(2, 32, 0.1),
        to(3, 16, 0.1),
        to(3, 32, 0.25),
    ] {
        let fast = assert_matches_slow_reference(&game);
        assert!(
            fast.start_value > 4.0,
            "{}: {}",
            game.name(),
            fast.start_value
        );
        if let Some(target) = game.target_tile() {
            let win = Game {
                objective: Objective::Win,
                ..game
            };
            let win_states: usize = solve_in_memory(&win).parts.values().map(Vec::len).sum();
            let states: usize = fast.parts.values().map(Vec::len).sum();
            assert_eq!(states, win_states, "{} to {target}", game.name());
        }
    }
    // Scores only add up: playing on past a 16 is worth more than stopping
    // there.
    let end = solve_in_memory(&to_the_end(2, 1.0, 0.0)).start_value;
    let to_16 = solve_in_memory(&to(2, 16, 0.0)).start_value;
    assert!(end > to_16, "{end} vs {to_16}");
}

/// Solve `game` in memory with the fast kernels and check every part,
/// state and value, and the start value, against the slow reference.
fn assert_matches_slow_reference(game: &Game) -> solve2048_core::kernel::in_memory::Solved {
    let n = game.shape;
    let fast = solve_in_memory(game);
    let slow_parts = slow::enumerate(game);
    let slow_values = slow::solve(game);
    // Values are win probabilities or expected scores: compare relatively.
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
    let mut slow_count = 0;
    for ((sum, max_exp), states) in &slow_parts {
        let part = fast
            .parts
            .iter()
            .find(|(q, _)| q.sum == *sum && q.max_exp == *max_exp)
            .map(|(_, s)| s)
            .unwrap_or_else(|| panic!("{}: no part ({sum}, {max_exp})", game.name()));
        for s in states {
            assert!(
                part.binary_search(s).is_ok(),
                "{} lacks {s:#x}",
                game.name()
            );
            let v = fast.values[s];
            assert!(
                close(v, slow_values[s]),
                "{} state {s:#x}: {v} vs {}",
                game.name(),
                slow_values[s]
            );
        }
        slow_count += states.len();
    }
    let fast_count: usize = fast.parts.values().map(Vec::len).sum();
    assert_eq!(fast_count, slow_count, "{}", game.name());
    let slow_start: f64 = slow::starts(n, game.four_probability())
        .iter()
        .map(|(s, q)| q * slow_values[s])
        .sum();
    assert!(
        close(fast.start_value, slow_start),
        "{}: {} vs {slow_start}",
        game.name(),
        fast.start_value
    );
    fast
}

#[test]
fn counts_and_values_match_published_small() {
    for (n, target, value) in [
        (2u32, 8u64, Some(1.0)),
        (2, 16, Some(0.96251)),
        (2, 32, Some(0.08289)),
        (2, 64, None),
        (3, 8, None),
        (3, 16, None),
        (3, 32, None),
        (3, 64, None),
    ] {
        let game = Game::new(n, target, 1.0).unwrap();
        let solved = solve_in_memory(&game);
        let count: usize = solved.parts.values().map(Vec::len).sum();
        assert_eq!(
            count as u64,
            published_count(n as u8, target),
            "{}",
            game.name()
        );
        if let Some(v) = value {
            assert!(
                (solved.start_value - v).abs() < 5e-6,
                "{}: {}",
                game.name(),
                solved.start_value
            );
        }
    }
    // 2x2 to 8 cannot be lost under optimal play: exactly 1.
    let solved = solve_in_memory(&Game::new(2, 8, 1.0).unwrap());
    assert_eq!(solved.start_value, 1.0);
}
