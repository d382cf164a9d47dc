//! How long a job takes on a cluster: per-core rates measured end to end,
//! times the cores a layer can keep busy.
//!
//! No work is replicated: every task reads one chunk, one group's runs or
//! one slice of a group's values and the requests addressed to it, whatever
//! the number of workers. So each layer's stages take its states over the
//! cluster's rate, except that a stage cannot end before its largest task:
//! a chunk of the layer's largest part on one worker's threads, of which a
//! task keeps only a share busy ([`Rates`]). Layers of one or two parts (all
//! of 3x3, most of 4x4 to 16) are paced by that task.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cluster::Cluster;
use crate::counts::PartCount;
use crate::span::Span;

/// What a board's tasks do a second, measured end to end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Forward pass (merge and enumerate), states a second a core, in
    /// layers of more than `cached_layer_states` states.
    pub enumerate_per_core: f64,
    /// Backward pass (ask, solve and gather), states a second a core, in
    /// layers of more than `cached_layer_states` states.
    pub solve_per_core: f64,
    /// The forward pass in layers of at most `cached_layer_states`, whose
    /// tables stay in the processor's caches.
    pub enumerate_cached_per_core: f64,
    /// The backward pass in those layers.
    pub solve_cached_per_core: f64,
    /// The largest layer that runs at the cached rates.
    pub cached_layer_states: u64,
    /// The share of a forward task's work spread over its worker's
    /// threads (Amdahl's parallel fraction; the rest runs on one thread).
    pub enumerate_parallel: f64,
    /// The same for a backward task.
    pub solve_parallel: f64,
    /// The runs they were measured on, for the plan's notes.
    pub source: &'static str,
}

/// 4x4 games, fitted on d8d52ae's runs on the night of 2026-12-07 on the
/// 2-core development machine (release build), divided by the test's
/// `SITTING_SLOWER` (1.28: that night the machine ran 0329955, whose runs
/// of that morning the rates were fitted on before, 1.28 times slower).
/// Layers of over 2^21 states: 4x4 to 32 end to end on 2 threads,
/// `--memory 2` (1,566,798,892 states, 99.3% of them in such layers, in
/// 165.3 s forward and 387.7 s backward). Smaller layers and the parallel
/// shares: 4x4 to 16 (largest layer 1,656,782 states) at 1 and 2 threads,
/// two runs each (forward 2.81 and 2.61 s at 1, 1.74 and 1.70 at 2;
/// backward 5.27 and 4.92 s at 1, 3.09 and 2.97 at 2).
/// `cargo run --release -p solve2048-plan --example fit_rates` fits them.
pub const FOUR_BY_FOUR: Rates = Rates {
    enumerate_per_core: 6.06e6,
    solve_per_core: 2.58e6,
    enumerate_cached_per_core: 11.11e6,
    solve_cached_per_core: 5.90e6,
    cached_layer_states: 1 << 21,
    enumerate_parallel: 0.72,
    solve_parallel: 0.81,
    source: "4x4 to 32 at 2 threads; smaller layers and shares from 4x4 to 16 at 1 and 2",
};

/// 2x2 and 3x3 games, fitted on 3x3 to 1024 at 1 and 2 threads (each pass
/// between the two), two runs each, in the sitting and with the build of
/// [`FOUR_BY_FOUR`] (forward 5.86 and 5.16 s at 1, 4.51 and 4.63 at 2;
/// backward 12.92 and 12.66 s at 1, 10.30 and 11.32 at 2; 25,179,012
/// states): chunks of about 16 thousand states, whose tasks a second
/// thread barely shortens (the largest part of each layer, 83% of its
/// states, takes about as long on 2 threads as the whole layer on 1).
/// Its largest layer is 78,159 states: every 3x3 layer runs at one rate.
pub const SMALL_BOARDS: Rates = Rates {
    enumerate_per_core: 5.84e6,
    solve_per_core: 2.49e6,
    enumerate_cached_per_core: 5.84e6,
    solve_cached_per_core: 2.49e6,
    cached_layer_states: 0,
    enumerate_parallel: 0.0,
    solve_parallel: 0.0,
    source: "3x3 to 1024 at 1 and 2 threads",
};

