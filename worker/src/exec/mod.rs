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
//! ([`solve2048_core::footprint`]) fits the worker's budget.
//!
//! - [`forward`]: seed, enumerate and merge tasks.
//! - [`backward`]: gather, solve and start-value tasks.
//! - [`slice`]: the slice of a group a gather takes, and the cursor that
//!   finds a request's afterstates among those it answers.
//! - [`evaluate`]: the same tasks in an evaluation job (boards as they lie,
//!   under a player's moves, beside a solved store).

mod backward;
mod evaluate;
mod forward;
mod slice;

use solve2048_core::chunk::{file_checksum, ChunkHeader, ChunkKind};
use solve2048_core::footprint;
use solve2048_core::kernel::evaluate::EvaluateError;
use solve2048_core::kernel::SolveError;
use solve2048_core::part::ChunkId;
use solve2048_core::task::{AttemptId, Failure, FailureKind, JobSpec, Task, TaskOutput};
use solve2048_store::{RequestCounts, Store, StoreError};
use tokio::sync::Semaphore;

/// Why a task failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Reading or writing the store failed, or an input was rejected.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The backward pass found its inputs inconsistent.
    #[error("{task}: {source}")]
    Solve {
        /// The task.
        task: String,
        /// What was inconsistent.
        source: SolveError,
    },
    /// The task does not fit the job (a planner bug or a foreign task).
    #[error("invalid task {task}: {reason}")]
    InvalidTask {
        /// Task key.
        task: String,
        /// Why.
        reason: String,
    },
    /// The task needs more memory than this worker may use.
    #[error("task {task} needs {} MiB but this worker's memory budget is {} MiB (--memory); give workers more memory (`solve2048 plan` says how much)", needed >> 20, budget >> 20)]
    TooLarge {
        /// Task key.
        task: String,
        /// Bytes it needs.
        needed: u64,
        /// The budget, bytes.
        budget: u64,
    },
    /// A kernel thread panicked.
    #[error("kernel of task {task} panicked")]
    Panic {
        /// Task key.
        task: String,
    },
    /// An evaluation found its inputs or its player's moves unusable.
    #[error("{task}: {source}")]
    Evaluate {
        /// The task.
        task: String,
        /// What was wrong.
        source: EvaluateError,
    },
    /// The evaluated player cannot be built here (its weights are missing,
    /// damaged or not the job's, or its spec is not one this build plays).
    #[error("the evaluated player cannot be built: {0}")]
    Player(String),
}

impl WorkerError {
    /// What the failure means for the task: a damaged or missing input, an
    /// inconsistent one, or a task that does not fit the job can never
    /// succeed, so the job stops at once; anything else (an I/O error, a
    /// panic, a worker too small: another may be larger) is worth retrying.
    pub fn kind(&self) -> FailureKind {
        match self {
            WorkerError::Store(
                StoreError::Rejected { .. }
                | StoreError::Missing { .. }
                | StoreError::Damaged { .. }
                | StoreError::ReadOnly { .. },
            )
            | WorkerError::Solve { .. }
            | WorkerError::Evaluate { .. }
            | WorkerError::Player(_)
            | WorkerError::InvalidTask { .. } => FailureKind::Fatal,
            WorkerError::Store(_) | WorkerError::Panic { .. } | WorkerError::TooLarge { .. } => {
                FailureKind::Retry
            }
        }
    }

    /// The failure to report.
    pub fn failure(&self) -> Failure {
        Failure {
            kind: self.kind(),
            message: self.to_string(),
        }
    }
}

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
    budget: u64,
    /// MiB of the budget not held by running tasks.
    memory: Semaphore,
    /// Evaluation jobs: the player and the solved store, made on first use.
    evaluator: tokio::sync::OnceCell<std::sync::Arc<evaluate::Evaluator>>,
}

impl Worker {
    /// A worker for `job` on `store` whose tasks may hold `budget` bytes in
    /// all (besides [`footprint::PROCESS_BYTES`]).
    pub fn new(store: Store, job: JobSpec, budget: u64) -> Worker {
        let units = (budget / MEMORY_UNIT).min(Semaphore::MAX_PERMITS as u64) as usize;
        Worker {
            store,
            job,
            budget,
            memory: Semaphore::new(units),
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
        if needed > self.budget {
            return Err(WorkerError::TooLarge {
                task: task.key(),
                needed,
                budget: self.budget,
            });
        }
        let units = needed.div_ceil(MEMORY_UNIT).max(1) as u32;
        let _held = self
            .memory
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

/// Chunks written as one object (one put, one delete): each blob is added
/// whole and found again by its byte range.
#[derive(Default)]
struct Bundle {
    bytes: Vec<u8>,
}

impl Bundle {
    /// Append an encoded chunk; returns its offset, length and payload
    /// checksum.
    fn add(&mut self, blob: Vec<u8>) -> (u64, u64, u64) {
        let offset = self.bytes.len() as u64;
        let checksum = file_checksum(&blob);
        self.bytes.extend_from_slice(&blob);
        (offset, blob.len() as u64, checksum)
    }

    fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// One attempt at one task, with the store counting its bytes alone.
struct Run<'a> {
    store: Store,
    job: JobSpec,
    task: &'a Task,
    attempt: AttemptId,
    /// Evaluation jobs: the player and the solved store.
    evaluator: Option<std::sync::Arc<evaluate::Evaluator>>,
}

impl Run<'_> {
    async fn go(&self) -> Result<TaskOutput, WorkerError> {
        if let Some(e) = &self.evaluator {
            return self.evaluate(e).await;
        }
        match self.task {
            Task::Seed { targets } => self.seed(targets).await,
            Task::Enumerate { chunk, targets, .. } => self.enumerate(chunk, targets).await,
            Task::Ask { chunk, targets } => self.ask(chunk, targets).await,
            Task::Merge {
                part,
                group,
                runs,
                piece,
            } => self.merge(*part, *group, runs, *piece).await,
            Task::Gather {
                part,
                groups,
                piece,
            } => self.gather(*part, groups, *piece).await,
            Task::Solve {
                chunk, responses, ..
            } => self.solve(chunk, responses).await,
            Task::StartValue { layers } => self.start_value(layers).await,
        }
    }

    fn header(&self, kind: ChunkKind, id: ChunkId, count: u64) -> ChunkHeader {
        ChunkHeader {
            kind,
            game: self.job.game,
            id,
            count,
        }
    }

    fn invalid(&self, reason: impl ToString) -> WorkerError {
        WorkerError::InvalidTask {
            task: self.task.key(),
            reason: reason.to_string(),
        }
    }

    fn inconsistent(&self, source: SolveError) -> WorkerError {
        WorkerError::Solve {
            task: self.task.key(),
            source,
        }
    }

    /// Run `f` on a blocking thread (it runs kernels on rayon).
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, WorkerError> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|_| WorkerError::Panic {
                task: self.task.key(),
            })
    }

    /// Write a bundle, unless it is empty.
    async fn put_bundle(&self, object: &str, bundle: Bundle) -> Result<(), WorkerError> {
        if !bundle.is_empty() {
            self.store.put(object, bundle.bytes).await?;
        }
        Ok(())
    }

    /// Write an encoded chunk; returns its payload checksum for the commit record.
    async fn put_chunk(&self, object: &str, bytes: Vec<u8>) -> Result<u64, WorkerError> {
        let checksum = file_checksum(&bytes);
        self.store.put(object, bytes).await?;
        Ok(checksum)
    }
}
