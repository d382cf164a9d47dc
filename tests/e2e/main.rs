//! End-to-end tests of the `solve2048` binary on a local store: published
//! figures, determinism, resume after kill -9, bad input, a coordinator
//! with worker processes on loopback, the command lines in `deploy/`,
//! `serve`'s API and page (the page in headless Chromium), and the exact
//! evaluation of players.

mod browser;
mod chaos;
mod cli;
mod cluster;
mod deploy;
mod evaluate;
mod faulty_s3;
mod figures;
mod full;
mod house;
mod memory;
mod operate;
mod plan;
mod players;
mod reference;
mod repair;
mod resume;
mod s3;
mod serve_api;
mod tls;
mod use_solution;
