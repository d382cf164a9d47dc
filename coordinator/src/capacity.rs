//! Capacity planning: what a job will need before it runs (`solve2048 plan`).
//!
//! Everything here is arithmetic over a per-part table of state counts:
//!
//! - **State counts.** Exact where they are known: every 2x2 and 3x3 game is
//!   enumerated in memory (seconds), 4x4 parts with a max tile of at most 8
//!   come from a measured table ([`FOUR_BY_FOUR_TO_16`]), and a store's layer
//!   indexes ([`override_with_store`]) replace anything else. The remaining 4x4
//!   parts (max tile 16 and above) are *estimated* by a model calibrated on
//!   published figures; see [`estimate_part`].
//! - **Memory of a worker**, from the code: the solve of layer S holds the
//!   value tables of layers S+2 and S+4 ([`ValueTable::bytes_for`]); it
//!   drops S+6 before loading S+2 and streams chunks into the table
//!   ([`Memory`]).
//! - **Store size**, from bytes per state measured on real stores.
//! - **Duration**, from per-core rates measured end to end, assuming
//!   near-linear scaling across workers and threads.

use std::collections::BTreeMap;

use serde::Serialize;
use solve2048_core::part::PartId;
use solve2048_core::table::{ValueTable, LOAD_IN_FLIGHT};
use solve2048_core::task::LayerIndex;
use solve2048_core::Game;

use crate::records::{CoordinatorError, Records};

/// Whether a count is known or modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Counted: enumerated, measured, or read from a store.
    Exact,
    /// From the model; see [`estimate_part`].
    Estimated,
}

impl Source {
    /// Exact only when both are.
    fn and(self, other: Source) -> Source {
        if self == Source::Exact && other == Source::Exact {
            Source::Exact
        } else {
            Source::Estimated
        }
    }

    /// The label printed in tables.
    pub fn label(self) -> &'static str {
        match self {
            Source::Exact => "exact",
            Source::Estimated => "estimated",
        }
    }
}

/// The non-terminal canonical states of one part.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PartCount {
    /// Tile sum.
    pub sum: u32,
    /// Exponent of the max tile.
    pub max_exp: u8,
    /// States.
    pub states: u64,
    /// Known or modelled.
    pub source: Source,
}

/// The states of one layer (tile sum).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LayerCount {
    /// Tile sum.
    pub sum: u32,
    /// Parts with at least one state.
    pub parts: usize,
    /// States.
    pub states: u64,
    /// `exact` when every part of the layer is.
    pub source: Source,
}

/// Exact part counts of 4x4 games for max tiles up to 8: (tile sum, max-tile
/// exponent, states). Every part of 4x4 to 16, so also every part with a max
/// tile of at most 8 of any 4x4 game (no state on the way to such a part
/// holds a larger tile, so the target does not change them). From a real
/// run: `solve2048 solve --board 4 --target 16 --json` (`parts`), 23,482,821
/// states in all, as published.
#[rustfmt::skip]
pub const FOUR_BY_FOUR_TO_16: &[(u32, u8, u64)] = &[
    (4, 1, 21), (6, 1, 35), (6, 2, 33), (8, 1, 25),
    (8, 2, 145), (10, 1, 6), (10, 2, 356), (10, 3, 24),
    (12, 2, 714), (12, 3, 124), (14, 2, 1_259), (14, 3, 400),
    (16, 2, 2_104), (16, 3, 1_059), (18, 2, 3_225), (18, 3, 2_468),
    (20, 2, 4_555), (20, 3, 5_330), (22, 2, 5_922), (22, 3, 10_656),
    (24, 2, 7_321), (24, 3, 19_763), (26, 2, 8_419), (26, 3, 34_297),
    (28, 2, 8_952), (28, 3, 56_357), (30, 2, 9_087), (30, 3, 87_525),
    (32, 2, 8_597), (32, 3, 130_380), (34, 2, 7_376), (34, 3, 187_499),
    (36, 2, 6_032), (36, 3, 260_597), (38, 2, 4_346), (38, 3, 351_688),
    (40, 2, 2_799), (40, 3, 461_966), (42, 2, 1_797), (42, 3, 589_857),
    (44, 2, 939), (44, 3, 734_897), (46, 2, 386), (46, 3, 892_705),
    (48, 2, 177), (48, 3, 1_056_030), (50, 2, 31), (50, 3, 1_218_391),
    (52, 3, 1_369_262), (54, 3, 1_495_187), (56, 3, 1_591_238), (58, 3, 1_647_634),
    (60, 3, 1_656_782), (62, 3, 1_617_354), (64, 3, 1_530_275), (66, 3, 1_398_860),
    (68, 3, 1_232_145), (70, 3, 1_041_329), (72, 3, 841_744), (74, 3, 646_406),
    (76, 3, 469_112), (78, 3, 319_526), (80, 3, 203_334), (82, 3, 119_573),
    (84, 3, 64_457), (86, 3, 31_408), (88, 3, 13_535), (90, 3, 5_070),
    (92, 3, 1_571), (94, 3, 318), (96, 3, 29),
];

