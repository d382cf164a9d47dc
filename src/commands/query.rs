//! `solve2048 query`: the value of a board and of each move, from a solved
//! store, in the orientation given.

use solve2048_core::Direction;
use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime};

/// Arguments of `query`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// The board, rows separated by '/', '.' for empty: "2 4 . 8 / . . 2 . / ...";
    /// or the 16-digit nybble hex form (0x...).
    #[arg(long)]
    board: String,
    /// Print one JSON object on stdout (the same object `serve` answers
    /// `/api/query` with).
    #[arg(long)]
    json: bool,
}

/// Run `query`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let report = rt.block_on(solution.query_text(&args.board))?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
        return Ok(());
    }
    let (board, n) = solution.parse_board(&args.board)?;
    let answer = &report.answer;
    print!("{}", board.to_grid(n));
    println!("game: {}   status: {:?}", report.game, answer.status);
    println!(
        "{} under optimal play: {:.10}",
        solution.game().value_name(),
        answer.value
    );
    for d in Direction::ALL {
        match answer.actions[d as usize] {
            Some(v) => println!(
                "  {:<5} {:.10}{}",
                d.name(),
                v,
                if answer.best == Some(d) {
                    "  <- best"
                } else {
                    ""
                }
            ),
            None => println!("  {:<5} (illegal)", d.name()),
        }
    }
    Ok(())
}
