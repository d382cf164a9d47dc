//! A worker process: registers with the coordinator, pulls tasks as leases,
//! keeps them alive with heartbeats, runs them with [`Worker`] and reports
//! the outputs.
//!
//! - A coordinator URL that is not `http://HOST:PORT` or `https://...` is
//!   refused at once.
//! - A coordinator that cannot be reached is retried with backoff (it may be
//!   restarting) for up to `give_up_after`; each failure is logged with its
//!   error, at a decreasing rate (after 1 s, 2 s, 4 s, ... then every minute).
//! - A coordinator that no longer knows this worker (it restarted) gets a new
//!   registration; tasks in flight are abandoned, since their leases died
//!   with the old coordinator.
//! - A lease the coordinator says is lost is abandoned at once; a result it
//!   refuses (stale lease) has its outputs deleted when the coordinator says
//!   no record can name them (it issued the lease itself). They were written
//!   under this attempt's own names, so no one else's output is touched. A
//!   lease of a previous coordinator may have been committed just before it
//!   died, so those outputs stay; the job's end sweeps them if unreferenced.
//! - On shutdown (SIGTERM, Ctrl-C) it leases nothing more, lets running
//!   tasks finish for up to `drain`, then hands the remaining leases back. A
//!   worker running no task (waiting for work, or for an unreachable
//!   coordinator) stops at once.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use solve2048_core::formats::chunk::FORMAT_VERSION;
use solve2048_core::task::{AttemptId, Failure, FailureKind, JobSpec, Task, TaskOutput};
use solve2048_proto as pb;
use solve2048_proto::client::connect;
use tokio::sync::{watch, Notify};
use tonic::Code;
use tracing::Instrument;

use solve2048_store::{layout, Access, ChunkCache, Store};

use crate::exec::{TaskIo, Worker};

mod config;
mod connection;
mod error;
mod report;
mod shared;

use crate::peak_rss_bytes;
pub use config::AgentConfig;
use connection::{describe_status, plain_to_tls, refused, transient, PLAIN_TO_TLS_AFTER};
pub use error::AgentError;
pub use report::AgentReport;
use shared::{Shared, Unreachable};

/// How one registration (session) ended.
enum SessionEnd {
    /// The job is over, or this worker is shutting down.
    Done,
    /// The coordinator forgot us (restarted): register again.
    Lost,
}

/// Run a worker process until the job is over, an unrecoverable error, or
/// `shutdown` resolves (then drain and hand back).
pub async fn run_agent(
    config: AgentConfig,
    shutdown: impl Future<Output = ()>,
) -> Result<AgentReport, AgentError> {
    let client = connect(&config.coordinator, &config.token, config.tls_ca.as_deref())?;
    let (hand_back_tx, hand_back) = watch::channel(false);
    let shared = Arc::new(Shared {
        client,
        config,
        report: Mutex::new(AgentReport::default()),
        stopping: AtomicBool::new(false),
        hand_back,
        unreachable: Mutex::new(Unreachable::default()),
        running: std::sync::atomic::AtomicUsize::new(0),
    });
    let work = async {
        let mut worker: Option<(String, JobSpec, Arc<Worker>)> = None;
        loop {
            let reg = register(&shared).await?;
            let job: JobSpec = serde_json::from_str(&reg.job_json)
                .map_err(|e| AgentError::Job(format!("unreadable job: {e}")))?;
            let w = match &worker {
                Some((store, j, w)) if *store == reg.store && *j == job => w.clone(),
                Some(_) => {
                    return Err(AgentError::Job(
                        "the coordinator now runs another job or store".into(),
                    ))
                }
                None => {
                    let w = Arc::new(open_worker(&shared.config, &reg.store, &job)?);
                    worker = Some((reg.store.clone(), job.clone(), w.clone()));
                    w
                }
            };
            tracing::info!(worker = %reg.worker_id, game = %job.game.name(), store = %reg.store, "registered");
            match session(&shared, &w, &reg).await? {
                SessionEnd::Done => return Ok(()),
                SessionEnd::Lost => {
                    tracing::warn!("the coordinator no longer knows this worker; registering again")
                }
            }
        }
    };
    tokio::select! {
        r = work => r?,
        _ = stop(&shared, shutdown, hand_back_tx) => {}
    }
    let report = *shared.report.lock().unwrap();
    Ok(report)
}