impl Rates {
    /// The rates measured for boards of side `n`.
    pub fn of_board(n: u8) -> Rates {
        if n >= 4 {
            FOUR_BY_FOUR
        } else {
            SMALL_BOARDS
        }
    }

    /// The rates that model a board of `shape`
    /// ([`model_board`](crate::store_calibration::model_board)).
    pub fn of_shape(shape: solve2048_core::Shape) -> Rates {
        Rates::of_board(crate::store_calibration::model_board(shape))
    }

    /// States a second a core, forward and backward, in a layer of
    /// `layer_states` states.
    pub fn per_core(&self, layer_states: f64) -> (f64, f64) {
        if layer_states <= self.cached_layer_states as f64 {
            (self.enumerate_cached_per_core, self.solve_cached_per_core)
        } else {
            (self.enumerate_per_core, self.solve_per_core)
        }
    }
}

/// Estimated wall time of a job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Duration {
    /// Forward pass.
    pub enumerate_seconds: f64,
    /// Backward pass.
    pub solve_seconds: f64,
    /// Of both: how much longer stages take than their share of a cluster
    /// whose every slot is busy, for want of tasks or waiting on their
    /// largest.
    pub small_layer_seconds: f64,
    /// Both passes.
    pub total_seconds: f64,
}

/// How many times faster a task runs on `threads` than on one, when
/// `parallel` of its work spreads over them (Amdahl).
fn task_speedup(parallel: f64, threads: f64) -> f64 {
    1.0 / (parallel / threads + 1.0 - parallel)
}

/// The cores a worker of `threads` keeps busy running `tasks` tasks at
/// once, when `parallel` of each task's work spreads over the worker's
/// threads and the rest runs on one thread of its own: each task then takes
/// `1 - parallel + parallel * tasks / threads` of its time on one thread,
/// so `tasks` of them do `tasks` tasks' work in that time, at most
/// `threads` cores' worth.
pub fn cores_busy(parallel: f64, threads: f64, tasks: f64) -> f64 {
    (tasks / (1.0 - parallel + parallel * tasks / threads)).min(threads)
}

/// The share of a worker's threads its default slots keep busy.
pub const BUSY_SHARE: f64 = 0.9;

/// The least slots a worker runs (one task computes while another reads or
/// writes).
pub const LEAST_SLOTS: u32 = 2;

/// A worker's default `--slots` for `threads` kernel threads: the fewest
/// tasks at once that keep [`BUSY_SHARE`] of its threads busy
/// ([`cores_busy`]) in both passes at every board's measured shares, and at
/// least [`LEAST_SLOTS`]. The plan assumes the same unless told otherwise.
pub fn default_slots(threads: u32) -> u32 {
    let t = f64::from(threads.max(1));
    let shares = [FOUR_BY_FOUR, SMALL_BOARDS]
        .into_iter()
        .flat_map(|r| [r.enumerate_parallel, r.solve_parallel]);
    let mut slots = LEAST_SLOTS;
    for p in shares {
        let need = (1..=threads.max(1))
            .find(|&s| cores_busy(p, t, f64::from(s)) >= BUSY_SHARE * t)
            .unwrap_or(threads.max(1));
        slots = slots.max(need);
    }
    slots
}

