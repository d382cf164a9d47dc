//! The cluster subcommands: `coordinator`, `worker`, `status`, `chunks`, and
//! the embedded run behind `solve` (the same coordinator, serving one
//! in-process worker on a loopback port).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use solve2048_coordinator::status::{self, ChunkState, JobStatus, StoredStatus};
use solve2048_coordinator::{
    serve_job, LeaseConfig, Progress, Records, ServerConfig, Summary, TlsFiles,
};
use solve2048_core::task::JobSpec;
use solve2048_proto as pb;
use solve2048_worker::agent::connect;
use solve2048_worker::{run_agent, AgentConfig, Store};

/// Where the shared secret comes from: never a flag (it would show in `ps`).
#[derive(clap::Args, Clone)]
pub struct TokenArgs {
    /// File holding the shared secret [default: the SOLVE2048_TOKEN variable].
    #[arg(long)]
    token_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token, from the file or the environment.
    pub fn token(&self) -> anyhow::Result<String> {
        let token = match &self.token_file {
            Some(f) => std::fs::read_to_string(f)
                .with_context(|| format!("reading the token file {}", f.display()))?
                .trim()
                .to_string(),
            None => std::env::var("SOLVE2048_TOKEN").map_err(|_| {
                anyhow::anyhow!("no token: set SOLVE2048_TOKEN or pass --token-file FILE")
            })?,
        };
        anyhow::ensure!(!token.is_empty(), "the token is empty");
        Ok(token)
    }
}

/// Coordinator settings shared by `coordinator` and the embedded `solve`.
#[derive(clap::Args, Clone)]
pub struct LeaseArgs {
    /// A lease lapses (and its task is re-queued) after this many seconds
    /// without a heartbeat.
    #[arg(long, default_value_t = 30.0)]
    lease_seconds: f64,
    /// Seconds between worker heartbeats.
    #[arg(long, default_value_t = 3.0)]
    heartbeat_seconds: f64,
    /// Attempts per task before the job stops with the task's last error.
    #[arg(long, default_value_t = 3)]
    max_attempts: u32,
}

impl LeaseArgs {
    fn config(&self) -> anyhow::Result<LeaseConfig> {
        let secs = |s: f64, name: &str| {
            anyhow::ensure!(s.is_finite() && s > 0.0, "--{name} must be positive");
            Ok(Duration::from_secs_f64(s))
        };
        let c = LeaseConfig {
            ttl: secs(self.lease_seconds, "lease-seconds")?,
            heartbeat: secs(self.heartbeat_seconds, "heartbeat-seconds")?,
        };
        c.validate().map_err(anyhow::Error::msg)?;
        anyhow::ensure!(self.max_attempts >= 1, "--max-attempts must be at least 1");
        Ok(c)
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// Where the store is, as workers on other processes must open it: local
/// paths become absolute.
fn store_for_workers(location: &str) -> anyhow::Result<String> {
    if location.contains("://") && !location.starts_with("file://") {
        return Ok(location.to_string());
    }
    let dir = location.strip_prefix("file://").unwrap_or(location);
    let abs = std::fs::canonicalize(dir).with_context(|| format!("resolving {dir}"))?;
    Ok(abs.to_string_lossy().into_owned())
}

/// A random token for the embedded run (never leaves the process).
fn random_token() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut bytes);
    }
    let salt = std::process::id() as u128
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
    format!("{:032x}", u128::from_le_bytes(bytes) ^ salt)
}

/// This process, for people: host and pid.
fn process_name() -> String {
    format!(
        "{}:{}",
        solve2048_coordinator::lock::host_name(),
        std::process::id()
    )
}

/// Run the job with one in-process worker of `threads` kernel threads: the
/// coordinator serves on a loopback port with a random token.
pub async fn run_embedded(
    store: &Store,
    job: JobSpec,
    threads: usize,
    lease: &LeaseArgs,
    progress: &(dyn Fn(&Progress) + Sync),
) -> anyhow::Result<Summary> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding a loopback port for the in-process worker")?;
    let url = format!("http://{}", listener.local_addr()?);
    let token = random_token();
    let config = ServerConfig {
        job,
        store: store_for_workers(store.location())?,
        lease: lease.config()?,
        max_attempts: lease.max_attempts,
        token: token.clone(),
        tls: None,
        take_over: false,
        status_every: Duration::from_secs(5),
    };
    let records = Records::new(store.object_store(), store.location());
    let agent = AgentConfig {
        coordinator: url,
        token,
        tls_ca: None,
        threads: threads as u32,
        slots: threads.max(2) as u32,
        cache: None,
        name: process_name(),
        give_up_after: Duration::from_secs(30),
        drain: Duration::ZERO,
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(run_agent(agent, async {
        let _ = stop_rx.await;
    }));
    let result = serve_job(records, listener, None, config, progress, shutdown_signal()).await;
    let _ = stop_tx.send(());
    // The worker exits on its own once told the job is over; after an error
    // or interruption it is simply stopped with the process.
    if result.is_ok() {
        let _ = tokio::time::timeout(Duration::from_secs(10), worker).await;
    }
    Ok(result?)
}

