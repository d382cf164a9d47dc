//! The worker side of solve2048: runs tasks against an object store.
//!
//! Modules:
//! - [`store`]: opening a store and reading/writing verified chunk objects.
//! - [`solution`]: answering questions from a solved store (query, play).
//! - [`agent`]: a worker process: leases tasks from the coordinator over
//!   gRPC, heartbeats, runs them with [`exec::Worker`], reports outputs.
//! - [`cache`]: a bounded local cache of fetched chunks (`--cache-dir`).
//! - [`exec`]: [`exec::Worker`], which runs one [`solve2048_core::task::Task`]
//!   (reads its inputs, runs the core kernel on rayon, writes its outputs).

pub mod agent;
pub mod cache;
pub mod exec;
pub mod solution;
pub mod store;

pub use agent::{run_agent, AgentConfig, AgentError, AgentReport};
pub use exec::{Worker, WorkerError};
pub use store::{Store, StoreError};
