//! The pure core of solve2048: everything that defines the game and the
//! state-space computation, with no I/O runtime, network or storage client.
//!
//! Modules:
//! - [`board`]: the u64 nybble bitboard and its geometry (2x2, 3x3, 4x4).
//! - [`game`]: a validated game definition (board size, target, discount).
//! - [`tables`]: precomputed per-row move tables, one set per board size.
//! - [`direction`]: the four moves as a type (action codes, names).
//! - [`moves`]: the four moves on the bitboard, win and loss tests.
//! - [`canonical`]: the 8 symmetries of the square and canonical forms.
//! - [`spawn`]: tile placement: start states and the successors of a state.
//! - [`rng`]: the seeded splitmix64 generator that draws spawned tiles in
//!   played games.
//! - [`part`]: identifiers of layers, parts, groups and chunks; the group of
//!   a state and of an afterstate's spawns, and the slices of a gather.
//! - [`layer`]: the structure every side relies on: the parts successors and
//!   start states fall in, and each part's group count.
//! - [`chunk`]: the on-disk chunk format (header, checksum, compression).
//! - [`in_memory`]: a whole small game enumerated and solved in memory with
//!   the job's kernels (exact counts for `plan`, the kernels' test reference).
//! - [`kernel`]: the enumerate, merge, gather and solve kernels that tasks
//!   run.
//! - [`footprint`]: the memory each task holds, by which workers admit
//!   tasks and `plan` sizes workers.
//! - [`policy_file`]: the compact exported-policy file format and its reader.
//! - [`memory`]: large buffers backed by huge pages.
//! - [`table`]: the in-memory value table a gather looks states up in.
//! - [`task`]: the task model shared by coordinator and workers, and how
//!   large merges and gathers are cut.
//! - [`evaluation`]: evaluating a player exactly, as a mode of the same job:
//!   what it compares with and what it reports.
//! - [`slow`]: a deliberately slow, obvious implementation of the rules that
//!   the fast code is tested against.
#![deny(missing_docs)]

pub mod board;
pub mod canonical;
pub mod chunk;
pub mod direction;
pub mod evaluation;
pub mod footprint;
pub mod game;
pub mod in_memory;
pub mod kernel;
pub mod layer;
pub mod memory;
pub mod moves;
pub mod part;
pub mod policy_file;
pub mod rng;
pub mod slow;
pub mod spawn;
pub mod table;
pub mod tables;
pub mod task;

pub use board::Board;
pub use direction::Direction;
pub use game::{Game, GameError};
