//! End-to-end tests of the `solve2048` binary on a local store: published
//! figures, determinism, resume after kill -9, bad input, a coordinator
//! with worker processes on loopback, and the command lines in `deploy/`.

mod cli;
mod cluster;
mod deploy;
mod figures;
mod memory;
mod plan;
mod players;
mod reference;
mod resume;
mod s3;
mod use_solution;
