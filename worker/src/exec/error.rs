//! Why a task failed ([`WorkerError`]), and what that means for it: fatal
//! to the job, or worth retrying.

use solve2048_core::chain::Chain;
use solve2048_core::kernel::evaluate::EvaluateError;
use solve2048_core::kernel::{SolveError, UnplannedPart};
use solve2048_core::task::evaluation::WEIGHTS;
use solve2048_core::task::{Failure, FailureKind};
use solve2048_players::{NotExact, PlayerError};
use solve2048_store::StoreError;

/// Why a task failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Reading or writing the store failed, or an input was rejected.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The backward pass found its inputs inconsistent.
    #[error("task {task}")]
    Solve {
        /// The task.
        task: String,
        /// What was inconsistent.
        source: SolveError,
    },
    /// A successor in a part the task names no group count for (a planner
    /// bug or a foreign task).
    #[error("task {task}")]
    Unplanned {
        /// The task.
        task: String,
        /// The part.
        source: UnplannedPart,
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
    #[error("task {task}")]
    Evaluate {
        /// The task.
        task: String,
        /// What was wrong.
        source: EvaluateError,
    },
    /// The evaluated player cannot be built or asked here (its weights are
    /// missing, damaged or not the job's, its spec is not one this build
    /// plays, or it gave no move distribution).
    #[error("the evaluated player {player} cannot be used")]
    Player {
        /// The player's spec.
        player: String,
        /// Why.
        source: Unplayable,
    },
}

/// Why the evaluated player cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum Unplayable {
    /// Its spec or weights are refused by the players library.
    #[error(transparent)]
    Spec(#[from] PlayerError),
    /// The store holds no copy of its weights.
    #[error("the store holds no copy of its weights ({WEIGHTS})")]
    NoWeights,
    /// The store's copy of its weights is not the one the evaluation began
    /// with.
    #[error("{WEIGHTS} is not the weights file this evaluation began with")]
    OtherWeights,
    /// It gave no move distribution for a board.
    #[error(transparent)]
    NotExact(#[from] NotExact),
}

impl WorkerError {
    /// What the failure means for the task: a damaged or missing input can
    /// never succeed until a repair; an inconsistent input, a player that
    /// cannot be used, a task that does not fit the job or a store opened
    /// read-only never can, so the job stops at once; anything else (an I/O
    /// error, a panic, a worker too small: another may be larger) is worth
    /// retrying.
    pub fn kind(&self) -> FailureKind {
        match self {
            WorkerError::Store(
                StoreError::Rejected { .. }
                | StoreError::Missing { .. }
                | StoreError::Damaged { .. },
            ) => FailureKind::Damaged,
            WorkerError::Store(StoreError::ReadOnly { .. })
            | WorkerError::Solve { .. }
            | WorkerError::Evaluate { .. }
            | WorkerError::Player { .. }
            | WorkerError::Unplanned { .. }
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

    /// The failure to report: its kind, and the error with its causes.
    pub fn failure(&self) -> Failure {
        Failure {
            kind: self.kind(),
            message: Chain(self).to_string(),
        }
    }
}

/// The words of a [`WorkerError::TooLarge`] message between what the task
/// needs and the worker's budget.
const TOO_LARGE: &str = "but this worker's memory budget is";
