//! The kernels of an evaluation job ([`crate::evaluation`]): the same
//! stages as the solve's, on boards as they lie and under a player's moves.
//!
//! - [`forward`]: how likely the player is to reach each board of a chunk
//!   ([`Reach`]), and the chunk's successors, requests and pushes under the
//!   player's moves ([`enumerate_under`]).
//! - [`backward`]: spawn sums over boards as they lie
//!   ([`gather_as_they_lie`]), and each board's value under the player with
//!   its loss against the optimal values ([`solve_under`]).
//!
//! A player's moves come in as numbers ([`Moves`]), one distribution per
//! board: the core knows no player, and a caller can compute them however
//! it likes (the worker asks the player; `optimal` reads a solved policy).

pub mod backward;
pub mod forward;

pub use backward::{gather_as_they_lie, solve_under, Optimal, Valued};
pub use forward::{enumerate_under, Followed, Reach};

use super::enumerate::UnplannedPart;
use super::error::SolveError;
use crate::direction::Direction;
use crate::moves::Mover;
use crate::spawn::empty_bits;

/// A player's move probabilities on one board, by action code (left,
/// right, up, down); 0 for a move it never plays.
pub type Moves = [f64; 4];

/// How far a distribution's probabilities may add up from 1.
const SUM_TOLERANCE: f64 = 1e-9;

/// Why an evaluation kernel could not go on.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EvaluateError {
    /// A successor in a part the task gave no group count for.
    #[error(transparent)]
    Unplanned(#[from] UnplannedPart),
    /// Inputs of the backward pass that are incomplete or inconsistent.
    #[error(transparent)]
    Solve(#[from] SolveError),
    /// The player plays a move that does not change the board.
    #[error("the player plays {direction:?} on {state:#018x}, where it is not a legal move")]
    IllegalMove {
        /// The board.
        state: u64,
        /// The move.
        direction: Direction,
    },
    /// Probabilities that are not a distribution over moves.
    #[error("the player's move probabilities on {state:#018x} are {moves:?}, not a distribution")]
    NotADistribution {
        /// The board.
        state: u64,
        /// What the player gave.
        moves: Moves,
    },
    /// The player's moves are worth more by the optimal values than the
    /// optimal value itself: the optimal values are not those of this game.
    #[error("on {state:#018x} the player's moves are worth {player} by the optimal values, more than the optimal value {optimal}")]
    AboveOptimal {
        /// The board.
        state: u64,
        /// The optimal values of the player's moves, in expectation.
        player: f64,
        /// The board's optimal value.
        optimal: f64,
    },
    /// Inputs of different lengths.
    #[error("{what}: {found} for {expected} boards")]
    Lengths {
        /// What came short or long.
        what: &'static str,
        /// Boards.
        expected: usize,
        /// Entries given.
        found: usize,
    },
}

/// Check that `moves` is a distribution over legal moves of board `s`: each
/// probability in [0, 1], the positive ones on moves that change the board,
/// adding up to 1.
pub fn check_moves(mover: &Mover, s: u64, moves: &Moves) -> Result<(), EvaluateError> {
    let not = || EvaluateError::NotADistribution {
        state: s,
        moves: *moves,
    };
    let mut total = 0.0;
    for d in Direction::ALL {
        let p = moves[d as usize];
        if !(0.0..=1.0).contains(&p) {
            return Err(not());
        }
        if p > 0.0 && mover.apply(s, d) == s {
            return Err(EvaluateError::IllegalMove {
                state: s,
                direction: d,
            });
        }
        total += p;
    }
    if (total - 1.0).abs() > SUM_TOLERANCE {
        return Err(not());
    }
    Ok(())
}

/// Check that `found` entries were given for `expected` boards.
pub(crate) fn same_length(
    what: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), EvaluateError> {
    if expected == found {
        Ok(())
    } else {
        Err(EvaluateError::Lengths {
            what,
            expected,
            found,
        })
    }
}

/// Calls `f(board)` for each empty cell of afterstate `a`, in increasing
/// cell order, with the board made by a tile of exponent `tile` there, as it
/// lies (not canonical).
#[inline(always)]
pub fn for_each_spawn_as_it_lies(a: u64, n: usize, tile: u8, mut f: impl FnMut(u64)) {
    let mut empties = empty_bits(a, n);
    while empties != 0 {
        let bit = empties & empties.wrapping_neg();
        f(a | (bit * tile as u64));
        empties &= empties - 1;
    }
}

#[cfg(test)]
mod tests;
