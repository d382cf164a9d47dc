//! The rules of the game: the board, the moves and their tables, the
//! symmetries, where tiles spawn, and a game's definition.
//!
//! Modules:
//! - [`board`]: the u64 nybble bitboard (cells, parsing, rendering).
//! - [`shape`]: the board's shape, rows and columns from 2 to 4.
//! - [`game`]: a validated game definition (shape, target, discount, spawn
//!   rule, objective).
//! - [`row_tables`]: precomputed per-line move tables, one set per line
//!   length.
//! - [`direction`]: the four moves as a type (action codes, names).
//! - [`moves`]: the four moves on the bitboard, win and loss tests.
//! - [`lanes`] (x86-64): the AVX2 forms of the canonical forms and
//!   successors of 3x3 and 4x4 boards, chosen at run time.
//! - [`symmetry`]: the symmetry kernels (canonical forms of moves, canonical
//!   spawns) as a kernel's loop runs them: AVX2 lanes or scalar, chosen once
//!   a loop.
//! - [`canonical`]: the symmetries (8 of a square, 4 of a rectangle) and
//!   canonical forms.
//! - [`spawn`]: tile placement: start states and the successors of a state.
//! - [`rng`]: the seeded splitmix64 generator that draws spawned tiles in
//!   played games.
//! - [`slow`]: a deliberately slow, obvious implementation of the rules that
//!   the fast code is tested against.

pub mod board;
pub mod canonical;
pub mod direction;
pub mod game;
#[cfg(target_arch = "x86_64")]
pub mod lanes;
pub mod moves;
pub mod rng;
pub mod row_tables;
pub mod shape;
pub mod slow;
pub mod spawn;
pub mod symmetry;
