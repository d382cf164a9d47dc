//! The slow exact evaluator against a simulation of seeded games, and, with a
//! player that follows the optimal policy, against the published start values.

use std::collections::HashMap;

use solve2048_core::rules::moves::Mover;
use solve2048_core::{rules::canonical::canonical, rules::slow, Direction, Game, Shape};
use solve2048_players::player::legal_moves;
use solve2048_players::{parse, simulate, slow_value, NotExact, Parsed, Player};

fn build(spec: &str, n: Shape, seed: u64) -> Box<dyn Player> {
    match parse(
        spec,
        n,
        &solve2048_core::rules::spawn::SpawnRule::standard(),
        seed,
    )
    .unwrap()
    {
        Parsed::Player(p) => p,
        Parsed::Optimal => unreachable!(),
    }
}

#[test]
fn exact_win_probabilities_agree_with_10000_seeded_games() {
    for (n, target) in [(2, 16), (2, 32), (3, 64)] {
        let game = Game::new(n, target, 1.0).unwrap();
        for spec in ["order:LDRU", "random", "greedy"] {
            let exact = slow_value(&game, build(spec, game.shape, 0).as_mut()).unwrap();
            let games = 10_000;
            let mut p = build(spec, game.shape, 0);
            let won = (0..games)
                .filter(|&s| {
                    simulate(
                        game.shape,
                        Some(game.target_exp),
                        &game.spawn_rule(),
                        p.as_mut(),
                        s,
                    )
                    .won()
                })
                .count();
            let rate = won as f64 / games as f64;
            let se = (exact * (1.0 - exact) / games as f64).sqrt();
            assert!(
                (rate - exact).abs() <= 3.0 * se.max(1e-4),
                "{spec} on {}: exact {exact}, {won} of {games} won ({rate}), se {se}",
                game.name()
            );
            assert!((0.0..=1.0).contains(&exact));
        }
    }
}

/// Plays the optimal policy of a small game from the slow solver's values.
struct Optimal {
    n: Shape,
    game: Game,
    mover: Mover,
    values: HashMap<u64, f64>,
}

impl Optimal {
    fn new(game: Game) -> Optimal {
        Optimal {
            n: game.shape,
            game,
            mover: Mover::new(game.shape),
            values: slow::solve(&game),
        }
    }

    fn q(&self, after: u64) -> f64 {
        if slow::is_won(after, self.n, self.game.target_exp) {
            return 1.0;
        }
        slow::spawns(after, self.n, self.game.four_probability())
            .into_iter()
            .map(|(next, p)| {
                if slow::is_lost(next, self.n) {
                    0.0
                } else {
                    p * self.values[&canonical(next, self.n)]
                }
            })
            .sum()
    }
}

impl Player for Optimal {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let moves: Vec<(Direction, u64)> = legal_moves(&self.mover, board).collect();
        let mut best: Option<(Direction, f64)> = None;
        for (d, after) in moves {
            let q = self.q(after);
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((d, q));
            }
        }
        best.map(|(d, _)| d)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(self
            .choose(board)
            .map(|d| vec![(d, 1.0)])
            .unwrap_or_default())
    }

    fn name(&self) -> String {
        "optimal (test)".to_string()
    }
}

#[test]
fn the_optimal_policy_reproduces_the_published_start_values() {
    for (target, published, tolerance) in [(16, 0.96251, 5e-6), (32, 0.08289, 5e-6)] {
        let game = Game::new(2, target, 1.0).unwrap();
        let mut optimal = Optimal::new(game);
        let value = slow_value(&game, &mut optimal).unwrap();
        assert!(
            (value - published).abs() <= tolerance,
            "2x2 to {target}: {value}, published {published}"
        );
        // No player does better than the optimal one.
        for spec in ["order:LDRU", "random", "greedy", "schain", "expectimax:2"] {
            let v = slow_value(&game, build(spec, Shape::square(2), 0).as_mut()).unwrap();
            assert!(v <= value + 1e-12, "{spec} {v} > optimal {value}");
        }
    }
}

#[test]
fn discounting_and_sampled_players() {
    let game = Game::new(2, 16, 0.9).unwrap();
    let undiscounted = Game::new(2, 16, 1.0).unwrap();
    let mut p = build("order:LDRU", Shape::square(2), 0);
    let a = slow_value(&game, p.as_mut()).unwrap();
    let b = slow_value(&undiscounted, p.as_mut()).unwrap();
    assert!(a < b && a > 0.0, "{a} {b}");
    let e = slow_value(&game, build("mc:5", Shape::square(2), 0).as_mut()).unwrap_err();
    assert!(e.player == "mc:5");
}
