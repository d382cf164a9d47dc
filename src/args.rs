//! Argument groups that several commands share, written once and flattened
//! into each command (`#[command(flatten)]`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use solve2048_coordinator::LeaseConfig;
use solve2048_core::task::JobSpec;
use solve2048_core::{Game, Objective, Shape};

/// The game: board shape and target tile.
#[derive(clap::Args, Clone, Debug)]
pub struct GameArgs {
    /// Board: 2, 3 or 4 for a square, or RxC for R rows of C cells (2 to 4
    /// each; 3x4 is 3 rows of 4).
    #[arg(long)]
    pub board: Shape,
    /// Target tile: a power of two (8 to 32768; smaller boards hold less).
    /// Optional with `--objective score`: without it the game is played
    /// until no move is left.
    #[arg(long)]
    pub target: Option<u64>,
}

impl GameArgs {
    /// The validated game with `discount` and `objective`; without a target,
    /// the score game played to the end.
    pub fn game(&self, discount: f64, objective: Objective) -> anyhow::Result<Game> {
        match self.target {
            Some(t) => Ok(Game::on(self.board, t, discount)?.with_objective(objective)?),
            None if objective == Objective::Score => Ok(Game::to_the_end(self.board, discount)?),
            None => anyhow::bail!(
                "--target is required: the tile that wins (or --objective score to play to the end)"
            ),
        }
    }
}

/// A job: the game, its discount, and how its store is chunked and
/// compressed (`solve` and `coordinator`).
#[derive(clap::Args, Clone, Debug)]
pub struct JobArgs {
    #[command(flatten)]
    pub game: GameArgs,
    /// Discount per move, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    pub discount: f64,
    /// Probability that a spawned tile is a 4 (a 2 otherwise), 0 to 1 in
    /// steps of a millionth.
    #[arg(long, value_name = "P", default_value_t = 0.1)]
    pub four_probability: f64,
    /// What to maximise: `win` (the probability of making the target tile)
    /// or `score` (the expected score: the sum of the tiles merges make).
    #[arg(long, default_value = "win")]
    pub objective: String,
    /// Largest number of states in one chunk.
    #[arg(long, default_value_t = solve2048_core::task::DEFAULT_CHUNK_SIZE)]
    pub chunk_size: u64,
    /// zstd level of stored chunks.
    #[arg(long, default_value_t = 3)]
    pub zstd_level: i32,
    /// Keep the values of only two layers in every five once solved; the
    /// others are recomputed on read from the stored policy and the layers
    /// above. About 40% of the values' bytes where values vary (3x3 to
    /// 1024), at the cost of slower reads; an exact evaluation needs a store
    /// without it.
    #[arg(long)]
    pub recompute_values: bool,
}

impl JobArgs {
    /// The validated job.
    pub fn spec(&self) -> anyhow::Result<JobSpec> {
        let game = self
            .game
            .game(self.discount, self.objective.parse()?)?
            .with_four_probability(self.four_probability)?;
        anyhow::ensure!(self.chunk_size >= 1, "--chunk-size must be at least 1");
        anyhow::ensure!(
            (1..=22).contains(&self.zstd_level),
            "--zstd-level must be 1 to 22"
        );
        Ok(JobSpec {
            game,
            chunk_size: self.chunk_size,
            zstd_level: self.zstd_level,
            evaluate: None,
            recompute_values: self.recompute_values,
        })
    }
}

/// Lease settings of a coordinator (`coordinator` and the embedded `solve`).
#[derive(clap::Args, Clone, Debug)]
pub struct LeaseArgs {
    /// A worker silent this many seconds is lost: its leases lapse and its
    /// tasks are re-queued. Heartbeats come from the worker independently of
    /// its tasks, so a long task on a live worker never lapses.
    #[arg(long, default_value_t = 5.0)]
    pub lease_seconds: f64,
    /// Seconds between worker heartbeats.
    #[arg(long, default_value_t = 1.0)]
    pub heartbeat_seconds: f64,
    /// Attempts per task before the job stops with the task's last error.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: u32,
}

impl LeaseArgs {
    /// The validated lease timing.
    pub fn config(&self) -> anyhow::Result<LeaseConfig> {
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

/// Where the shared secret comes from: never a flag (it would show in `ps`).
#[derive(clap::Args, Clone, Debug)]
pub struct TokenArgs {
    /// File holding the shared secret [default: the SOLVE2048_TOKEN variable].
    #[arg(long)]
    pub token_file: Option<PathBuf>,
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

/// A solved store to read (`query`, `play`, `verify`, ...).
#[derive(clap::Args, Clone, Debug)]
pub struct SolvedStoreArgs {
    /// The solved store (a directory or s3://BUCKET/PREFIX); opened read-only.
    #[arg(long)]
    pub store: String,
}

/// The memory a worker's tasks may use (`worker` and the embedded `solve`).
#[derive(clap::Args, Clone, Debug)]
pub struct MemoryArgs {
    /// GiB of memory this worker may use in all; tasks wait until what they
    /// need fits, and a task that needs more than this fails with a clear
    /// error [default: the machine's (or container's) memory less 10%, at
    /// least 1 GiB less].
    #[arg(long, value_name = "GiB")]
    pub memory: Option<f64>,
}

impl MemoryArgs {
    /// The bytes tasks may hold: the memory less what the process itself
    /// holds ([`solve2048_worker::budget::task_budget`]).
    pub fn task_budget(&self) -> anyhow::Result<u64> {
        Ok(solve2048_worker::budget::task_budget(self.memory)?)
    }
}
