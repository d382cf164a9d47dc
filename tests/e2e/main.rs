//! End-to-end tests of the `solve2048` binary on a local store: published
//! figures, determinism, resume after kill -9, bad input, a coordinator
//! with worker processes on loopback, the command lines in `deploy/`, the
//! Slurm batch script on a one-node Slurm, `serve`'s API and page (the page
//! in headless Chromium), the exact evaluation of players, the export to
//! Parquet, and the book: its links, tested command blocks and reference.

mod browser;
mod chaos;
mod cli;
mod cluster;
mod deploy;
mod docs;
mod evaluate;
mod export;
mod faulty_s3;
mod figures;
mod full;
mod house;
mod memory;
mod objective;
mod old_format;
mod operate;
mod plan;
mod players;
mod recompute;
mod rectangles;
mod reference;
mod repair;
mod resume;
mod s3;
mod serve_api;
mod slurm;
mod tls;
mod use_solution;
mod variants;
