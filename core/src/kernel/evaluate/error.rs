//! Why an evaluation kernel could not go on ([`EvaluateError`]).

use super::moves::Moves;
use crate::kernel::enumerate::UnplannedPart;
use crate::kernel::error::SolveError;
use crate::rules::direction::Direction;

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
