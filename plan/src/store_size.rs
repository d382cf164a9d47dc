//! The store's peak and final size: the run simulated layer by layer, as
//! the driver writes and deletes each kind of object, with bytes a state
//! measured on the solved games ([`crate::store_calibration`]).
//!
//! The forward pass merges layer S (its `states/` are written), deletes the
//! runs it read (an enumerate writes a bundle for each of its two target
//! layers, [`NEXT_LAYER_RUNS_SHARE`] of its bytes for the next), then
//! enumerates S (its runs are written). The backward pass, from
//! the top down, at each layer S: solves S (`values/`, `policy/`); deletes
//! the requests of S (its solve read them beside their responses) and the
//! responses the gather of S+4 wrote (they answered S+2 and S); lets the
//! chunks of S-4 ask (`requests/`); gathers S (responses for S-2 and S-4). The
//! store is taken after each of these stages; the peak is the largest,
//! the final what is left. Records (`commits/`, `layers/`) are counted whole
//! at every step: an upper figure. Every layer's values and policy take the
//! game's bytes a state (measured a game, not a layer: 3x3 to 1024's layers
//! range from none to 87% exact): the same final values, only their growth
//! over the backward pass is approximate. Where the values were not
//! measured, the store is a range: the walk is made with the low and the
//! high figure of the value model ([`value_model`]), and each says what it
//! assumes.

use std::collections::BTreeMap;

use serde::Serialize;
use solve2048_core::task::values_recomputed;
use solve2048_core::Game;

use crate::cluster::Cluster;
use crate::counts::LayerCount;
use crate::store_calibration::{
    layer_bytes, model_board, nearest, value_model, LayerBytes, MeasuredGame, ValueCase,
    NEXT_LAYER_RUNS_SHARE, RECORD_BYTES_PER_CHUNK, RECORD_BYTES_PER_LARGE_LAYER_STATE, VALUES_3X3,
    VALUES_4X4,
};

/// Bytes of each kind of object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KindBytes {
    /// `states/`.
    pub states: u64,
    /// `runs/` (forward pass).
    pub runs: u64,
    /// `requests/` (backward pass).
    pub requests: u64,
    /// `responses/` (backward pass).
    pub responses: u64,
    /// `values/`.
    pub values: u64,
    /// `policy/`.
    pub policy: u64,
    /// `commits/` and `layers/`.
    pub records: u64,
}

impl KindBytes {
    /// All kinds.
    pub fn total(&self) -> u64 {
        self.states
            + self.runs
            + self.requests
            + self.responses
            + self.values
            + self.policy
            + self.records
    }
}

/// When the store is largest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StorePeak {
    /// `enumerate` (forward) or `solve` (backward).
    pub phase: &'static str,
    /// The stage just done: `merge`, `enumerate`, `solve`, `ask` (at layer
    /// S, the asks of S-4, as the job's progress names them) or `gather`.
    pub stage: &'static str,
    /// Its layer (tile sum).
    pub sum: u32,
    /// The store then, by kind.
    pub bytes: KindBytes,
}

/// The store's size over a job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreSize {
    /// `states/` of the solved store.
    pub states_bytes: u64,
    /// `values/` of the solved store.
    pub values_bytes: u64,
    /// `policy/` of the solved store.
    pub policy_bytes: u64,
    /// Records of the solved store.
    pub records_bytes: u64,
    /// The solved store (all of the above).
    pub total_bytes: u64,
    /// The largest the store gets, transient objects included.
    pub peak_bytes: u64,
    /// When, and of what.
    pub peak: StorePeak,
    /// The share of states whose value is exactly 0 or 1, as modelled (the
    /// low figure's).
    pub exact_value_share: f64,
    /// Whether that share was measured on this game (else assumed from the
    /// largest solved game of its board).
    pub exact_value_share_measured: bool,
    /// The solved store and its peak over what the values are assumed to
    /// be: the figures above are its low end.
    pub range: StoreRange,
}

/// The store's size as a range over the value model's assumptions (the
/// same low and high where its values were measured).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoreRange {
    /// The solved store under the low assumption ([`StoreSize::total_bytes`]).
    pub final_low_bytes: u64,
    /// The solved store under the high assumption.
    pub final_high_bytes: u64,
    /// The peak under the low assumption ([`StoreSize::peak_bytes`]).
    pub peak_low_bytes: u64,
    /// The peak under the high assumption.
    pub peak_high_bytes: u64,
    /// Values and policy bytes a state, and what the low figures assume.
    pub low: ValueCase,
    /// Likewise for the high figures.
    pub high: ValueCase,
}

