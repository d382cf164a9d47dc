//! `solve2048 plan`: the resource plan of a job before it runs: states per
//! layer, worker memory, store size and duration on a cluster.

use std::fmt::Write;

use solve2048_coordinator::{CoordinatorError, Records};
use solve2048_core::task::LayerIndex;
use solve2048_core::Game;
use solve2048_plan::store_size::StoreRange;
use solve2048_plan::{Cluster, Plan, Prices, Span, LIST_PRICES};

use crate::args::GameArgs;
use crate::human::{self, GIB};
use crate::runtime::{open_existing, runtime};

/// Arguments of `plan`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    game: GameArgs,
    /// Probability that a spawned tile is a 4 (as for `solve`).
    #[arg(long, value_name = "P", default_value_t = 0.1)]
    four_probability: f64,
    /// What the solve maximises (as for `solve`): `win` or `score`.
    #[arg(long, default_value = "win")]
    objective: String,
    /// Worker machines.
    #[arg(long, default_value_t = 8)]
    workers: u32,
    /// Memory of each worker, in GiB.
    #[arg(long, default_value_t = 64.0)]
    worker_memory: f64,
    /// Kernel threads of each worker (`worker --threads`).
    #[arg(long, default_value_t = 16)]
    threads_per_worker: u32,
    /// Tasks each worker runs at once (`worker --slots`) [default: as
    /// `worker` sets it for the threads: enough to keep 90% of them busy].
    #[arg(long)]
    slots: Option<u32>,
    /// Largest number of states in one chunk (as for `solve`).
    #[arg(long, default_value_t = solve2048_core::task::DEFAULT_CHUNK_SIZE)]
    chunk_size: u64,
    /// Plan a job that keeps the values of only two layers in five once
    /// solved (`solve --recompute-values`): a smaller final store.
    #[arg(long)]
    recompute_values: bool,
    /// US dollars a core an hour [default: AWS EC2 on-demand m7i.4xlarge,
    /// us-east-1: $0.0504].
    #[arg(long, value_name = "USD")]
    price_per_core_hour: Option<f64>,
    /// US dollars a GiB of store a month [default: S3 Standard: $0.023].
    #[arg(long, value_name = "USD")]
    price_per_gib_month: Option<f64>,
    /// A store of this game (local directory or s3://): its indexed layers
    /// are counted exactly.
    #[arg(long)]
    store: Option<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Run `plan`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // The discount does not change the states.
    let game = args
        .game
        .game(1.0, args.objective.parse()?)?
        .with_four_probability(args.four_probability)?;
    anyhow::ensure!(args.chunk_size >= 1, "--chunk-size must be at least 1");
    anyhow::ensure!(
        args.worker_memory.is_finite() && args.worker_memory > 0.0,
        "--worker-memory {} must be more than 0 GiB",
        args.worker_memory
    );
    let spec = Cluster {
        workers: args.workers,
        threads_per_worker: args.threads_per_worker,
        worker_memory_bytes: (args.worker_memory * GIB) as u64,
        slots: args
            .slots
            .unwrap_or_else(|| solve2048_plan::default_slots(args.threads_per_worker)),
        chunk_size: args.chunk_size,
        recompute_values: args.recompute_values,
    };
    spec.validate()?;
    let prices = Prices {
        core_hour_usd: price(
            args.price_per_core_hour,
            LIST_PRICES.core_hour_usd,
            "core-hour",
        )?,
        gib_month_usd: price(
            args.price_per_gib_month,
            LIST_PRICES.gib_month_usd,
            "gib-month",
        )?,
    };
    let stored = match &args.store {
        Some(location) => {
            let store = open_existing(location)?;
            let records = Records::new(store);
            runtime()?.block_on(stored_layers(&records, &game))?
        }
        None => Vec::new(),
    };
    let plan = solve2048_plan::plan(&game, &spec, &stored, prices)?;
    if args.json {
        println!("{}", serde_json::to_string(&plan)?);
    } else {
        print!("{}", render_plan(&plan));
    }
    Ok(())
}

/// A price given on the command line (`--price-per-<unit>`), or `default`;
/// it must be a finite amount of at least 0.
fn price(given: Option<f64>, default: f64, unit: &str) -> anyhow::Result<f64> {
    let p = given.unwrap_or(default);
    anyhow::ensure!(
        p.is_finite() && p >= 0.0,
        "--price-per-{unit} {p} must be a finite amount of at least 0 US dollars"
    );
    Ok(p)
}