/// `solve2048 coordinator`.
#[derive(clap::Args)]
pub struct CoordinatorArgs {
    /// Address to serve workers and the CLI on.
    #[arg(long, default_value = "127.0.0.1:7480")]
    listen: String,
    /// The store: a local directory (shared with the workers) or URL.
    #[arg(long)]
    store: String,
    /// Board side: 2, 3 or 4.
    #[arg(long)]
    board: u32,
    /// Target tile.
    #[arg(long)]
    target: u64,
    /// Discount per move, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    discount: f64,
    /// Largest number of states in one chunk.
    #[arg(long, default_value_t = solve2048_core::task::DEFAULT_CHUNK_SIZE)]
    chunk_size: u64,
    /// zstd level of stored chunks.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    #[command(flatten)]
    lease: LeaseArgs,
    #[command(flatten)]
    token: TokenArgs,
    /// Serve TLS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve Prometheus metrics (GET /metrics) on this address.
    #[arg(long)]
    metrics: Option<String>,
    /// Start even though another coordinator holds the store's lock.
    #[arg(long)]
    take_over: bool,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Validate the job settings common to `solve` and `coordinator`.
pub fn job_spec(
    board: u32,
    target: u64,
    discount: f64,
    chunk_size: u64,
    zstd_level: i32,
) -> anyhow::Result<JobSpec> {
    let game = solve2048_core::Game::new(board, target, discount)?;
    anyhow::ensure!(chunk_size >= 1, "--chunk-size must be at least 1");
    anyhow::ensure!(
        (1..=22).contains(&zstd_level),
        "--zstd-level must be 1 to 22"
    );
    Ok(JobSpec {
        game,
        chunk_size,
        zstd_level,
    })
}

fn read_file(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

impl CoordinatorArgs {
    /// Whether to print JSON.
    pub fn json(&self) -> bool {
        self.json
    }
}

/// Run a coordinator until the job is done.
pub async fn coordinator(
    args: CoordinatorArgs,
    progress: &(dyn Fn(&Progress) + Sync),
) -> anyhow::Result<(JobSpec, String, Summary)> {
    let job = job_spec(
        args.board,
        args.target,
        args.discount,
        args.chunk_size,
        args.zstd_level,
    )?;
    let token = args.token.token()?;
    let lease = args.lease.config()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some(TlsFiles {
            cert: read_file(c)?,
            key: read_file(k)?,
        }),
        _ => None,
    };
    let store = Store::open(&args.store)?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let metrics = match &args.metrics {
        Some(a) => Some(
            tokio::net::TcpListener::bind(a)
                .await
                .with_context(|| format!("cannot serve metrics on {a}"))?,
        ),
        None => None,
    };
    let config = ServerConfig {
        job,
        store: store_for_workers(&args.store)?,
        lease,
        max_attempts: args.lease.max_attempts,
        token,
        tls,
        take_over: args.take_over,
        status_every: Duration::from_secs(5),
    };
    eprintln!(
        "coordinator for {} serving on {}{}",
        job.game.name(),
        listener.local_addr()?,
        args.metrics
            .as_ref()
            .map(|m| format!(", metrics on http://{m}/metrics"))
            .unwrap_or_default()
    );
    let records = Records::new(store.object_store(), store.location());
    let summary = serve_job(
        records,
        listener,
        metrics,
        config,
        progress,
        shutdown_signal(),
    )
    .await?;
    Ok((job, args.store, summary))
}

/// `solve2048 worker`.
#[derive(clap::Args)]
pub struct WorkerArgs {
    /// The coordinator: http://HOST:PORT (https:// with TLS).
    #[arg(long)]
    coordinator: String,
    /// Kernel threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Tasks run at once (one computes while another reads or writes).
    #[arg(long, default_value_t = 2)]
    slots: u32,
    /// Local directory for a bounded cache of fetched chunks (useful with a
    /// remote store; a local store is read in place).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Most GiB the cache holds; least recently used chunks go first.
    #[arg(long, default_value_t = 8.0)]
    cache_gib: f64,
    #[command(flatten)]
    token: TokenArgs,
    /// CA certificate (PEM) to trust for an https:// coordinator.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Give up after the coordinator has been unreachable this many seconds.
    #[arg(long, default_value_t = 600)]
    give_up_after: u64,
    /// On SIGTERM, let running tasks finish for this many seconds, then hand
    /// their leases back.
    #[arg(long, default_value_t = 20)]
    drain_seconds: u64,
    /// Print one JSON object with what it did on stdout.
    #[arg(long)]
    json: bool,
}

/// Run a worker process until the job is done or it is told to stop.
pub fn worker(args: WorkerArgs) -> anyhow::Result<()> {
    let threads = crate::cli::start_threads(args.threads)?;
    anyhow::ensure!(args.slots >= 1, "--slots must be at least 1");
    anyhow::ensure!(
        args.cache_gib.is_finite() && args.cache_gib >= 0.0,
        "--cache-gib must be 0 or more"
    );
    let cache = args
        .cache_dir
        .clone()
        .map(|dir| (dir, (args.cache_gib * (1u64 << 30) as f64) as u64));
    let config = AgentConfig {
        coordinator: args.coordinator.clone(),
        token: args.token.token()?,
        tls_ca: args.tls_ca.as_deref().map(read_file).transpose()?,
        threads: threads as u32,
        slots: args.slots,
        cache,
        name: process_name(),
        give_up_after: Duration::from_secs(args.give_up_after),
        drain: Duration::from_secs(args.drain_seconds),
    };
    let rt = crate::cli::runtime()?;
    let report = rt.block_on(run_agent(config, shutdown_signal()))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        eprintln!(
            "worker done: {} tasks completed, {} failed, {} abandoned, {} handed back",
            report.completed, report.failed, report.abandoned, report.released
        );
    }
    Ok(())
}

