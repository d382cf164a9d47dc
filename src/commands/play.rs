//! `solve2048 play`: seeded games with the optimal policy of a solved store.

use solve2048_core::Board;
use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime};

/// Arguments of `play`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Seed of the random tiles (game i of --games uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Pause between moves, in milliseconds (one game on a terminal).
    #[arg(long, default_value_t = 0)]
    delay: u64,
    /// Number of games; more than one reports the win rate.
    #[arg(long, default_value_t = 1)]
    games: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `play`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let n = solution.game().size();
    if args.games == 1 {
        let show = !args.json;
        let played = rt.block_on(solution.play(args.seed, |step| {
            if show {
                let x: Board = step.board.parse().unwrap_or_default();
                print!("{}", x.to_grid(n));
                println!(
                    "win probability {:.6}, move {}\n",
                    step.value,
                    step.action.name()
                );
                if args.delay > 0 {
                    std::thread::sleep(std::time::Duration::from_millis(args.delay));
                }
            }
        }))?;
        if args.json {
            println!("{}", serde_json::to_string(&played)?);
        } else {
            let last: Board = played.last.parse().unwrap_or_default();
            print!("{}", last.to_grid(n));
            println!(
                "{} after {} moves (seed {})",
                if played.won { "won" } else { "lost" },
                played.steps.len(),
                played.seed
            );
        }
        return Ok(());
    }
    let mut wins = 0u64;
    let mut moves = 0u64;
    for i in 0..args.games {
        let played = rt.block_on(solution.play(args.seed.wrapping_add(i), |_| {}))?;
        wins += played.won as u64;
        moves += played.steps.len() as u64;
    }
    let k = args.games as f64;
    let rate = wins as f64 / k;
    let start = solution.summary().start_value;
    let se = (start * (1.0 - start) / k).sqrt();
    if args.json {
        let out = serde_json::json!({
            "game": solution.game().name(),
            "games": args.games,
            "first_seed": args.seed,
            "wins": wins,
            "win_rate": rate,
            "start_value": start,
            "standard_error": se,
            "mean_moves": moves as f64 / k,
        });
        println!("{out}");
    } else {
        println!(
            "{} games of {}: won {wins} ({rate:.4}); start value {start:.4} +- {se:.4} (one standard error); {:.1} moves per game",
            args.games,
            solution.game().name(),
            moves as f64 / k
        );
    }
    Ok(())
}
