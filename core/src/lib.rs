//! The pure core of solve2048: everything that defines the game and the
//! state-space computation, with no I/O runtime, network or storage client.
//!
//! Modules, by what they hold:
//! - [`rules`]: the game itself: the bitboard, moves and their row tables,
//!   symmetries, tile spawns, the seeded generator of played games, the
//!   game's definition, and the slow reference implementation of the rules.
//! - [`space`]: the state space's structure: the ids of layers, parts,
//!   groups and chunks, and which parts states, successors and start states
//!   fall in.
//! - [`chain`]: an error and its causes as one line of text.
//! - [`formats`]: the on-disk chunk format and the exported-policy file.
//! - [`task`]: the task model shared by coordinator and workers, the memory
//!   each task holds, and what an evaluation job values and reports.
//! - [`kernel`]: the enumerate, merge, gather and solve kernels that tasks
//!   run, the value table and huge-page buffers they run on, and whole small
//!   games solved in memory with them.
#![deny(missing_docs)]

pub mod chain;
pub mod formats;
pub mod kernel;
pub mod rules;
pub mod space;
pub mod task;

pub use rules::board::Board;
pub use rules::direction::Direction;
pub use rules::game::{Game, GameError, Objective};
pub use rules::shape::Shape;
