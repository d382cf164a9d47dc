//! Train an n-tuple network by TD(0) and write its weights file; rerun the
//! same command to resume from the file.
//!
//! ```sh
//! cargo run --release -p solve2048-players --example train -- \
//!     --board 3 --games 200000 --seed 1 --out players/networks/3x3.weights
//! ```
//!
//! Flags: `--board N` (2, 3, 4), `--games G` (total), `--seed S`,
//! `--tuples SPEC` (default: the board's default preset), `--rate R` (default:
//! 0.1 over the weights a value reads), `--every K` (checkpoint interval,
//! default 10000), `--out FILE` (checkpoint and result). Progress goes to
//! stderr every 1000 games.

use std::path::PathBuf;
use std::time::Instant;

use solve2048_players::{train, TrainConfig, TupleSpec};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let n: usize = flag("--board").ok_or("--board N is required")?.parse()?;
    let games: u64 = flag("--games").ok_or("--games G is required")?.parse()?;
    let seed: u64 = flag("--seed").unwrap_or_else(|| "1".into()).parse()?;
    let out = PathBuf::from(flag("--out").ok_or("--out FILE is required")?);
    let mut config = TrainConfig::new(n, games, seed)?;
    if let Some(spec) = flag("--tuples") {
        config.tuples = TupleSpec::parse(&spec, n)?;
        config.learning_rate = TrainConfig::default_learning_rate(&config.tuples);
    }
    if let Some(rate) = flag("--rate") {
        config.learning_rate = rate.parse()?;
    }
    if let Some(every) = flag("--every") {
        config.checkpoint_every = every.parse()?;
    }
    config.checkpoint = Some(out.clone());
    eprintln!(
        "training {n}x{n}, tuples {}, {} games, seed {seed}, learning rate {} -> {}",
        config.tuples,
        games,
        config.learning_rate,
        out.display()
    );
    let clock = Instant::now();
    let mut first = None;
    let mut moves = 0u64;
    let net = train(&config, |p| {
        let start = *first.get_or_insert(p.games_done - 1);
        moves += p.moves;
        if p.games_done % 1000 == 0 || p.games_done == p.games_total {
            let secs = clock.elapsed().as_secs_f64();
            let share = |e: usize| 100.0 * p.recent_reached[e] as f64 / p.recent_games as f64;
            eprintln!(
                "{:>9} games  {:>7.0} s  {:>6.0} games/s  {:>9.0} moves/s  recent mean score {:>9.1}  \
                 reached 256 {:>5.1}%  512 {:>5.1}%  1024 {:>5.1}%  2048 {:>5.1}%  4096 {:>5.1}%",
                p.games_done,
                secs,
                (p.games_done - start) as f64 / secs,
                moves as f64 / secs,
                p.recent_mean_score,
                share(8),
                share(9),
                share(10),
                share(11),
                share(12),
            );
        }
    })?;
    eprintln!(
        "done: {} games in {:.0} s, wrote {}",
        net.games,
        clock.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(())
}
