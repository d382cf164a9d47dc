//! A job run as a service: take the store's lock, serve the `Coordinator`
//! gRPC service (and metrics), run the plan through the scheduler, keep the
//! lock and `status.json` fresh, and stop cleanly at the end, on an error or
//! on shutdown. `solve2048 coordinator` and the embedded `solve2048 solve`
//! both run exactly this.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use solve2048_core::task::JobSpec;
use std::collections::BTreeSet;

use solve2048_core::chain::Chain;
use solve2048_store::check::{check_store, CheckError};
use solve2048_store::{layout, StoreError};
use tokio::net::TcpListener;
use tonic::transport::server::Router;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::driver::repair::Repair;
use crate::driver::{self, Progress, Summary};
use crate::lock::{HostLock, Lock};
use crate::records::{CoordinatorError, Records, RepairError};
use crate::scheduler::{LeaseConfig, Scheduler};
use crate::service::{make_service, ServiceState};
use crate::status::{JobInfo, JobState, JobStatus};

/// PEM certificate chain and private key of the server.
#[derive(Clone)]
pub struct TlsFiles {
    /// Certificate chain, PEM.
    pub cert: Vec<u8>,
    /// Private key, PEM.
    pub key: Vec<u8>,
}

/// How to run the job.
#[derive(Clone)]
pub struct ServerConfig {
    /// The job.
    pub job: JobSpec,
    /// The store, as workers must open it (a URL or an absolute path).
    pub store: String,
    /// Lease timing.
    pub lease: LeaseConfig,
    /// Attempts per task before the job stops.
    pub max_attempts: u32,
    /// The shared secret every call must carry.
    pub token: String,
    /// Serve TLS with this identity.
    pub tls: Option<TlsFiles>,
    /// Replace a live coordinator's lock.
    pub take_over: bool,
    /// Check every object first, set the damaged ones aside in
    /// `quarantine/` and redo the tasks that wrote them.
    pub repair: bool,
    /// How often `status.json` is rewritten.
    pub status_every: Duration,
}

/// The outcome shown by status documents.
#[derive(Clone, Default)]
struct Outcome {
    state: Option<JobState>,
    error: Option<String>,
    start_value: Option<f64>,
}

impl Outcome {
    /// Records how the job ended: done with its start value, failed with
    /// its error, or stopped (interrupted) unfinished.
    fn record(&mut self, result: &Result<Summary, CoordinatorError>) {
        match result {
            Ok(s) => {
                self.state = Some(JobState::Done);
                self.start_value = Some(s.start_value);
            }
            Err(CoordinatorError::Interrupted) => self.state = Some(JobState::Stopped),
            Err(e) => {
                self.state = Some(JobState::Failed);
                self.error = Some(Chain(e).to_string());
            }
        }
    }
}

fn status_of(info: &JobInfo, scheduler: &Scheduler, outcome: &Mutex<Outcome>) -> JobStatus {
    let o = outcome.lock().unwrap().clone();
    JobStatus::new(
        info,
        scheduler.snapshot(),
        o.state.unwrap_or(JobState::Running),
        o.error,
        o.start_value,
        scheduler.states_ahead(),
        scheduler.overall(),
    )
}

/// The states of every layer before the job enumerates it, from `plan`'s
/// counts at a small share of the job's cost
/// ([`solve2048_plan::quick_part_counts`]); none where no such count exists.
fn upfront_estimate(game: &solve2048_core::Game) -> Option<std::collections::BTreeMap<u32, u64>> {
    let mut layers = std::collections::BTreeMap::new();
    for p in solve2048_plan::quick_part_counts(game)? {
        *layers.entry(p.sum).or_insert(0) += p.states;
    }
    Some(layers)
}

/// The job's scheduler, weighing its progress at the board's rates, its
/// upfront estimate set in the background (the job need not wait for it).
fn scheduler_of(config: &ServerConfig, epoch: u32) -> Arc<Scheduler> {
    let scheduler = Arc::new(Scheduler::new(config.lease, epoch));
    let game = config.job.game;
    scheduler.set_rates(solve2048_plan::Rates::of_shape(game.shape));
    let estimating = scheduler.clone();
    tokio::task::spawn_blocking(move || {
        if let Some(layers) = upfront_estimate(&game) {
            estimating.set_estimate(layers);
        }
    });
    scheduler
}

