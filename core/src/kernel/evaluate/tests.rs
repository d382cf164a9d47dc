//! Specifies the evaluation kernels: a whole small game evaluated in memory
//! with them, part by part (one group a part, as a job of one chunk a part
//! would), gives the values of a slow, obvious memoised recursion over
//! boards as they lie, for players that are and are not symmetric; the
//! optimal player's value is the optimal one and costs nothing anywhere;
//! and every board's reach times loss adds up to the gap between the
//! optimal value and the player's.

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::kernel::value_table::ValueTable;
use crate::kernel::{action_values, best_action, gather, SpawnSums};
use crate::rules::canonical::{canonical, Orientation};
use crate::rules::direction::Direction;
use crate::rules::moves::Mover;
use crate::rules::spawn::Starts;
use crate::space::ids::PartId;
use crate::space::parts::part_of;
use crate::Game;

/// A player as a function of the board.
type Play<'a> = &'a dyn Fn(u64) -> Moves;

/// A player and its name.
type Named = (&'static str, Box<dyn Fn(u64) -> Moves>);

/// The value of `board` when `play` plays, by memoised recursion over
/// boards as they lie (the spawn rule from [`crate::rules::slow`]).
fn slow_value(game: &Game, play: Play, memo: &mut HashMap<u64, f64>, board: u64) -> f64 {
    if let Some(&v) = memo.get(&board) {
        return v;
    }
    let n = game.shape;
    let mover = Mover::new(n);
    let mut v = 0.0;
    if !mover.is_lost(board) {
        let p = play(board);
        for d in Direction::ALL {
            if p[d as usize] == 0.0 {
                continue;
            }
            let after = mover.apply(board, d);
            let q = if crate::rules::moves::has_exponent(after, game.target_exp) {
                1.0
            } else {
                crate::rules::slow::spawns(after, n, game.four_probability())
                    .into_iter()
                    .map(|(b, pb)| pb * slow_value(game, play, memo, b))
                    .sum()
            };
            v += p[d as usize] * game.discount * q;
        }
    }
    memo.insert(board, v);
    v
}

/// What evaluating a game in memory with the kernels found.
struct Evaluated {
    value: f64,
    optimal: f64,
    cost: f64,
    states: usize,
    worst: Vec<crate::task::evaluation::WorstState>,
    values: HashMap<u64, f64>,
}

/// Evaluate `play` on `game` with the kernels, one group a part.
fn evaluate(game: &Game, play: Play) -> Evaluated {
    let n = game.shape;
    let mover = Mover::new(n);
    let solved = crate::kernel::in_memory::solve(game);
    let optimal_value = |s: u64| solved.values[&canonical(s, n)];
    let best = |s: u64| {
        let q = action_values(game, &mover, s, |k| {
            Ok::<f64, ()>(solved.values[&canonical(k, n)])
        })
        .unwrap();
        best_action(&q).unwrap().1
    };
    let starts = Starts::actual(n, &game.spawn_rule());
    // Forward: part by part, runs in, successors and pushes out.
    let mut runs: BTreeMap<PartId, Vec<u64>> = BTreeMap::new();
    for &s in starts.weights.keys() {
        runs.entry(part_of(s)).or_default().push(s);
    }
    type Pushed = (u8, Vec<u64>, Vec<f64>);
    let mut pushes: BTreeMap<PartId, Vec<Pushed>> = BTreeMap::new();
    // Each part: its states, moves, reach and requests (target part, keys).
    type Part = (Vec<u64>, Vec<Moves>, Vec<f64>, Vec<(PartId, Vec<u64>)>);
    let mut parts: BTreeMap<PartId, Part> = BTreeMap::new();
    while let Some((part, mut states)) = runs.pop_first() {
        states.sort_unstable();
        states.dedup();
        let mut reach = Reach::new(game, &states);
        reach.add_starts(&starts);
        for (tile, keys, masses) in pushes.get(&part).into_iter().flatten() {
            reach.add_pushes(*tile, keys, masses).unwrap();
        }
        let reach = reach.finish();
        let moves: Vec<Moves> = states.iter().map(|&s| play(s)).collect();
        let made = enumerate_under(game, part, &states, &moves, &reach, |_| Some(1)).unwrap();
        for (p, mut groups) in made.successors {
            runs.entry(p).or_default().append(&mut groups[0]);
        }
        let mut requests = Vec::new();
        for (p, groups) in made.requests {
            let masses = made.masses[&p][0].clone();
            let tile = ((p.sum - part.sum) / 2) as u8;
            pushes
                .entry(p)
                .or_default()
                .push((tile, groups[0].clone(), masses));
            requests.push((p, groups[0].clone()));
        }
        parts.insert(part, (states, moves, reach, requests));
    }
    // Backward: part by part from the top, each answered from the parts
    // above, beside the optimal values.
    let mut values: HashMap<u64, f64> = HashMap::new();
    let table_of = |keys: &mut dyn Iterator<Item = (u64, f64)>| {
        let pairs: Vec<(u64, f64)> = keys.collect();
        let t = ValueTable::with_capacity(pairs.len());
        for (k, v) in pairs {
            t.insert(k, v);
        }
        t
    };
    let (mut cost, mut worst) = (0.0, Vec::new());
    let mut states_total = 0;
    // Each valued part's tables: the player's values, the optimal ones.
    let mut tables: HashMap<PartId, (ValueTable, ValueTable)> = HashMap::new();
    let empty = (ValueTable::with_capacity(1), ValueTable::with_capacity(1));
    for (part, (states, moves, reach, requests)) in parts.iter().rev() {
        let (mut mine, mut best_sums) = (Vec::new(), Vec::new());
        for (p, keys) in requests {
            let tile = ((p.sum - part.sum) / 2) as u8;
            let (player, opt) = tables.get(p).unwrap_or(&empty);
            let got = gather(game, Orientation::AsTheyLie, part.sum, tile, keys, player).unwrap();
            let c: Vec<u64> = keys.iter().map(|&k| canonical(k, n)).collect();
            let want = gather(game, Orientation::Canonical, part.sum, tile, &c, opt).unwrap();
            for (i, &k) in keys.iter().enumerate() {
                mine.push((k, tile, got[i]));
                best_sums.push((k, tile, want[i]));
            }
        }
        let sums_of = |mut v: Vec<(u64, u8, f64)>| {
            v.sort_by_key(|x| (x.0, x.1));
            let mut s = SpawnSums::default();
            for w in v.chunks(2) {
                assert_eq!((w[0].0, w[0].1, w[1].1), (w[1].0, 1, 2));
                s.afterstates.push(w[0].0);
                s.twos.push(w[0].2);
                s.fours.push(w[1].2);
            }
            s
        };
        let (sums, opt_sums) = (sums_of(mine), sums_of(best_sums));
        let opt_values: Vec<f64> = states.iter().map(|&s| optimal_value(s)).collect();
        let best_moves: Vec<Direction> = states.iter().map(|&s| best(s)).collect();
        let optimal = Optimal {
            values: &opt_values,
            best: &best_moves,
            sums: &opt_sums,
        };
        let valued = solve_under(game, states, moves, reach, &sums, optimal).unwrap();
        for (&s, &v) in states.iter().zip(&valued.values) {
            values.insert(s, v);
        }
        let canon = solved.parts.get(part).cloned().unwrap_or_default();
        tables.insert(
            *part,
            (
                table_of(&mut states.iter().map(|&s| (s, values[&s]))),
                table_of(&mut canon.iter().map(|&s| (s, solved.values[&s]))),
            ),
        );
        cost += valued.evaluation.cost;
        crate::task::evaluation::keep_worst(&mut worst, valued.evaluation.worst);
        states_total += states.len();
    }
    Evaluated {
        value: starts.expect(|s| values[&s]),
        optimal: solved.start_value,
        cost,
        states: states_total,
        worst,
        values,
    }
}

/// The first legal move in the order left, down, right, up.
fn order_ldru(mover: Mover) -> impl Fn(u64) -> Moves {
    move |s| {
        let mut p = [0.0; 4];
        for d in [
            Direction::Left,
            Direction::Down,
            Direction::Right,
            Direction::Up,
        ] {
            if mover.apply(s, d) != s {
                p[d as usize] = 1.0;
                break;
            }
        }
        p
    }
}

/// Every legal move alike.
fn uniform(mover: Mover) -> impl Fn(u64) -> Moves {
    move |s| {
        let legal: Vec<Direction> = Direction::ALL
            .into_iter()
            .filter(|&d| mover.apply(s, d) != s)
            .collect();
        let mut p = [0.0; 4];
        for &d in &legal {
            p[d as usize] = 1.0 / legal.len() as f64;
        }
        p
    }
}

/// Left with probability 0.7 when legal, the rest shared by the other legal
/// moves: neither symmetric nor uniform.
fn lefty(mover: Mover) -> impl Fn(u64) -> Moves {
    let even = uniform(mover);
    move |s| {
        let mut p = even(s);
        let others = p.iter().filter(|&&x| x > 0.0).count() as f64 - 1.0;
        if p[0] > 0.0 && others > 0.0 {
            p = p.map(|x| if x > 0.0 { 0.3 / others } else { 0.0 });
            p[0] = 0.7;
        }
        p
    }
}

#[test]
fn values_match_a_slow_recursion_and_losses_add_up_to_the_gap() {
    // 3x3 to 32 and more only for order:LDRU (random reaches a million
    // boards there); the end-to-end tests take them all on.
    for (n, target, discount) in [(2, 16, 1.0), (2, 32, 1.0), (3, 16, 0.95), (3, 32, 1.0)] {
        let game = Game::new(n, target, discount).unwrap();
        let mover = Mover::new(game.shape);
        let players: [Named; 3] = [
            ("order:LDRU", Box::new(order_ldru(mover))),
            ("random", Box::new(uniform(mover))),
            ("lefty", Box::new(lefty(mover))),
        ];
        for (name, play) in &players {
            if n == 3 && target > 16 && *name != "order:LDRU" {
                continue;
            }
            let got = evaluate(&game, play.as_ref());
            let mut memo = HashMap::new();
            let mut want = 0.0;
            let starts = Starts::actual(game.shape, &game.spawn_rule());
            for (&s, &w) in &starts.weights {
                let v = slow_value(&game, play.as_ref(), &mut memo, s);
                want += w as f64 / starts.denominator as f64 * v;
            }
            let what = format!("{name} on {}", game.name());
            assert!(
                (got.value - want).abs() < 1e-12,
                "{what}: {} vs {want}",
                got.value
            );
            // Every non-terminal board the player reaches, and its value.
            let reached: Vec<(&u64, &f64)> =
                memo.iter().filter(|(&b, _)| !mover.is_lost(b)).collect();
            assert_eq!(got.states, reached.len(), "{what}");
            for (b, v) in reached {
                assert!((got.values[b] - v).abs() < 1e-12, "{what}: {b:#x}");
            }
            let gap = got.optimal - got.value;
            assert!(
                (got.cost - gap).abs() < 1e-12,
                "{what}: {} vs {gap}",
                got.cost
            );
            if gap > 1e-9 {
                assert!(!got.worst.is_empty(), "{what}");
                let top = &got.worst[0];
                assert!(top.loss > 0.0 && top.reach > 0.0 && top.optimal > top.value - 1e-12);
                assert!(
                    top.moves[top.best as usize] < 1.0,
                    "{what}: it played the best"
                );
            }
        }
    }
}

#[test]
fn the_optimal_player_is_worth_the_optimal_value_and_loses_nothing() {
    for (n, target) in [(2, 32), (3, 32)] {
        let game = Game::new(n, target, 1.0).unwrap();
        let mover = Mover::new(game.shape);
        let solved = crate::kernel::in_memory::solve(&game);
        let play = |s: u64| {
            let q = action_values(&game, &mover, s, |k| {
                Ok::<f64, ()>(solved.values[&canonical(k, game.shape)])
            })
            .unwrap();
            let mut p = [0.0; 4];
            p[best_action(&q).unwrap().1 as usize] = 1.0;
            p
        };
        let got = evaluate(&game, &play);
        assert!((got.value - got.optimal).abs() < 1e-12, "{}", game.name());
        assert_eq!(got.cost, 0.0);
        assert!(got.worst.is_empty());
    }
}

#[test]
fn bad_move_distributions_are_refused() {
    let game = Game::new(3, 64, 1.0).unwrap();
    let mover = Mover::new(crate::Shape::square(3));
    let part = PartId { sum: 4, max_exp: 1 };
    // Two 2s on the top row, beside each other: left and right both merge.
    let s = 0x0011;
    let states = [s];
    let run = |p: Moves| enumerate_under(&game, part, &states, &[p], &[1.0], |_| Some(1));
    assert!(run([0.5, 0.5, 0.0, 0.0]).is_ok());
    // Up does not move that board.
    assert_eq!(
        run([0.0, 0.0, 1.0, 0.0]).unwrap_err(),
        EvaluateError::IllegalMove {
            state: s,
            direction: Direction::Up
        }
    );
    for bad in [
        [0.5, 0.2, 0.0, 0.0],
        [f64::NAN, 1.0, 0.0, 0.0],
        [1.5, -0.5, 0.0, 0.0],
    ] {
        assert!(matches!(
            run(bad).unwrap_err(),
            EvaluateError::NotADistribution { .. }
        ));
    }
    assert!(matches!(
        enumerate_under(&game, part, &states, &[], &[1.0], |_| Some(1)).unwrap_err(),
        EvaluateError::Lengths { .. }
    ));
    assert!(check_moves(&mover, s, &[0.0, 1.0, 0.0, 0.0]).is_ok());
}

/// The evaluation's successors with several groups a part are its
/// successors with one group, split by [`crate::space::ids::group_of`].
#[test]
fn grouped_successors_are_the_flat_ones_split_by_group() {
    let game = Game::new(3, 256, 1.0).unwrap();
    let mover = Mover::new(crate::Shape::square(3));
    let mut best = (PartId { sum: 0, max_exp: 0 }, Vec::new());
    crate::kernel::in_memory::enumerate(&game, |part, states| {
        if states.len() > best.1.len() {
            best = (part, states);
        }
    });
    let (part, states) = best;
    // Every legal move, equally likely.
    let moves: Vec<Moves> = states
        .iter()
        .map(|&s| {
            let legal = Direction::ALL.map(|d| (mover.apply(s, d) != s) as u8 as f64);
            let count: f64 = legal.iter().sum();
            legal.map(|l| l / count)
        })
        .collect();
    let reach = vec![1.0; states.len()];
    let run = |groups: fn(PartId) -> u32| {
        enumerate_under(&game, part, &states, &moves, &reach, |p| Some(groups(p)))
            .unwrap()
            .successors
    };
    let flat = run(|_| 1);
    let grouped = run(|p| p.sum % 5 + 3);
    assert_eq!(flat.len(), grouped.len());
    let mut total = 0;
    for (p, groups) in &grouped {
        let all = &flat[p][0];
        total += all.len();
        for (g, keys) in groups.iter().enumerate() {
            let expect: Vec<u64> = all
                .iter()
                .copied()
                .filter(|&k| crate::space::ids::group_of(k, groups.len() as u32) == g as u32)
                .collect();
            assert_eq!(keys, &expect, "{p} group {g}");
        }
    }
    assert!(total > 10_000, "{total} successors");
}
