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
//!   to end and the share of each task its threads share.
//! - [`cost`]: what the machines, the store and its requests cost.
//! - [`span`]: a figure's range, where it is extrapolated.
//!
//! [`plan`] puts them together for one cluster and a few others to compare.

#![deny(missing_docs)]

pub mod cluster;
pub mod cost;
pub mod counts;
mod data;
pub mod duration;
pub mod error;
pub mod growth;
pub mod memory;
pub mod options;
pub mod requests;
pub mod span;
pub mod store_calibration;
pub mod store_size;
pub mod tables;

use serde::Serialize;
use solve2048_core::task::LayerIndex;
use solve2048_core::Game;

use options::{chunk_size_hint, cluster_options, gib_for, infeasible, recommended, Job};

pub use cluster::Cluster;
pub use cost::{cost, Cost, Prices, LIST_PRICES};
pub use counts::{
    estimate_profile, layers, override_with_store, part_counts, quick_part_counts, states_range,
    LayerCount, PartCount, Source,
};
pub use duration::{default_slots, duration, duration_range, Duration, Rates};
pub use error::{PlanError, Setting};
pub use memory::{memory, Memory};
pub use options::{ChunkSizeHint, ClusterOption, RECOMMENDATION_RULE};
pub use requests::{store_requests, StoreRequests};
pub use span::Span;
pub use store_size::{store_size, KindBytes, StorePeak, StoreSize};

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
    /// Their range: wider than `states` only where max tiles are
    /// extrapolated past every published or measured count.
    pub states_range: Span,
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
    /// Duration on the cluster, by the model at the measured rates.
    pub duration: Duration,
    /// Its range: the least states at the measured rates to the most
    /// states at [`duration::MACHINE_SPREAD`] times slower.
    pub duration_range: Span,
    /// What the job costs on the cluster.
    pub cost: Cost,
    /// A larger `--chunk-size`, when the requests would cost more than the
    /// machines.
    pub chunk_size_hint: Option<ChunkSizeHint>,
    /// Cluster shapes to compare: the worker counts offered and the one
    /// asked for, with the threads asked for.
    pub options: Vec<ClusterOption>,
    /// The option recommended by [`RECOMMENDATION_RULE`] (index into
    /// `options`); none when no option is feasible.
    pub recommended: Option<usize>,
    /// The rule it is recommended by.
    pub recommendation_rule: &'static str,
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

