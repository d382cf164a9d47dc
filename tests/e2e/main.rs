//! End-to-end tests of the `solve2048` binary on a local store: published
//! figures, determinism, resume after kill -9, bad input, a coordinator
//! with worker processes on loopback, the command lines in `deploy/`, and
//! `serve`'s API and page (the page in headless Chromium).

mod browser;
mod cli;
mod cluster;
mod deploy;
mod figures;
mod house;
mod memory;
mod plan;
mod reference;
mod resume;
mod s3;
mod serve_api;
mod use_solution;