/// The duration of a job over `parts` with `rates` on `cluster`. Each
/// layer's pass has a task for each chunk of each part; the cluster runs
/// them on as many workers as there are tasks, each with as many at once
/// as its slots and its share of the tasks allow, keeping [`cores_busy`]
/// of its threads busy; and it lasts at least its largest task (a chunk of
/// its largest part) alone on one worker.
pub fn duration(parts: &[PartCount], rates: Rates, cluster: &Cluster) -> Duration {
    let threads = f64::from(cluster.threads_per_worker);
    let workers = f64::from(cluster.workers);
    let chunk = cluster.chunk_size.max(1);
    // Per layer: its states, its tasks and its largest task's states.
    let mut layers: BTreeMap<u32, (f64, f64, f64)> = BTreeMap::new();
    for p in parts {
        let layer = layers.entry(p.sum).or_default();
        layer.0 += p.states as f64;
        layer.1 += p.states.div_ceil(chunk) as f64;
        layer.2 = layer.2.max(p.states.min(chunk) as f64);
    }
    let (mut enumerate, mut solve, mut small) = (0.0, 0.0, 0.0);
    for &(states, tasks, largest_task) in layers.values() {
        if tasks == 0.0 {
            continue;
        }
        let (enumerate_rate, solve_rate) = rates.per_core(states);
        let busy_workers = workers.min(tasks);
        let slots = f64::from(cluster.slots);
        let at_once = slots.min((tasks / workers).ceil());
        for (rate, parallel, total) in [
            (enumerate_rate, rates.enumerate_parallel, &mut enumerate),
            (solve_rate, rates.solve_parallel, &mut solve),
        ] {
            let cores = busy_workers * cores_busy(parallel, threads, at_once);
            let spread = states / (rate * cores);
            let one_task = largest_task / (rate * task_speedup(parallel, threads));
            let stage = spread.max(one_task);
            *total += stage;
            // Beyond the stage's share of a cluster busy to its slots.
            let share = states / (rate * workers * cores_busy(parallel, threads, slots));
            small += (stage - share).max(0.0);
        }
    }
    Duration {
        enumerate_seconds: enumerate,
        solve_seconds: solve,
        small_layer_seconds: small,
        total_seconds: enumerate + solve,
    }
}

/// How much slower than its rates a machine may run: this development
/// machine's times for the same build varied up to this factor between
/// days, and the rates were measured on it at 1 and 2 threads only.
pub const MACHINE_SPREAD: f64 = 3.0;

