//! The crate's errors: one enum for building players and reading or writing
//! weights files ([`PlayerError`]), and [`NotExact`] for a player that gives
//! no exact move distribution.

use std::path::PathBuf;

/// Errors from parsing a player spec, building a player, reading or writing a
/// weights file, and training.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// A spec whose name is no known player.
    #[error("unknown player {spec:?}; known players: {known}")]
    UnknownPlayer {
        /// The spec as given.
        spec: String,
        /// The known player specs, for the message.
        known: String,
    },
    /// A player that needs a parameter was given none (`mc`, `order`).
    #[error("player {player:?} needs a parameter: {expected}")]
    MissingParameter {
        /// The player's name.
        player: String,
        /// What the parameter should be, e.g. `mc:N with N >= 1 playouts`.
        expected: String,
    },
    /// A parameter that is malformed or out of range (`order:LLRU`, `mc:0`,
    /// `expectimax:x`), or one given to a player that takes none.
    #[error("bad parameter {param:?} for player {player:?}: {reason}")]
    BadParameter {
        /// The player's name.
        player: String,
        /// The parameter as given.
        param: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `optimal` was asked of [`crate::PlayerSpec::build`]: the optimal player
    /// reads a solved store, which the caller opens and builds it from.
    #[error("the optimal player needs a solved store; build it from the store")]
    NeedsStore,
    /// A player for square boards only, asked to play a rectangle.
    #[error("the {player} player plays square boards only; this game's board is {shape}")]
    SquareOnly {
        /// The player.
        player: String,
        /// The board asked for.
        shape: solve2048_core::Shape,
    },
    /// A board side outside 2..=4.
    #[error("board size {n} is not supported: use 2, 3 or 4")]
    BoardSize {
        /// The side asked for.
        n: usize,
    },
    /// An n-tuple spec that does not parse or does not fit the board.
    #[error("bad tuple spec {spec:?}: {reason}")]
    TupleSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A weights file that cannot be read or written.
    #[error("weights file {}: {error}", path.display())]
    WeightsIo {
        /// The file.
        path: PathBuf,
        /// The I/O error (in the message, not a `source`: an error chain
        /// printed whole would say it twice).
        error: std::io::Error,
    },
    /// A weights file that is not one, is truncated or fails its checksum.
    #[error("rejected weights file {}: {reason}", path.display())]
    WeightsDamaged {
        /// The file.
        path: PathBuf,
        /// Why it was rejected, e.g. `checksum mismatch`.
        reason: String,
    },
    /// A sound weights file for another board size.
    #[error("weights file {} is for {file_n}x{file_n}, not {n}x{n}", path.display())]
    WeightsForOtherBoard {
        /// The file.
        path: PathBuf,
        /// The board size the file holds weights for.
        file_n: usize,
        /// The board size asked for.
        n: usize,
    },
    /// A training checkpoint made with other settings than the run resuming it.
    #[error(
        "checkpoint {} was made with {field} {found}, this run has {expected}; \
         use the same settings or another checkpoint path",
        path.display()
    )]
    CheckpointMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// The setting that differs.
        field: &'static str,
        /// The checkpoint's value.
        found: String,
        /// This run's value.
        expected: String,
    },
    /// A player that gave no legal move on a board that has one: a player
    /// whose source of moves failed (the optimal player's store could not be
    /// read), with its reason ([`crate::Player::take_failure`]).
    #[error("{player} gave no move on {board}: {reason}")]
    Resigned {
        /// The player's name.
        player: String,
        /// The board, as text.
        board: String,
        /// Why, as the player gave it.
        reason: String,
    },
    /// A player that samples its moves, asked for an exact evaluation.
    #[error("{player} cannot be evaluated exactly: it is a sampled player")]
    Samples {
        /// The player.
        player: String,
    },
    /// A training setting that cannot work (zero games, a learning rate that
    /// is not positive and finite, a checkpoint interval of zero).
    #[error("bad training setting {field}: {reason}")]
    TrainConfig {
        /// The setting.
        field: &'static str,
        /// Why it is refused.
        reason: String,
    },
}

/// A player that gives no move distribution, so that its win probability
/// cannot be computed exactly: it samples (`mc:N`), or what it reads its
/// moves from failed (the optimal player's store).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{player} gives no exact move distribution: {reason}")]
pub struct NotExact {
    /// The player's name.
    pub player: String,
    /// Why not.
    pub reason: String,
}
