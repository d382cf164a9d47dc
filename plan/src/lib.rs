//! Capacity planning: what a solve2048 job will need before it runs
//! (`solve2048 plan`). Apart from the runtime: it depends on the core only,
//! and the coordinator takes from it only [`part_counts`] (the states it
//! expects of each part, for its progress).
//!
//! Everything here is arithmetic over a per-part table of state counts,
//! one module for each thing it models:
//!
//! - [`cluster`]: the cluster planned for.
//! - [`error`]: the settings a plan refuses.
//! - [`counts`]: states per part and layer, exact where known (small games
//!   enumerated, a measured 4x4 table, a store's layer indexes) and
//!   estimated by a model calibrated on published figures elsewhere.
//! - [`growth`]: 4x4 max tiles past the published figures, extrapolated,
//!   with the rule's backtest.
//! - [`tables`]: the exact and published counts the models start from.
//! - [`memory`]: what a worker needs, from the footprints by which workers
//!   admit tasks: bounded by the chunk size and the largest group, not by
//!   the layers.
//! - [`store_size`]: the store's peak and final size, simulated layer by
//!   layer with bytes a state of each object kind measured on real stores
//!   ([`store_calibration`]).
//! - [`requests`]: the store requests of a job and their price, from
//!   requests a chunk measured on real runs.
//! - [`duration`]: wall time on a cluster, from per-core rates measured end
//!   to end.
//!
//! [`plan`] puts them together for one cluster and a few others to compare.

#![deny(missing_docs)]

pub mod cluster;
pub mod counts;
mod data;
pub mod duration;
pub mod error;
pub mod growth;
pub mod memory;
pub mod requests;
pub mod store_calibration;
pub mod store_size;
pub mod tables;

use serde::Serialize;
use solve2048_core::task::LayerIndex;
use solve2048_core::Game;

pub use cluster::Cluster;
pub use counts::{
    estimate_profile, layers, override_with_store, part_counts, LayerCount, PartCount, Source,
};
pub use duration::{duration, Duration, Rates};
pub use error::{PlanError, Setting};
pub use memory::{memory, Memory};
pub use requests::{store_requests, StoreRequests};
pub use store_size::{store_size, KindBytes, StorePeak, StoreSize};

/// Worker memory sizes offered in the options table, in GiB.
const MEMORY_SIZES_GIB: [u64; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Worker counts offered in the options table.
const WORKER_COUNTS: [u32; 5] = [4, 8, 16, 32, 64];

/// The longest job a plan recommends a cluster for.
const LONGEST_RECOMMENDED_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// The largest store a plan recommends a cluster for (1 PiB).
const LARGEST_RECOMMENDED_STORE: u64 = 1 << 50;

/// The most memory a plan asks of one worker for its largest task (1 TiB,
/// about the largest machines most clouds rent by the hour).
const LARGEST_RECOMMENDED_WORKER: u64 = 1 << 40;

/// The largest bill for store requests a plan recommends a cluster for, in
/// US dollars at the list prices it quotes.
const LARGEST_RECOMMENDED_REQUEST_BILL: f64 = 100_000.0;

/// A cluster shape and how long the job takes on it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClusterOption {
    /// Workers.
    pub workers: u32,
    /// Threads of each.
    pub threads_per_worker: u32,
    /// The smallest standard memory size that holds the worker's needs.
    pub worker_memory_gib: u64,
    /// How long the job takes.
    pub duration: Duration,
}