/// Run the job on `records`' store, serving workers on `listener` (and
/// metrics on `metrics`), until it is solved, fails, or `shutdown` resolves.
/// An error that says the store is damaged says how to repair it.
pub async fn serve_job(
    records: Records,
    listener: TcpListener,
    metrics: Option<TcpListener>,
    config: ServerConfig,
    progress: &(dyn Fn(&Progress) + Sync),
    shutdown: impl Future<Output = ()>,
) -> Result<Summary, CoordinatorError> {
    let location = records.location().to_string();
    serve(records, listener, metrics, config, progress, shutdown)
        .await
        .map_err(|e| {
            if e.is_damage() {
                CoordinatorError::StoreDamaged {
                    location,
                    source: Box::new(e),
                }
            } else {
                e
            }
        })
}

async fn serve(
    records: Records,
    listener: TcpListener,
    metrics: Option<TcpListener>,
    config: ServerConfig,
    progress: &(dyn Fn(&Progress) + Sync),
    shutdown: impl Future<Output = ()>,
) -> Result<Summary, CoordinatorError> {
    let addr = listener
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let (mut lock, repair) = open(&records, &addr, &config).await?;
    let scheduler = scheduler_of(&config, lock.epoch());
    let info = JobInfo {
        game: config.job.game.name(),
        store: config.store.clone(),
        coordinator: addr.clone(),
        epoch: lock.epoch(),
    };
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    let state = service_state(&config, &info, &scheduler, &outcome);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(grpc(&config, state)?.serve_with_incoming_shutdown(
        // No Nagle delay: leases are small messages that must not wait.
        TcpIncoming::from(listener).with_nodelay(Some(true)),
        async {
            let _ = stop_rx.await;
        },
    ));
    let metrics_task = metrics.map(|l| tokio::spawn(crate::metrics::serve(l, scheduler.clone())));
    tracing::info!(listen = %addr, store = %config.store, game = %info.game, epoch = lock.epoch(), "coordinator serving");
    progress(&Progress::Serving);

    let write_status = || async {
        let doc = status_of(&info, &scheduler, &outcome);
        if let Err(e) = records.put_json(layout::STATUS, &doc).await {
            tracing::warn!(error = %Chain(&e), "cannot write status.json");
        }
    };
    let status_loop = async {
        loop {
            tokio::time::sleep(config.status_every).await;
            write_status().await;
        }
    };
    let result = tokio::select! {
        r = driver::run(records.clone(), config.job, &scheduler, config.max_attempts, progress, repair.as_ref()) => r,
        e = lock.renew_loop() => Err(e),
        _ = scheduler.expire_loop(Duration::from_millis(250)) => Err(CoordinatorError::Interrupted),
        _ = status_loop => Err(CoordinatorError::Interrupted),
        _ = shutdown => Err(CoordinatorError::Interrupted),
    };
    outcome.lock().unwrap().record(&result);
    if !matches!(result, Err(CoordinatorError::Interrupted)) {
        // Tell the workers the job is over and give them a moment to hear it;
        // after an interruption they keep waiting for a restarted coordinator.
        scheduler.finish();
        let until = tokio::time::Instant::now() + config.lease.heartbeat * 2;
        while scheduler.workers_not_told() > 0 && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    write_status().await;
    let _ = stop_tx.send(());
    let _ = server.await;
    if let Some(m) = metrics_task {
        m.abort();
    }
    release(lock, result).await
}

/// The job's `result` after releasing its lock (unless another coordinator
/// took it over); a failure to release is the result only when the job
/// succeeded: a failing store (full, say) must not hide the job's own error.
async fn release(
    lock: Lock,
    result: Result<Summary, CoordinatorError>,
) -> Result<Summary, CoordinatorError> {
    if !matches!(result, Err(CoordinatorError::TakenOver { .. })) {
        if let Err(e) = lock.release().await {
            if result.is_ok() {
                return Err(e);
            }
            tracing::warn!(error = %Chain(&e), "cannot mark the coordinator lock released");
        }
    }
    result
}

/// What the job's gRPC service shares: the scheduler, the job, the store
/// and the status document of the job now.
fn service_state(
    config: &ServerConfig,
    info: &JobInfo,
    scheduler: &Arc<Scheduler>,
    outcome: &Arc<Mutex<Outcome>>,
) -> Arc<ServiceState> {
    let status_fn = {
        let (info, scheduler, outcome) = (info.clone(), scheduler.clone(), outcome.clone());
        Arc::new(move || {
            serde_json::to_string(&status_of(&info, &scheduler, &outcome)).unwrap_or_default()
        })
    };
    Arc::new(ServiceState {
        scheduler: scheduler.clone(),
        job_json: serde_json::to_string(&config.job).expect("jobs serialize"),
        store: config.store.clone(),
        status: status_fn,
    })
}

/// Opens the job on the store and takes the coordinator lock; with
/// `--repair`, sets the store's damage aside first (a damaged lock too) and
/// returns what was set aside, else refuses a store with damaged values.
async fn open(
    records: &Records,
    addr: &str,
    config: &ServerConfig,
) -> Result<(Lock, Option<Repair>), CoordinatorError> {
    let host = HostLock::take(records, config.take_over).await?;
    if !config.repair {
        records.open_job(&config.job).await?;
    }
    let mut lock = match Lock::acquire(records, addr, config.take_over).await {
        // A repair is deliberate: a damaged lock is set aside like the rest.
        Err(CoordinatorError::Store(StoreError::Damaged { object, source }))
            if config.repair && object == layout::LOCK =>
        {
            let reason = Chain(&*source).to_string();
            records.store().quarantine(&object, &reason).await?;
            Lock::acquire(records, addr, config.take_over).await?
        }
        r => r?,
    };
    lock.keep(host);
    if !config.repair {
        refuse_damaged_solved(records).await?;
        return Ok((lock, None));
    }
    let repair = set_damage_aside(records, &mut lock, &config.job).await?;
    records.open_job(&config.job).await?;
    Ok((lock, Some(repair)))
}

/// The gRPC server of the job's service, with TLS if `config` has it.
fn grpc(config: &ServerConfig, state: Arc<ServiceState>) -> Result<Router, CoordinatorError> {
    let mut builder = Server::builder();
    if let Some(tls) = &config.tls {
        builder = builder
            .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(&tls.cert, &tls.key)))
            .map_err(|source| CoordinatorError::Tls { source })?;
    }
    Ok(builder.add_service(make_service(state, &config.token)))
}

