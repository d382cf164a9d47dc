//! The coordinator of a solve2048 job: plans the task DAG layer by layer,
//! hands tasks to an [`Executor`] (in-process workers today), records each
//! finished task durably in the store, and resumes from those records.
//!
//! Modules:
//! - [`records`]: the job manifest and per-task commit records in the store.
//! - [`plan`]: the forward and backward passes over layers, parts and chunks.

pub mod plan;
pub mod records;

pub use plan::{run, Executor, Phase, Progress, Summary};
pub use records::{CoordinatorError, Records};
pub use solve2048_core::task::JobManifest;
