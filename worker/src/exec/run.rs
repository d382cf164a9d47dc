//! One attempt at one task ([`Run`]), with the store counting its bytes
//! alone: what it runs by the task's kind, and the helpers every kind
//! shares (chunk headers, errors, blocking threads, writes).

use solve2048_core::chunk::{file_checksum, ChunkHeader, ChunkKind};
use solve2048_core::kernel::SolveError;
use solve2048_core::part::ChunkId;
use solve2048_core::task::{AttemptId, JobSpec, Task, TaskOutput};
use solve2048_store::Store;

use super::bundle::Bundle;
use super::error::WorkerError;
use super::evaluate::evaluator::Evaluator;

/// One attempt at one task, with the store counting its bytes alone.
pub(super) struct Run<'a> {
    pub(super) store: Store,
    pub(super) job: JobSpec,
    pub(super) task: &'a Task,
    pub(super) attempt: AttemptId,
    /// Evaluation jobs: the player and the solved store.
    pub(super) evaluator: Option<std::sync::Arc<Evaluator>>,
}

impl Run<'_> {
    pub(super) async fn go(&self) -> Result<TaskOutput, WorkerError> {
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

    pub(super) fn header(&self, kind: ChunkKind, id: ChunkId, count: u64) -> ChunkHeader {
        ChunkHeader {
            kind,
            game: self.job.game,
            id,
            count,
        }
    }

    pub(super) fn invalid(&self, reason: impl ToString) -> WorkerError {
        WorkerError::InvalidTask {
            task: self.task.key(),
            reason: reason.to_string(),
        }
    }

    pub(super) fn inconsistent(&self, source: SolveError) -> WorkerError {
        WorkerError::Solve {
            task: self.task.key(),
            source,
        }
    }

    /// Run `f` on a blocking thread (it runs kernels on rayon).
    pub(super) async fn blocking<T: Send + 'static>(
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
    pub(super) async fn put_bundle(&self, object: &str, bundle: Bundle) -> Result<(), WorkerError> {
        if !bundle.is_empty() {
            self.store.put(object, bundle.bytes).await?;
        }
        Ok(())
    }

    /// Write an encoded chunk; returns its payload checksum for the commit record.
    pub(super) async fn put_chunk(&self, object: &str, bytes: Vec<u8>) -> Result<u64, WorkerError> {
        let checksum = file_checksum(&bytes);
        self.store.put(object, bytes).await?;
        Ok(checksum)
    }
}
