//! Players of 2048 and the games they play, for comparing heuristics with the
//! optimal policies that solve2048 computes.
//!
//! A player sees the board as it lies (not canonical) and picks a move. Each
//! one plays every board shape (squares and rectangles; `ntuple` squares
//! only) and is deterministic given its seed. Players are named by spec strings (`random`, `order:LDRU`, `greedy`,
//! `schain`, `mc:N`, `expectimax:D`, `ntuple:FILE`, and `optimal`, which
//! reads a solved store and so lives above this crate, in the `solution`
//! crate's `OptimalPlayer`); see [`spec`].
//!
//! Modules:
//! - [`player`]: the [`Player`] trait and the legal moves of a board.
//! - [`spec`]: player spec strings, parsed ([`parse`]) and built.
//! - [`simple`]: `random`, `order:XXXX` and `greedy`.
//! - [`schain`]: `schain`, the zero-depth snake-chain player.
//! - [`mc`]: `mc:N`, pure Monte Carlo playouts.
//! - [`expectimax`]: `expectimax:D`, depth-limited expectimax over table-driven
//!   heuristics (the nneonneo/2048-ai design).
//! - [`ntuple`]: n-tuple networks, their tuple specs and weights files, and
//!   `ntuple:FILE`.
//! - [`train`](mod@train): TD(0) afterstate learning of n-tuple networks, resumable from a
//!   checkpoint.
//! - [`game`]: seeded games ([`simulate`]) and their [`summary`].
//! - [`exact`]: a slow, obvious exact evaluator of a player's win probability,
//!   for tests and small games.
//! - [`error`]: the crate's error types.
#![deny(missing_docs)]

pub mod error;
pub mod exact;
pub mod expectimax;
pub mod game;
pub mod mc;
pub mod ntuple;
pub mod player;
pub mod schain;
pub mod simple;
pub mod spec;
pub mod train;

pub use error::{NotExact, PlayerError};
pub use exact::slow_value;
pub use game::{simulate, simulate_with, summary, GameRecord, Outcome, Step, Summary};
pub use ntuple::{Network, TupleSpec};
pub use player::Player;
pub use solve2048_core::Direction;
pub use spec::{parse, Parsed, PlayerFactory, PlayerSpec};
pub use train::{train, Progress, TrainConfig};
