//! What runs the tasks a worker process leases ([`Runner`]): an
//! [`exec::Worker`](crate::exec::Worker) on the job's store. The agent takes
//! its runner at construction, so that its tests hand in one of their own
//! and need neither a store nor a kernel.

use std::future::Future;

use solve2048_core::task::{AttemptId, Task, TaskOutput};
use solve2048_store::layout;

use crate::exec::{TaskIo, Worker, WorkerError};

/// Runs leased tasks, and deletes the outputs of a refused result.
pub(crate) trait Runner: Send + Sync {
    /// Run one attempt at `task` to completion, naming its outputs after
    /// `attempt`.
    fn run(
        &self,
        task: &Task,
        attempt: AttemptId,
    ) -> impl Future<Output = Result<(TaskOutput, TaskIo), WorkerError>> + Send;

    /// Delete the outputs `output` names, as far as possible: the
    /// coordinator refused them and no record can name them.
    fn discard(&self, output: &TaskOutput) -> impl Future<Output = ()> + Send;
}

impl Runner for Worker {
    fn run(
        &self,
        task: &Task,
        attempt: AttemptId,
    ) -> impl Future<Output = Result<(TaskOutput, TaskIo), WorkerError>> + Send {
        Worker::run(self, task, attempt)
    }

    async fn discard(&self, output: &TaskOutput) {
        for object in layout::outputs_of(output) {
            // One that cannot be deleted stays behind, named by no record.
            let _ = self.store().delete(&object).await;
        }
    }
}