/// The whole plan.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Game name, e.g. `4x4-to-64`.
    pub game: String,
    /// The board's shape, as `--board` takes it (`4x4`, `3x4`).
    pub board: String,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub columns: usize,
    /// Target tile.
    pub target: u64,
    /// The cluster planned for.
    pub cluster: Cluster,
    /// States in all.
    pub states: u64,
    /// How many of them are exact.
    pub exact_states: u64,
    /// Whether some counts are extrapolated past every published figure
    /// (max tiles of 64 and more on 4x4), not only fitted to them.
    pub extrapolated: bool,
    /// Parts in all.
    pub parts: usize,
    /// Every layer.
    pub layers: Vec<LayerCount>,
    /// The largest part.
    pub largest_part: Option<PartCount>,
    /// Memory a worker needs.
    pub memory: Memory,
    /// Whether the worker memory holds the worker's needs.
    pub fits: bool,
    /// Store size: peak and final, by kind.
    pub store: StoreSize,
    /// The largest the store gets during the job, transient objects
    /// included (`store.peak_bytes`).
    pub store_peak_bytes: u64,
    /// The solved store (`store.total_bytes`).
    pub store_final_bytes: u64,
    /// Store requests and their price.
    pub store_requests: StoreRequests,
    /// Duration on the cluster.
    pub duration: Duration,
    /// Other cluster shapes.
    pub options: Vec<ClusterOption>,
    /// The option recommended (index into `options`); none when no option
    /// is feasible.
    pub recommended: Option<usize>,
    /// Why no cluster is recommended, when none is.
    pub infeasible: Option<String>,
    /// What the estimates rest on.
    pub notes: Vec<String>,
}

/// What a plan's figures are for a variant of the standard game (another
/// chance of a 4, the score objective), None for the standard game.
fn variant_note(game: &Game, modelled: bool) -> Option<String> {
    let standard = Game::on(game.shape, 8, 1.0).ok()?;
    let four = game.fours_per_million != standard.fours_per_million;
    let score = game.objective != standard.objective;
    if !four && !score {
        return None;
    }
    let counted = match modelled {
        false => "counted exactly for this game",
        true => "modelled on the standard game's (a 4 at 0.1)",
    };
    let mut note = format!(
        "variant: the boards of {} are {counted}; the objective changes what a board is worth, \
         not which boards there are, and every chance of a 4 strictly between 0 and 1 reaches \
         the same boards",
        game.name()
    );
    if modelled && matches!(game.fours_per_million, 0 | 1_000_000) {
        note += "; with only 2s or only 4s fewer are reached, so the figures are upper bounds \
                 (estimated)";
    }
    Some(note)
}

/// Plan `game` on `cluster`, with the exact layers a store has indexed.
pub fn plan(game: &Game, cluster: &Cluster, stored: &[LayerIndex]) -> Result<Plan, PlanError> {
    cluster.validate()?;
    let parts = override_with_store(part_counts(game), stored);
    let layers = layers(&parts);
    let states: u64 = layers.iter().map(|l| l.states).sum();
    let exact_states = parts
        .iter()
        .filter(|p| p.source == Source::Exact)
        .map(|p| p.states)
        .sum();
    let largest_part = parts.iter().copied().max_by_key(|p| p.states);
    let memory = memory(&layers, largest_part.map_or(0, |p| p.states), cluster);
    let rates = Rates::of_board(store_calibration::model_board(game.shape));
    let options = cluster_options(&parts, rates, cluster, memory.needed_bytes);
    let store_requests = store_requests(&parts, cluster.chunk_size);
    let store = store_size(game, &layers, store_requests.chunks, cluster.chunk_size);
    let infeasible = infeasible(&options, &memory, &store_requests, &store, cluster);
    let recommended = recommended(&options, infeasible.is_some());
    // 4x4 past its published figures (max tile 32), 3x4 and 4x3 past their
    // measured table (max tile 32).
    let extrapolated = game.shape.cells() > 9 && game.target_exp > 6 && exact_states < states;
    let mut plan = Plan {
        game: game.name(),
        board: game.shape.to_string(),
        rows: game.shape.rows(),
        columns: game.shape.cols(),
        target: game.target(),
        cluster: *cluster,
        states,
        exact_states,
        extrapolated,
        parts: parts.iter().filter(|p| p.states > 0).count(),
        largest_part,
        fits: memory.needed_bytes <= cluster.worker_memory_bytes,
        memory,
        store_peak_bytes: store.peak_bytes,
        store_final_bytes: store.total_bytes,
        store,
        store_requests,
        duration: duration(&parts, rates, cluster),
        options,
        recommended,
        infeasible,
        layers,
        notes: Vec::new(),
    };
    plan.notes = basis_notes(game, &plan, stored.len());
    plan.notes.extend(model_notes(game, &plan, rates));
    Ok(plan)
}

