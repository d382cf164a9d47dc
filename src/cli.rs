//! Command-line arguments and the subcommands behind them.

use anyhow::Context;
use clap::{Parser, Subcommand};
use solve2048_coordinator::{Phase, Summary};
use solve2048_core::policy_file::PolicyFile;
use solve2048_core::task::JobSpec;
use solve2048_core::{Board, Direction};
use solve2048_worker::solution::Solution;
use solve2048_worker::Store;

use crate::cluster::{self, ChunksArgs, CoordinatorArgs, LeaseArgs, StatusArgs, WorkerArgs};

use crate::progress::{peak_rss_bytes, Reporter};

/// Provably optimal 2048 policies by exhaustive enumeration and backward induction.
#[derive(Parser)]
#[command(name = "solve2048", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log format on stderr: human or json (level: SOLVE2048_LOG, e.g. info).
    #[arg(long, global = true, default_value = "human", value_parser = ["human", "json"])]
    pub log_format: String,
}

#[derive(Subcommand)]
enum Command {
    /// Enumerate every reachable state and solve the game, on this machine.
    Solve(SolveArgs),
    /// Run a job's coordinator: plan, lease tasks to workers, record results.
    Coordinator(CoordinatorArgs),
    /// Run a worker: pull tasks from a coordinator and run them.
    Worker(WorkerArgs),
    /// A job's progress: live from the coordinator, or from the store.
    Status(StatusArgs),
    /// List a job's chunk tasks with state, attempts, last error, objects.
    Chunks(ChunksArgs),
    /// The value of a board and of each move, from a solved store.
    Query(QueryArgs),
    /// Play seeded games with the optimal policy of a solved store.
    Play(PlayArgs),
    /// Visit probabilities under optimal play: win/lose split, expected moves.
    Occupancy(OccupancyArgs),
    /// Write the policy of the states visited with probability >= a threshold.
    ExportPolicy(ExportArgs),
    /// Draw the state space: states by tile sum per max tile, values by layer.
    Plot(PlotArgs),
    /// Read back every solved chunk and check it against the job's summary.
    Verify(VerifyArgs),
    /// The resource plan of a job before it runs: states per layer, worker
    /// memory, store size and duration on a cluster.
    Plan(PlanArgs),
}

