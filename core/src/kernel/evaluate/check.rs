//! Checks of an evaluation kernel's inputs: a player's moves on a board
//! ([`check_moves`]) and the lengths of inputs given per board.

use rayon::prelude::*;

use super::error::EvaluateError;
use super::moves::Moves;
use crate::rules::direction::Direction;
use crate::rules::moves::Mover;

/// How far a distribution's probabilities may add up from 1.
const SUM_TOLERANCE: f64 = 1e-9;

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

/// Check the moves on every board of `states` ([`check_moves`]): the first
/// board in order whose moves are wrong is named.
pub(crate) fn check_all(
    mover: &Mover,
    states: &[u64],
    moves: &[Moves],
) -> Result<(), EvaluateError> {
    let wrong = |(&s, p): (&u64, &Moves)| check_moves(mover, s, p).is_err();
    match states.par_iter().zip(moves).position_first(wrong) {
        Some(i) => check_moves(mover, states[i], &moves[i]),
        None => Ok(()),
    }
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