/// Each offered worker count on `cluster`'s workers: its duration, and the
/// memory size that holds `needed_bytes`.
fn cluster_options(
    parts: &[PartCount],
    rates: Rates,
    cluster: &Cluster,
    needed_bytes: u64,
) -> Vec<ClusterOption> {
    WORKER_COUNTS
        .iter()
        .map(|&workers| {
            let c = Cluster {
                workers,
                ..*cluster
            };
            ClusterOption {
                workers,
                threads_per_worker: cluster.threads_per_worker,
                worker_memory_gib: gib_for(needed_bytes),
                duration: duration(parts, rates, &c),
            }
        })
        .collect()
}

/// Why no cluster is recommended: too long even on the most workers, too
/// large a task, too large a bill for requests, or too large a store.
fn infeasible(
    options: &[ClusterOption],
    memory: &Memory,
    store_requests: &StoreRequests,
    store: &StoreSize,
    cluster: &Cluster,
) -> Option<String> {
    let fastest = options
        .iter()
        .map(|o| o.duration.total_seconds)
        .fold(f64::INFINITY, f64::min);
    if fastest > LONGEST_RECOMMENDED_SECONDS {
        Some(format!(
            "no cluster offered here finishes within {} days: even {} workers of {} threads \
             would take {:.0} days",
            LONGEST_RECOMMENDED_SECONDS / 86400.0,
            WORKER_COUNTS[WORKER_COUNTS.len() - 1],
            cluster.threads_per_worker,
            fastest / 86400.0
        ))
    } else if memory.minimum_bytes > LARGEST_RECOMMENDED_WORKER {
        Some(format!(
            "its largest task needs a worker of {:.2} TiB (a merge opens every run of its group)",
            memory.minimum_bytes as f64 / (1u64 << 40) as f64
        ))
    } else if store_requests.price_usd > LARGEST_RECOMMENDED_REQUEST_BILL {
        Some(format!(
            "its {} store requests would cost about ${:.0} at S3 list prices (they grow with \
             the square of a layer's chunks: a larger --chunk-size makes fewer)",
            store_requests.total, store_requests.price_usd
        ))
    } else if store.total_bytes > LARGEST_RECOMMENDED_STORE {
        Some(format!(
            "its solved store would hold {:.1} PiB",
            store.total_bytes as f64 / (1u64 << 50) as f64
        ))
    } else {
        None
    }
}

/// The option recommended: none when infeasible, else the fewest workers
/// that finish within a day, else the fastest.
fn recommended(options: &[ClusterOption], infeasible: bool) -> Option<usize> {
    match infeasible {
        true => None,
        false => options
            .iter()
            .position(|o| o.duration.total_seconds <= 24.0 * 3600.0)
            .or(options.len().checked_sub(1)),
    }
}

/// The notes on what `p`'s counts rest on: the model, its extrapolation,
/// the variant, and the layers read from a store.
fn basis_notes(game: &Game, p: &Plan, stored_layers: usize) -> Vec<String> {
    let modelled = p.exact_states < p.states;
    let mut notes = Vec::new();
    if modelled {
        notes.push(counts::model_note(game));
    }
    if p.extrapolated && game.shape == solve2048_core::Shape::square(4) {
        notes.push(growth::extrapolation_note(game.target_exp));
    }
    if let Some(note) = variant_note(game, modelled) {
        notes.push(note);
    }
    if stored_layers > 0 {
        notes.push(format!(
            "exact: {stored_layers} layers read from the store's layer indexes"
        ));
    }
    notes
}