/// The exact layers of `game` a store has indexed (empty when none yet).
/// Errors when the store holds another game (the discount does not change
/// the states, so it may differ) or no job at all.
async fn stored_layers(
    records: &Records,
    game: &Game,
) -> Result<Vec<LayerIndex>, CoordinatorError> {
    let manifest = records
        .manifest()
        .await?
        .ok_or_else(|| CoordinatorError::NoJob {
            location: records.location().to_string(),
        })?;
    let found = manifest.job.game;
    if (found.shape, found.target_exp) != (game.shape, game.target_exp) {
        return Err(CoordinatorError::ForeignJob {
            location: records.location().to_string(),
            found: found.name(),
            requested: game.name(),
        });
    }
    records.layer_indexes().await
}

/// The human form of a plan.
fn render_plan(p: &Plan) -> String {
    let mut o = String::new();
    write_counts(&mut o, p);
    write_memory(&mut o, p);
    write_store(&mut o, p);
    write_options(&mut o, p);
    write_notes(&mut o, p);
    o
}

/// The cluster, the states, the largest part and the layers' table.
fn write_counts(o: &mut String, p: &Plan) {
    let c = &p.cluster;
    let _ = writeln!(
        o,
        "plan for {}, as asked: {} x {} threads, {:.0} GiB each, {} slots, chunk size {}",
        p.game,
        workers(c.workers),
        c.threads_per_worker,
        c.worker_memory_bytes as f64 / GIB,
        c.slots,
        c.chunk_size
    );
    let _ = writeln!(
        o,
        "duration {}, cost {}",
        duration_range(p.duration_range),
        usd_range(p.cost.total_usd)
    );
    if let Some(r) = p.recommended.map(|i| &p.options[i]) {
        let _ = writeln!(
            o,
            "recommended: {} x {} threads, {} GiB each, {} slots: duration {}, cost {}",
            workers(r.workers),
            r.threads_per_worker,
            r.worker_memory_gib,
            c.slots,
            duration_range(r.duration_range),
            usd_range(r.cost.total_usd)
        );
    }
    let exact = if p.exact_states == p.states {
        "exact".to_string()
    } else if p.states_range.high > p.states_range.low {
        format!(
            "estimated, {:.2e} to {:.2e}; {} of them exact ({:.2}%)",
            p.states_range.low,
            p.states_range.high,
            p.exact_states,
            100.0 * p.exact_states as f64 / p.states.max(1) as f64
        )
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
}

/// What a worker and the coordinator need, and whether the worker fits.
fn write_memory(o: &mut String, p: &Plan) {
    let (c, m) = (&p.cluster, &p.memory);
    let _ = writeln!(o, "\nworker memory (no task holds a layer):");
    for t in &m.tasks {
        let _ = writeln!(o, "  largest {:<9} task {}", t.kind, human::bytes(t.bytes));
    }
    let _ = writeln!(
        o,
        "  least that works: {} (the process and its largest task, one at a time)",
        human::bytes(m.minimum_bytes)
    );
    let _ = writeln!(
        o,
        "  {} slots need {} of {:.0} GiB: {}",
        c.slots,
        human::bytes(m.needed_bytes),
        c.worker_memory_bytes as f64 / GIB,
        if p.fits { "fits" } else { "DOES NOT FIT" }
    );
    let _ = writeln!(
        o,
        "  the coordinator: {} (a record of every chunk, and the references to the requests of the two largest adjacent layers, or to the runs and their frames of two)",
        human::bytes(m.coordinator_bytes)
    );
    if !p.fits {
        let _ = writeln!(
            o,
            "warning: a {:.0} GiB worker is too small for {} slots of the largest task; give it at least {} or fewer slots (at least {} for one)",
            c.worker_memory_bytes as f64 / GIB,
            c.slots,
            human::bytes(m.needed_bytes),
            human::bytes(m.minimum_bytes)
        );
    }
}

/// The store's range over its values' assumptions, where they differ.
fn write_store_range(o: &mut String, r: &StoreRange) {
    if (r.final_low_bytes, r.peak_low_bytes) == (r.final_high_bytes, r.peak_high_bytes) {
        return;
    }
    let _ = writeln!(
        o,
        "store, range: final {} to {}, peak {} to {}; low: {}; high: {}",
        human::bytes(r.final_low_bytes),
        human::bytes(r.final_high_bytes),
        human::bytes(r.peak_low_bytes),
        human::bytes(r.peak_high_bytes),
        r.low.assumes,
        r.high.assumes
    );
}

/// The store, final and at its peak, its requests, and the duration.
fn write_store(o: &mut String, p: &Plan) {
    let s = &p.store;
    let _ = writeln!(
        o,
        "\nstore, final: {} (states {}, values {}{}, policy {}, records {}; {:.2}% of values exactly 0 or 1, {})",
        human::bytes(s.total_bytes),
        human::bytes(s.states_bytes),
        human::bytes(s.values_bytes),
        match p.cluster.recompute_values {
            true => " of two layers in five",
            false => "",
        },
        human::bytes(s.policy_bytes),
        human::bytes(s.records_bytes),
        100.0 * s.exact_value_share,
        if s.exact_value_share_measured {
            "measured"
        } else {
            "assumed"
        }
    );
    write_store_range(o, &s.range);
    let k = &s.peak.bytes;
    let _ = writeln!(
        o,
        "store, peak: {} after the {} of layer {} ({} pass): states {}, runs {}, requests {}, responses {}, values {}, policy {}, records {}",
        human::bytes(s.peak_bytes),
        s.peak.stage,
        s.peak.sum,
        if s.peak.phase == "enumerate" {
            "forward"
        } else {
            "backward"
        },
        human::bytes(k.states),
        human::bytes(k.runs),
        human::bytes(k.requests),
        human::bytes(k.responses),
        human::bytes(k.values),
        human::bytes(k.policy),
        human::bytes(k.records)
    );
    let r = &p.store_requests;
    let _ = writeln!(
        o,
        "store requests: {} (enumerate {}, solve {}; {} chunks), about ${:.2} at S3 list prices",
        r.total, r.enumerate.total, r.solve.total, r.chunks, r.price_usd
    );
    let d = &p.duration;
    let _ = writeln!(
        o,
        "duration: {} (at the measured rates: enumerate {}, solve {}, total {}, of which stages waiting on their largest task {})",
        duration_range(p.duration_range),
        human::duration(d.enumerate_seconds),
        human::duration(d.solve_seconds),
        human::duration(d.total_seconds),
        human::duration(d.small_layer_seconds)
    );
    let c = &p.cost;
    let _ = writeln!(
        o,
        "cost: {} (machines {}, store {}, requests ${:.2}); then {} a month to keep the solved store",
        usd_range(c.total_usd),
        usd_range(c.machines_usd),
        usd_range(c.store_usd),
        c.requests_usd,
        usd_range(c.keep_usd_a_month)
    );
    if let Some(h) = &p.chunk_size_hint {
        let _ = writeln!(
            o,
            "hint: the store requests cost more than the machines; --chunk-size {} makes {} requests (${:.2}) and needs workers of {} with these slots (at least {} with one)",
            h.chunk_size,
            h.requests,
            h.requests_usd,
            human::bytes(h.worker_memory_bytes),
            human::bytes(h.least_worker_memory_bytes)
        );
    }
}

/// `1 worker`, `8 workers`.
fn workers(n: u32) -> String {
    match n {
        1 => "1 worker".into(),
        n => format!("{n} workers"),
    }
}

/// A duration range, `9 min to 1.2 h`, or one figure where both ends print
/// the same.
fn duration_range(s: Span) -> String {
    let (low, high) = (human::duration(s.low), human::duration(s.high));
    if low == high {
        low
    } else {
        format!("{low} to {high}")
    }
}

/// A range of US dollars, `$12 to $40`, or one figure where both ends
/// print the same.
fn usd_range(s: Span) -> String {
    let usd = |x: f64| {
        if x < 100.0 {
            format!("${x:.2}")
        } else {
            format!("${x:.0}")
        }
    };
    let (low, high) = (usd(s.low), usd(s.high));
    if low == high {
        low
    } else {
        format!("{low} to {high}")
    }
}

/// The other cluster shapes, and the one recommended or why none is.
fn write_options(o: &mut String, p: &Plan) {
    let _ = writeln!(
        o,
        "\n{:>8} {:>8} {:>10} {:>20} {:>20}",
        "workers", "threads", "memory", "duration", "cost"
    );
    for (i, opt) in p.options.iter().enumerate() {
        let mut marks = Vec::new();
        if opt.asked {
            marks.push("asked");
        }
        if p.recommended == Some(i) {
            marks.push("recommended");
        }
        let _ = writeln!(
            o,
            "{:>8} {:>8} {:>6} GiB {:>20} {:>20}{}",
            opt.workers,
            opt.threads_per_worker,
            opt.worker_memory_gib,
            duration_range(opt.duration_range),
            usd_range(opt.cost.total_usd),
            match marks.is_empty() {
                true => String::new(),
                false => format!("  <- {}", marks.join(", ")),
            }
        );
    }
    match &p.infeasible {
        Some(why) => {
            let _ = writeln!(
                o,
                "\nNOT FEASIBLE: no cluster is recommended for {}: {why}.\n",
                p.game
            );
        }
        None => {
            let _ = writeln!(
                o,
                "(recommended: {}; {} slots a worker)\n",
                p.recommendation_rule, p.cluster.slots
            );
        }
    }
}

/// The extrapolation's warning and the notes on what the figures rest on.
fn write_notes(o: &mut String, p: &Plan) {
    if p.extrapolated {
        let _ = writeln!(
            o,
            "warning: the state counts of {} are extrapolated beyond every published figure (see the notes); every figure above is uncertain by the factor they give\n",
            p.game
        );
    }
    for n in &p.notes {
        let _ = writeln!(o, "note: {n}");
    }
}