#[derive(clap::Args)]
struct VerifyArgs {
    /// The solved store (a directory or s3://BUCKET/PREFIX).
    #[arg(long)]
    store: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PlanArgs {
    /// Board side: 2, 3 or 4.
    #[arg(long)]
    board: u32,
    /// Target tile: a power of two (8 to 32768; smaller boards hold less).
    #[arg(long)]
    target: u64,
    /// Worker machines.
    #[arg(long, default_value_t = 8)]
    workers: u32,
    /// Memory of each worker, in GiB.
    #[arg(long, default_value_t = 64.0)]
    worker_memory: f64,
    /// Kernel threads of each worker (`worker --threads`).
    #[arg(long, default_value_t = 16)]
    threads_per_worker: u32,
    /// Tasks each worker runs at once (`worker --slots`).
    #[arg(long, default_value_t = 2)]
    slots: u32,
    /// Largest number of states in one chunk (as for `solve`).
    #[arg(long, default_value_t = solve2048_core::task::DEFAULT_CHUNK_SIZE)]
    chunk_size: u64,
    /// A store of this game (local directory or s3://): its indexed layers
    /// are counted exactly.
    #[arg(long)]
    store: Option<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PlotArgs {
    /// The solved store.
    #[arg(long)]
    store: String,
    /// Output file: .svg, or .png (the same figure rasterised).
    #[arg(long)]
    out: std::path::PathBuf,
}

#[derive(clap::Args)]
struct OccupancyArgs {
    /// The solved store.
    #[arg(long)]
    store: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The solved store.
    #[arg(long)]
    store: String,
    /// Keep states visited with at least this probability (0 keeps all visited).
    #[arg(long)]
    threshold: f64,
    /// Output file (format: core/src/policy_file.rs).
    #[arg(long)]
    out: std::path::PathBuf,
}

#[derive(clap::Args)]
struct QueryArgs {
    /// The solved store.
    #[arg(long)]
    store: String,
    /// The board, rows separated by '/', '.' for empty: "2 4 . 8 / . . 2 . / ...";
    /// or the 16-digit nybble hex form (0x...).
    #[arg(long)]
    board: String,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PlayArgs {
    /// The solved store.
    #[arg(long)]
    store: String,
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

#[derive(clap::Args)]
struct SolveArgs {
    /// Board side: 2, 3 or 4.
    #[arg(long)]
    board: u32,
    /// Target tile: a power of two (8 to 32768; smaller boards hold less).
    #[arg(long)]
    target: u64,
    /// Discount per move, in (0, 1].
    #[arg(long, default_value_t = 1.0)]
    discount: f64,
    /// Store: a local directory [default: solve2048-store/<game>].
    #[arg(long)]
    store: Option<String>,
    /// Worker threads [default: all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Largest number of states in one chunk.
    #[arg(long, default_value_t = solve2048_core::task::DEFAULT_CHUNK_SIZE)]
    chunk_size: u64,
    /// zstd level of stored chunks.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    #[command(flatten)]
    lease: LeaseArgs,
    /// Print one JSON object with the results on stdout.
    #[arg(long)]
    json: bool,
}

/// Run the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Solve(args) => solve(args),
        Command::Coordinator(args) => coordinator(args),
        Command::Worker(args) => cluster::worker(args),
        Command::Status(args) => cluster::status(args),
        Command::Chunks(args) => cluster::chunks(args),
        Command::Query(args) => query(args),
        Command::Play(args) => play(args),
        Command::Occupancy(args) => occupancy(args),
        Command::ExportPolicy(args) => export_policy(args),
        Command::Plot(args) => plot(args),
        Command::Verify(args) => verify(args),
        Command::Plan(args) => plan(args),
    }
}

/// Start the global kernel thread pool; returns its size.
pub fn start_threads(threads: Option<usize>) -> anyhow::Result<usize> {
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    anyhow::ensure!(threads >= 1, "--threads must be at least 1");
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .context("starting threads")?;
    Ok(threads)
}

fn coordinator(args: CoordinatorArgs) -> anyhow::Result<()> {
    let reporter = Reporter::new();
    let json = args.json();
    let rt = runtime()?;
    let (job, location, summary) =
        rt.block_on(cluster::coordinator(args, &|p| reporter.event(p)))?;
    print_summary(&job, &location, &summary, &reporter, None, json)
}

fn solve(args: SolveArgs) -> anyhow::Result<()> {
    let job = cluster::job_spec(
        args.board,
        args.target,
        args.discount,
        args.chunk_size,
        args.zstd_level,
    )?;
    let threads = start_threads(args.threads)?;
    let location = args
        .store
        .clone()
        .unwrap_or_else(|| format!("solve2048-store/{}", job.game.name()));
    let store = Store::open(&location)?;
    let reporter = Reporter::new();
    let summary = runtime()?.block_on(cluster::run_embedded(
        &store,
        job,
        threads,
        &args.lease,
        &|p| reporter.event(p),
    ))?;
    print_summary(
        &job,
        &location,
        &summary,
        &reporter,
        Some(threads),
        args.json,
    )
}

/// Print a finished job's summary: one JSON object, or a readable report.
fn print_summary(
    job: &JobSpec,
    location: &str,
    summary: &Summary,
    reporter: &Reporter,
    threads: Option<usize>,
    json: bool,
) -> anyhow::Result<()> {
    let game = job.game;
    let (enum_peak, solve_peak) = (reporter.peak(Phase::Enumerate), reporter.peak(Phase::Solve));
    let peak = enum_peak.max(solve_peak).max(peak_rss_bytes());
    if json {
        let out = serde_json::json!({
            "board": game.n,
            "target": game.target(),
            "discount": game.discount,
            "states": summary.states,
            "parts": summary.parts,
            "start_value": summary.start_value,
            "digest": summary.digest,
            "enumerate_seconds": summary.enumerate_seconds,
            "solve_seconds": summary.solve_seconds,
            "peak_rss_bytes": peak,
            "enumerate_peak_rss_bytes": enum_peak,
            "solve_peak_rss_bytes": solve_peak,
            "threads": threads,
            "chunk_size": job.chunk_size,
            "store": location,
            "tasks_run": summary.tasks_run,
            "tasks_skipped": summary.tasks_skipped,
            "orphans_removed": summary.orphans_removed,
        });
        println!("{out}");
    } else {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let cores = threads.unwrap_or(1) as f64;
        let per = if threads.is_some() {
            "states/s/core"
        } else {
            "states/s"
        };
        let rate = |secs: f64| summary.states as f64 / secs.max(1e-9) / cores;
        println!("solved {} in store {location}", game.name());
        println!("  states (non-terminal, canonical): {}", summary.states);
        println!(
            "  parts: {}  layers: {}",
            summary.parts.len(),
            summary
                .parts
                .iter()
                .map(|p| p.sum)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
        println!(
            "  value of the game (win probability): {:.10}",
            summary.start_value
        );
        println!("  result digest: {}", summary.digest);
        println!(
            "  enumerate: {:8.2} s  {:>10.0} {per}  peak RSS {:.2} GiB",
            summary.enumerate_seconds,
            rate(summary.enumerate_seconds),
            gib(enum_peak)
        );
        println!(
            "  solve:     {:8.2} s  {:>10.0} {per}  peak RSS {:.2} GiB",
            summary.solve_seconds,
            rate(summary.solve_seconds),
            gib(solve_peak)
        );
        if summary.tasks_skipped > 0 {
            println!(
                "  resumed: {} tasks were already committed, {} run now",
                summary.tasks_skipped, summary.tasks_run
            );
        }
    }
    Ok(())
}

/// The async runtime of a command (kernels run on rayon, not here).
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Open a store that must already exist (reading never creates one).
pub fn open_existing(location: &str) -> anyhow::Result<Store> {
    let dir = location.strip_prefix("file://").unwrap_or(location);
    if !location.contains("://") || location.starts_with("file://") {
        anyhow::ensure!(
            std::path::Path::new(dir).is_dir(),
            "store {location} does not exist"
        );
    }
    Ok(Store::open(location)?)
}

fn query(args: QueryArgs) -> anyhow::Result<()> {
    let (board, n) = Board::parse(&args.board)?;
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
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

fn play(args: PlayArgs) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
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

fn verify(args: VerifyArgs) -> anyhow::Result<()> {
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
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
            args.store,
            verified.layers,
            verified.chunks,
            verified.states,
            verified.digest
        );
    }
    Ok(())
}

fn occupancy(args: OccupancyArgs) -> anyhow::Result<()> {
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
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

fn export_policy(args: ExportArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.threshold),
        "--threshold {} is outside [0, 1]",
        args.threshold
    );
    let rt = runtime()?;
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
    let mut entries = Vec::new();
    rt.block_on(solution.occupancy(|s, p, a| {
        if p >= args.threshold {
            entries.push((s, a));
        }
    }))?;
    entries.sort_unstable_by_key(|&(s, _)| s);
    let game = solution.game();
    let file = PolicyFile {
        n: game.n,
        target_exp: game.target_exp,
        entries,
    };
    let bytes = file.encode();
    // Write beside the target and rename, so a crash never leaves half a file.
    let tmp = args.out.with_extension("tmp");
    std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &args.out).with_context(|| format!("writing {}", args.out.display()))?;
    println!(
        "wrote {} states ({} bytes) to {}",
        file.entries.len(),
        bytes.len(),
        args.out.display()
    );
    Ok(())
}