/// Check every object of the store and set the damaged or missing ones
/// aside (`--repair`); the driver then redoes the tasks that wrote them.
async fn set_damage_aside(
    records: &Records,
    lock: &mut Lock,
    job: &JobSpec,
) -> Result<Repair, CoordinatorError> {
    let store = records.store();
    tracing::warn!(store = %store.location(), "repair: checking every object of the store");
    let report = check_store(store, CHECK_JOBS, &|_| {})
        .await
        .map_err(check_failed)?;
    // The store's own job decides (a repair run with other flags fails on
    // it later), and a summary too damaged to read still means solved.
    let recomputes = match records.manifest().await {
        Ok(m) => m.is_some_and(|m| m.job.recompute_values),
        Err(_) => job.recompute_values,
    };
    let solved = report.solved || report.rejected.iter().any(|r| r.object == layout::SUMMARY);
    let damaged = (report.rejected.iter()).filter(|r| r.object != layout::LOCK);
    if recomputes && solved && damaged.clone().next().is_some() {
        return Err(RepairError::RecomputedValues {
            location: store.location().to_string(),
            objects: damaged.count(),
        }
        .into());
    }
    lock.raise_epoch(report.max_epoch + 1).await?;
    let mut damaged = BTreeSet::new();
    for r in &report.rejected {
        // The lock is this coordinator's own now.
        if r.object == layout::LOCK {
            continue;
        }
        tracing::warn!(object = %r.object, reason = %r.reason, "repair: set aside in quarantine/");
        store.quarantine(&r.object, &r.reason).await?;
        damaged.insert(r.object.clone());
    }
    tracing::warn!(
        objects = report.objects,
        damaged = damaged.len(),
        seconds = report.seconds,
        "repair: store checked; redoing the tasks of the damaged objects"
    );
    Ok(Repair::new(damaged))
}

/// A store's check that could not run: the store's own error, or why not.
fn check_failed(e: CheckError) -> CoordinatorError {
    match e {
        CheckError::Store(e) => CoordinatorError::Store(e),
        source => CoordinatorError::Check { source },
    }
}

/// Objects a store's check reads at once.
const CHECK_JOBS: usize = 16;

/// A store that is already solved is checked whole before a rerun reports
/// it done: a rerun reads no chunk (every task is committed), so damage
/// would otherwise pass unseen.
async fn refuse_damaged_solved(records: &Records) -> Result<(), CoordinatorError> {
    if !records.store().exists(layout::SUMMARY).await? {
        return Ok(());
    }
    tracing::info!("the store is solved already: checking every object");
    let report = check_store(records.store(), CHECK_JOBS, &|_| {})
        .await
        .map_err(check_failed)?;
    match report.rejected.first() {
        None => Ok(()),
        Some(first) => Err(CoordinatorError::StoreDamaged {
            location: records.location().to_string(),
            source: Box::new(CoordinatorError::Unsound {
                count: report.rejected.len(),
                object: first.object.clone(),
                reason: first.reason.clone(),
            }),
        }),
    }
}