/// Published totals of non-terminal 4x4 states by target (The Mathematics of
/// 2048; `tests/data/published.csv`), as (target exponent, states). The states with
/// max tile at most 2^(k-1) of any 4x4 game are exactly those of the game to
/// 2^k, so consecutive totals give the states of each max tile.
const FOUR_BY_FOUR_TOTALS: [(u8, u64); 3] =
    [(4, 23_482_821), (5, 1_566_798_892), (6, 40_652_843_433)];

/// Published largest parts of 4x4 games: (max-tile exponent, tile sum, states).
/// (100, 16) is the largest part of 4x4 to 32 (and reproduced exactly by this
/// program); (164, 32) the largest of 4x4 to 64.
const FOUR_BY_FOUR_PEAKS: [(u8, u32, u64); 2] = [(4, 100, 62_812_882), (5, 164, 856_386_976)];

/// The note printed with estimated counts.
pub const MODEL_NOTE: &str = "estimated: model calibrated on published totals \
     (4x4 to 16, 32, 64) and largest parts ((100, 16), (164, 32)); shape of each \
     max-tile profile taken from the exact max-tile-8 profile";

/// The exact part counts of a 2x2 or 3x3 game, by enumerating it in memory
/// with the same kernels a job runs (3x3 to 1024, 25 million states, takes
/// seconds). `None` for 4x4, which is too large.
pub fn enumerate_small(game: &Game) -> Option<Vec<PartCount>> {
    (game.n <= 3).then(|| enumerate_exact(game, |_, _| {}))
}

/// Every part of `game` by enumerating it in memory; `visit` sees each
/// part's states.
fn enumerate_exact(game: &Game, visit: impl FnMut(PartId, &[u64])) -> Vec<PartCount> {
    solve2048_core::in_memory::enumerate(game, visit)
        .into_iter()
        .map(|(part, states)| PartCount {
            sum: part.sum,
            max_exp: part.max_exp,
            states,
            source: Source::Exact,
        })
        .collect()
}

/// A measured max-tile profile of 4x4 as a template: (tile-sum offset from
/// its largest part, states relative to the largest part).
fn template(max_exp: u8) -> Vec<(f64, f64)> {
    let rows: Vec<(u32, u64)> = FOUR_BY_FOUR_TO_16
        .iter()
        .filter(|r| r.1 == max_exp)
        .map(|r| (r.0, r.2))
        .collect();
    let (peak_sum, peak) = rows.iter().copied().max_by_key(|r| r.1).unwrap_or((0, 1));
    rows.iter()
        .map(|&(s, n)| (s as f64 - peak_sum as f64, n as f64 / peak as f64))
        .collect()
}

/// The template at offset `x` (linear between its points, 0 outside).
fn template_at(t: &[(f64, f64)], x: f64) -> f64 {
    match t.windows(2).find(|w| w[0].0 <= x && x <= w[1].0) {
        Some(w) => {
            let f = (x - w[0].0) / (w[1].0 - w[0].0);
            w[0].1 + f * (w[1].1 - w[0].1)
        }
        None => 0.0,
    }
}

/// Calibration of one max tile: its total states, and its largest part.
#[derive(Clone, Copy, Debug)]
struct Calibration {
    total: u64,
    peak_sum: u32,
    peak_states: u64,
}

/// The published calibration of 4x4 max tile 2^k (k >= 4); beyond 32 it is
/// extrapolated geometrically (totals and largest parts grow by the 16-to-32
/// ratio each time, the largest part's tile sum moves 1.6 times further each
/// time), which is an order of magnitude at best.
fn calibration(k: u8) -> Calibration {
    let total = |i: usize| FOUR_BY_FOUR_TOTALS[i + 1].1 - FOUR_BY_FOUR_TOTALS[i].1;
    let known = [
        Calibration {
            total: total(0),
            peak_sum: FOUR_BY_FOUR_PEAKS[0].1,
            peak_states: FOUR_BY_FOUR_PEAKS[0].2,
        },
        Calibration {
            total: total(1),
            peak_sum: FOUR_BY_FOUR_PEAKS[1].1,
            peak_states: FOUR_BY_FOUR_PEAKS[1].2,
        },
    ];
    if k <= 5 {
        return known[(k - 4) as usize];
    }
    let steps = (k - 5) as i32;
    let grow = |a: u64, b: u64| b as f64 * (b as f64 / a as f64).powi(steps);
    // The peak moved 30, 40 and 64 from max tile 4 to 8, 16 and 32: about
    // 1.6 times further each time.
    let shift = (known[1].peak_sum - known[0].peak_sum) as f64;
    let moved: f64 = (1..=steps).map(|j| shift * 1.6f64.powi(j)).sum();
    Calibration {
        total: grow(known[0].total, known[1].total).min(u64::MAX as f64 / 4.0) as u64,
        peak_sum: (known[1].peak_sum + moved as u32).next_multiple_of(2),
        peak_states: grow(known[0].peak_states, known[1].peak_states).min(u64::MAX as f64 / 4.0)
            as u64,
    }
}

