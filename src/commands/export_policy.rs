//! `solve2048 export-policy`: the optimal action of every state visited with
//! at least a given probability, in the compact policy file format.

use solve2048_core::formats::policy_file::PolicyFile;
use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime, write_atomically};

/// Arguments of `export-policy`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Keep states visited with at least this probability (0 keeps all visited).
    #[arg(long)]
    threshold: f64,
    /// Output file (format: core/src/formats/policy_file.rs).
    #[arg(long)]
    out: std::path::PathBuf,
}

/// Run `export-policy`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.threshold),
        "--threshold {} is outside [0, 1]",
        args.threshold
    );
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let mut entries = Vec::new();
    rt.block_on(solution.occupancy(|s, p, a| {
        if p >= args.threshold {
            entries.push((s, a));
        }
    }))?;
    entries.sort_unstable_by_key(|&(s, _)| s);
    let game = solution.game();
    let file = PolicyFile {
        shape: game.shape,
        target_exp: game.target_exp,
        objective: game.objective,
        fours_per_million: game.fours_per_million,
        entries,
    };
    let bytes = file.encode();
    write_atomically(&args.out, &bytes)?;
    println!(
        "wrote {} states ({} bytes) to {}",
        file.entries.len(),
        bytes.len(),
        args.out.display()
    );
    Ok(())
}
