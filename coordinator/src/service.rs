//! The gRPC `Coordinator` service: a thin adapter from the wire messages of
//! `solve2048-proto` to the [`Scheduler`], behind a shared-secret check.

use std::sync::Arc;
use std::time::Duration;

use solve2048_core::formats::chunk::FORMAT_VERSION;
use solve2048_core::task::{AttemptId, Failure, FailureKind, TaskOutput};
use solve2048_proto as pb;
use solve2048_proto::coordinator_server::{Coordinator, CoordinatorServer};
use solve2048_store::RequestCounts;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status};

use crate::scheduler::{LeaseAnswer, Scheduler, UnknownWorker};

/// Builds the live status document (as JSON) on demand.
pub type StatusFn = Arc<dyn Fn() -> String + Send + Sync>;

/// What the service tells workers and the CLI.
pub struct ServiceState {
    /// The queue and leases.
    pub scheduler: Arc<Scheduler>,
    /// The job as JSON (`JobSpec`).
    pub job_json: String,
    /// The store workers open.
    pub store: String,
    /// The live status.
    pub status: StatusFn,
}

/// Longest a lease call waits for a task.
const MAX_WAIT: Duration = Duration::from_secs(20);

impl From<UnknownWorker> for Status {
    fn from(e: UnknownWorker) -> Status {
        Status::not_found(e.to_string())
    }
}

/// The service implementation.
pub struct Service(Arc<ServiceState>);

/// Checks the shared secret on every call.
#[derive(Clone)]
pub struct TokenCheck {
    expected: Arc<str>,
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let given = req
            .metadata()
            .get(pb::TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(token) if constant_time_eq(token.as_bytes(), self.expected.as_bytes()) => Ok(req),
            // The token itself is never logged or echoed.
            _ => Err(Status::unauthenticated(
                "missing or wrong token (set SOLVE2048_TOKEN or --token-file)",
            )),
        }
    }
}

/// Compare without an early exit, so timing does not reveal a prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The service behind the token check, ready for a tonic server.
pub fn make_service(
    state: Arc<ServiceState>,
    token: &str,
) -> InterceptedService<CoordinatorServer<Service>, TokenCheck> {
    let server = CoordinatorServer::new(Service(state))
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20);
    InterceptedService::new(
        server,
        TokenCheck {
            expected: token.into(),
        },
    )
}

#[tonic::async_trait]
impl Coordinator for Service {
    async fn register(
        &self,
        req: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterReply>, Status> {
        let r = req.into_inner();
        if r.protocol_version != pb::PROTOCOL_VERSION || r.format_version != FORMAT_VERSION as u32 {
            return Err(Status::failed_precondition(format!(
                "worker speaks protocol {} / chunk format {}; this coordinator speaks protocol {} / chunk format {}: run the same solve2048 version everywhere",
                r.protocol_version,
                r.format_version,
                pb::PROTOCOL_VERSION,
                FORMAT_VERSION
            )));
        }
        let s = &self.0;
        let id = s
            .scheduler
            .register(&r.name, r.threads, r.slots, r.memory_bytes);
        Ok(Response::new(pb::RegisterReply {
            worker_id: id,
            job_json: s.job_json.clone(),
            store: s.store.clone(),
            heartbeat_ms: s.scheduler.config().heartbeat.as_millis() as u64,
        }))
    }

    async fn lease(
        &self,
        req: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseReply>, Status> {
        let r = req.into_inner();
        let wait = Duration::from_millis(r.wait_ms as u64).min(MAX_WAIT);
        let reply = match self.0.scheduler.lease(&r.worker_id, wait).await? {
            LeaseAnswer::Task(g) => pb::LeaseReply {
                lease: Some(pb::Lease {
                    lease_id: g.lease.0,
                    task_key: g.key,
                    task_json: g.task_json,
                    ttl_ms: g.ttl.as_millis() as u64,
                }),
                job_finished: false,
            },
            LeaseAnswer::Nothing => pb::LeaseReply::default(),
            LeaseAnswer::Finished => pb::LeaseReply {
                lease: None,
                job_finished: true,
            },
        };
        Ok(Response::new(reply))
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        let r = req.into_inner();
        let leases: Vec<AttemptId> = r.lease_ids.into_iter().map(AttemptId).collect();
        let (lost, finished) =
            self.0
                .scheduler
                .heartbeat(&r.worker_id, &leases, r.peak_rss_bytes)?;
        Ok(Response::new(pb::HeartbeatReply {
            lost_lease_ids: lost.into_iter().map(|l| l.0).collect(),
            job_finished: finished,
        }))
    }

    async fn complete(
        &self,
        req: Request<pb::CompleteRequest>,
    ) -> Result<Response<pb::CompleteReply>, Status> {
        let r = req.into_inner();
        let lease = AttemptId(r.lease_id);
        let scheduler = &self.0.scheduler;
        let output: TaskOutput = match serde_json::from_str(&r.output_json) {
            Ok(o) => o,
            Err(e) => {
                scheduler.fail(
                    &r.worker_id,
                    lease,
                    Failure::retry(format!("unreadable output: {e}")),
                );
                return Err(Status::invalid_argument(format!("unreadable output: {e}")));
            }
        };
        // Counts are figures, not results: unreadable ones count as none.
        let requests = match r.store_requests_json.as_str() {
            "" => RequestCounts::default(),
            json => serde_json::from_str(json).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "unreadable store request counts ignored");
                RequestCounts::default()
            }),
        };
        let reply = match scheduler.complete(
            &r.worker_id,
            lease,
            output,
            r.bytes_read,
            r.bytes_written,
            requests,
        ) {
            Ok(()) => pb::CompleteReply {
                accepted: true,
                reason: String::new(),
                delete_outputs: false,
            },
            Err(refused) => pb::CompleteReply {
                accepted: false,
                reason: refused.reason,
                delete_outputs: refused.outputs_unreferenced,
            },
        };
        Ok(Response::new(reply))
    }

    async fn fail(&self, req: Request<pb::FailRequest>) -> Result<Response<pb::FailReply>, Status> {
        let r = req.into_inner();
        self.0.scheduler.fail(
            &r.worker_id,
            AttemptId(r.lease_id),
            failure_of(r.error, r.fatal, r.damaged),
        );
        Ok(Response::new(pb::FailReply {}))
    }

    async fn release(
        &self,
        req: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseReply>, Status> {
        let r = req.into_inner();
        self.0
            .scheduler
            .release(&r.worker_id, AttemptId(r.lease_id));
        Ok(Response::new(pb::ReleaseReply {}))
    }

    async fn status(
        &self,
        _req: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusReply>, Status> {
        Ok(Response::new(pb::StatusReply {
            status_json: (self.0.status)(),
        }))
    }
}

/// A failure as a worker reported it.
fn failure_of(message: String, fatal: bool, damaged: bool) -> Failure {
    let kind = match (damaged, fatal) {
        (true, _) => FailureKind::Damaged,
        (false, true) => FailureKind::Fatal,
        (false, false) => FailureKind::Retry,
    };
    Failure { kind, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
    }
}
