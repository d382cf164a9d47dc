//! Specifies: whole small games through the fast kernels, driven layer by
//! layer in memory (`in_memory`), equal to the slow breadth-first reference
//! and to the published counts and values (`tests/data/published.csv`).
//! (The stored, chunked pipeline is tested end to end in the workspace tests.)

use std::collections::BTreeMap;

use solve2048_core::kernel::in_memory::solve as solve_in_memory;
use solve2048_core::{rules::slow, Game};

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
            let fast = solve_in_memory(&game);
            let slow_parts = slow::enumerate(&game);
            let slow_values = slow::solve(&game);
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
                        (v - slow_values[s]).abs() < 1e-12,
                        "{} state {s:#x}: {v} vs {}",
                        game.name(),
                        slow_values[s]
                    );
                }
                slow_count += states.len();
            }
            let fast_count: usize = fast.parts.values().map(Vec::len).sum();
            assert_eq!(fast_count, slow_count, "{}", game.name());
            let slow_start: f64 = slow::starts(n as usize, p)
                .iter()
                .map(|(s, q)| q * slow_values[s])
                .sum();
            assert!(
                (fast.start_value - slow_start).abs() < 1e-12,
                "{}: {} vs {slow_start}",
                game.name(),
                fast.start_value
            );
        }
    }
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
