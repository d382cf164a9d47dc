//! End-to-end tests of the `solve2048` binary on a local store: published
//! figures, determinism, resume after kill -9, and bad input.

mod cli;
mod figures;
mod resume;
mod use_solution;