/// The modelled profile of 4x4 max tile 2^k (k >= 4): states by tile sum.
///
/// The model: the states of max tile 2^k over tile sum follow the shape of
/// the exact max-tile-8 profile, centred on the published largest part and
/// stretched along the tile sum until the profile holds the published total
/// of that max tile; its height is then scaled so the integer counts add up
/// to the total exactly (the largest part comes out within a fraction of a
/// percent of the published one). Below the largest part the stretch is cut
/// short where it would reach below tile sum 2^k + 2, the least that holds
/// a 2^k. The same construction predicts the exact max-tile-8 profile from
/// the max-tile-4 one within 3.2% (sum of absolute errors over the total;
/// tested in `model_predicts_max_8_from_max_4`).
pub fn estimate_profile(k: u8) -> BTreeMap<u32, u64> {
    stretch(&template(3), calibration(k), (1u32 << k) + 2)
}

/// `template` centred on `cal.peak_sum`, stretched to hold `cal.total`
/// states, with no part below `min_sum`.
fn stretch(t: &[(f64, f64)], cal: Calibration, min_sum: u32) -> BTreeMap<u32, u64> {
    let first = t.first().map_or(-1.0, |p| p.0).min(-1.0);
    let last = t.last().map_or(0.0, |p| p.0);
    let centre = cal.peak_sum as f64;
    let left_most = (centre - min_sum as f64) / -first;
    let profile = |w: f64| -> Vec<(u32, f64)> {
        let wl = w.min(left_most);
        let hi = (centre + last * w).ceil().max(0.0) as u32;
        (min_sum.next_multiple_of(2)..=hi)
            .step_by(2)
            .map(|s| {
                let d = s as f64 - centre;
                let x = if d < 0.0 { d / wl } else { d / w };
                (s, cal.peak_states as f64 * template_at(t, x))
            })
            .filter(|&(_, v)| v > 0.0)
            .collect()
    };
    let mass = |w: f64| profile(w).iter().map(|p| p.1).sum::<f64>();
    // The mass grows with the stretch: bisect.
    let (mut lo, mut hi) = (1e-3f64, 1e3f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if mass(mid) < cal.total as f64 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let points = profile(hi);
    let scale = cal.total as f64 / points.iter().map(|p| p.1).sum::<f64>().max(1.0);
    let mut out: BTreeMap<u32, u64> = points
        .iter()
        .map(|&(s, v)| (s, (v * scale).floor() as u64))
        .collect();
    // Give the rounding remainder to the largest part, so the total is exact.
    let short = cal.total.saturating_sub(out.values().sum::<u64>());
    if let Some(top) = out.values_mut().max() {
        *top += short;
    }
    out
}

/// The state counts of every part of `game`: exact for 2x2 and 3x3 (by
/// enumeration) and for 4x4 parts with max tile at most 8, estimated for the
/// other 4x4 parts ([`estimate_profile`]).
pub fn part_counts(game: &Game) -> Vec<PartCount> {
    if let Some(exact) = enumerate_small(game) {
        return exact;
    }
    let mut out: Vec<PartCount> = FOUR_BY_FOUR_TO_16
        .iter()
        .filter(|r| r.1 < game.target_exp)
        .map(|&(sum, max_exp, states)| PartCount {
            sum,
            max_exp,
            states,
            source: Source::Exact,
        })
        .collect();
    for k in 4..game.target_exp {
        for (sum, states) in estimate_profile(k) {
            out.push(PartCount {
                sum,
                max_exp: k,
                states,
                source: Source::Estimated,
            });
        }
    }
    out.sort_by_key(|p| (p.sum, p.max_exp));
    out
}

/// Replace the counts of every layer a store has indexed with its exact
/// counts (a layer index is written once all its parts are merged, so an
/// indexed layer is complete).
pub fn override_with_store(parts: Vec<PartCount>, stored: &[LayerIndex]) -> Vec<PartCount> {
    let indexed: std::collections::BTreeSet<u32> = stored.iter().map(|l| l.sum).collect();
    let mut out: Vec<PartCount> = parts
        .into_iter()
        .filter(|p| !indexed.contains(&p.sum))
        .collect();
    for layer in stored {
        for part in &layer.parts {
            out.push(PartCount {
                sum: layer.sum,
                max_exp: part.part.max_exp,
                states: part.chunks.iter().map(|c| c.count).sum(),
                source: Source::Exact,
            });
        }
    }
    out.sort_by_key(|p| (p.sum, p.max_exp));
    out
}

/// Layers from parts.
pub fn layers(parts: &[PartCount]) -> Vec<LayerCount> {
    let mut out: BTreeMap<u32, LayerCount> = BTreeMap::new();
    for p in parts.iter().filter(|p| p.states > 0) {
        let l = out.entry(p.sum).or_insert(LayerCount {
            sum: p.sum,
            parts: 0,
            states: 0,
            source: Source::Exact,
        });
        l.parts += 1;
        l.states += p.states;
        l.source = l.source.and(p.source);
    }
    out.into_values().collect()
}

/// The exact layers of `game` a store has indexed (empty when none yet).
/// Errors when the store holds another game (the discount does not change
/// the states, so it may differ) or no job at all.
pub async fn stored_layers(
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
    if (found.n, found.target_exp) != (game.n, game.target_exp) {
        return Err(CoordinatorError::ForeignJob {
            location: records.location().to_string(),
            found: found.name(),
            requested: game.name(),
        });
    }
    records.layer_indexes().await
}

/// The cluster a plan is for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cluster {
    /// Worker processes (machines).
    pub workers: u32,
    /// Kernel threads of each worker.
    pub threads_per_worker: u32,
    /// Memory of each worker, in bytes.
    pub worker_memory_bytes: u64,
    /// Tasks each worker runs at once (`worker --slots`).
    pub slots: u32,
    /// Largest number of states in one chunk (`--chunk-size`).
    pub chunk_size: u64,
}