/// `solve2048 status`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["coordinator", "store"])))]
pub struct StatusArgs {
    /// Ask a running coordinator (live).
    #[arg(long)]
    coordinator: Option<String>,
    /// Read the store (works while the coordinator is down).
    #[arg(long)]
    store: Option<String>,
    #[command(flatten)]
    token: TokenArgs,
    /// CA certificate (PEM) to trust for an https:// coordinator.
    #[arg(long)]
    tls_ca: Option<PathBuf>,
    /// Show every part, not only those with work left.
    #[arg(long)]
    all: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Show the job's status.
pub fn status(args: StatusArgs) -> anyhow::Result<()> {
    let rt = crate::cli::runtime()?;
    if let Some(url) = &args.coordinator {
        let token = args.token.token()?;
        let ca = args.tls_ca.as_deref().map(read_file).transpose()?;
        // The lazy channel spawns its connection on the runtime.
        let _in_runtime = rt.enter();
        let mut client = connect(url, &token, ca.as_deref())?;
        let reply = rt
            .block_on(client.status(pb::StatusRequest {}))
            .map_err(|s| anyhow::anyhow!("coordinator at {url}: {}", s.message()))?;
        let doc: JobStatus = serde_json::from_str(&reply.into_inner().status_json)
            .context("the coordinator sent an unreadable status")?;
        if args.json {
            println!("{}", serde_json::to_string(&doc)?);
        } else {
            print!("{}", render_status(&doc, args.all));
        }
        return Ok(());
    }
    let location = args.store.as_deref().unwrap_or_default();
    let store = crate::cli::open_existing(location)?;
    let records = Records::new(store.object_store(), location);
    let stored: StoredStatus = rt.block_on(status::read_stored(&records))?;
    if args.json {
        println!("{}", serde_json::to_string(&stored)?);
        return Ok(());
    }
    match (&stored.status, &stored.lock) {
        (None, _) => println!("store {location}: no coordinator has written a status yet"),
        (Some(doc), lock) => {
            let age = stored.age_seconds.unwrap_or(0.0);
            let who = match lock {
                Some(l) if stored.coordinator_alive => {
                    format!("coordinator alive: pid {} on {}, serving {}", l.pid, l.host, l.listen)
                }
                Some(l) if l.running => format!(
                    "coordinator not running (pid {} on {} stopped renewing its lock); rerun the same coordinator command to resume",
                    l.pid, l.host
                ),
                _ => "coordinator stopped cleanly".to_string(),
            };
            println!("status from the store, written {age:.0} s ago; {who}");
            print!("{}", render_status(doc, args.all));
        }
    }
    Ok(())
}

fn duration(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The human form of a status document.
pub fn render_status(doc: &JobStatus, all: bool) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let state = match (&doc.state, &doc.error) {
        (status::JobState::Failed, Some(e)) => format!("FAILED: {e}"),
        (s, _) => format!("{s:?}").to_lowercase(),
    };
    let _ = writeln!(
        out,
        "job {} in {} (coordinator {}, epoch {}): {state}, phase {:?}",
        doc.game, doc.store, doc.coordinator, doc.epoch, doc.phase
    );
    if let Some(v) = doc.start_value {
        let _ = writeln!(out, "value of the game: {v:.10}");
    }
    let c = &doc.counters;
    let _ = writeln!(
        out,
        "rate {:.0} states/s | {} states left in planned work | ETA {} | tasks run {} skipped {} | failed attempts {} | leases expired {} | results discarded {} | {:.1} MiB written",
        doc.states_per_second,
        doc.states_remaining,
        doc.eta_seconds.map_or("-".into(), duration),
        c.tasks_run,
        c.tasks_skipped,
        c.attempts_failed,
        c.leases_expired,
        c.results_discarded,
        c.bytes_written as f64 / (1 << 20) as f64
    );
    let _ = writeln!(
        out,
        "\n{:<10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>14} {:>14}",
        "stage",
        "sum",
        "max_tile",
        "pending",
        "leased",
        "done",
        "failed",
        "states_done",
        "states_total"
    );
    let rows: Vec<_> = doc
        .parts
        .iter()
        .filter(|r| all || r.pending + r.leased + r.failed > 0)
        .collect();
    for r in &rows {
        let _ = writeln!(
            out,
            "{:<10} {:>6} {:>8} {:>8} {:>7} {:>7} {:>7} {:>14} {:>14}",
            r.stage,
            r.sum,
            r.max_tile,
            r.pending,
            r.leased,
            r.done,
            r.failed,
            r.states_done,
            r.states_total
        );
    }
    let hidden = doc.parts.len() - rows.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} finished stage-parts not shown; --all shows them)"
        );
    }
    let _ = writeln!(
        out,
        "\n{:<10} {:<28} {:>7} {:>5} {:>10} {:>9}  tasks",
        "worker", "name", "threads", "alive", "last_seen", "completed"
    );
    for w in &doc.workers {
        let _ = writeln!(
            out,
            "{:<10} {:<28} {:>7} {:>5} {:>9.1}s {:>9}  {}",
            w.id,
            w.name,
            w.threads,
            if w.alive { "yes" } else { "no" },
            w.last_seen_seconds,
            w.completed,
            w.tasks.join(" ")
        );
    }
    out
}

