//! Reading a solved store, opened read-only: what a user does with a result.
//!
//! Modules:
//! - [`solution`]: [`Solution`], the store opened for questions, and the
//!   value and optimal action of any canonical state.
//! - [`query`]: a board a person gives, in any orientation: its value, each
//!   move's value and the best move.
//! - [`player`]: the optimal policy as a player (`optimal`), and the value of
//!   any board as it lies.
//! - [`occupancy`]: visit probabilities under optimal play.
//! - [`stats`]: per-layer counts and value histograms, for plots.
//! - [`figure`]: the state-space figure (SVG) drawn from those statistics,
//!   which `solve2048 plot` writes and `serve` shows.
//! - [`states`]: every state of a layer with its value and action, to draw
//!   small games whole.

#![deny(missing_docs)]

pub mod figure;
pub mod occupancy;
pub mod player;
pub mod query;
pub mod solution;
pub mod states;
pub mod stats;

pub use player::OptimalPlayer;
pub use query::{Answer, Report, Status};
pub use solution::{QueryError, Solution};
pub use states::{ChunkStates, StateValue};
