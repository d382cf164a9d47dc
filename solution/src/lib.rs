//! Reading a solved store, opened read-only: what a user does with a result.
//!
//! Modules:
//! - [`solution`]: [`Solution`], the store opened for questions, and the
//!   value and optimal action of any canonical state.
//! - [`query`]: a board a person gives, in any orientation: its value, each
//!   move's value and the best move.
//! - [`play`]: seeded games with the optimal policy.
//! - [`occupancy`]: visit probabilities under optimal play.
//! - [`export`]: the compact policy file of the states visited often enough.
//! - [`stats`]: per-layer counts and value histograms, for plots.
//! - [`states`]: every state of a layer with its value and action, to draw
//!   small games whole.

pub mod occupancy;
pub mod play;
pub mod query;
pub mod solution;
pub mod states;
pub mod stats;

pub use query::{Answer, Report, Status};
pub use solution::{QueryError, Solution};
