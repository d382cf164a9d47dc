//! The coordinator of a solve2048 job: plans the task DAG layer by layer,
//! leases tasks to workers over gRPC, records each finished task durably in
//! the store, and resumes from those records.
//!
//! Modules (the resource plan of a job before it runs is the plan crate,
//! `solve2048_plan`; the coordinator takes from it the states it expects of
//! each part):
//! - [`records`]: the job manifest, per-task commit and failure records.
//! - [`lock`]: the coordinator lock, so one coordinator runs a job at a time.
//! - [`driver`]: the stage driver: the forward and backward passes over
//!   layers, parts and chunks, and the repair of a damaged store.
//! - [`scheduler`]: the task queue, leases and heartbeats, and what it
//!   tracks for status (the task table, workers, counters, progress).
//! - [`service`]: the gRPC service over the scheduler, behind a token check.
//! - [`status`]: the status document, live and in the store; `chunks` rows.
//! - [`client`]: the live status asked of a running coordinator over gRPC.
//! - [`metrics`]: the Prometheus endpoint.
//! - [`server`]: a whole job run as a service.

#![deny(missing_docs)]

pub mod client;
pub mod driver;
pub mod lock;
pub mod metrics;
pub mod records;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod status;

pub use driver::{Progress, Summary};
pub use records::{CoordinatorError, Records};
pub use scheduler::{LeaseConfig, Scheduler};
pub use server::{serve_job, ServerConfig, TlsFiles};
pub use solve2048_core::task::JobManifest;
pub use solve2048_core::task::Phase;
