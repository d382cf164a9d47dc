//! The rules of the game: the board, the moves and their tables, the
//! symmetries, where tiles spawn, and a game's definition.
//!
//! Modules:
//! - [`board`]: the u64 nybble bitboard and its geometry (2x2, 3x3, 4x4).
//! - [`game`]: a validated game definition (board size, target, discount).
//! - [`row_tables`]: precomputed per-row move tables, one set per board size.
//! - [`direction`]: the four moves as a type (action codes, names).
//! - [`moves`]: the four moves on the bitboard, win and loss tests.
//! - [`canonical`]: the 8 symmetries of the square and canonical forms.
//! - [`spawn`]: tile placement: start states and the successors of a state.
//! - [`rng`]: the seeded splitmix64 generator that draws spawned tiles in
//!   played games.
//! - [`slow`]: a deliberately slow, obvious implementation of the rules that
//!   the fast code is tested against.

pub mod board;
pub mod canonical;
pub mod direction;
pub mod game;
pub mod moves;
pub mod rng;
pub mod row_tables;
pub mod slow;
pub mod spawn;
