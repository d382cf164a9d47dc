//! Running one task: read inputs from the store, run the kernel on rayon (off
//! the async runtime, so a long chunk never starves I/O), write outputs.
//!
//! Every kernel is a pure function of its inputs, so any attempt at a task
//! writes the same bytes; each attempt writes them under names of its own
//! (they carry its [`AttemptId`]), and the coordinator's commit decides which
//! attempt's outputs count.
//!
//! A task reads one chunk, one group, or what was addressed to it, never a
//! whole layer, and runs only once the memory it needs
//! ([`solve2048_core::task::footprint`]) fits the worker's budget.
//!
//! - [`run`]: one attempt at a task, and the one dispatch by its kind.
//! - [`forward`]: seed, enumerate, ask and merge tasks.
//! - [`expand`]: expand tasks (a group's states from its runs).
//! - [`runs`]: runs as tasks write and read them.
//! - [`gather`]: gather tasks (one group answers what was addressed to it).
//! - [`backward`]: solve and start-value tasks.
//! - [`slice`]: the slice of a group a gather takes, and the union of its
//!   requests that places each request's afterstates among those it
//!   answers.
//! - [`evaluate`]: what an evaluation job's enumerate and solve do besides
//!   the solve's (boards as they lie, under a player's moves, beside a
//!   solved store); its other stages are the solve's.

mod backward;
mod bundle;
mod error;
mod evaluate;
mod expand;
mod forward;
mod gather;
mod run;
mod runs;
mod slice;

use solve2048_core::task::footprint;
use solve2048_core::task::{AttemptId, JobSpec, Task, TaskOutput};
use solve2048_store::{RequestCounts, Store};
use tokio::sync::Semaphore;

pub use error::WorkerError;
use run::Run;

/// Bytes one task read from and wrote to the store, and the requests it
/// made.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TaskIo {
    /// Bytes read (from the store, not from the local cache).
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Store requests, retries by cause.
    pub requests: RequestCounts,
}

/// Memory granted in units of this many bytes.
const MEMORY_UNIT: u64 = 1 << 20;

/// Runs tasks of one job against one store, within a memory budget.
pub struct Worker {
    store: Store,
    job: JobSpec,
    task_budget: u64,
    /// MiB of the task budget not held by running tasks.
    free_mib: Semaphore,
    /// Evaluation jobs: the player and the solved store, made on first use.
    evaluator: tokio::sync::OnceCell<std::sync::Arc<evaluate::Evaluator>>,
}

impl Worker {
    /// A worker for `job` on `store` whose tasks may hold `task_budget`
    /// bytes in all (besides [`footprint::PROCESS_BYTES`]; see
    /// [`crate::budget`]).
    pub fn new(store: Store, job: JobSpec, task_budget: u64) -> Worker {
        let units = (task_budget / MEMORY_UNIT).min(Semaphore::MAX_PERMITS as u64) as usize;
        Worker {
            store,
            job,
            task_budget,
            free_mib: Semaphore::new(units),
            evaluator: tokio::sync::OnceCell::new(),
        }
    }

    /// The job it runs tasks of.
    pub fn job(&self) -> &JobSpec {
        &self.job
    }

    /// The store it reads and writes.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Run one attempt at a task to completion, naming its outputs after
    /// `attempt`, once the memory it needs is free. Returns its output and
    /// the bytes it read and wrote.
    pub async fn run(
        &self,
        task: &Task,
        attempt: AttemptId,
    ) -> Result<(TaskOutput, TaskIo), WorkerError> {
        let needed = footprint::of(task, &self.job);
        if needed > self.task_budget {
            return Err(WorkerError::TooLarge {
                task: task.key(),
                needed,
                task_budget: self.task_budget,
            });
        }
        let units = needed.div_ceil(MEMORY_UNIT).max(1) as u32;
        let _held = self
            .free_mib
            .acquire_many(units)
            .await
            .expect("the semaphore is never closed");
        let evaluator = match &self.job.evaluate {
            None => None,
            Some(e) => Some(
                self.evaluator
                    .get_or_try_init(|| evaluate::Evaluator::open(&self.store, &self.job, e))
                    .await?
                    .clone(),
            ),
        };
        let run = Run {
            store: self.store.with_own_counters(),
            job: self.job.clone(),
            task,
            attempt,
            evaluator,
        };
        let out = run.go().await?;
        let io = TaskIo {
            bytes_read: run.store.take_bytes_read(),
            bytes_written: run.store.take_bytes_written(),
            requests: run.store.take_requests(),
        };
        Ok((out, io))
    }
}
