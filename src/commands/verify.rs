//! `solve2048 verify`: read back every solved chunk of a store and check it
//! against the job's summary.

use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime};

/// Arguments of `verify`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `verify`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let total = solution.summary().states.max(1);
    let mut seen = 0u64;
    let mut last_shown = 0u64;
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let verified = rt.block_on(solution.verify(|sum, states| {
        seen += states;
        if tty && (seen - last_shown) * 100 >= total {
            last_shown = seen;
            eprint!("\rverifying layer {sum}: {seen} of {total} states");
        }
    }));
    if tty {
        eprintln!();
    }
    let verified = verified?;
    if args.json {
        let mut v = serde_json::to_value(&verified)?;
        v["game"] = solution.game().name().into();
        v["ok"] = true.into();
        println!("{v}");
    } else {
        println!(
            "{} in {}: OK, {} layers, {} chunks, {} states, digest {} (checksums, order and totals verified)",
            solution.game().name(),
            args.store.store,
            verified.layers,
            verified.chunks,
            verified.states,
            verified.digest
        );
    }
    Ok(())
}