impl Cluster {
    /// Reject settings no cluster can have.
    pub fn validate(&self) -> Result<(), CoordinatorError> {
        let bad = |setting: &str, reason: &str| {
            Err(CoordinatorError::BadSetting {
                setting: setting.to_string(),
                reason: reason.to_string(),
            })
        };
        if self.workers == 0 {
            return bad("--workers", "must be at least 1");
        }
        if self.threads_per_worker == 0 {
            return bad("--threads-per-worker", "must be at least 1");
        }
        if self.worker_memory_bytes == 0 {
            return bad("--worker-memory", "must be more than 0 GiB");
        }
        if self.slots == 0 {
            return bad("--slots", "must be at least 1");
        }
        if self.chunk_size == 0 {
            return bad("--chunk-size", "must be at least 1");
        }
        Ok(())
    }

    /// Cores in all.
    pub fn cores(&self) -> u64 {
        self.workers as u64 * self.threads_per_worker as u64
    }
}

/// Bytes a worker's largest step holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// Peak of the solve: the layer whose solve stage begins it.
    pub solve_peak_sum: u32,
    /// Peak bytes of the solve: the tables of S+2 and S+4, the chunks read
    /// ahead while S+2's table is built, and one chunk's working set per
    /// slot.
    pub solve_peak_bytes: u64,
    /// The steady part of it: the tables of S+2 and S+4 that every solve task
    /// of layer S looks successors up in.
    pub solve_tables_bytes: u64,
    /// Peak bytes of the forward pass: the larger of an enumerate and a merge
    /// task, times the slots.
    pub enumerate_peak_bytes: u64,
    /// The largest of the two.
    pub peak_bytes: u64,
    /// What to provision: the peak times [`MEMORY_HEADROOM`].
    pub needed_bytes: u64,
}

/// Bytes per table slot pair in the planner's accounting: the value table of
/// a layer, [`ValueTable::bytes_for`] (16-byte slots, 1.5 per state).
fn table_bytes(states: u64) -> u64 {
    ValueTable::bytes_for(states as usize)
}

/// Bytes per state of the chunks read ahead while a layer's table is built:
/// states (u64) and values (f64) of [`LOAD_IN_FLIGHT`] chunks
/// (`worker/src/exec.rs`, `load_layer`, which inserts each chunk as it
/// arrives).
const LOAD_BYTES_PER_STATE: u64 = 16;

/// Bytes per state of a solve task's working set: its states (8), the
/// kernel's (value, action) results (16), the values (8) and actions (1), the
/// encoded outputs (at most about 9), and the kernel's move values (4 x 8)
/// and sorted (afterstate, move) pairs (at most 4 x 16; `core::kernel::solve`
/// on large tables).
const SOLVE_TASK_BYTES_PER_STATE: u64 = 138;

/// Raw successors an enumerate task emits per source state before
/// deduplication, on 4x4: measured by the ignored test
/// `measure_raw_successors` over all 23,482,821 states of 4x4 to 16 (mean
/// 19.88, most 116 of at most 120; 14.55 on its largest layer).
const RAW_SUCCESSORS_PER_STATE: u64 = 20;

/// Bytes per source state of an enumerate task: the chunk's states (8) and
/// its raw successors (8 each), counted twice for the slack of growing
/// vectors (the hash-group buckets it sorts in place).
fn enumerate_task_bytes(chunk: u64, n: u8) -> u64 {
    let raw = if n == 4 {
        RAW_SUCCESSORS_PER_STATE
    } else {
        // At most 4 moves times 2 tiles times the empty cells.
        4 * 2 * (n as u64 * n as u64 - 1)
    };
    chunk * (8 + 2 * 8 * raw)
}

/// Bytes of a merge task: its group holds up to [`LARGEST_GROUP_CHUNKS`]
/// times a chunk of states. The merge keeps its runs compressed
/// ([`MERGE_KEYS_PER_STATE`] keys a state, [`RUN_BYTES_PER_KEY`] bytes a key)
/// and decodes them as it reads them (`core::kernel::merge`); its output
/// takes 8 bytes a state, and as much again of slack while it grows.
fn merge_task_bytes(chunk: u64) -> u64 {
    let per_state = MERGE_KEYS_PER_STATE * RUN_BYTES_PER_KEY + 16.0;
    (chunk as f64 * LARGEST_GROUP_CHUNKS * per_state) as u64
}

