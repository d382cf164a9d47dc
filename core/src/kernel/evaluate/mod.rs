//! The kernels of an evaluation job ([`crate::task::evaluation`]): the same
//! stages as the solve's, on boards as they lie and under a player's moves.
//!
//! - [`forward`]: how likely the player is to reach each board of a chunk
//!   ([`Reach`]), and the chunk's successors, requests and pushes under the
//!   player's moves ([`enumerate_under`]).
//! - [`backward`]: each board's value under the player with its loss
//!   against the optimal values ([`solve_under`]); the gathers are the
//!   solve's ([`crate::kernel::gather()`]), keyed as the boards lie
//!   ([`crate::rules::canonical::Orientation`]).
//!
//! A player's moves come in as numbers ([`Moves`]), one distribution per
//! board: the core knows no player, and a caller can compute them however
//! it likes (the worker asks the player; `optimal` reads a solved policy).

pub mod backward;
mod check;
mod error;
pub mod forward;
mod moves;

pub use backward::{solve_under, Optimal, Valued};
pub use check::check_moves;
pub use error::EvaluateError;
pub use forward::{enumerate_under, Followed, GroupedMasses, Reach};
pub use moves::Moves;

#[cfg(test)]
mod tests;
