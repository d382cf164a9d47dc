//! One lease, from its task's start to what the coordinator is told: its
//! output (deleted when the coordinator refuses it and says so), its
//! failure, or its hand-back when the worker stops. A lease the coordinator
//! says is lost is abandoned without a word.

use solve2048_core::task::{AttemptId, Failure, FailureKind, Task, TaskOutput};
use solve2048_proto as pb;
use tokio_util::sync::CancellationToken;

use super::connection::transient;
use super::error::AgentError;
use super::runner::Runner;
use super::shared::Shared;
use crate::exec::TaskIo;

/// How a leased task ended here.
enum Ran {
    /// Boxed: far larger than the others (its request counts).
    Output(Box<(TaskOutput, TaskIo)>),
    Failed(Failure),
    Abandoned,
    HandBack,
}

/// Runs the task of `lease`, leased by the worker `worker_id`, until it
/// ends, `abandon` is cancelled (the lease was lost) or the worker hands
/// its tasks back; then tells the coordinator how it ended. A lease taken
/// once the worker is stopping is handed back at once.
pub(super) async fn run(
    shared: &Shared,
    runner: &impl Runner,
    worker_id: &str,
    lease: &pb::Lease,
    abandon: &CancellationToken,
) -> Result<(), AgentError> {
    let id = AttemptId(lease.lease_id);
    let ran = if shared.stop.is_cancelled() {
        Ran::HandBack
    } else {
        run_task(shared, runner, lease, abandon).await
    };
    match ran {
        Ran::Output(done) => return complete(shared, runner, worker_id, id, &done).await,
        Ran::Failed(failure) => {
            tracing::warn!(error = %failure, kind = ?failure.kind, "task failed");
            shared.count(|r| r.failed += 1);
            let req = pb::FailRequest {
                worker_id: worker_id.to_string(),
                lease_id: id.0,
                error: failure.message,
                // Damage is fatal too (for a coordinator that reads only this).
                fatal: failure.kind != FailureKind::Retry,
                damaged: failure.kind == FailureKind::Damaged,
            };
            // If this is lost, the lease lapses and the task is retried anyway.
            let _ = shared.client.clone().fail(req).await;
        }
        Ran::Abandoned => shared.count(|r| r.abandoned += 1),
        Ran::HandBack => {
            shared.count(|r| r.released += 1);
            let req = pb::ReleaseRequest {
                worker_id: worker_id.to_string(),
                lease_id: id.0,
            };
            let _ = shared.client.clone().release(req).await;
        }
    }
    Ok(())
}

/// Runs the task of `lease` until it ends, `abandon` is cancelled or the
/// worker hands its tasks back.
async fn run_task(
    shared: &Shared,
    runner: &impl Runner,
    lease: &pb::Lease,
    abandon: &CancellationToken,
) -> Ran {
    let task = match serde_json::from_str::<Task>(&lease.task_json) {
        Ok(task) => task,
        Err(e) => {
            // Crosses to the coordinator as text, its cause and all.
            return Ran::Failed(Failure {
                kind: FailureKind::Fatal,
                message: format!("unreadable task: {e}"),
            });
        }
    };
    tokio::select! {
        r = runner.run(&task, AttemptId(lease.lease_id)) => match r {
            Ok(done) => Ran::Output(Box::new(done)),
            Err(e) => Ran::Failed(e.failure()),
        },
        () = abandon.cancelled() => Ran::Abandoned,
        () = shared.hand_back.cancelled() => Ran::HandBack,
    }
}

/// Reports a task's output to the coordinator, retrying while it is away;
/// deletes the outputs if the coordinator refuses them and says so.
async fn complete(
    shared: &Shared,
    runner: &impl Runner,
    worker_id: &str,
    id: AttemptId,
    done: &(TaskOutput, TaskIo),
) -> Result<(), AgentError> {
    let (out, io) = done;
    let mut attempt = 0;
    let r = loop {
        let req = pb::CompleteRequest {
            worker_id: worker_id.to_string(),
            lease_id: id.0,
            output_json: serde_json::to_string(&out).expect("outputs serialize"),
            bytes_written: io.bytes_written,
            bytes_read: io.bytes_read,
            store_requests_json: serde_json::to_string(&io.requests).expect("counts serialize"),
        };
        match shared.client.clone().complete(req).await {
            Ok(r) => break r.into_inner(),
            Err(s) if transient(&s) => shared.backoff(s, &mut attempt).await?,
            Err(s) => {
                tracing::warn!(error = %s.message(), "cannot report a result");
                return Ok(());
            }
        }
    };
    shared.reachable();
    if r.accepted {
        shared.count(|r| r.completed += 1);
        return Ok(());
    }
    shared.count(|r| r.abandoned += 1);
    if r.delete_outputs {
        tracing::warn!(reason = %r.reason, "result refused; deleting its outputs");
        runner.discard(out).await;
    } else {
        tracing::warn!(reason = %r.reason, "result refused; its outputs stay (a previous coordinator may have committed them)");
    }
    Ok(())
}
