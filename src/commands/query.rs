//! `solve2048 query`: the value of a board and of each move, from a solved
//! store, in the orientation given.

use solve2048_core::{Board, Direction};
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
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `query`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let (board, n) = Board::parse(&args.board)?;
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    // The hex form does not fix the size: read it as the store's game when its
    // tiles fit there.
    let game_n = solution.game().size();
    let n = if Board::is_hex_form(&args.board) && board.fits(game_n) {
        game_n
    } else {
        n
    };
    let answer = rt.block_on(solution.query(board.0, n))?;
    if args.json {
        let actions: serde_json::Map<String, serde_json::Value> = Direction::ALL
            .iter()
            .map(|d| {
                (
                    d.name().to_string(),
                    serde_json::json!(answer.actions[*d as usize]),
                )
            })
            .collect();
        let out = serde_json::json!({
            "game": solution.game().name(),
            "board": board.to_text(n),
            "hex": format!("{:#018x}", board.0),
            "status": answer.status,
            "value": answer.value,
            "actions": actions,
            "best": answer.best.map(Direction::name),
        });
        println!("{out}");
        return Ok(());
    }
    print!("{}", board.to_grid(n));
    println!(
        "game: {}   status: {:?}",
        solution.game().name(),
        answer.status
    );
    println!("win probability under optimal play: {:.10}", answer.value);
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