/// `solve2048 chunks`.
#[derive(clap::Args)]
pub struct ChunksArgs {
    /// The store.
    #[arg(long)]
    store: String,
    /// Only chunks of this tile sum.
    #[arg(long)]
    sum: Option<u32>,
    /// Only tasks in this state: waiting, pending, leased, done or failed.
    #[arg(long)]
    state: Option<String>,
    /// Print one JSON array on stdout.
    #[arg(long)]
    json: bool,
}

/// List chunk tasks with their state, attempts, last error and objects.
pub fn chunks(args: ChunksArgs) -> anyhow::Result<()> {
    let want = match &args.state {
        Some(s) => Some(ChunkState::parse(s).ok_or_else(|| {
            anyhow::anyhow!("--state must be waiting, pending, leased, done or failed, not {s:?}")
        })?),
        None => None,
    };
    let store = crate::cli::open_existing(&args.store)?;
    let records = Records::new(store.object_store(), &args.store);
    let rt = crate::cli::runtime()?;
    let rows: Vec<_> = rt
        .block_on(status::chunk_rows(&records))?
        .into_iter()
        .filter(|r| args.sum.is_none_or(|s| r.sum == s))
        .filter(|r| want.is_none_or(|w| r.state == w))
        .collect();
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    println!(
        "{:<38} {:>9} {:>9} {:>8}  {:<30} objects",
        "task", "states", "state", "failures", "last_error"
    );
    for r in &rows {
        let mut err = r.last_error.clone().unwrap_or_default();
        if err.chars().count() > 30 {
            err = err.chars().take(27).chain("...".chars()).collect();
        }
        println!(
            "{:<38} {:>9} {:>9} {:>8}  {:<30} {}",
            r.task,
            r.states,
            format!("{:?}", r.state).to_lowercase(),
            r.failed_attempts,
            err,
            r.objects.join(" ")
        );
    }
    println!("{} tasks", rows.len());
    Ok(())
}
