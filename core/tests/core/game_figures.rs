//! Whole small games through the fast kernels, driven layer by layer in
//! memory, against the slow breadth-first reference and published figures.
//! (The stored, chunked pipeline is tested end to end in the workspace tests.)

use std::collections::{BTreeMap, HashMap};

use solve2048_core::kernel::{enumerate, solve};
use solve2048_core::part::PartId;
use solve2048_core::spawn::Starts;
use solve2048_core::table::ValueTable;
use solve2048_core::{slow, Game};

struct Solved {
    parts: BTreeMap<PartId, Vec<u64>>,
    values: HashMap<u64, f64>,
    start_value: f64,
}

fn solve_in_memory(game: &Game) -> Solved {
    let n = game.size();
    let mut parts: BTreeMap<PartId, Vec<u64>> = BTreeMap::new();
    for &s in Starts::new(n).weights.keys() {
        let b = solve2048_core::Board(s);
        parts
            .entry(PartId {
                sum: b.tile_sum(),
                max_exp: b.max_exponent(),
            })
            .or_default()
            .push(s);
    }
    let mut sum = 4;
    while parts.keys().any(|p| p.sum >= sum) {
        let layer: Vec<PartId> = parts.keys().filter(|p| p.sum == sum).copied().collect();
        for p in layer {
            let states = parts.get_mut(&p).unwrap();
            states.sort_unstable();
            states.dedup();
            let states = states.clone();
            for (q, groups) in enumerate(game, p, &states, |_| Some(1)).unwrap() {
                parts.entry(q).or_default().extend(groups.concat());
            }
        }
        sum += 2;
    }
    let mut values = HashMap::new();
    let mut tables: BTreeMap<u32, ValueTable> = BTreeMap::new();
    let empty = ValueTable::with_capacity(1);
    let max_sum = parts.keys().map(|p| p.sum).max().unwrap();
    for sum in (4..=max_sum).rev().step_by(2) {
        let layer: Vec<(&PartId, &Vec<u64>)> = parts.iter().filter(|(p, _)| p.sum == sum).collect();
        let count = layer.iter().map(|(_, s)| s.len()).sum();
        let table = ValueTable::with_capacity(count);
        for (_, states) in layer {
            let (v, _) = solve(
                game,
                sum,
                states,
                tables.get(&(sum + 2)).unwrap_or(&empty),
                tables.get(&(sum + 4)).unwrap_or(&empty),
            )
            .unwrap();
            for (&s, &x) in states.iter().zip(&v) {
                table.insert(s, x);
                values.insert(s, x);
            }
        }
        tables.insert(sum, table);
    }
    let start_value = Starts::new(n).expect(|s| values[&s]);
    Solved {
        parts,
        values,
        start_value,
    }
}

fn published_count(n: u8, target: u64) -> u64 {
    let csv = include_str!("../../../../shared/reference/published.csv");
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