/// The store of `game` over `layers`, `chunks` chunks of `cluster`'s chunk
/// size, keeping every layer's values or, with its `recompute_values`, two
/// layers' in five.
pub fn store_size(game: &Game, layers: &[LayerCount], chunks: u64, cluster: &Cluster) -> StoreSize {
    let model = value_model(game);
    let board = model_board(game.shape);
    let walk = |case: &ValueCase| simulate(board, layers, chunks, cluster, case);
    let (run, high) = (walk(&model.low), walk(&model.high));
    let f = run.last;
    StoreSize {
        states_bytes: f.states,
        values_bytes: f.values,
        policy_bytes: f.policy,
        records_bytes: f.records,
        total_bytes: f.total(),
        peak_bytes: run.peak.bytes.total(),
        peak: run.peak,
        exact_value_share: model.low.exact_share,
        exact_value_share_measured: model.share_measured,
        range: StoreRange {
            final_low_bytes: f.total(),
            final_high_bytes: high.last.total(),
            peak_low_bytes: run.peak.bytes.total(),
            peak_high_bytes: high.peak.bytes.total(),
            low: model.low,
            high: model.high,
        },
    }
}

/// What [`simulate`] found.
struct Run {
    peak: StorePeak,
    last: KindBytes,
}

/// Walk the job's stages (see the module doc), values and policy taking
/// `case`'s bytes a state, in chunks of `cluster`'s size; with its
/// `recompute_values`, the values of three layers in five deleted at the
/// end.
fn simulate(
    board: u8,
    layers: &[LayerCount],
    chunks: u64,
    cluster: &Cluster,
    case: &ValueCase,
) -> Run {
    let chunk_size = cluster.chunk_size.max(1);
    let n: BTreeMap<u32, u64> = layers
        .iter()
        .filter(|l| l.states > 0)
        .map(|l| (l.sum, l.states))
        .collect();
    let large: u64 = n.values().filter(|&&s| s > chunk_size).sum();
    let live = KindBytes {
        records: (chunks as f64 * RECORD_BYTES_PER_CHUNK
            + large as f64 * RECORD_BYTES_PER_LARGE_LAYER_STATE) as u64,
        ..KindBytes::default()
    };
    let last = n.keys().next_back().copied().unwrap_or(4);
    let mut walk = Walk {
        measured: nearest(board, n.values().sum()),
        n,
        chunk_size,
        live,
        peak: StorePeak {
            phase: "enumerate",
            stage: "merge",
            sum: 4,
            bytes: live,
        },
    };
    walk.forward(last);
    walk.live.runs = 0;
    walk.backward(last + 4, (case.values_per_state, case.policy_per_state));
    walk.live.responses = 0;
    walk.live.requests = 0;
    if cluster.recompute_values {
        // Deleted once every layer is solved: the peak stays.
        let recomputed = walk.n.keys().filter(|&&s| values_recomputed(s));
        let dropped: u64 = recomputed
            .map(|&s| walk.bytes(s, case.values_per_state))
            .sum();
        walk.live.values -= dropped;
    }
    Run {
        peak: walk.peak,
        last: walk.live,
    }
}

/// The store as [`simulate`] walks the job: the layers, what their objects
/// take, what the store holds and its peak so far.
struct Walk {
    /// States by layer (tile sum).
    n: BTreeMap<u32, u64>,
    /// The measured game whose bytes a state model this one.
    measured: &'static MeasuredGame,
    /// States a chunk.
    chunk_size: u64,
    /// What the store holds now.
    live: KindBytes,
    /// The largest it held so far.
    peak: StorePeak,
}

impl Walk {
    /// The states of layer `s`.
    fn states_of(&self, s: u32) -> u64 {
        self.n.get(&s).copied().unwrap_or(0)
    }

    /// Bytes a state of each of layer `s`'s objects.
    fn per(&self, s: u32) -> LayerBytes {
        layer_bytes(
            self.measured,
            self.states_of(s) as f64 / self.chunk_size as f64,
        )
    }

    /// Bytes of layer `s` at `b` bytes a state.
    fn bytes(&self, s: u32, b: f64) -> u64 {
        (self.states_of(s) as f64 * b) as u64
    }

    /// Take the store now as the peak if it is the largest yet.
    fn check(&mut self, phase: &'static str, stage: &'static str, sum: u32) {
        if self.live.total() > self.peak.bytes.total() {
            self.peak = StorePeak {
                phase,
                stage,
                sum,
                bytes: self.live,
            };
        }
    }

