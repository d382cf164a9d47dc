//! Why a task failed ([`WorkerError`]), and what that means for it: fatal
//! to the job, or worth retrying.

use solve2048_core::kernel::evaluate::EvaluateError;
use solve2048_core::kernel::SolveError;
use solve2048_core::task::{Failure, FailureKind};
use solve2048_store::StoreError;

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
    /// The task needs more memory than this worker may use. Its message
    /// crosses to the coordinator as text;
    /// [`WorkerError::is_too_large`] recognises it there.
    #[error("task {task} needs {} MiB {} {} MiB", needed >> 20, TOO_LARGE, task_budget >> 20)]
    TooLarge {
        /// Task key.
        task: String,
        /// Bytes it needs.
        needed: u64,
        /// The worker's task budget, bytes.
        task_budget: u64,
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

    /// Whether `message`, the text of a task's failure as the coordinator
    /// received it, is a [`WorkerError::TooLarge`]'s: a failure crosses the
    /// wire as text, so a reader of the coordinator's errors (the binary,
    /// which words the flag that mends it) tells it by its words.
    pub fn is_too_large(message: &str) -> bool {
        message.contains(TOO_LARGE)
    }

    /// The failure to report.
    pub fn failure(&self) -> Failure {
        Failure {
            kind: self.kind(),
            message: self.to_string(),
        }
    }
}

/// The words of a [`WorkerError::TooLarge`] message between what the task
/// needs and the worker's budget.
const TOO_LARGE: &str = "but this worker's memory budget is";
