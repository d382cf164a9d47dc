//! The solved policy as a [`Player`] (`optimal`), so that it plays through
//! the same game loop as every other player ([`solve2048_players::simulate`]),
//! and the value of any board as it lies under optimal play.
//!
//! A [`Player`] is synchronous and a [`Solution`] answers asynchronously (it
//! reads chunks from the store on first use); the player blocks on the
//! runtime's handle for each look-up. Chunks stay cached in the
//! [`Solution`], so after the first games a look-up reads memory only.

use std::sync::Arc;

use solve2048_core::chain::Chain;
use solve2048_core::rules::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::{Board, Direction, Shape};
use solve2048_players::player::certain;
use solve2048_players::{NotExact, Player};
use tokio::runtime::Handle;

use crate::solution::{QueryError, Solution};

/// `optimal`: the stored optimal action of each board, mapped to the board's
/// orientation (ties as the solver broke them).
///
/// Its methods block on the runtime: call them from outside it (from a
/// thread that is not one of its workers), as a command's main thread is.
pub struct OptimalPlayer {
    solution: Arc<Solution>,
    runtime: Handle,
    mover: Mover,
    /// Why the last move could not be given, until taken.
    failure: Option<String>,
}

impl OptimalPlayer {
    /// The optimal player of the game on boards of `shape` to
    /// `2^target_exp` from a solved store; a store of another game is
    /// refused, naming both.
    pub fn new(
        solution: Arc<Solution>,
        runtime: Handle,
        shape: Shape,
        target_exp: u8,
    ) -> Result<OptimalPlayer, QueryError> {
        let game = *solution.game();
        if game.shape != shape || game.target_exp != target_exp {
            return Err(QueryError::OtherGame {
                location: solution.store.location().to_string(),
                solved: game.name(),
                asked: format!("{shape} to {}", 1u64 << target_exp),
            });
        }
        Ok(OptimalPlayer {
            mover: Mover::new(shape),
            solution,
            runtime,
            failure: None,
        })
    }

    /// The solution it plays.
    pub fn solution(&self) -> &Solution {
        &self.solution
    }

    /// The value of `board` as it lies under optimal play (the win
    /// probability at discount 1, or the expected score to come): the
    /// target's value ([`solve2048_core::Game::target_value`]) once it is on
    /// the board, 0 when no move is legal, else the stored value of its
    /// canonical form.
    pub fn value(&self, board: u64) -> Result<f64, QueryError> {
        let game = self.solution.game();
        if has_exponent(board, game.target_exp) {
            return Ok(game.target_value());
        }
        if self.mover.is_lost(board) {
            return Ok(0.0);
        }
        let (canon, _) = canonical_with_symmetry(board, game.shape);
        Ok(self.look_up(board, canon)?.0)
    }

    /// The optimal move on `board` as it lies; `None` when no move is legal.
    pub fn best(&self, board: u64) -> Result<Option<Direction>, QueryError> {
        if self.mover.is_lost(board) {
            return Ok(None);
        }
        let (canon, g) = canonical_with_symmetry(board, self.solution.game().shape);
        let (_, best) = self.look_up(board, canon)?;
        Ok(Some(direction_image(best, inverse(g))))
    }

    /// The stored value and action of `canon`, the canonical form of `board`.
    fn look_up(&self, board: u64, canon: u64) -> Result<(f64, Direction), QueryError> {
        self.runtime
            .block_on(self.solution.lookup(canon))?
            .ok_or_else(|| QueryError::Unreachable {
                board: Board(board).to_text(self.solution.game().shape),
                game: self.solution.game().name(),
            })
    }
}

impl Player for OptimalPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        match self.best(board) {
            Ok(best) => best,
            Err(e) => {
                self.failure = Some(Chain(&e).to_string());
                None
            }
        }
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        self.best(board).map(certain).map_err(|e| NotExact {
            player: self.name(),
            reason: Chain(&e).to_string(),
        })
    }

    fn name(&self) -> String {
        "optimal".to_string()
    }

    fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }
}
