//! The worker side of solve2048: runs tasks against a job's store.
//!
//! Modules:
//! - [`agent`]: a worker process: leases tasks from the coordinator over
//!   gRPC, heartbeats, runs them with [`exec::Worker`], reports outputs.
//! - [`exec`]: [`exec::Worker`], which runs one [`solve2048_core::task::Task`]
//!   (reads its inputs, runs the core kernel on rayon, writes its outputs).

pub mod agent;
pub mod exec;

pub use agent::{run_agent, AgentConfig, AgentError, AgentReport};
pub use exec::{Worker, WorkerError};