/// States of the largest merge group, in chunks. Groups hash a state's tiles
/// as a multiset (`core::part::group_of`), so a group holds whole tile
/// classes and some are much larger than a chunk: on 4x4 to 32 (chunk size
/// 4,194,304) the largest of its 827 groups held 15,988,907 states (3.8
/// chunks; the median group 0.91 M). Larger games have larger classes (4x4
/// to 64's largest part has about 4.4 M states a class, 4x4 to 32's 0.75 M),
/// so there this is an underestimate; the solve's tables still dominate the
/// peak.
const LARGEST_GROUP_CHUNKS: f64 = 3.8;

/// Run keys per state of a merge group: the largest group of 4x4 to 32 read
/// 88,306,208 keys from its runs for 15,988,907 states (5.5).
const MERGE_KEYS_PER_STATE: f64 = 5.6;

/// Bytes per key of a run (delta + varint, zstd level 1): 0.64 measured on
/// the runs of 4x4 to 32 up to layer 66; rounded up.
const RUN_BYTES_PER_KEY: f64 = 1.0;

/// Headroom over the modelled peak: the model gives 5.2 GiB for 4x4 to 32,
/// whose measured peak RSS was 6.37 GiB (README, "Measured"; the process
/// also held the coordinator, the async runtime and allocator slack).
pub const MEMORY_HEADROOM: f64 = 1.25;

/// The memory a worker of `cluster` needs for `layers` of `game`.
pub fn memory(layers: &[LayerCount], game: &Game, cluster: &Cluster) -> Memory {
    let n_of = |sum: u32| layers.iter().find(|l| l.sum == sum).map_or(0, |l| l.states);
    let chunk = cluster.chunk_size;
    let slots = cluster.slots as u64;
    let largest_layer = layers.iter().map(|l| l.states).max().unwrap_or(0);
    let solve_task = slots * chunk.min(largest_layer) * SOLVE_TASK_BYTES_PER_STATE;
    let (mut peak_sum, mut peak, mut tables) = (0, 0, 0);
    for l in layers {
        let s = l.sum;
        let loading = table_bytes(n_of(s + 2))
            + LOAD_IN_FLIGHT as u64 * LOAD_BYTES_PER_STATE * chunk.min(n_of(s + 2));
        let cached = table_bytes(n_of(s + 4));
        let bytes = loading + cached + solve_task;
        if bytes > peak {
            (peak_sum, peak) = (s, bytes);
        }
        tables = tables.max(table_bytes(n_of(s + 2)) + table_bytes(n_of(s + 4)));
    }
    let enum_chunk = chunk.min(largest_layer);
    let enumerate =
        slots * enumerate_task_bytes(enum_chunk, game.n).max(merge_task_bytes(enum_chunk));
    Memory {
        solve_peak_sum: peak_sum,
        solve_peak_bytes: peak,
        solve_tables_bytes: tables,
        enumerate_peak_bytes: enumerate,
        peak_bytes: peak.max(enumerate),
        needed_bytes: (peak.max(enumerate) as f64 * MEMORY_HEADROOM) as u64,
    }
}

/// Bytes on disk per state of `states/` objects (zstd level 3): measured on
/// `solve --board 4 --target 16 --chunk-size 100000 --store DIR`, 61,795,186
/// bytes for 23,482,821 states (2.63). With the default chunk size the same
/// game takes 1.44 bytes, but its parts then hardly split into groups; a
/// 4x4-to-64 part is split into hundreds of hash groups, which spreads each
/// chunk's states as thinly as the small chunks do here.
pub const STATES_BYTES_PER_STATE: f64 = 2.63;
/// Bytes on disk per state of `values/` objects: measured on `solve --board 3
/// --target 1024 --store DIR`, 76,344,044 bytes for 25,179,012 states (3.03).
/// 4x4 to 16 needs almost nothing (every value is 1), so it says nothing
/// about a game whose values vary; an f64 can never take more than 8.
pub const VALUES_BYTES_PER_STATE: f64 = 3.03;
/// Bytes on disk per state of `policy/` objects: measured on 3x3 to 1024 as
/// above, 6,276,524 bytes (0.25).
pub const POLICY_BYTES_PER_STATE: f64 = 0.25;

/// What the store size rests on.
pub const STORE_NOTE: &str = "store: 2.63 bytes/state of states (4x4 to 16, chunk size 100000), \
     3.03 of values and 0.25 of policy (3x3 to 1024), measured at zstd level 3; values could \
     take up to 8; transient runs (enumerate output awaiting its merge) not included";

/// The size of a solved store.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StoreSize {
    /// `states/` objects.
    pub states_bytes: u64,
    /// `values/` objects.
    pub values_bytes: u64,
    /// `policy/` objects.
    pub policy_bytes: u64,
    /// All three.
    pub total_bytes: u64,
}

