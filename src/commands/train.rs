//! `solve2048 train`: TD(0) training of an n-tuple network for the player
//! `ntuple:FILE` ([`solve2048_players::train`]), seeded and resumable: the
//! weights file is also the checkpoint, and rerunning the same command
//! resumes from it (to the same bytes as a run never stopped).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use solve2048_players::train::{Progress, TrainConfig};
use solve2048_players::{train, TupleSpec};

use crate::human;

/// Arguments of `train`.
#[derive(clap::Args)]
pub struct Args {
    /// Board side: 2, 3 or 4.
    #[arg(long)]
    board: usize,
    /// The network's tuples: a preset (4x4-rows-squares, 3x3-pentomino,
    /// 3x3-rows-squares, 3x3-corners, 2x2-board) or a list of cells, row
    /// then column, like 00-01-02-03,00-01-10-11 [default: the board's
    /// preset: 4x4-rows-squares, 3x3-pentomino or 2x2-board].
    #[arg(long)]
    tuples: Option<String>,
    /// Training games in all; a resumed run plays only those not yet played.
    #[arg(long)]
    games: u64,
    /// The weights file, written at each checkpoint and at the end; when it
    /// exists, training resumes from it (same board, tuples, seed and rate).
    #[arg(long)]
    out: PathBuf,
    /// Seed of the training games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Learning rate [default: 0.1 over the weights a value reads, 8 per
    /// tuple].
    #[arg(long)]
    rate: Option<f32>,
    /// Write the weights file every this many games (and at the end).
    #[arg(long, default_value_t = 10_000)]
    checkpoint_every: u64,
    /// Print one JSON object on stdout at the end.
    #[arg(long)]
    json: bool,
}

/// Run `train`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let config = config_of(&args)?;
    let mut shown = Shown::new();
    let net = train(&config, |p| shown.progress(&args, &config, p))?;
    if shown.tty {
        eprintln!();
    }
    let secs = shown.clock.elapsed().as_secs_f64();
    let played = shown.first.map_or(0, |start| net.games - start);
    if args.json {
        let out = serde_json::json!({
            "out": args.out,
            "board": args.board,
            "tuples": net.spec().to_string(),
            "seed": net.seed,
            // The f32 as written (0.003125), not widened (0.0031250000465...).
            "learning_rate": net.learning_rate.to_string().parse::<f64>().ok(),
            "games": net.games,
            "games_this_run": played,
            "seconds": secs,
            "recent": shown.last.as_ref().map(recent_json),
        });
        println!("{out}");
    } else if played == 0 {
        println!(
            "{} already holds {} training games; nothing to do",
            args.out.display(),
            net.games
        );
    } else {
        println!(
            "wrote {}: {} training games ({played} in this run, {})",
            args.out.display(),
            net.games,
            human::duration(secs)
        );
    }
    Ok(())
}

/// The training configuration `args` ask for, checked, with a weights file
/// that can be written.
fn config_of(args: &Args) -> anyhow::Result<TrainConfig> {
    let mut config = TrainConfig::new(args.board, args.games, args.seed)?;
    if let Some(spec) = &args.tuples {
        config.tuples = TupleSpec::parse(spec, args.board)?;
        config.learning_rate = TrainConfig::default_learning_rate(&config.tuples);
    }
    if let Some(rate) = args.rate {
        config.learning_rate = rate;
    }
    config.checkpoint_every = args.checkpoint_every;
    config.checkpoint = Some(args.out.clone());
    config.validate()?;
    // Refuse an unwritable place now, not at the first checkpoint.
    let dir = match args.out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    anyhow::ensure!(
        dir.is_dir(),
        "cannot write {}: the directory {} does not exist",
        args.out.display(),
        dir.display()
    );
    Ok(config)
}

