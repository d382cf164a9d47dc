//! `solve2048 chunks`: a job's chunk tasks with their state, attempts, last
//! error and objects.

use solve2048_coordinator::status::{self, ChunkState};
use solve2048_coordinator::Records;

use crate::runtime::{open_existing, runtime};

/// Arguments of `chunks`.
#[derive(clap::Args)]
pub struct Args {
    /// The store.
    #[arg(long)]
    store: String,
    /// Only chunks of this tile sum.
    #[arg(long)]
    sum: Option<u32>,
    /// Only tasks in this state: waiting, pending, leased, done or failed.
    #[arg(long)]
    state: Option<String>,
    /// Print one JSON array on stdout.
    #[arg(long)]
    json: bool,
}

/// List chunk tasks with their state, attempts, last error and objects.
pub fn run(args: Args) -> anyhow::Result<()> {
    let want = match &args.state {
        Some(s) => Some(ChunkState::parse(s).ok_or_else(|| {
            anyhow::anyhow!("--state must be waiting, pending, leased, done or failed, not {s:?}")
        })?),
        None => None,
    };
    let store = open_existing(&args.store)?;
    let records = Records::new(store);
    let rt = runtime()?;
    let rows: Vec<_> = rt
        .block_on(status::chunk_rows(&records))?
        .into_iter()
        .filter(|r| args.sum.is_none_or(|s| r.sum == s))
        .filter(|r| want.is_none_or(|w| r.state == w))
        .collect();
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    println!(
        "{:<38} {:>9} {:>9} {:>8}  {:<30} objects",
        "task", "states", "state", "failures", "last_error"
    );
    for r in &rows {
        let mut err = r.last_error.clone().unwrap_or_default();
        if err.chars().count() > 30 {
            err = err.chars().take(27).chain("...".chars()).collect();
        }
        println!(
            "{:<38} {:>9} {:>9} {:>8}  {:<30} {}",
            r.task,
            r.states,
            format!("{:?}", r.state).to_lowercase(),
            r.failed_attempts,
            err,
            r.objects.join(" ")
        );
    }
    println!("{} tasks", rows.len());
    Ok(())
}