/// The store size of a job with `states` states.
pub fn store_size(states: u64) -> StoreSize {
    let b = |per: f64| (states as f64 * per) as u64;
    let (s, v, p) = (
        b(STATES_BYTES_PER_STATE),
        b(VALUES_BYTES_PER_STATE),
        b(POLICY_BYTES_PER_STATE),
    );
    StoreSize {
        states_bytes: s,
        values_bytes: v,
        policy_bytes: p,
        total_bytes: s + v + p,
    }
}

/// Forward pass (merge and enumerate) rate, states per second per core:
/// measured end to end on 4x4 to 32 (README, "Measured": 1,566,798,892
/// states in 409.9 s on 2 threads, chunk size 4,194,304, groups by tiles).
pub const ENUMERATE_RATE_PER_CORE: f64 = 1.91e6;

/// Backward pass (solve) kernel rate, states per second per core, without
/// the table loads: 4x4 to 32's measured solve (508.8 s on 2 threads, 1.54 M
/// states/s/core end to end) less its 1,566,798,892 table inserts at
/// [`TABLE_INSERTS_PER_CORE`] on 2 threads (140 s), over 2 threads.
pub const SOLVE_RATE_PER_CORE: f64 = 2.12e6;

/// Value-table inserts per second per core when a worker loads a layer: a
/// worker builds each table on all its threads (lock-free inserts, see
/// `core/src/table.rs`). Measured by the ignored test `measure_inserts`:
/// 50,000,000 inserts into a 1.2 GB table on 2 threads in 4.48 s, the
/// allocation included (11.2 M/s). Reading and decompressing the layer come
/// on top and are not counted.
pub const TABLE_INSERTS_PER_CORE: f64 = 5.6e6;

/// Estimated wall time of a job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Duration {
    /// Forward pass.
    pub enumerate_seconds: f64,
    /// Backward pass: the solve kernels plus the table loads.
    pub solve_seconds: f64,
    /// Of the solve: building each layer's value table on every worker's
    /// threads, which more workers do not shorten (each builds every table).
    pub table_load_seconds: f64,
    /// Both passes.
    pub total_seconds: f64,
}

/// The duration of a job of `states` states on `cluster`: the measured
/// per-core rates times the cores, assuming near-linear scaling (no stage
/// tails, store bandwidth or memory-bandwidth limits), plus the table
/// builds of the solve, which every worker does in full.
pub fn duration(states: u64, cluster: &Cluster) -> Duration {
    let cores = cluster.cores() as f64;
    let enumerate = states as f64 / (ENUMERATE_RATE_PER_CORE * cores);
    let load = states as f64 / (TABLE_INSERTS_PER_CORE * cluster.threads_per_worker as f64);
    let solve = states as f64 / (SOLVE_RATE_PER_CORE * cores) + load;
    Duration {
        enumerate_seconds: enumerate,
        solve_seconds: solve,
        table_load_seconds: load,
        total_seconds: enumerate + solve,
    }
}

/// Worker memory sizes offered in the options table, in GiB.
const MEMORY_SIZES_GIB: [u64; 10] = [4, 8, 16, 32, 64, 96, 128, 192, 256, 512];

/// Worker counts offered in the options table.
const WORKER_COUNTS: [u32; 4] = [4, 8, 16, 32];

/// A cluster shape and how long the job takes on it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ClusterOption {
    /// Workers.
    pub workers: u32,
    /// Threads of each.
    pub threads_per_worker: u32,
    /// The smallest standard memory size that holds the worker's peak.
    pub worker_memory_gib: u64,
    /// How long the job takes.
    pub duration: Duration,
}

/// The whole plan.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Game name, e.g. `4x4-to-64`.
    pub game: String,
    /// Board side.
    pub board: u8,
    /// Target tile.
    pub target: u64,
    /// The cluster planned for.
    pub cluster: Cluster,
    /// States in all.
    pub states: u64,
    /// How many of them are exact.
    pub exact_states: u64,
    /// Parts in all.
    pub parts: usize,
    /// Every layer.
    pub layers: Vec<LayerCount>,
    /// The largest part.
    pub largest_part: Option<PartCount>,
    /// Memory a worker needs.
    pub memory: Memory,
    /// Whether the worker memory holds the peak with its headroom.
    pub fits: bool,
    /// Store size.
    pub store: StoreSize,
    /// Duration on the cluster.
    pub duration: Duration,
    /// Other cluster shapes.
    pub options: Vec<ClusterOption>,
    /// The option recommended (index into `options`).
    pub recommended: Option<usize>,
    /// What the estimates rest on.
    pub notes: Vec<String>,
}