fn plot(args: PlotArgs) -> anyhow::Result<()> {
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
    let solution = rt.block_on(Solution::open(open_existing(&args.store)?))?;
    let stats = rt.block_on(solution.layer_stats())?;
    let svg = crate::plot::svg(&solution.game().name(), &stats);
    let bytes = if ext == "png" {
        crate::plot::png(&svg)?
    } else {
        svg.into_bytes()
    };
    let tmp = args.out.with_extension(format!("{ext}.tmp"));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &args.out).with_context(|| format!("writing {}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}

fn plan(args: PlanArgs) -> anyhow::Result<()> {
    use solve2048_coordinator::capacity::{self, Cluster};
    // The same validation as `solve`; the discount does not change the states.
    let job = cluster::job_spec(args.board, args.target, 1.0, args.chunk_size, 3)?;
    anyhow::ensure!(
        args.worker_memory.is_finite() && args.worker_memory > 0.0,
        "--worker-memory {} must be more than 0 GiB",
        args.worker_memory
    );
    let spec = Cluster {
        workers: args.workers,
        threads_per_worker: args.threads_per_worker,
        worker_memory_bytes: (args.worker_memory * GIB) as u64,
        slots: args.slots,
        chunk_size: args.chunk_size,
    };
    spec.validate()?;
    let stored = match &args.store {
        Some(location) => {
            let store = open_existing(location)?;
            let records = solve2048_coordinator::Records::new(store.object_store(), location);
            runtime()?.block_on(capacity::stored_layers(&records, &job.game))?
        }
        None => Vec::new(),
    };
    let plan = capacity::plan(&job.game, &spec, &stored)?;
    if args.json {
        println!("{}", serde_json::to_string(&plan)?);
    } else {
        print!("{}", render_plan(&plan));
    }
    Ok(())
}

const GIB: f64 = (1u64 << 30) as f64;

/// A duration for people: seconds, minutes, hours or days.
fn human_duration(secs: f64) -> String {
    match secs {
        s if s < 100.0 => format!("{s:.0} s"),
        s if s < 6000.0 => format!("{:.0} min", s / 60.0),
        s if s < 72.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// Bytes for people.
fn human_bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b < 1024.0 * 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b if b < GIB => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
        b if b < 1024.0 * GIB => format!("{:.1} GiB", b / GIB),
        b => format!("{:.2} TiB", b / (1024.0 * GIB)),
    }
}

/// The human form of a plan.
fn render_plan(p: &solve2048_coordinator::capacity::Plan) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let c = &p.cluster;
    let _ = writeln!(
        o,
        "plan for {}: {} workers x {} threads, {:.0} GiB each, {} slots, chunk size {}",
        p.game,
        c.workers,
        c.threads_per_worker,
        c.worker_memory_bytes as f64 / GIB,
        c.slots,
        c.chunk_size
    );
    let exact = if p.exact_states == p.states {
        "exact".to_string()
    } else {
        format!(
            "estimated; {} of them exact ({:.2}%)",
            p.exact_states,
            100.0 * p.exact_states as f64 / p.states.max(1) as f64
        )
    };
    let _ = writeln!(
        o,
        "states: {} in {} parts, {} layers ({exact})",
        p.states,
        p.parts,
        p.layers.len()
    );
    if let Some(l) = &p.largest_part {
        let _ = writeln!(
            o,
            "largest part: sum {} max tile {}: {} states ({})",
            l.sum,
            1u64 << l.max_exp,
            l.states,
            l.source.label()
        );
    }
    let _ = writeln!(o, "\n{:>6} {:>6} {:>16}  source", "sum", "parts", "states");
    for l in &p.layers {
        let _ = writeln!(
            o,
            "{:>6} {:>6} {:>16}  {}",
            l.sum,
            l.parts,
            l.states,
            l.source.label()
        );
    }
    let m = &p.memory;
    let _ = writeln!(o, "\nworker memory:");
    let _ = writeln!(
        o,
        "  solve peak {} (starting layer {}: loading layer {} while {} is cached; steady tables {})",
        human_bytes(m.solve_peak_bytes),
        m.solve_peak_sum,
        m.solve_peak_sum + 2,
        m.solve_peak_sum + 4,
        human_bytes(m.solve_tables_bytes)
    );
    let _ = writeln!(
        o,
        "  enumerate/merge peak {}",
        human_bytes(m.enumerate_peak_bytes)
    );
    let _ = writeln!(
        o,
        "  needs {} ({} plus {:.0}% headroom) of {:.0} GiB: {}",
        human_bytes(m.needed_bytes),
        human_bytes(m.peak_bytes),
        (solve2048_coordinator::capacity::MEMORY_HEADROOM - 1.0) * 100.0,
        c.worker_memory_bytes as f64 / GIB,
        if p.fits { "fits" } else { "DOES NOT FIT" }
    );
    if !p.fits {
        let _ = writeln!(
            o,
            "warning: a {:.0} GiB worker is too small for this job; every worker loads whole layers, so more workers do not help: use workers of at least {}",
            c.worker_memory_bytes as f64 / GIB,
            human_bytes(m.needed_bytes)
        );
    }
    let s = &p.store;
    let _ = writeln!(
        o,
        "\nstore: {} (states {}, values {}, policy {})",
        human_bytes(s.total_bytes),
        human_bytes(s.states_bytes),
        human_bytes(s.values_bytes),
        human_bytes(s.policy_bytes)
    );
    let d = &p.duration;
    let _ = writeln!(
        o,
        "duration: enumerate {}, solve {} (of which table loads {}), total {}",
        human_duration(d.enumerate_seconds),
        human_duration(d.solve_seconds),
        human_duration(d.table_load_seconds),
        human_duration(d.total_seconds)
    );
    let _ = writeln!(
        o,
        "\n{:>8} {:>8} {:>10} {:>10} {:>10} {:>10}",
        "workers", "threads", "memory", "enumerate", "solve", "total"
    );
    for (i, opt) in p.options.iter().enumerate() {
        let _ = writeln!(
            o,
            "{:>8} {:>8} {:>6} GiB {:>10} {:>10} {:>10}{}",
            opt.workers,
            opt.threads_per_worker,
            opt.worker_memory_gib,
            human_duration(opt.duration.enumerate_seconds),
            human_duration(opt.duration.solve_seconds),
            human_duration(opt.duration.total_seconds),
            if p.recommended == Some(i) {
                "  <- recommended"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        o,
        "(recommended: the fewest workers that finish within a day; memory: the smallest common size that holds the peak with headroom)\n"
    );
    for n in &p.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}
