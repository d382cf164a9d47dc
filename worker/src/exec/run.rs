//! One attempt at one task ([`Run`]), with the store counting its bytes
//! alone: what it runs by the task's kind, and the helpers every kind
//! shares (chunk headers, errors, blocking threads, writes).

use futures::{Stream, StreamExt};
use solve2048_core::formats::chunk::{file_checksum, ChunkHeader, ChunkKind, FormatError};
use solve2048_core::kernel::{SolveError, UnplannedPart};
use solve2048_core::rules::spawn::Starts;
use solve2048_core::space::ids::ChunkId;
use solve2048_core::task::PieceRef;
use solve2048_core::task::{AttemptId, JobSpec, Task, TaskOutput};
use solve2048_store::{Store, StoreError};

use super::bundle::Bundle;
use super::error::WorkerError;
use super::evaluate::evaluator::Evaluator;

/// Requests, responses or pushes a task reads at once: their reads are
/// small, and a remote store answers each after a round trip.
pub(super) const READS_IN_FLIGHT: usize = 16;

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
    /// Run the task: the same stages in a solve and in an evaluation, which
    /// differ only in what their enumerate and solve value (the optimal
    /// policy, or the player beside it) and in the start boards.
    pub(super) async fn go(&self) -> Result<TaskOutput, WorkerError> {
        let under = self.evaluator.as_ref();
        match (self.task, under) {
            (Task::Seed { targets }, _) => self.seed(targets).await,
            (Task::Enumerate { chunk, targets, .. }, None) => self.enumerate(chunk, targets).await,
            (
                Task::Enumerate {
                    chunk,
                    targets,
                    pushes,
                    reference,
                },
                Some(e),
            ) => {
                self.enumerate_under(e, chunk, targets, pushes, reference)
                    .await
            }
            (Task::Ask { chunk, targets }, None) => self.ask(chunk, targets).await,
            (Task::Expand { part, group, runs }, _) => self.expand(*part, *group, runs).await,
            (Task::Ask { .. }, Some(_)) => Err(self.invalid(
                "an evaluation's chunks ask in its forward pass, with the player's masses",
            )),
            (
                Task::Merge {
                    part,
                    group,
                    runs,
                    piece,
                },
                _,
            ) => self.merge(*part, *group, runs, *piece).await,
            (
                Task::Gather {
                    part,
                    groups,
                    piece,
                },
                _,
            ) => self.gather(*part, groups, *piece).await,
            (
                Task::Solve {
                    chunk,
                    requests,
                    responses,
                    ..
                },
                None,
            ) => self.solve(chunk, requests, responses).await,
            (
                Task::Solve {
                    chunk,
                    requests,
                    responses,
                    pushes,
                    reference,
                },
                Some(e),
            ) => {
                self.solve_under(e, chunk, requests, responses, pushes, reference)
                    .await
            }
            (Task::StartValue { layers }, _) => self.start_value(layers).await,
        }
    }

    /// The start boards: canonical in a solve, as they lie in an evaluation
    /// (a player that is not symmetric plays differently on the images of
    /// a board).
    pub(super) fn starts(&self) -> Starts {
        let (n, rule) = (self.job.game.shape, self.job.game.spawn_rule());
        match self.evaluator {
            None => Starts::new(n, &rule),
            Some(_) => Starts::actual(n, &rule),
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

    pub(super) fn unplanned(&self, source: UnplannedPart) -> WorkerError {
        WorkerError::Unplanned {
            task: self.task.key(),
            source,
        }
    }

    pub(super) fn inconsistent(&self, source: SolveError) -> WorkerError {
        WorkerError::Solve {
            task: self.task.key(),
            source,
        }
    }

    /// Run `f` on one of the worker's rayon threads, so that the kernels'
    /// parallel loops in it start where they are, not with a hand-off to
    /// the pool and back for each (3x3 to 1024 switched threads 55 times a
    /// task). `f` may wait on a channel that an async part of its task
    /// drains (an expand's runs), never on another call of this. A panic
    /// in `f` is the task's error.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, WorkerError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        rayon::spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        });
        match rx.await {
            Ok(Ok(out)) => Ok(out),
            _ => Err(WorkerError::Panic {
                task: self.task.key(),
            }),
        }
    }

    /// `pieces` (responses or pushes) decoded by `decode`, each verified
    /// against a header of `kind` and the id `id_of` gives it; read
    /// concurrently (a Vec of futures, not a lazy map: see `merge`) and
    /// yielded in order.
    pub(super) fn read_pieces<'p, T: 'p>(
        &'p self,
        kind: ChunkKind,
        id_of: impl Fn(&PieceRef) -> ChunkId,
        pieces: &'p [PieceRef],
        decode: fn(&[u8], &ChunkHeader) -> Result<T, FormatError>,
    ) -> impl Stream<Item = Result<(&'p PieceRef, T), StoreError>> + 'p {
        let mut reads = Vec::with_capacity(pieces.len());
        for p in pieces {
            let h = self.header(kind, id_of(p), p.count);
            reads.push(async move {
                let read = self
                    .store
                    .read_section(&p.object, p.offset, p.len, &h, decode);
                read.await.map(|answer| (p, answer))
            });
        }
        futures::stream::iter(reads).buffered(READS_IN_FLIGHT)
    }

    /// Write a bundle, unless it is empty.
    pub(super) async fn put_bundle(&self, bundle: Bundle) -> Result<(), WorkerError> {
        if !bundle.is_empty() {
            self.store.put(&bundle.object, bundle.bytes).await?;
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
