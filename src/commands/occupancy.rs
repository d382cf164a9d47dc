//! `solve2048 occupancy`: visit probabilities under optimal play: the
//! win/lose split and the expected number of moves.

use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime};

/// Arguments of `occupancy`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `occupancy`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let occ = rt.block_on(solution.occupancy(|_, _, _| {}))?;
    if args.json {
        let mut v = serde_json::to_value(&occ)?;
        v["game"] = solution.game().name().into();
        v["start_value"] = solution.summary().start_value.into();
        println!("{v}");
    } else {
        println!(
            "{} under optimal play from the random start:",
            solution.game().name()
        );
        println!(
            "  P(win) {:.10}  P(lose) {:.10}  (sum {:.12})",
            occ.win,
            occ.lose,
            occ.win + occ.lose
        );
        println!("  start value {:.10}", solution.summary().start_value);
        println!(
            "  expected moves until the game ends: {:.3}",
            occ.expected_moves
        );
        println!(
            "  states visited: {} of {}",
            occ.visited_states,
            solution.summary().states
        );
    }
    Ok(())
}