    /// The forward pass up to layer `last`: each layer merged, the runs it
    /// read deleted, then enumerated.
    fn forward(&mut self, last: u32) {
        // Runs by the layer they feed.
        let mut runs: BTreeMap<u32, u64> = BTreeMap::new();
        for s in (4..=last).step_by(2) {
            self.live.states += self.bytes(s, self.per(s).states);
            self.check("enumerate", "merge", s);
            self.live.runs -= runs.remove(&s).unwrap_or(0);
            let r = self.bytes(s, self.per(s).runs);
            let next = (r as f64 * NEXT_LAYER_RUNS_SHARE) as u64;
            *runs.entry(s + 2).or_default() += next;
            *runs.entry(s + 4).or_default() += r - next;
            self.live.runs += r;
            self.check("enumerate", "enumerate", s);
        }
    }

    /// The backward pass from layer `top` down, values and policy taking
    /// `(values, policy)` bytes a state: each layer solved, the requests
    /// and responses it read deleted, the asks of the layer four below, and
    /// its gather.
    fn backward(&mut self, top: u32, (values, policy): (f64, f64)) {
        let mut requests: BTreeMap<u32, u64> = BTreeMap::new();
        let mut responses: BTreeMap<u32, u64> = BTreeMap::new();
        for s in (4..=top).rev().step_by(2) {
            self.live.values += self.bytes(s, values);
            self.live.policy += self.bytes(s, policy);
            self.check("solve", "solve", s);
            self.live.requests -= requests.remove(&s).unwrap_or(0);
            self.live.responses -= responses.remove(&(s + 4)).unwrap_or(0);
            let asking = if s == top {
                vec![s - 2, s - 4]
            } else {
                vec![s - 4]
            };
            for l in asking.into_iter().filter(|&l| l >= 4) {
                let q = self.bytes(l, self.per(l).requests);
                requests.insert(l, q);
                self.live.requests += q;
                self.check("solve", "ask", s);
            }
            let answered: u64 = [s.saturating_sub(2), s.saturating_sub(4)]
                .into_iter()
                .filter(|&l| l >= 4)
                .map(|l| self.bytes(l, self.per(l).responses) / 2)
                .sum();
            if answered > 0 {
                responses.insert(s, answered);
                self.live.responses += answered;
                self.check("solve", "gather", s);
            }
        }
    }
}