/// The range of a job's wall time: `total_seconds` at the least states and
/// the measured rates, up to the most states at rates [`MACHINE_SPREAD`]
/// times slower (the duration is linear in the states).
pub fn duration_range(d: &Duration, states: u64, range: Span) -> Span {
    let per_state = d.total_seconds / (states.max(1) as f64);
    Span {
        low: per_state * range.low,
        high: per_state * range.high * MACHINE_SPREAD,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::{part_counts, Source};
    use solve2048_core::Game;

    fn cluster(workers: u32, threads_per_worker: u32) -> Cluster {
        Cluster {
            workers,
            threads_per_worker,
            worker_memory_bytes: 16 << 30,
            slots: 2,
            chunk_size: 1 << 22,
            recompute_values: false,
        }
    }

    fn part(sum: u32, max_exp: u8, states: u64) -> PartCount {
        PartCount {
            sum,
            max_exp,
            states,
            source: Source::Exact,
        }
    }

    #[test]
    fn large_layers_scale_with_the_cores_and_small_ones_take_a_task() {
        let big = [part(100, 5, 1 << 36)];
        let (four, thirty_two) = (
            duration(&big, FOUR_BY_FOUR, &cluster(4, 16)),
            duration(&big, FOUR_BY_FOUR, &cluster(32, 16)),
        );
        let ratio = four.total_seconds / thirty_two.total_seconds;
        assert!((ratio - 8.0).abs() < 1e-9, "{ratio}");
        assert_eq!(four.small_layer_seconds, 0.0);
        // A layer of one chunk takes one task on one worker, whatever the
        // cluster, and its threads shorten only its parallel share.
        let small = [part(100, 5, 1 << 22)];
        let (a, b) = (
            duration(&small, FOUR_BY_FOUR, &cluster(4, 16)),
            duration(&small, FOUR_BY_FOUR, &cluster(32, 16)),
        );
        assert_eq!(a.total_seconds, b.total_seconds);
        let r = FOUR_BY_FOUR;
        let want = (1u64 << 22) as f64
            * ((r.enumerate_parallel / 16.0 + 1.0 - r.enumerate_parallel) / r.enumerate_per_core
                + (r.solve_parallel / 16.0 + 1.0 - r.solve_parallel) / r.solve_per_core);
        assert!((a.total_seconds - want).abs() < 1e-9);
        assert!(b.small_layer_seconds > 0.0);
        // The largest part paces its layer, not the layer's states.
        let two_parts = [part(100, 5, 1 << 20), part(100, 6, 1 << 10)];
        let one_part = [part(100, 5, 1 << 20)];
        let (two, one) = (
            duration(&two_parts, FOUR_BY_FOUR, &cluster(1, 2)),
            duration(&one_part, FOUR_BY_FOUR, &cluster(1, 2)),
        );
        assert!((two.total_seconds - one.total_seconds).abs() < 1e-9 * one.total_seconds);
    }

    /// A worker's default slots keep 90% of its threads busy in both
    /// passes, and no fewer would; at least two.
    #[test]
    fn default_slots_keep_the_threads_busy() {
        assert_eq!(cores_busy(0.0, 16.0, 4.0), 4.0);
        assert_eq!(cores_busy(0.5, 16.0, 64.0), 16.0);
        assert!((cores_busy(0.38, 16.0, 2.0) - 3.0).abs() < 0.01);
        assert_eq!((default_slots(1), default_slots(2)), (2, 2));
        for threads in [4, 8, 16, 32, 64] {
            let s = default_slots(threads);
            let t = f64::from(threads);
            for r in [FOUR_BY_FOUR, SMALL_BOARDS] {
                for p in [r.enumerate_parallel, r.solve_parallel] {
                    assert!(
                        cores_busy(p, t, f64::from(s)) >= BUSY_SHARE * t,
                        "{threads} {p}"
                    );
                }
            }
            // One fewer leaves some pass below the share.
            assert!([FOUR_BY_FOUR, SMALL_BOARDS].iter().any(|r| {
                [r.enumerate_parallel, r.solve_parallel]
                    .iter()
                    .any(|&p| cores_busy(p, t, f64::from(s - 1)) < BUSY_SHARE * t)
            }));
        }
    }

    /// How much slower the machine ran in the sitting the rates were
    /// fitted in than on the morning of 2026-12-07: 0329955 ran 1.20 to
    /// 1.35 times slower in each of its ten passes (five runs, forward and
    /// backward, interleaved with the fitted ones) than that morning,
    /// 1.28 times on geometric mean. The rates stand for the machine's
    /// faster days; [`MACHINE_SPREAD`] covers its slower ones.
    const SITTING_SLOWER: f64 = 1.28;

    /// The runs the rates and shares were fitted on, against the model:
    /// (board, target, threads, forward and backward seconds measured: the
    /// mean of two runs of the small games, one run of 4x4 to 32),
    /// d8d52ae's on the night of 2026-12-07 on the 2-core development
    /// machine, divided by [`SITTING_SLOWER`]. Each pass within 15%.
    #[test]
    fn durations_follow_the_measured_runs() {
        const MEASURED: [(u8, u64, u32, f64, f64); 5] = [
            (4, 16, 1, 2.7065, 5.0965),
            (4, 16, 2, 1.721, 3.031),
            (4, 32, 2, 165.31, 387.65),
            (3, 1024, 1, 5.511, 12.789),
            (3, 1024, 2, 4.573, 10.8085),
        ];
        for (n, target, threads, forward, backward) in MEASURED {
            let parts = part_counts(&Game::new(n.into(), target, 1.0).unwrap());
            let d = duration(&parts, Rates::of_board(n), &cluster(1, threads));
            let within = |planned: f64, measured: f64| {
                let ratio = measured / SITTING_SLOWER / planned;
                assert!(
                    (0.85..=1.15).contains(&ratio),
                    "{n}x{n} to {target} at {threads} threads: {measured} s measured, \
                     {planned:.2} planned"
                );
            };
            within(d.enumerate_seconds, forward);
            within(d.solve_seconds, backward);
        }
    }
}