/// Plan `game` on `cluster`, with the exact layers a store has indexed,
/// its cost at `prices`.
pub fn plan(
    game: &Game,
    cluster: &Cluster,
    stored: &[LayerIndex],
    prices: Prices,
) -> Result<Plan, PlanError> {
    cluster.validate()?;
    let parts = override_with_store(part_counts(game), stored);
    let layers = layers(&parts);
    let states: u64 = layers.iter().map(|l| l.states).sum();
    let states_range = states_range(game, &parts);
    let exact_states = parts
        .iter()
        .filter(|p| p.source == Source::Exact)
        .map(|p| p.states)
        .sum();
    let largest_part = parts.iter().copied().max_by_key(|p| p.states);
    let memory = memory(&layers, largest_part.map_or(0, |p| p.states), cluster);
    let rates = Rates::of_shape(game.shape);
    let store_requests = store_requests(&parts, cluster.chunk_size);
    let store = store_size(game, &layers, store_requests.chunks, cluster);
    let job = Job {
        parts: &parts,
        states,
        states_range,
        rates,
        store: &store,
        requests_usd: store_requests.price_usd,
        prices,
    };
    let asked = job.option(cluster, gib_for(memory.needed_bytes), true);
    let options = cluster_options(&job, cluster, memory.needed_bytes);
    let infeasible = infeasible(&options, &memory, &store_requests, &store, cluster);
    let recommended = recommended(&options, infeasible.is_some());
    let chunk_size_hint = chunk_size_hint(&parts, &layers, largest_part, cluster, &asked);
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
        states_range,
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
        duration: asked.duration,
        duration_range: asked.duration_range,
        cost: asked.cost,
        chunk_size_hint,
        options,
        recommended,
        recommendation_rule: RECOMMENDATION_RULE,
        infeasible,
        layers,
        notes: Vec::new(),
    };
    plan.notes = basis_notes(game, &plan, stored.len());
    plan.notes.extend(model_notes(game, &plan, rates));
    Ok(plan)
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
    let t = f64::from(cluster.threads_per_worker);
    let slots = f64::from(cluster.slots);
    let mut rates_text = format!(
        "{:.2} M states/s/core enumerating and {:.2} solving",
        rates.enumerate_per_core / 1e6,
        rates.solve_per_core / 1e6
    );
    if rates.cached_layer_states > 0 {
        rates_text += &format!(
            " in layers of over {} states, {:.2} and {:.2} in smaller ones",
            rates.cached_layer_states,
            rates.enumerate_cached_per_core / 1e6,
            rates.solve_cached_per_core / 1e6
        );
    }
    let duration_note = format!(
        "duration: {rates_text} (measured end to end on {}); a task spreads {:.0}% (forward) and {:.0}% (backward) of its work over its \
         worker's threads and runs the rest on one, so a worker of {} threads running {} tasks \
         at once keeps {:.1} and {:.1} cores busy; a layer's tasks (a chunk of a part each) \
         spread over the workers, and a stage lasts at least its largest task; the range goes \
         from the least states at the measured rates to the most at {}x slower rates (this \
         machine's times for one build varied up to that factor between days, and the rates \
         were measured at 1 and 2 threads only); store bandwidth not modelled",
        rates.source,
        rates.enumerate_parallel * 100.0,
        rates.solve_parallel * 100.0,
        cluster.threads_per_worker,
        cluster.slots,
        duration::cores_busy(rates.enumerate_parallel, t, slots),
        duration::cores_busy(rates.solve_parallel, t, slots),
        duration::MACHINE_SPREAD,
    );
    let prices = &p.cost.prices;
    let source = if *prices == LIST_PRICES {
        format!("list prices: {}", cost::LIST_PRICES_SOURCE)
    } else {
        "prices given".to_string()
    };
    let cost_note = format!(
        "cost: the workers' cores at ${} a core-hour and the store at its peak at ${} a \
         GiB-month, for the duration range, plus the requests ({source})",
        prices.core_hour_usd, prices.gib_month_usd
    );
    vec![
        memory_note,
        duration_note,
        cost_note,
        store_size::store_note(game, &p.layers, &p.store),
        requests::REQUESTS_NOTE.to_string(),
    ]
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
            recompute_values: false,
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
                plan(&game(3, 64), &c, &[], LIST_PRICES),
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
        let p64 = plan(&game(4, 64), &cluster(16), &[], LIST_PRICES).unwrap();
        assert!(p64.fits, "{:?}", p64.memory);
        assert!(p64.memory.minimum_bytes < 8 << 30, "{:?}", p64.memory);
        assert!(!p64.extrapolated);
        assert!(p64.infeasible.is_none());
        assert!(p64.recommended.is_some());
        let p128 = plan(&game(4, 128), &cluster(64), &[], LIST_PRICES).unwrap();
        assert!(p128.extrapolated);
        assert!(p128.fits, "{:?}", p128.memory);
        assert!(p128.states > 10 * p64.states);
        assert!(p128
            .notes
            .iter()
            .any(|n| n.contains("extrapolated") && n.contains("max tile 64")));
        let p2048 = plan(&game(4, 2048), &cluster(64), &[], LIST_PRICES).unwrap();
        assert!(p2048.recommended.is_none());
        assert!(p2048.infeasible.is_some());
        // More workers, less time; a small layer is not shortened by them.
        let t = |p: &Plan, i: usize| p.options[i].duration.total_seconds;
        assert!(t(&p64, 0) > t(&p64, 3));
        let p32 = plan(&game(4, 32), &cluster(16), &[], LIST_PRICES).unwrap();
        assert!(p32.duration.small_layer_seconds > 0.0);
    }

    /// The recommendation is what [`RECOMMENDATION_RULE`] says, among the
    /// offered worker counts and the one asked for, which the table holds
    /// once and marks; the plan's own figures are the asked row's.
    #[test]
    fn the_recommendation_follows_its_rule() {
        let day = 24.0 * 3600.0;
        for (target, workers) in [(64, 1), (64, 3), (64, 8), (64, 100), (128, 5)] {
            let c = Cluster {
                workers,
                ..cluster(64)
            };
            let p = plan(&game(4, target), &c, &[], LIST_PRICES).unwrap();
            assert!(p.options.windows(2).all(|w| w[0].workers < w[1].workers));
            let asked: Vec<&ClusterOption> = p.options.iter().filter(|o| o.asked).collect();
            assert_eq!(asked.len(), 1);
            assert_eq!(asked[0].workers, workers);
            assert_eq!(
                (p.duration, p.duration_range, p.cost),
                (asked[0].duration, asked[0].duration_range, asked[0].cost)
            );
            let r = p.recommended.unwrap();
            assert!(
                p.options[r].duration_range.high <= day,
                "{target} {workers}"
            );
            assert!(p.options[..r].iter().all(|o| o.duration_range.high > day));
        }
        // None within a day: the fastest; none when infeasible.
        let mut options = plan(&game(4, 64), &cluster(64), &[], LIST_PRICES)
            .unwrap()
            .options;
        for (o, seconds) in options.iter_mut().zip([9.0, 5.0, 3.0, 4.0, 6.0, 7.0, 8.0]) {
            o.duration.total_seconds = seconds * day;
            o.duration_range.high = 2.0 * seconds * day;
        }
        assert_eq!(recommended(&options, false), Some(2));
        assert_eq!(recommended(&options, true), None);
    }

    /// Ranges where figures are extrapolated, one figure where they are
    /// not; a cost that follows the prices; the chunk-size hint where the
    /// requests cost more than the machines, and never else.
    #[test]
    fn ranges_costs_and_the_chunk_size_hint() {
        let p64 = plan(&game(4, 64), &cluster(64), &[], LIST_PRICES).unwrap();
        assert_eq!(p64.states_range, Span::exactly(p64.states as f64));
        let d = p64.duration_range;
        assert!((d.low - p64.duration.total_seconds).abs() < 1e-6);
        assert!((d.high / d.low - duration::MACHINE_SPREAD).abs() < 1e-9);
        let p128 = plan(&game(4, 128), &cluster(64), &[], LIST_PRICES).unwrap();
        let s = p128.states_range;
        assert!(
            s.low < p128.states as f64 && s.high > p128.states as f64,
            "{s:?}"
        );
        let hint = p128.chunk_size_hint.expect("a hint for 4x4 to 128");
        assert!(hint.chunk_size > cluster(64).chunk_size);
        assert!(hint.requests_usd < p128.cost.requests_usd);
        let double = Prices {
            core_hour_usd: 2.0 * LIST_PRICES.core_hour_usd,
            ..LIST_PRICES
        };
        let p = plan(&game(4, 64), &cluster(64), &[], double).unwrap();
        assert!((p.cost.machines_usd.high / p64.cost.machines_usd.high - 2.0).abs() < 1e-9);
        // 3x3 to 1024: small chunks, few requests, no hint.
        let p3 = plan(&game(3, 1024), &cluster(64), &[], LIST_PRICES).unwrap();
        assert!(p3.cost.requests_usd <= p3.cost.machines_usd.low || p3.chunk_size_hint.is_some());
    }

    #[test]
    fn stored_layers_are_noted() {
        let stored = [solve2048_core::task::LayerIndex {
            sum: 4,
            parts: Vec::new(),
        }];
        let p = plan(&game(3, 64), &cluster(16), &stored, LIST_PRICES).unwrap();
        assert!(p
            .notes
            .iter()
            .any(|n| n.contains("1 layers read from the store")));
    }
}