/// The notes on how `p`'s memory, duration, store and requests are modelled.
fn model_notes(game: &Game, p: &Plan, rates: Rates) -> Vec<String> {
    let cluster = &p.cluster;
    let memory_note = format!(
        "memory: each task holds at most about a chunk ({} states) of states, values or requests; \
         a merge holds {} chunks of run keys and, of each run of its group, up to two more \
         frames read and one decoded ({} keys a frame) (the \
         largest group modelled at {:.2} of the largest part, {} states, in runs of {:.2} of a \
         chunk); a worker runs as many tasks at once as its --memory holds",
        cluster.chunk_size,
        solve2048_core::task::MERGE_RUN_CHUNKS,
        solve2048_core::task::run_frame_keys(cluster.chunk_size),
        memory::LARGEST_GROUP_OF_PART,
        p.memory.largest_group_states,
        memory::RUN_KEYS_PER_RUN_OF_CHUNK,
    );
    let duration_note = format!(
        "duration: {:.2} M states/s/core enumerating and {:.2} solving (measured end to end on \
         {}), scaling with workers x threads (no task's work is repeated on another worker); a \
         stage lasts at least its largest task, a chunk of its layer's largest part on one \
         worker, of which {:.0}% (forward) and {:.0}% (backward) spread over its threads; store \
         bandwidth not modelled",
        rates.enumerate_per_core / 1e6,
        rates.solve_per_core / 1e6,
        rates.source,
        rates.enumerate_parallel * 100.0,
        rates.solve_parallel * 100.0,
    );
    vec![
        memory_note,
        duration_note,
        store_size::store_note(game, &p.layers, &p.store),
        requests::REQUESTS_NOTE.to_string(),
    ]
}

/// The smallest offered memory size, in GiB, that holds `bytes`.
fn gib_for(bytes: u64) -> u64 {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    MEMORY_SIZES_GIB
        .iter()
        .copied()
        .find(|&m| m as f64 >= gib)
        .unwrap_or_else(|| gib.ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(n: u32, target: u64) -> Game {
        Game::new(n, target, 1.0).unwrap()
    }

    fn cluster(memory_gib: u64) -> Cluster {
        Cluster {
            workers: 8,
            threads_per_worker: 16,
            worker_memory_bytes: memory_gib << 30,
            slots: 2,
            chunk_size: solve2048_core::task::DEFAULT_CHUNK_SIZE,
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        for c in [
            Cluster {
                workers: 0,
                ..cluster(64)
            },
            Cluster {
                threads_per_worker: 0,
                ..cluster(64)
            },
            Cluster {
                worker_memory_bytes: 0,
                ..cluster(64)
            },
            Cluster {
                slots: 0,
                ..cluster(64)
            },
        ] {
            assert!(matches!(
                plan(&game(3, 64), &c, &[]),
                Err(PlanError::TooSmall {
                    value: 0,
                    least: 1,
                    ..
                })
            ));
        }
    }

    /// 4x4 to 64 fits workers of 16 GiB (and of much less), 4x4 to 128 is
    /// planned with its extrapolation said, and a game no cluster could
    /// solve gets no recommendation.
    #[test]
    fn plans_for_the_big_games() {
        let p64 = plan(&game(4, 64), &cluster(16), &[]).unwrap();
        assert!(p64.fits, "{:?}", p64.memory);
        assert!(p64.memory.minimum_bytes < 8 << 30, "{:?}", p64.memory);
        assert!(!p64.extrapolated);
        assert!(p64.infeasible.is_none());
        assert!(p64.recommended.is_some());
        let p128 = plan(&game(4, 128), &cluster(64), &[]).unwrap();
        assert!(p128.extrapolated);
        assert!(p128.fits, "{:?}", p128.memory);
        assert!(p128.states > 10 * p64.states);
        assert!(p128
            .notes
            .iter()
            .any(|n| n.contains("extrapolated") && n.contains("max tile 64")));
        let p2048 = plan(&game(4, 2048), &cluster(64), &[]).unwrap();
        assert!(p2048.recommended.is_none());
        assert!(p2048.infeasible.is_some());
        // More workers, less time; a small layer is not shortened by them.
        let t = |p: &Plan, i: usize| p.options[i].duration.total_seconds;
        assert!(t(&p64, 0) > t(&p64, 3));
        let p32 = plan(&game(4, 32), &cluster(16), &[]).unwrap();
        assert!(p32.duration.small_layer_seconds > 0.0);
    }

    #[test]
    fn stored_layers_are_noted() {
        let stored = [solve2048_core::task::LayerIndex {
            sum: 4,
            parts: Vec::new(),
        }];
        let p = plan(&game(3, 64), &cluster(16), &stored).unwrap();
        assert!(p
            .notes
            .iter()
            .any(|n| n.contains("1 layers read from the store")));
    }
}