/// The progress shown while training, on stderr.
struct Shown {
    /// Whether stderr is a terminal (a bar redrawn in place).
    tty: bool,
    clock: Instant,
    /// Games the network held when this run started.
    first: Option<u64>,
    /// The latest progress.
    last: Option<Progress>,
    last_draw: Option<Instant>,
}

impl Shown {
    /// Nothing shown yet.
    fn new() -> Shown {
        Shown {
            tty: std::io::stderr().is_terminal(),
            clock: Instant::now(),
            first: None,
            last: None,
            last_draw: None,
        }
    }

    /// Show progress `p`: the run's first line once, then a bar on a
    /// terminal or a line at each checkpoint.
    fn progress(&mut self, args: &Args, config: &TrainConfig, p: &Progress) {
        // Said once training has started: a checkpoint that cannot be
        // resumed is refused before, in one line.
        let start = *self.first.get_or_insert_with(|| {
            if !args.json {
                started(args, config, p);
            }
            p.games_done - 1
        });
        let done = p.games_done == p.games_total;
        if self.tty {
            if done
                || self
                    .last_draw
                    .is_none_or(|t| t.elapsed() >= Duration::from_millis(200))
            {
                self.last_draw = Some(Instant::now());
                eprint!("\r\x1b[2K{}", line(p, start, self.clock, true));
                let _ = std::io::stderr().flush();
            }
        } else if !args.json && (p.games_done.is_multiple_of(config.checkpoint_every) || done) {
            eprintln!("{}", line(p, start, self.clock, false));
        }
        self.last = Some(p.clone());
    }
}

/// Say what the run trains, and where it resumes from.
fn started(args: &Args, config: &TrainConfig, p: &Progress) {
    let n = args.board;
    eprintln!(
        "training {n}x{n}, tuples {}, {} games, seed {}, learning rate {} -> {}",
        config.tuples,
        config.games,
        config.seed,
        config.learning_rate,
        args.out.display()
    );
    if p.games_done > 1 {
        eprintln!(
            "resuming from {} at {} games",
            args.out.display(),
            p.games_done - 1
        );
    }
}

/// The last games' summary in the JSON object.
fn recent_json(p: &Progress) -> serde_json::Value {
    let reached: Vec<_> = (1..16)
        .filter(|&e| p.recent_reached[e] > 0)
        .map(|e| {
            serde_json::json!({
                "tile": 1u32 << e,
                "share": p.recent_reached[e] as f64 / p.recent_games as f64,
            })
        })
        .collect();
    serde_json::json!({
        "games": p.recent_games,
        "mean_score": p.recent_mean_score,
        "reached": reached,
    })
}

/// One progress line: a bar on a terminal, plain text otherwise.
fn line(p: &Progress, start: u64, clock: Instant, bar: bool) -> String {
    let secs = clock.elapsed().as_secs_f64().max(1e-9);
    let rate = (p.games_done - start) as f64 / secs;
    let left = (p.games_total - p.games_done) as f64 / rate.max(1e-9);
    let share = p.games_done as f64 / p.games_total as f64;
    // The three largest tiles that recent games reached.
    let top: Vec<String> = (1..16)
        .rev()
        .filter(|&e| p.recent_reached[e] > 0)
        .take(3)
        .map(|e| {
            format!(
                "{} {:.1}%",
                1u32 << e,
                100.0 * p.recent_reached[e] as f64 / p.recent_games as f64
            )
        })
        .collect();
    let head = if bar {
        let filled = (share * 24.0) as usize;
        format!(
            "[{}{}] {:>3.0}% ",
            "#".repeat(filled),
            "-".repeat(24 - filled),
            100.0 * share
        )
    } else {
        String::new()
    };
    format!(
        "{head}{}/{} games | {:.0} games/s | {} left | last {} games: mean score {:.0}, reached {}",
        p.games_done,
        p.games_total,
        rate,
        human::clock(left),
        p.recent_games,
        p.recent_mean_score,
        top.join(", ")
    )
}
