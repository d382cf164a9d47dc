//! The structure of the state space: how it is cut into layers, parts,
//! groups and chunks, and which parts states fall in.
//!
//! Modules:
//! - [`ids`]: identifiers of layers, parts, groups and chunks; the group of a
//!   state and of an afterstate's spawns, and the slices of a gather.
//! - [`parts`]: the structure every side relies on: the parts successors and
//!   start states fall in, and each part's group count.

pub mod ids;
pub mod parts;
