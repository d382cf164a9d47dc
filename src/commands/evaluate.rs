//! `solve2048 evaluate`: the exact probability that a player wins from the
//! random start, beside the optimal one, and the boards where it loses the
//! most. It runs as a job of the same coordinator and workers as the solve
//! (embedded here, as `solve` does; `coordinator --evaluate` serves it to
//! worker processes), in a store of its own.

use std::fmt::Write;
use std::path::Path;

use anyhow::Context;
use solve2048_coordinator::{CoordinatorError, Records, Summary};
use solve2048_core::chain::Chain;
use solve2048_core::task::evaluation::{weights_checksum, Evaluation, EvaluationSummary, WEIGHTS};
use solve2048_core::task::JobSpec;
use solve2048_core::{Board, Direction};
use solve2048_players::{PlayerError, PlayerSpec};
use solve2048_store::{Access, Store};

use crate::args::{LeaseArgs, MemoryArgs};
use crate::embedded::run_embedded;
use crate::human::{duration, print_out};
use crate::progress::Reporter;
use crate::runtime::{job_runtime, open_existing, start_threads};

/// Arguments of `evaluate`.
#[derive(clap::Args)]
pub struct Args {
    /// The solved store to compare with (a directory or s3://BUCKET/PREFIX);
    /// opened read-only. Its game is the one evaluated.
    #[arg(long)]
    store: String,
    /// The player: random, order:LDRU, greedy, schain, expectimax:D,
    /// ntuple:FILE or optimal (mc:N samples, so it cannot be evaluated
    /// exactly).
    #[arg(long)]
    player: String,
    /// The evaluation's own store, where a rerun resumes [default:
    /// solve2048-store/<game>-eval-<player>].
    #[arg(long)]
    out: Option<String>,
    /// Largest number of boards in one chunk [default: the solved store's].
    #[arg(long)]
    chunk_size: Option<u64>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    memory: MemoryArgs,
    #[command(flatten)]
    lease: LeaseArgs,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `evaluate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let threads = start_threads(args.threads)?;
    let task_budget = args.memory.task_budget()?;
    let rt = job_runtime(threads)?;
    let prepared = rt.block_on(prepare(&args.store, &args.player, args.chunk_size))?;
    let job = prepared.job.clone();
    let location = args.out.clone().unwrap_or_else(|| default_out(&job));
    let store = Store::open(&location, Access::ReadWrite)?;
    let reporter = Reporter::new();
    let summary = rt.block_on(async {
        prepared.install(&store).await?;
        run_embedded(
            &store,
            job.clone(),
            threads,
            task_budget,
            &args.lease,
            false,
            &|p| reporter.event(p),
        )
        .await
        .map_err(|e| explain(e, &location))
    })?;
    print_evaluation(&job, &args.store, &location, &summary, args.json)
}

/// An evaluation job, checked and ready to run.
pub struct Prepared {
    /// The job.
    pub job: JobSpec,
    /// The player's weights file, for players that have one.
    weights: Option<Vec<u8>>,
}

impl Prepared {
    /// Put the player's weights into the evaluation `store` (workers build
    /// the player from that copy), unless the store holds another job: that
    /// one is refused when the job opens, and nothing of it is touched.
    pub async fn install(&self, store: &Store) -> anyhow::Result<()> {
        let Some(weights) = &self.weights else {
            return Ok(());
        };
        match Records::new(store.clone()).manifest().await {
            Ok(Some(m)) if m.job != self.job => return Ok(()),
            Err(_) => return Ok(()),
            _ => {}
        }
        store
            .put(WEIGHTS, weights.clone())
            .await
            .context("copying the player's weights into the evaluation store")
    }
}

/// Check the evaluation of `player` against the solved store at `solved`
/// and make its job: the game and chunking of that store (or `chunk_size`
/// boards a chunk), the player in its canonical spelling, the store's
/// digest and the weights' checksum. Refused in one line: a store that is
/// not a solved one, an unknown player or parameter, a player that cannot
/// be evaluated exactly (it samples), weights that are damaged or for
/// another board.
pub async fn prepare(
    solved: &str,
    player: &str,
    chunk_size: Option<u64>,
) -> anyhow::Result<Prepared> {
    let reference = open_existing(solved)?;
    let (solved_job, summary) = Records::new(reference.clone()).solved().await?;
    let game = solved_job.game;
    let spec = PlayerSpec::parse(player)?;
    let weights = match &spec {
        PlayerSpec::NTuple { path } => {
            Some(std::fs::read(path).map_err(|error| PlayerError::WeightsIo {
                path: path.clone(),
                error,
            })?)
        }
        _ => None,
    };
    match spec.exact(game.shape, &game.spawn_rule(), weights.as_deref()) {
        Err(e @ PlayerError::Samples { .. }) => anyhow::bail!(
            "{e}; `play --player {spec}` estimates its win rate from sampled games instead"
        ),
        other => other?,
    };
    let chunk_size = chunk_size.unwrap_or(solved_job.chunk_size);
    anyhow::ensure!(chunk_size >= 1, "--chunk-size must be at least 1");
    let job = JobSpec {
        game,
        chunk_size,
        zstd_level: solved_job.zstd_level,
        evaluate: Some(Evaluation {
            player: spec.to_string(),
            reference: reference.shared_location(),
            reference_digest: summary.digest,
            weights: weights.as_deref().map(weights_checksum),
        }),
        recompute_values: false,
    };
    Ok(Prepared { job, weights })
}

/// The default evaluation store: `solve2048-store/<game>-eval-<player>`,
/// the player's spec in letters, digits and dashes (a weights file by its
/// name).
fn default_out(job: &JobSpec) -> String {
    let player = job.evaluate.as_ref().map_or("", |e| e.player.as_str());
    let name = match player.strip_prefix("ntuple:") {
        Some(path) => format!(
            "ntuple-{}",
            Path::new(path)
                .file_stem()
                .map_or(String::new(), |s| s.to_string_lossy().into_owned())
        ),
        None => player.to_string(),
    };
    let slug: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("solve2048-store/{}-eval-{slug}", job.game.name())
}

/// A job error, saying which flag names the evaluation's own store.
fn explain(e: anyhow::Error, out: &str) -> anyhow::Error {
    match e.downcast_ref::<CoordinatorError>() {
        Some(CoordinatorError::ForeignJob {
            found, requested, ..
        }) => anyhow::anyhow!(
            "evaluation store {out} holds another evaluation ({found}); requested {requested}. \
             Use another --out, or the same --store and --player to resume"
        ),
        Some(CoordinatorError::StoreDamaged { source, .. }) => anyhow::anyhow!(
            "evaluation store {out} is damaged: {}; an evaluation is made again, not \
             repaired: delete {out} and run the same command (the solved store is only read)",
            Chain(&**source)
        ),
        _ => e,
    }
}

/// Print an evaluation's results: one JSON object, or a readable report.
pub fn print_evaluation(
    job: &JobSpec,
    solved: &str,
    location: &str,
    summary: &Summary,
    json: bool,
) -> anyhow::Result<()> {
    let e = summary
        .evaluation
        .as_ref()
        .context("the job finished without an evaluation")?;
    let results = Results {
        job,
        solved,
        location,
        summary,
        e,
        gap: e.optimal - summary.start_value,
        seconds: summary.enumerate_seconds + summary.solve_seconds,
        layers: summary
            .parts
            .iter()
            .map(|p| p.sum)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
    };
    let text = if json { results.json() } else { results.text() };
    print_out(&text);
    Ok(())
}

/// A finished evaluation, with what both forms of its results show.
struct Results<'a> {
    job: &'a JobSpec,
    /// The solved store.
    solved: &'a str,
    /// The evaluation's own store.
    location: &'a str,
    summary: &'a Summary,
    e: &'a EvaluationSummary,
    /// The optimal value less the player's.
    gap: f64,
    /// Seconds of both phases.
    seconds: f64,
    /// Layers of boards the player reaches.
    layers: usize,
}

impl Results<'_> {
    /// The results as one JSON object on a line.
    fn json(&self) -> String {
        let (game, summary, e) = (self.job.game, self.summary, self.e);
        let worst: Vec<serde_json::Value> = e
            .worst
            .iter()
            .map(|w| {
                serde_json::json!({
                    "board": Board(w.board).to_text(game.shape),
                    "hex": format!("{:#018x}", w.board),
                    "reach": w.reach,
                    "optimal": w.optimal,
                    "value": w.value,
                    "loss": w.loss,
                    "cost": w.cost(),
                    "moves": moves(&w.moves)
                        .into_iter()
                        .map(|(d, q)| (d.to_string(), serde_json::json!(q)))
                        .collect::<serde_json::Map<_, _>>(),
                    "best": w.best,
                })
            })
            .collect();
        let out = serde_json::json!({
            "player": e.player,
            "game": game.name(),
            "board": game.shape,
            "rows": game.shape.rows(),
            "columns": game.shape.cols(),
            "target": game.target(),
            "discount": game.discount,
            "four_probability": game.four_probability(),
            "value": summary.start_value,
            "optimal": e.optimal,
            "gap": self.gap,
            "cost": e.cost,
            "states": summary.states,
            "layers": self.layers,
            "seconds": self.seconds,
            "enumerate_seconds": summary.enumerate_seconds,
            "solve_seconds": summary.solve_seconds,
            "digest": summary.digest,
            "store": self.solved,
            "evaluation_store": self.location,
            "chunk_size": self.job.chunk_size,
            "tasks_run": summary.tasks_run,
            "tasks_skipped": summary.tasks_skipped,
            "worst_ranked_by": "reach x loss",
            "worst": worst,
        });
        let mut text = String::new();
        let _ = writeln!(text, "{out}");
        text
    }

    /// The results as a readable report.
    fn text(&self) -> String {
        let (game, summary, e) = (self.job.game, self.summary, self.e);
        let (what, p, value) = (game.value_name(), &e.player, summary.start_value);
        let mut text = String::new();
        let _ = writeln!(text, "evaluated {p} on {} exactly", game.name());
        let _ = writeln!(text, "  {what} of {p}: {value:.17}");
        let _ = writeln!(text, "  optimal {what}: {:.17}", e.optimal);
        let _ = writeln!(text, "  gap: {:.17}", self.gap);
        let _ = writeln!(
            text,
            "  boards {p} reaches (non-terminal, as they lie): {} in {} layers",
            summary.states, self.layers
        );
        let _ = writeln!(
            text,
            "  time: {} (enumerate {}, solve {}); solved store {}, evaluation store {}",
            duration(self.seconds),
            duration(summary.enumerate_seconds),
            duration(summary.solve_seconds),
            self.solved,
            self.location
        );
        if summary.tasks_skipped > 0 {
            let _ = writeln!(
                text,
                "  resumed: {} tasks were already committed, {} run now",
                summary.tasks_skipped, summary.tasks_run
            );
        }
        self.worst(&mut text);
        text
    }

    /// The boards where the player loses the most, one a line.
    fn worst(&self, text: &mut String) {
        let (n, e, p) = (self.job.game.shape, self.e, &self.e.player);
        if e.worst.is_empty() {
            let _ = writeln!(
                text,
                "  {p} plays optimally wherever it goes: it loses nothing"
            );
            return;
        }
        let _ = writeln!(
            text,
            "  where {p} loses the most: reach x loss (the loss: the optimal value less \
             that of {p}'s move, both followed by optimal play); over every board these \
             add up to {:.17}, the gap",
            e.cost
        );
        for (i, w) in e.worst.iter().enumerate() {
            let plays: Vec<String> = moves(&w.moves)
                .into_iter()
                .map(|(d, q)| {
                    if q == 1.0 {
                        d.to_string()
                    } else {
                        format!("{d} {q:.3}")
                    }
                })
                .collect();
            let _ = writeln!(
                text,
                "  {:2}. {}  reach {:.6}  optimal {:.6}  {p} {:.6}  loss {:.6}  cost {:.3e}  \
                 plays {}, best {}",
                i + 1,
                Board(w.board).to_text(n),
                w.reach,
                w.optimal,
                w.value,
                w.loss,
                w.cost(),
                plays.join(" / "),
                w.best.name()
            );
        }
    }
}

/// The moves a player makes on a board, by name, with the probability of
/// each (those it never makes left out).
fn moves(m: &[f64; 4]) -> Vec<(&'static str, f64)> {
    Direction::ALL
        .into_iter()
        .filter(|&d| m[d as usize] > 0.0)
        .map(|d| (d.name(), m[d as usize]))
        .collect()
}
