//! `solve2048 man`: manual pages in roff, made by `clap_mangen` from the same
//! command definition as the parser: the main page on stdout, or with
//! `--out DIR` one page per command (`solve2048.1`, `solve2048-solve.1`, ...).

use clap::CommandFactory;

/// Arguments of `man`.
#[derive(clap::Args)]
pub struct Args {
    /// Write one page per command into this directory (made if missing)
    /// instead of the main page on stdout.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// Run `man`.
pub fn run(args: Args) -> anyhow::Result<()> {
    use anyhow::Context;
    let cmd = crate::Cli::command();
    match args.out {
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("making {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("writing pages to {}", dir.display()))?;
            let pages = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".1"))
                .count();
            println!("wrote {pages} pages to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            crate::human::print_out(&String::from_utf8(page)?);
        }
    }
    Ok(())
}