/// A worker on the store `store` (or the one `config` holds, with counters
/// of its own) for `job`, with the chunk cache of `config` if it has one.
fn open_worker(config: &AgentConfig, store: &str, job: &JobSpec) -> Result<Worker, AgentError> {
    let mut store = match &config.store {
        Some(shared) => shared.with_own_counters(),
        None => Store::open(store, Access::ReadWrite)?,
    };
    if let Some((dir, bytes)) = &config.cache {
        let cache = ChunkCache::open(dir, *bytes)
            .map_err(|e| AgentError::Job(format!("cache {}: {e}", dir.display())))?;
        store = store.with_cache(cache);
    }
    Ok(Worker::new(store, job.clone(), config.task_budget))
}

/// Once `shutdown` resolves: takes no new tasks, lets running ones finish
/// for the drain time, then hands back what still runs (through
/// `hand_back`) and waits a little for the hand-backs to be sent.
async fn stop(shared: &Shared, shutdown: impl Future<Output = ()>, hand_back: watch::Sender<bool>) {
    let drain = shared.config.drain;
    let idle = || shared.running.load(Ordering::SeqCst) == 0;
    shutdown.await;
    shared.stopping.store(true, Ordering::SeqCst);
    if idle() {
        tracing::info!("shutting down: no task running");
        return;
    }
    tracing::info!(
        ?drain,
        "shutting down: no new tasks; running ones may finish"
    );
    let deadline = tokio::time::Instant::now() + drain;
    while !idle() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = hand_back.send(true);
    // Hand-backs are one call each; a coordinator that is away does not
    // keep the worker: its leases lapse on their own.
    let deadline = tokio::time::Instant::now() + HAND_BACK_FOR;
    while !idle() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long a stopping worker waits for its hand-backs to reach the
/// coordinator.
const HAND_BACK_FOR: Duration = Duration::from_secs(5);

async fn register(shared: &Shared) -> Result<pb::RegisterReply, AgentError> {
    let c = &shared.config;
    let mut attempt = 0;
    // Plain-HTTP calls that reach a server which then drops or garbles the
    // exchange, in a row: what a TLS coordinator does to them.
    let mut garbled = 0;
    loop {
        let req = pb::RegisterRequest {
            protocol_version: pb::PROTOCOL_VERSION,
            format_version: FORMAT_VERSION as u32,
            name: c.name.clone(),
            threads: c.threads,
            slots: c.slots,
            memory_bytes: c.task_budget,
        };
        match shared.client.clone().register(req).await {
            Ok(r) => {
                shared.reachable();
                shared.report.lock().unwrap().registrations += 1;
                return Ok(r.into_inner());
            }
            Err(s) if plain_to_tls(c, &s) && {
                garbled += 1;
                garbled >= PLAIN_TO_TLS_AFTER
            } =>
            {
                return Err(AgentError::Refused(format!(
                    "{}; the coordinator answers like a TLS server: use https:// (and --tls-ca with its CA)",
                    describe_status(&s)
                )))
            }
            Err(s) if transient(&s) => shared.backoff(&s, &mut attempt).await?,
            Err(s) => return Err(refused(&s)),
        }
    }
}

/// Leases this session holds, with the signal that abandons each.
type Held = Mutex<HashMap<u64, Arc<Notify>>>;

async fn session(
    shared: &Arc<Shared>,
    worker: &Arc<Worker>,
    reg: &pb::RegisterReply,
) -> Result<SessionEnd, AgentError> {
    let held: Arc<Held> = Arc::new(Mutex::new(HashMap::new()));
    let end: Mutex<Option<SessionEnd>> = Mutex::new(None);
    let set_end = |e: SessionEnd| {
        if matches!(e, SessionEnd::Lost) {
            // The leases died with the coordinator that issued them.
            for n in held.lock().unwrap().values() {
                n.notify_one();
            }
        }
        let mut slot = end.lock().unwrap();
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let heartbeat = async {
        let every = Duration::from_millis(reg.heartbeat_ms.max(100));
        let mut attempt = 0;
        loop {
            tokio::time::sleep(every).await;
            let ids: Vec<u64> = held.lock().unwrap().keys().copied().collect();
            let req = pb::HeartbeatRequest {
                worker_id: reg.worker_id.clone(),
                lease_ids: ids,
                peak_rss_bytes: peak_rss_bytes(),
            };
            // A call that hangs must not hold up the next heartbeats: the
            // coordinator counts silence, and a few missed ones make the
            // worker lost.
            let mut client = shared.client.clone();
            let call = tokio::time::timeout(every * 2, client.heartbeat(req));
            let answer = call.await.unwrap_or_else(|_| {
                Err(tonic::Status::deadline_exceeded(
                    "the heartbeat got no answer in time",
                ))
            });
            match answer {
                Ok(r) => {
                    shared.reachable();
                    attempt = 0;
                    let r = r.into_inner();
                    for id in r.lost_lease_ids {
                        if let Some(n) = held.lock().unwrap().get(&id) {
                            tracing::warn!(lease = %AttemptId(id), "lease lost; abandoning its task");
                            n.notify_one();
                        }
                    }
                    if r.job_finished {
                        set_end(SessionEnd::Done);
                    }
                }
                Err(s) if s.code() == Code::NotFound => set_end(SessionEnd::Lost),
                Err(s) if transient(&s) => shared.backoff(&s, &mut attempt).await?,
                Err(s) => return Err(refused(&s)),
            }
        }
    };
    let slots = (0..shared.config.slots.max(1))
        .map(|_| slot_loop(shared, worker, &reg.worker_id, &held, &set_end, &end));
    let runners = futures::future::try_join_all(slots);
    let r: Result<(), AgentError> = tokio::select! {
        r = runners => r.map(|_| ()),
        r = heartbeat => r,
    };
    r?;
    let ended = end.lock().unwrap().take();
    Ok(ended.unwrap_or(SessionEnd::Done))
}

/// One slot: lease, run, report, until the session ends.
async fn slot_loop(
    shared: &Arc<Shared>,
    worker: &Arc<Worker>,
    worker_id: &str,
    held: &Arc<Held>,
    set_end: &(dyn Fn(SessionEnd) + Sync),
    end: &Mutex<Option<SessionEnd>>,
) -> Result<(), AgentError> {
    let mut attempt = 0;
    loop {
        if end.lock().unwrap().is_some() || shared.stopping.load(Ordering::SeqCst) {
            if shared.stopping.load(Ordering::SeqCst) {
                set_end(SessionEnd::Done);
            }
            return Ok(());
        }
        let req = pb::LeaseRequest {
            worker_id: worker_id.to_string(),
            wait_ms: 5_000,
        };
        let reply = match shared.client.clone().lease(req).await {
            Ok(r) => {
                shared.reachable();
                attempt = 0;
                r.into_inner()
            }
            Err(s) if s.code() == Code::NotFound => {
                set_end(SessionEnd::Lost);
                return Ok(());
            }
            Err(s) if transient(&s) => {
                shared.backoff(&s, &mut attempt).await?;
                continue;
            }
            Err(s) => return Err(refused(&s)),
        };
        if reply.job_finished {
            set_end(SessionEnd::Done);
            return Ok(());
        }
        let Some(lease) = reply.lease else { continue };
        let span =
            tracing::info_span!("task", key = %lease.task_key, lease = %AttemptId(lease.lease_id));
        run_lease(shared, worker, worker_id, held, lease)
            .instrument(span)
            .await?;
    }
}

/// Counts a lease as running while it lives.
struct Running<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs the task of `lease` until it ends, `lost` is notified (the lease
/// was lost) or the worker hands its tasks back.
async fn run_task(shared: &Shared, worker: &Worker, lease: &pb::Lease, lost: &Notify) -> Ran {
    let task = match serde_json::from_str::<Task>(&lease.task_json) {
        Ok(task) => task,
        Err(e) => {
            return Ran::Failed(Failure {
                kind: FailureKind::Fatal,
                message: format!("unreadable task: {e}"),
            })
        }
    };
    let mut hand_back = shared.hand_back.clone();
    tokio::select! {
        r = worker.run(&task, AttemptId(lease.lease_id)) => match r {
            Ok(done) => Ran::Output(Box::new(done)),
            Err(e) => Ran::Failed(e.failure()),
        },
        _ = lost.notified() => Ran::Abandoned,
        _ = hand_back.wait_for(|&b| b) => Ran::HandBack,
    }
}

/// Reports a task's output to the coordinator, retrying while it is away;
/// deletes the outputs if the coordinator refuses them and says so.
async fn complete(
    shared: &Shared,
    worker: &Worker,
    worker_id: &str,
    id: AttemptId,
    done: &(TaskOutput, TaskIo),
) -> Result<(), AgentError> {
    let (out, io) = done;
    let mut attempt = 0;
    loop {
        let req = pb::CompleteRequest {
            worker_id: worker_id.to_string(),
            lease_id: id.0,
            output_json: serde_json::to_string(&out).expect("outputs serialize"),
            bytes_written: io.bytes_written,
            bytes_read: io.bytes_read,
            store_requests_json: serde_json::to_string(&io.requests).expect("counts serialize"),
        };
        let r = match shared.client.clone().complete(req).await {
            Ok(r) => r.into_inner(),
            Err(s) if transient(&s) => {
                shared.backoff(&s, &mut attempt).await?;
                continue;
            }
            Err(s) => {
                tracing::warn!(error = %s.message(), "cannot report a result");
                return Ok(());
            }
        };
        shared.reachable();
        if r.accepted {
            shared.report.lock().unwrap().completed += 1;
            return Ok(());
        }
        shared.report.lock().unwrap().abandoned += 1;
        if r.delete_outputs {
            tracing::warn!(reason = %r.reason, "result refused; deleting its outputs");
            for object in layout::outputs_of(out) {
                let _ = worker.store().delete(&object).await;
            }
        } else {
            tracing::warn!(reason = %r.reason, "result refused; its outputs stay (a previous coordinator may have committed them)");
        }
        return Ok(());
    }
}

/// How a leased task ended here.
enum Ran {
    /// Boxed: far larger than the others (its request counts).
    Output(Box<(TaskOutput, TaskIo)>),
    Failed(Failure),
    Abandoned,
    HandBack,
}

async fn run_lease(
    shared: &Arc<Shared>,
    worker: &Arc<Worker>,
    worker_id: &str,
    held: &Arc<Held>,
    lease: pb::Lease,
) -> Result<(), AgentError> {
    shared.running.fetch_add(1, Ordering::SeqCst);
    let _running = Running(&shared.running);
    let id = AttemptId(lease.lease_id);
    let lost = Arc::new(Notify::new());
    held.lock().unwrap().insert(lease.lease_id, lost.clone());
    let ran = run_task(shared, worker, &lease, &lost).await;
    held.lock().unwrap().remove(&lease.lease_id);
    let client = || shared.client.clone();
    match ran {
        Ran::Output(done) => return complete(shared, worker, worker_id, id, &done).await,
        Ran::Failed(failure) => {
            tracing::warn!(error = %failure, kind = ?failure.kind, "task failed");
            shared.report.lock().unwrap().failed += 1;
            let req = pb::FailRequest {
                worker_id: worker_id.to_string(),
                lease_id: id.0,
                error: failure.message,
                fatal: failure.kind == FailureKind::Fatal,
                damaged: failure.kind == FailureKind::Damaged,
            };
            // If this is lost, the lease lapses and the task is retried anyway.
            let _ = client().fail(req).await;
        }
        Ran::Abandoned => shared.report.lock().unwrap().abandoned += 1,
        Ran::HandBack => {
            shared.report.lock().unwrap().released += 1;
            let req = pb::ReleaseRequest {
                worker_id: worker_id.to_string(),
                lease_id: id.0,
            };
            let _ = client().release(req).await;
        }
    }
    Ok(())
}
