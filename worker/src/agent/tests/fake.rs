//! A fake coordinator for the agent's tests: a real gRPC server on a port
//! of 127.0.0.1, which hands out the leases of its script and reports what
//! it is asked as [`Event`]s, and a fake [`Runner`] whose tasks end when
//! the test says (or never).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use solve2048_core::task::{AttemptId, JobSpec, Task, TaskOutput};
use solve2048_core::Game;
use solve2048_proto as pb;
use solve2048_proto::coordinator_server::{Coordinator, CoordinatorServer};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

use crate::agent::runner::Runner;
use crate::exec::{TaskIo, WorkerError};

/// What the fake coordinator and runner saw, in order.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Event {
    /// A worker registered, under this id.
    Registered(String),
    /// A lease was asked for.
    LeaseAsked,
    /// This lease was handed out.
    Leased(u64),
    /// A heartbeat named these leases.
    Heartbeat(Vec<u64>),
    /// A result was reported for this lease.
    Completed(u64),
    /// This lease was handed back.
    Released(u64),
    /// This lease's task failed.
    Failed(u64),
    /// The runner started the task of this lease.
    Started(u64),
    /// The runner deleted the outputs of this lease.
    Discarded(u64),
}

/// Events as the test reads them.
pub(super) type Events = mpsc::UnboundedReceiver<Event>;

/// Read `events` until one satisfies `wanted`, returning it and those
/// before it; panics after 20 s without one.
pub(super) async fn until(events: &mut Events, wanted: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    let read = async {
        while let Some(e) = events.recv().await {
            let done = wanted(&e);
            seen.push(e);
            if done {
                return;
            }
        }
        panic!("the events ended");
    };
    if tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .is_err()
    {
        panic!("no such event; saw {seen:?}");
    }
    seen
}

/// A lease of the task that the fake runner runs, numbered `id`.
pub(super) fn lease(id: u64) -> pb::LeaseReply {
    let task = Task::StartValue { layers: Vec::new() };
    pb::LeaseReply {
        lease: Some(pb::Lease {
            lease_id: id,
            task_key: task.key(),
            task_json: serde_json::to_string(&task).unwrap(),
            ttl_ms: 60_000,
        }),
        job_finished: false,
    }
}

/// The reply that ends the job.
pub(super) fn finished() -> pb::LeaseReply {
    pb::LeaseReply {
        lease: None,
        job_finished: true,
    }
}

/// A coordinator that answers from a script. A fresh one knows no worker,
/// as a restarted coordinator does.
pub(super) struct FakeCoordinator {
    /// Lease replies, handed out in order; when none is left, a lease call
    /// waits [`IDLE_LEASE`] and gets nothing.
    leases: Mutex<VecDeque<pb::LeaseReply>>,
    /// The answer to a result, by lease; accepted when not named.
    results: HashMap<u64, pb::CompleteReply>,
    /// The workers it registered.
    known: Mutex<HashSet<String>>,
    events: mpsc::UnboundedSender<Event>,
}

/// How long a lease call waits when the script has nothing left.
const IDLE_LEASE: Duration = Duration::from_millis(100);

impl FakeCoordinator {
    /// One that hands out `leases` and answers results as `results` says,
    /// telling `events`.
    pub(super) fn new(
        leases: Vec<pb::LeaseReply>,
        results: HashMap<u64, pb::CompleteReply>,
        events: mpsc::UnboundedSender<Event>,
    ) -> FakeCoordinator {
        FakeCoordinator {
            leases: Mutex::new(leases.into()),
            results,
            known: Mutex::new(HashSet::new()),
            events,
        }
    }

    fn tell(&self, e: Event) {
        let _ = self.events.send(e);
    }

    /// Refuses a worker it did not register, as a restarted coordinator
    /// does.
    fn knows(&self, worker_id: &str) -> Result<(), Status> {
        if self.known.lock().unwrap().contains(worker_id) {
            Ok(())
        } else {
            Err(Status::not_found("unknown worker"))
        }
    }
}

