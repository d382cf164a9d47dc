//! `solve2048 coordinator`: plan a job, lease its tasks to workers over
//! gRPC, record their results, until the job is done.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use solve2048_coordinator::{serve_job, Progress, Records, ServerConfig, Summary, TlsFiles};
use solve2048_core::task::{JobSpec, DEFAULT_CHUNK_SIZE};
use solve2048_store::{Access, Store};

use crate::args::{GameArgs, JobArgs, LeaseArgs, TokenArgs};
use crate::commands::evaluate::{prepare, print_evaluation, Prepared};
use crate::progress::Reporter;
use crate::report::print_summary;
use crate::runtime::{read_file, runtime, shutdown_signal};

/// Arguments of `coordinator`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to serve workers and the CLI on.
    #[arg(long, default_value = "127.0.0.1:7480")]
    listen: String,
    /// The store: a local directory (shared with the workers) or URL.
    #[arg(long)]
    store: String,
    #[command(flatten)]
    game: Option<GameArgs>,
    /// Discount per move, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    discount: f64,
    /// Probability that a spawned tile is a 4 (a 2 otherwise), 0 to 1.
    #[arg(long, value_name = "P", default_value_t = 0.1)]
    four_probability: f64,
    /// What to maximise: `win` or `score` (see `solve --help`).
    #[arg(long, default_value = "win")]
    objective: String,
    /// Largest number of states in one chunk [default: 4194304; with
    /// --evaluate, the solved store's].
    #[arg(long)]
    chunk_size: Option<u64>,
    /// zstd level of stored chunks.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Keep the values of only two layers in every five once solved (see
    /// `solve --recompute-values`).
    #[arg(long)]
    recompute_values: bool,
    /// Evaluate a player instead of solving (see `evaluate`): the solved
    /// store to compare with, whose game is the job's.
    #[arg(
        long,
        value_name = "SOLVED_STORE",
        requires = "player",
        conflicts_with_all = ["board", "target", "discount", "four_probability", "objective", "zstd_level", "recompute_values"]
    )]
    evaluate: Option<String>,
    /// With --evaluate: the player to evaluate.
    #[arg(long, requires = "evaluate")]
    player: Option<String>,
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
    /// Check every object of the store first, set the damaged ones aside in
    /// quarantine/ (with the reason) and redo the tasks that wrote them.
    #[arg(long)]
    repair: bool,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `coordinator`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let reporter = Reporter::new();
    let rt = runtime()?;
    let (job, summary) = rt.block_on(serve(&args, &|p| reporter.event(p)))?;
    match (&args.evaluate, &job.evaluate) {
        (Some(solved), Some(_)) => print_evaluation(&job, solved, &args.store, &summary, args.json),
        _ => print_summary(&job, &args.store, &summary, &reporter, None, args.json),
    }
}

/// Serve the job until it is done.
async fn serve(
    args: &Args,
    progress: &(dyn Fn(&Progress) + Sync),
) -> anyhow::Result<(JobSpec, Summary)> {
    let (job, prepared) = job_of(args).await?;
    let token = args.token.token()?;
    let lease = args.lease.config()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some(TlsFiles {
            cert: read_file(c)?,
            key: read_file(k)?,
        }),
        _ => None,
    };
    let store = Store::open(&args.store, Access::ReadWrite)?;
    if let Some(p) = &prepared {
        p.install(&store).await?;
    }
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
        job: job.clone(),
        store: store.shared_location(),
        lease,
        max_attempts: args.lease.max_attempts,
        token,
        tls,
        take_over: args.take_over,
        repair: args.repair,
        status_every: Duration::from_secs(5),
    };
    // Said once the store is accepted, not before a refusal.
    let serving = format!(
        "coordinator for {} serving on {}{}",
        job.game.name(),
        listener.local_addr()?,
        args.metrics
            .as_ref()
            .map(|m| format!(", metrics on http://{m}/metrics"))
            .unwrap_or_default()
    );
    let progress = |p: &Progress| match p {
        Progress::Serving => crate::human::eprint_line(&serving),
        p => progress(p),
    };
    let records = Records::new(store);
    let summary = serve_job(
        records,
        listener,
        metrics,
        config,
        &progress,
        shutdown_signal(),
    )
    .await?;
    Ok((job, summary))
}

/// The job `args` ask for: a game to solve, or a player to evaluate on a
/// solved store (with what its evaluation store needs installed).
async fn job_of(args: &Args) -> anyhow::Result<(JobSpec, Option<Prepared>)> {
    Ok(match (&args.game, &args.evaluate, &args.player) {
        (Some(game), None, _) => {
            let job = JobArgs {
                game: game.clone(),
                discount: args.discount,
                four_probability: args.four_probability,
                objective: args.objective.clone(),
                chunk_size: args.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE),
                zstd_level: args.zstd_level,
                recompute_values: args.recompute_values,
            };
            (job.spec()?, None)
        }
        (None, Some(_), _) if args.repair => anyhow::bail!(
            "--repair does not apply to an evaluation: its store is made again, not repaired \
             (delete it and run the same command; the solved store is only read)"
        ),
        (None, Some(solved), Some(player)) => {
            let prepared = prepare(solved, player, args.chunk_size).await?;
            (prepared.job.clone(), Some(prepared))
        }
        _ => anyhow::bail!("give the game (--board, --target) or --evaluate STORE --player P"),
    })
}
