//! `solve2048 plot`: the state-space figure of a solved store, as SVG or
//! PNG (the drawing is in [`crate::figure`]).

use solve2048_solution::Solution;

use crate::args::SolvedStoreArgs;
use crate::runtime::{open_existing, runtime, write_atomically};

/// Arguments of `plot`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    store: SolvedStoreArgs,
    /// Output file: .svg, or .png (the same figure rasterised).
    #[arg(long)]
    out: std::path::PathBuf,
}

/// Run `plot`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let ext = args
        .out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    anyhow::ensure!(
        ext == "svg" || ext == "png",
        "--out {} must end in .svg or .png",
        args.out.display()
    );
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store.store)?))?;
    let stats = rt.block_on(solution.layer_stats())?;
    let svg = crate::figure::svg(&solution.game().name(), &stats);
    let bytes = if ext == "png" {
        crate::figure::png(&svg)?
    } else {
        svg.into_bytes()
    };
    write_atomically(&args.out, &bytes)?;
    println!("wrote {}", args.out.display());
    Ok(())
}
