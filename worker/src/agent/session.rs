//! One registration with the coordinator (a session): its heartbeats, and
//! its slots, each leasing and running one task at a time, until the job
//! is over, the worker stops, or the coordinator forgets the worker.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use solve2048_core::task::AttemptId;
use solve2048_proto as pb;
use tokio_util::sync::CancellationToken;
use tonic::Code;
use tracing::Instrument;

use super::connection::{refused, transient};
use super::error::AgentError;
use super::lease;
use super::runner::Runner;
use super::shared::Shared;
use crate::peak_rss_bytes;

/// How one session ended.
pub(super) enum SessionEnd {
    /// The job is over, or this worker is shutting down.
    Done,
    /// The coordinator forgot us (restarted): register again.
    Lost,
}

/// Runs one session of the worker registered as `reg` until it ends, its
/// tasks run by `runner`.
pub(super) async fn run(
    shared: &Shared,
    runner: &impl Runner,
    reg: &pb::RegisterReply,
) -> Result<SessionEnd, AgentError> {
    let session = Session {
        shared,
        worker_id: &reg.worker_id,
        held: Mutex::new(HashMap::new()),
        ended: CancellationToken::new(),
        how: OnceLock::new(),
        leases: CancellationToken::new(),
    };
    let slots = (0..shared.config.slots.max(1)).map(|_| session.slot(runner));
    tokio::select! {
        r = futures::future::try_join_all(slots) => r.map(|_| ())?,
        e = session.heartbeat(reg.heartbeat_ms) => return Err(e),
    }
    Ok(session.how.into_inner().unwrap_or(SessionEnd::Done))
}

/// What a session's heartbeats and slots share.
struct Session<'a> {
    shared: &'a Shared,
    worker_id: &'a str,
    /// The leases held now, each with the token that abandons its task (a
    /// child of `leases`). A std mutex: never held across an `.await`.
    held: Mutex<HashMap<u64, CancellationToken>>,
    /// Cancelled when the session ends: its slots lease nothing more.
    ended: CancellationToken,
    /// How it ended first.
    how: OnceLock<SessionEnd>,
    /// Cancelled when the coordinator no longer knows this worker: the
    /// leases died with the coordinator that issued them, so their tasks
    /// are abandoned.
    leases: CancellationToken,
}

impl Session<'_> {
    /// End the session: the job is over or the worker stops (`Done`), or
    /// the coordinator forgot this worker (`Lost`). The first end counts.
    fn end(&self, end: SessionEnd) {
        if let SessionEnd::Lost = end {
            self.leases.cancel();
        }
        let _ = self.how.set(end);
        self.ended.cancel();
    }

    /// One slot: lease, run, report, until the session ends.
    async fn slot(&self, runner: &impl Runner) -> Result<(), AgentError> {
        let mut attempt = 0;
        loop {
            if self.shared.stop.is_cancelled() {
                self.end(SessionEnd::Done);
            }
            if self.ended.is_cancelled() {
                return Ok(());
            }
            let req = pb::LeaseRequest {
                worker_id: self.worker_id.to_string(),
                wait_ms: 5_000,
            };
            let mut client = self.shared.client.clone();
            let answer = tokio::select! {
                biased;
                () = self.ended.cancelled() => return Ok(()),
                a = client.lease(req) => a,
            };
            let reply = match answer {
                Ok(r) => {
                    self.shared.reachable();
                    attempt = 0;
                    r.into_inner()
                }
                Err(s) if s.code() == Code::NotFound => {
                    self.end(SessionEnd::Lost);
                    return Ok(());
                }
                Err(s) if transient(&s) => {
                    self.shared.backoff(s, &mut attempt).await?;
                    continue;
                }
                Err(s) => return Err(refused(s)),
            };
            if reply.job_finished {
                self.end(SessionEnd::Done);
                return Ok(());
            }
            if let Some(lease) = reply.lease {
                let span = tracing::info_span!("task", key = %lease.task_key, lease = %AttemptId(lease.lease_id));
                let run = self
                    .shared
                    .running
                    .track_future(self.run_lease(runner, lease));
                run.instrument(span).await?;
            }
        }
    }

    /// Runs `lease` as held, until it ends or is abandoned.
    async fn run_lease(&self, runner: &impl Runner, lease: pb::Lease) -> Result<(), AgentError> {
        let abandon = self.leases.child_token();
        let id = lease.lease_id;
        self.held.lock().unwrap().insert(id, abandon.clone());
        let r = lease::run(self.shared, runner, self.worker_id, &lease, &abandon).await;
        self.held.lock().unwrap().remove(&id);
        r
    }

    /// Renews the leases held every heartbeat of `heartbeat_ms` (at least
    /// 100 ms), abandons those the coordinator says are lost, and ends the
    /// session when the job is over or the coordinator forgot this worker.
    /// Returns only with the error that stops the worker.
    async fn heartbeat(&self, heartbeat_ms: u64) -> AgentError {
        let every = Duration::from_millis(heartbeat_ms.max(100));
        let mut attempt = 0;
        loop {
            tokio::time::sleep(every).await;
            let ids: Vec<u64> = self.held.lock().unwrap().keys().copied().collect();
            let req = pb::HeartbeatRequest {
                worker_id: self.worker_id.to_string(),
                lease_ids: ids,
                peak_rss_bytes: peak_rss_bytes(),
            };
            // A call that hangs must not hold up the next heartbeats: the
            // coordinator counts silence, and a few missed ones make the
            // worker lost.
            let mut client = self.shared.client.clone();
            let call = tokio::time::timeout(every * 2, client.heartbeat(req));
            let answer = call.await.unwrap_or_else(|_| {
                Err(tonic::Status::deadline_exceeded(
                    "the heartbeat got no answer in time",
                ))
            });
            match answer {
                Ok(r) => {
                    self.shared.reachable();
                    attempt = 0;
                    self.heard(r.into_inner());
                }
                Err(s) if s.code() == Code::NotFound => self.end(SessionEnd::Lost),
                Err(s) if transient(&s) => {
                    if let Err(e) = self.shared.backoff(s, &mut attempt).await {
                        return e;
                    }
                }
                Err(s) => return refused(s),
            }
        }
    }

    /// Acts on a heartbeat's answer.
    fn heard(&self, reply: pb::HeartbeatReply) {
        for id in reply.lost_lease_ids {
            if let Some(abandon) = self.held.lock().unwrap().get(&id) {
                tracing::warn!(lease = %AttemptId(id), "lease lost; abandoning its task");
                abandon.cancel();
            }
        }
        if reply.job_finished {
            self.end(SessionEnd::Done);
        }
    }
}
