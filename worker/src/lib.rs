//! The worker side of solve2048: runs tasks against a job's store.
//!
//! Modules:
//! - [`agent`]: a worker process: leases tasks from the coordinator over
//!   gRPC, heartbeats, runs them with [`exec::Worker`], reports outputs; its
//!   connection to the coordinator (retries, backoff) in `agent/connection`.
//! - [`exec`]: [`exec::Worker`], which runs one [`solve2048_core::task::Task`]
//!   within the worker's memory budget (reads its inputs, runs the core
//!   kernel on rayon, writes its outputs): forward and backward tasks, and
//!   those of an evaluation job (under a player's moves).
//! - [`budget`]: the task budget, the bytes a worker's tasks may hold: its
//!   memory (by default the machine's less a margin) less the process.

#![deny(missing_docs)]

pub mod agent;
pub mod budget;
pub mod exec;

pub use agent::{run_agent, AgentConfig, AgentError, AgentReport, CallError};
pub use exec::{Worker, WorkerError};

/// Peak resident memory of this process so far (Linux `VmHWM`), in bytes;
/// 0 where unavailable.
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}
