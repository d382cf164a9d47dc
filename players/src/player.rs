//! The [`Player`] trait and the legal moves of a board.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use solve2048_core::rules::moves::Mover;
use solve2048_core::{Direction, Shape};

use crate::NotExact;

/// A 2048 player: picks a move on a board as it lies.
///
/// Boards are the core's nybble bitboards (`u64`, cell `(r, c)` at nybble
/// `4r + c`, smaller boards in the top-left block), never canonicalised: a
/// player sees the orientation the game is in.
///
/// A player is deterministic given its seed: the same construction seed (or
/// the same [`Player::reseed`]) and the same boards give the same moves.
/// Players with no randomness of their own return the same move for a board
/// whatever they saw before.
pub trait Player: Send {
    /// The move to play on `board`, or `None` when no move is legal. The move
    /// is always legal (it changes the board).
    fn choose(&mut self, board: u64) -> Option<Direction>;

    /// The player's move probabilities on `board`, for exact evaluation:
    /// deterministic players give their one move with probability 1, a
    /// uniformly random player every legal move; empty when no move is legal.
    /// Only legal moves appear, and the probabilities sum to 1. Players that
    /// sample (Monte Carlo) answer [`NotExact`].
    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact>;

    /// The player's spec string, e.g. `order:LDRU` or `expectimax:3`.
    fn name(&self) -> String;

    /// Restart the player's own random stream from `seed` ([`crate::simulate`]
    /// does this with a stream derived from the game's seed, so that a game is
    /// a function of its seed alone). A no-op for players without randomness.
    fn reseed(&mut self, _seed: u64) {}

    /// Why the player last answered `None` from [`Player::choose`] (or an
    /// error from [`Player::distribution`]) on a board with legal moves, taken
    /// once: a player that reads its moves from elsewhere (the optimal
    /// player's store) fails that way when the read fails. `None` for players
    /// that cannot fail, which is every player of this crate.
    fn take_failure(&mut self) -> Option<String> {
        None
    }
}

/// The legal moves of `board` with their afterstates, in [`Direction::ALL`]
/// order (left, right, up, down).
pub fn legal_moves(mover: &Mover, board: u64) -> impl Iterator<Item = (Direction, u64)> + '_ {
    Direction::ALL.into_iter().filter_map(move |d| {
        let after = mover.apply(board, d);
        (after != board).then_some((d, after))
    })
}

/// The legal moves of `board` with their afterstates and scores, in
/// [`Direction::ALL`] order.
pub fn scored_moves(mover: &Mover, board: u64) -> impl Iterator<Item = (Direction, u64, u32)> + '_ {
    Direction::ALL.into_iter().filter_map(move |d| {
        let (after, score) = mover.apply_scored(board, d);
        (after != board).then_some((d, after, score))
    })
}

/// The distribution of a deterministic player: its one move with probability
/// 1, or nothing when no move is legal.
pub fn certain(choice: Option<Direction>) -> Vec<(Direction, f64)> {
    choice.map(|d| vec![(d, 1.0)]).unwrap_or_default()
}

/// The side of a square board of `shape`, for a player of square boards
/// only (`player`, e.g. `ntuple`); a rectangle is refused.
pub fn square_side(shape: Shape, player: &str) -> Result<usize, crate::PlayerError> {
    if shape.is_square() {
        Ok(shape.rows())
    } else {
        Err(crate::PlayerError::SquareOnly {
            player: player.into(),
            shape,
        })
    }
}

/// Check a board side (2, 3 or 4).
pub(crate) fn check_size(n: usize) -> Result<(), crate::PlayerError> {
    if (2..=4).contains(&n) {
        Ok(())
    } else {
        Err(crate::PlayerError::BoardSize { n })
    }
}

/// A hash map keyed by boards, hashed by the splitmix64 finaliser (boards
/// are well-spread integers; SipHash would cost more than the lookup).
pub(crate) type BoardMap<V> = HashMap<u64, V, BuildHasherDefault<MixHasher>>;

/// See [`BoardMap`].
#[derive(Default)]
pub(crate) struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = solve2048_core::space::ids::mix(self.0 ^ u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = solve2048_core::space::ids::mix(x);
    }
}
