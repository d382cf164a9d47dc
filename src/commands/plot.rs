//! `solve2048 plot`: the state-space figure of a solved store, as SVG or
//! PNG (the drawing is in [`solve2048_solution::figure`], which `serve` shows
//! too; PNG is the same SVG rasterised with resvg).

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
    let svg = solve2048_solution::figure::svg(&solution.game().name(), &stats);
    let bytes = if ext == "png" {
        png(&svg)?
    } else {
        svg.into_bytes()
    };
    write_atomically(&args.out, &bytes)?;
    println!("wrote {}", args.out.display());
    Ok(())
}

/// Rasterise the figure to PNG with resvg (pure Rust; text in the system's
/// sans-serif font).
fn png(svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    options.fontdb_mut().load_system_fonts();
    if options.fontdb.is_empty() {
        eprintln!("warning: no system fonts found: the PNG has no text (the SVG keeps it)");
    }
    let tree = usvg::Tree::from_str(svg, &options)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow::anyhow!("figure of size {size:?} cannot be rasterised"))?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    Ok(pixmap.encode_png()?)
}