/// Serves `fake` on `listener` until `stop` resolves; in-flight calls end
/// first, then the connections close.
pub(super) fn serve(
    listener: TcpListener,
    fake: FakeCoordinator,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let server = tonic::transport::Server::builder()
        .add_service(CoordinatorServer::new(fake))
        .serve_with_incoming_shutdown(TcpIncoming::from(listener), stop);
    tokio::spawn(async move { server.await.unwrap() })
}

#[tonic::async_trait]
impl Coordinator for FakeCoordinator {
    async fn register(
        &self,
        _: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterReply>, Status> {
        let id = format!("w{}", next_id());
        self.known.lock().unwrap().insert(id.clone());
        self.tell(Event::Registered(id.clone()));
        let game = Game::new(2, 64, 1.0).unwrap();
        let job = JobSpec {
            game,
            chunk_size: 1 << 16,
            zstd_level: 1,
            evaluate: None,
            recompute_values: false,
        };
        Ok(Response::new(pb::RegisterReply {
            worker_id: id,
            job_json: serde_json::to_string(&job).unwrap(),
            store: "memory".into(),
            heartbeat_ms: 100,
        }))
    }

    async fn lease(
        &self,
        req: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseReply>, Status> {
        self.knows(&req.get_ref().worker_id)?;
        self.tell(Event::LeaseAsked);
        let next = self.leases.lock().unwrap().pop_front();
        let Some(reply) = next else {
            tokio::time::sleep(IDLE_LEASE).await;
            return Ok(Response::new(pb::LeaseReply::default()));
        };
        if let Some(l) = &reply.lease {
            self.tell(Event::Leased(l.lease_id));
        }
        Ok(Response::new(reply))
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        self.knows(&req.get_ref().worker_id)?;
        self.tell(Event::Heartbeat(req.into_inner().lease_ids));
        Ok(Response::new(pb::HeartbeatReply::default()))
    }

    async fn complete(
        &self,
        req: Request<pb::CompleteRequest>,
    ) -> Result<Response<pb::CompleteReply>, Status> {
        let id = req.get_ref().lease_id;
        self.tell(Event::Completed(id));
        let accepted = pb::CompleteReply {
            accepted: true,
            ..Default::default()
        };
        Ok(Response::new(
            self.results.get(&id).cloned().unwrap_or(accepted),
        ))
    }

    async fn fail(&self, req: Request<pb::FailRequest>) -> Result<Response<pb::FailReply>, Status> {
        self.tell(Event::Failed(req.get_ref().lease_id));
        Ok(Response::new(pb::FailReply {}))
    }

    async fn release(
        &self,
        req: Request<pb::ReleaseRequest>,
    ) -> Result<Response<pb::ReleaseReply>, Status> {
        self.tell(Event::Released(req.get_ref().lease_id));
        Ok(Response::new(pb::ReleaseReply {}))
    }

    async fn status(
        &self,
        _: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::StatusReply>, Status> {
        Err(Status::unimplemented("not in the fake"))
    }
}

/// A worker id unlike the previous ones.
fn next_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A runner whose tasks output their lease's number as a start value. With
/// a gate, each task ends only once it takes a permit from it.
#[derive(Clone)]
pub(super) struct FakeRunner {
    pub(super) gate: Option<Arc<Semaphore>>,
    pub(super) events: mpsc::UnboundedSender<Event>,
}

impl Runner for FakeRunner {
    async fn run(&self, _: &Task, attempt: AttemptId) -> Result<(TaskOutput, TaskIo), WorkerError> {
        let _ = self.events.send(Event::Started(attempt.0));
        if let Some(gate) = &self.gate {
            gate.acquire().await.unwrap().forget();
        }
        Ok((TaskOutput::StartValue(attempt.0 as f64), TaskIo::default()))
    }

    async fn discard(&self, output: &TaskOutput) {
        let TaskOutput::StartValue(id) = output else {
            panic!("not a fake output: {output:?}");
        };
        let _ = self.events.send(Event::Discarded(*id as u64));
    }
}