/// Plan `game` on `cluster`, with the exact layers a store has indexed.
pub fn plan(
    game: &Game,
    cluster: &Cluster,
    stored: &[LayerIndex],
) -> Result<Plan, CoordinatorError> {
    cluster.validate()?;
    let parts = override_with_store(part_counts(game), stored);
    let layers = layers(&parts);
    let states = layers.iter().map(|l| l.states).sum();
    let exact_states = parts
        .iter()
        .filter(|p| p.source == Source::Exact)
        .map(|p| p.states)
        .sum();
    let memory = memory(&layers, game, cluster);
    let options: Vec<ClusterOption> = WORKER_COUNTS
        .iter()
        .map(|&workers| {
            let c = Cluster {
                workers,
                ..*cluster
            };
            ClusterOption {
                workers,
                threads_per_worker: cluster.threads_per_worker,
                worker_memory_gib: gib_for(memory.needed_bytes),
                duration: duration(states, &c),
            }
        })
        .collect();
    // The fewest workers that finish within a day; else the most.
    let recommended = options
        .iter()
        .position(|o| o.duration.total_seconds <= 24.0 * 3600.0)
        .or(options.len().checked_sub(1));
    let mut notes = Vec::new();
    if exact_states < states {
        notes.push(MODEL_NOTE.to_string());
    }
    if !stored.is_empty() {
        notes.push(format!(
            "exact: {} layers read from the store's layer indexes",
            stored.len()
        ));
    }
    notes.push(format!(
        "duration: {:.2} M states/s/core enumerating and {:.2} solving (measured on 4x4 to 32, 2 shared \
         cores), assuming near-linear scaling over workers x threads; each worker builds every layer's \
         table on its threads ({:.1} M inserts/s per thread)",
        ENUMERATE_RATE_PER_CORE / 1e6,
        SOLVE_RATE_PER_CORE / 1e6,
        TABLE_INSERTS_PER_CORE / 1e6
    ));
    notes.push(STORE_NOTE.to_string());
    Ok(Plan {
        game: game.name(),
        board: game.n,
        target: game.target(),
        cluster: *cluster,
        states,
        exact_states,
        parts: parts.iter().filter(|p| p.states > 0).count(),
        largest_part: parts.iter().copied().max_by_key(|p| p.states),
        fits: memory.needed_bytes <= cluster.worker_memory_bytes,
        memory,
        store: store_size(states),
        duration: duration(states, cluster),
        options,
        recommended,
        layers,
        notes,
    })
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
    use solve2048_core::part::ChunkId;
    use solve2048_core::task::{AttemptId, ChunkRef, PartIndex};

    fn game(n: u32, target: u64) -> Game {
        Game::new(n, target, 1.0).unwrap()
    }

    fn total(parts: &[PartCount]) -> u64 {
        parts.iter().map(|p| p.states).sum()
    }

    fn cluster() -> Cluster {
        Cluster {
            workers: 8,
            threads_per_worker: 16,
            worker_memory_bytes: 64 << 30,
            slots: 2,
            chunk_size: 1 << 20,
        }
    }

    #[test]
    fn measured_table_is_4x4_to_16() {
        let parts = part_counts(&game(4, 16));
        assert_eq!(total(&parts), 23_482_821);
        assert!(parts.iter().all(|p| p.source == Source::Exact));
        // 4x4 to 8: the parts with max tile at most 4.
        let to8 = part_counts(&game(4, 8));
        assert!(to8
            .iter()
            .all(|p| p.max_exp <= 2 && p.source == Source::Exact));
    }

    #[test]
    fn estimates_add_up_to_the_published_totals() {
        for (target, states, peak) in [
            (32, 1_566_798_892u64, (100, 4, 62_812_882u64)),
            (64, 40_652_843_433, (164, 5, 856_386_976)),
        ] {
            let parts = part_counts(&game(4, target));
            assert_eq!(total(&parts), states, "4x4 to {target}");
            let top = parts.iter().max_by_key(|p| p.states).unwrap();
            assert_eq!((top.sum, top.max_exp), (peak.0, peak.1), "4x4 to {target}");
            let off = (top.states as f64 / peak.2 as f64 - 1.0).abs();
            assert!(off < 0.05, "largest part {} vs {}", top.states, peak.2);
            assert_eq!(top.source, Source::Estimated);
            // Max tile 8 and below stays exact.
            assert!(parts
                .iter()
                .filter(|p| p.max_exp <= 3)
                .all(|p| p.source == Source::Exact));
            // No part below the smallest sum that can hold its max tile.
            assert!(parts
                .iter()
                .all(|p| p.sum >= (1 << p.max_exp) + 2 || p.max_exp <= 3));
        }
    }

    #[test]
    fn model_predicts_max_8_from_max_4() {
        let exact: BTreeMap<u32, u64> = FOUR_BY_FOUR_TO_16
            .iter()
            .filter(|r| r.1 == 3)
            .map(|r| (r.0, r.2))
            .collect();
        let (&peak_sum, &peak_states) = exact.iter().max_by_key(|e| e.1).unwrap();
        let total = exact.values().sum::<u64>();
        let cal = Calibration {
            total,
            peak_sum,
            peak_states,
        };
        let model = stretch(&template(2), cal, 10);
        assert_eq!(model.values().sum::<u64>(), total);
        let sums: std::collections::BTreeSet<u32> =
            exact.keys().chain(model.keys()).copied().collect();
        let error: u64 = sums
            .iter()
            .map(|s| {
                let (a, b) = (exact.get(s).copied(), model.get(s).copied());
                a.unwrap_or(0).abs_diff(b.unwrap_or(0))
            })
            .sum();
        let share = error as f64 / total as f64;
        assert!(share < 0.04, "off by {share}");
    }

    #[test]
    fn small_games_are_enumerated_exactly() {
        // tests/data/published.csv
        for (n, target, states) in [
            (2, 8, 15u64),
            (2, 16, 35),
            (2, 32, 57),
            (2, 64, 74),
            (3, 8, 1186),
            (3, 64, 594_046),
            (3, 256, 5_643_584),
        ] {
            let parts = part_counts(&game(n, target));
            assert_eq!(total(&parts), states, "{n}x{n} to {target}");
            assert!(layers(&parts).iter().all(|l| l.source == Source::Exact));
        }
    }

    fn index(sum: u32, parts: &[(u8, &[u64])]) -> LayerIndex {
        LayerIndex {
            sum,
            parts: parts
                .iter()
                .map(|&(max_exp, chunks)| {
                    let part = PartId { sum, max_exp };
                    PartIndex {
                        part,
                        groups: 1,
                        chunks: chunks
                            .iter()
                            .enumerate()
                            .map(|(i, &count)| ChunkRef {
                                id: ChunkId {
                                    part,
                                    group: 0,
                                    index: i as u32,
                                },
                                count,
                                checksum: 0,
                                attempt: AttemptId(1),
                            })
                            .collect(),
                        solved: Vec::new(),
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn stored_layers_override_estimates() {
        let g = game(4, 64);
        let stored = [
            index(164, &[(4, &[5, 6]), (5, &[1000])]),
            index(4, &[(1, &[2])]),
        ];
        let parts = override_with_store(part_counts(&g), &stored);
        let rows = layers(&parts);
        let at = |s: u32| rows.iter().find(|l| l.sum == s).copied().unwrap();
        assert_eq!(
            at(164),
            LayerCount {
                sum: 164,
                parts: 2,
                states: 1011,
                source: Source::Exact
            }
        );
        assert_eq!(at(4).states, 2);
        assert_eq!(at(166).source, Source::Estimated);
        let plan = plan(&g, &cluster(), &stored).unwrap();
        assert!(plan
            .notes
            .iter()
            .any(|n| n.contains("2 layers read from the store")));
    }

    #[test]
    fn memory_is_the_value_tables_the_worker_allocates() {
        let g = game(3, 64);
        let sizes = [
            (10u32, 500u64),
            (12, 7000),
            (14, 30_000),
            (16, 9000),
            (18, 100),
        ];
        let rows: Vec<LayerCount> = sizes
            .iter()
            .map(|&(sum, states)| LayerCount {
                sum,
                parts: 1,
                states,
                source: Source::Exact,
            })
            .collect();
        let c = Cluster {
            chunk_size: 1000,
            slots: 1,
            ..cluster()
        };
        let m = memory(&rows, &g, &c);
        let heap = |n: usize| ValueTable::with_capacity(n).heap_bytes();
        // Starting layer 12: tables of 14 and 16, four chunks (of 1000
        // states, 16 bytes each) read ahead while 14 loads, one solve task.
        let start =
            |load: usize, cached: usize| heap(load) + 4 * 16 * 1000 + heap(cached) + 1000 * 138;
        let want = start(7000, 30_000).max(start(30_000, 9000));
        assert_eq!(m.solve_peak_bytes, want);
        assert_eq!(m.solve_peak_sum, 12);
        assert_eq!(m.solve_tables_bytes, heap(30_000) + heap(9000));
    }

    #[test]
    fn bad_settings_are_refused() {
        for c in [
            Cluster {
                workers: 0,
                ..cluster()
            },
            Cluster {
                threads_per_worker: 0,
                ..cluster()
            },
            Cluster {
                worker_memory_bytes: 0,
                ..cluster()
            },
        ] {
            assert!(matches!(
                plan(&game(3, 64), &c, &[]),
                Err(CoordinatorError::BadSetting { .. })
            ));
        }
    }

    #[test]
    fn four_by_four_to_64_does_not_fit_32_gib() {
        let small = Cluster {
            worker_memory_bytes: 32 << 30,
            ..cluster()
        };
        let p = plan(&game(4, 64), &small, &[]).unwrap();
        assert_eq!(p.states, 40_652_843_433);
        assert!(p.memory.solve_peak_bytes > 32 << 30);
        // 4x4 to 32 on the measured 2 threads takes its measured solve time.
        let p32 = plan(
            &game(4, 32),
            &Cluster {
                workers: 1,
                threads_per_worker: 2,
                ..cluster()
            },
            &[],
        )
        .unwrap();
        assert!(
            (p32.duration.solve_seconds - 508.8).abs() < 10.0,
            "{:?}",
            p32.duration
        );
        assert!(!p.fits);
        let rec = &p.options[p.recommended.unwrap()];
        assert!(rec.worker_memory_gib << 30 >= p.memory.needed_bytes);
        // More cores, less time.
        assert!(p.options[0].duration.total_seconds > p.options[3].duration.total_seconds);
    }
}