/// What the store size rests on, for `game`.
pub fn store_note(game: &Game, layers: &[LayerCount], store: &StoreSize) -> String {
    let measured = nearest(
        model_board(game.shape),
        layers.iter().map(|l| l.states).sum(),
    );
    let r = &store.range;
    let values = if r.low == r.high {
        format!(
            "{:.3} bytes a state of values and {:.3} of policy, {}",
            r.low.values_per_state, r.low.policy_per_state, r.low.assumes
        )
    } else {
        format!(
            "a RANGE, as its values are not measured: low {:.3e} bytes solved ({:.3e} at the \
             peak) with {:.3} bytes a state of values, ASSUMING {}; high {:.3e} ({:.3e}) with \
             {:.3}, ASSUMING {}",
            r.final_low_bytes as f64,
            r.peak_low_bytes as f64,
            r.low.values_per_state,
            r.low.assumes,
            r.final_high_bytes as f64,
            r.peak_high_bytes as f64,
            r.high.values_per_state,
            r.high.assumes,
        )
    };
    format!(
        "store: peak and final simulated layer by layer as the driver writes and deletes each \
         kind (states, runs, requests, responses, values, policy, records), with bytes a state \
         by chunks a layer measured on {m}x{m} to {t} ({ms} states; the measured game of the board \
         nearest in states, of 4x4 to 16 and 32 and 3x3 to 1024; zstd level 3; a layer larger \
         than the largest measured taken at its bytes a state, so the transients of larger layers \
         may be low); values and policy (chunk format 5: values coded by afterstate) {values}; \
         an exact value takes {:.4} bytes on 4x4, a varied one {:.2} (3x3 to 1024); object \
         bytes, without a local store's folder entries",
        VALUES_4X4.exact,
        VALUES_3X3.varied,
        m = measured.board,
        t = measured.target,
        ms = measured.states,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::Source;

    fn layer(sum: u32, states: u64) -> LayerCount {
        LayerCount {
            sum,
            parts: 1,
            states,
            source: Source::Exact,
        }
    }

    /// A cluster of chunks of 2^22 states, keeping every value or not.
    fn chunks(recompute_values: bool) -> Cluster {
        Cluster {
            workers: 1,
            threads_per_worker: 1,
            worker_memory_bytes: 1 << 30,
            slots: 1,
            chunk_size: 1 << 22,
            recompute_values,
        }
    }

    /// Transients are gone at the end; the peak comes while they are not.
    #[test]
    fn transients_are_freed_and_counted_at_the_peak() {
        let game = Game::new(4, 32, 1.0).unwrap();
        let layers: Vec<LayerCount> = (4..=40).step_by(2).map(|s| layer(s, 1_000_000)).collect();
        let s = store_size(&game, &layers, 21, &chunks(false));
        assert_eq!(
            s.total_bytes,
            s.states_bytes + s.values_bytes + s.policy_bytes + s.records_bytes
        );
        assert!(s.peak_bytes > s.total_bytes, "{s:?}");
        // The peak holds a pass's transients: runs forward, requests and
        // responses backward (then with every layer's states).
        let p = s.peak.bytes;
        if s.peak.phase == "enumerate" {
            assert!(p.runs > 0 && p.requests == 0 && p.responses == 0, "{p:?}");
        } else {
            assert!(p.requests > 0 && p.responses > 0 && p.runs == 0, "{p:?}");
            assert_eq!(p.states, s.states_bytes);
        }
        // At most a layer's runs and the share of another's that feeds two
        // layers up; two layers of requests, three of responses.
        let per = layer_bytes(nearest(4, 21_000_000), 1e6 / (1u64 << 22) as f64);
        let runs = 1e6 * per.runs;
        assert!(
            p.runs as f64 <= runs + runs * (1.0 - NEXT_LAYER_RUNS_SHARE) + 1.0,
            "{p:?}"
        );
        assert!(p.requests as f64 <= 2.0 * 1e6 * per.requests, "{p:?}");
        assert!(p.responses as f64 <= 3.0 * 1e6 * per.responses, "{p:?}");
    }

    /// Values follow the game's measured figures: 3x3 to 1024's take most
    /// of its store, 4x4 to 32's almost nothing; a game not measured gets a
    /// range whose ends say what they assume.
    #[test]
    fn values_follow_the_measured_figures_or_a_range() {
        let layers: Vec<LayerCount> = (4..=40).step_by(2).map(|s| layer(s, 1_000_000)).collect();
        let of = |n: u32, t: u64| {
            store_size(&Game::new(n, t, 1.0).unwrap(), &layers, 19, &chunks(false))
        };
        let (three, four) = (of(3, 1024), of(4, 32));
        assert!(three.values_bytes > 2 * three.states_bytes, "{three:?}");
        assert!(four.values_bytes * 100 < four.states_bytes, "{four:?}");
        for measured in [&three, &four] {
            assert!(measured.exact_value_share_measured);
            let r = &measured.range;
            assert_eq!(r.low, r.high);
            assert_eq!(r.final_low_bytes, r.final_high_bytes);
            assert_eq!(r.final_low_bytes, measured.total_bytes);
        }
        let unsolved = of(4, 128);
        assert!(!unsolved.exact_value_share_measured);
        let r = &unsolved.range;
        assert!(r.final_high_bytes > 4 * r.final_low_bytes, "{r:?}");
        assert!(r.peak_high_bytes >= r.final_high_bytes && r.peak_low_bytes == unsolved.peak_bytes);
        assert!(r.low.assumes.contains("4x4 to 32"), "{}", r.low.assumes);
        assert!(r.high.assumes.contains("3x3 to 1024"), "{}", r.high.assumes);
        // A score game not measured: from the measured one to every value new.
        let score = Game::new(3, 256, 1.0)
            .unwrap()
            .with_objective(solve2048_core::Objective::Score)
            .unwrap();
        let s = store_size(&score, &layers, 19, &chunks(false));
        assert!(s.range.final_high_bytes > s.range.final_low_bytes, "{s:?}");
        assert!(s.range.high.assumes.contains("new"), "{:?}", s.range.high);
    }

    /// With recomputed values the final store loses the values of three
    /// layers in five (not the start layers'), and the peak stays.
    #[test]
    fn recomputed_values_leave_the_final_store_not_the_peak() {
        let layers: Vec<LayerCount> = (4..=1002).step_by(2).map(|s| layer(s, 1_000_000)).collect();
        let game = Game::new(3, 1024, 1.0).unwrap();
        let (all, some) = (
            store_size(&game, &layers, 19, &chunks(false)),
            store_size(&game, &layers, 19, &chunks(true)),
        );
        assert_eq!(some.peak_bytes, all.peak_bytes);
        assert_eq!(some.states_bytes, all.states_bytes);
        let kept = some.values_bytes as f64 / all.values_bytes as f64;
        assert!((kept - 0.4).abs() < 0.01, "{kept}");
        assert_eq!(
            all.total_bytes - some.total_bytes,
            all.values_bytes - some.values_bytes
        );
    }
}
