//! `mc:N`: pure Monte Carlo. For each legal move, `N` playouts: the move,
//! then uniformly random legal moves with spawned tiles until no move is
//! legal. The move with the best mean score over its playouts wins (ties to
//! the first in left, right, up, down order).
//!
//! Playouts ignore any target: they play to the end of the game. Their tiles
//! and moves come from the player's own seeded stream, so the player is
//! deterministic given its seed and the boards it has seen, but its choice on
//! a board depends on the draws before it. Its distribution is therefore not
//! exact ([`NotExact`]).

use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::rng::SeededRng;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::Direction;
use solve2048_core::Shape;

use crate::player::{scored_moves, Player};
use crate::{NotExact, PlayerError};

/// The `mc:N` player.
#[derive(Clone)]
pub struct MonteCarloPlayer {
    shape: Shape,
    mover: Mover,
    playouts: u32,
    rng: SeededRng,
}

impl MonteCarloPlayer {
    /// A Monte Carlo player for boards of `shape` with `playouts` (>= 1)
    /// playouts per legal move, whose stream starts from `seed`.
    pub fn new(shape: Shape, playouts: u32, seed: u64) -> Result<MonteCarloPlayer, PlayerError> {
        if playouts == 0 {
            return Err(PlayerError::BadParameter {
                player: "mc".to_string(),
                param: "0".to_string(),
                reason: "needs at least 1 playout per move".to_string(),
            });
        }
        Ok(MonteCarloPlayer {
            shape,
            mover: Mover::new(shape),
            playouts,
            rng: SeededRng::new(seed),
        })
    }

    /// The same player playing out with tiles by `rule` (the standard rule
    /// unless given).
    pub fn with_rule(mut self, rule: &SpawnRule) -> MonteCarloPlayer {
        self.rng = self.rng.with_rule(rule);
        self
    }

    /// The score of a random playout from `x` (a board after its spawn) to
    /// the end of the game.
    fn playout(&mut self, mut x: u64) -> u64 {
        let mut total = 0u64;
        loop {
            let mut legal = [(0u64, 0u32); 4];
            let mut k = 0;
            for (_, after, score) in scored_moves(&self.mover, x) {
                legal[k] = (after, score);
                k += 1;
            }
            if k == 0 {
                return total;
            }
            let (after, score) = legal[self.rng.below(k as u64) as usize];
            total += score as u64;
            x = self.rng.spawn(after, self.shape);
        }
    }
}

impl Player for MonteCarloPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let moves: Vec<(Direction, u64, u32)> = scored_moves(&self.mover, board).collect();
        let mut best: Option<(Direction, u64)> = None;
        for (d, after, score) in moves {
            let mut sum = 0u64;
            for _ in 0..self.playouts {
                let next = self.rng.spawn(after, self.shape);
                sum += score as u64 + self.playout(next);
            }
            // Every move has the same number of playouts: compare sums.
            if best.is_none_or(|(_, s)| sum > s) {
                best = Some((d, sum));
            }
        }
        best.map(|(d, _)| d)
    }

    fn distribution(&mut self, _board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Err(NotExact {
            player: self.name(),
            reason: "it is a sampled player: its move depends on random playouts".to_string(),
        })
    }

    fn name(&self) -> String {
        format!("mc:{}", self.playouts)
    }

    fn reseed(&mut self, seed: u64) {
        self.rng = SeededRng::new(seed);
    }
}
