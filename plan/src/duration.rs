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

/// What a board's tasks do a second, measured end to end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rates {
    /// Forward pass (merge and enumerate), states a second a core.
    pub enumerate_per_core: f64,
    /// Backward pass (ask, solve and gather), states a second a core.
    pub solve_per_core: f64,
    /// The share of a forward task's work spread over its worker's
    /// threads (Amdahl's parallel fraction; the rest runs on one thread).
    pub enumerate_parallel: f64,
    /// The same for a backward task.
    pub solve_parallel: f64,
    /// The runs they were measured on, for the plan's notes.
    pub source: &'static str,
}

/// 4x4 games. Rates: 4x4 to 32 end to end on 2 threads, `--memory 2`
/// (1,566,798,892 states in 451.1 s forward and 610.7 s backward), layers
/// of up to 31 chunks that keep both threads busy. Parallel shares: 4x4 to
/// 16 at 1 and 2 threads (forward 8.86 and 7.15 s, backward 18.57 and
/// 11.87 s), whose states are all in layers of one chunk.
pub const FOUR_BY_FOUR: Rates = Rates {
    enumerate_per_core: 1.74e6,
    solve_per_core: 1.28e6,
    enumerate_parallel: 0.38,
    solve_parallel: 0.72,
    source: "4x4 to 32 at 2 threads; shares from 4x4 to 16 at 1 and 2",
};

/// 2x2 and 3x3 games, fitted on 3x3 to 1024 at 1 and 2 threads (forward
/// 16.87 and 13.4 to 17.4 s, backward 33.76 and 28.2 s, 25,179,012
/// states): chunks of about 16 thousand states, whose tasks a second
/// thread does not shorten (the largest part of each layer, 83% of its
/// states, takes as long on 2 threads as the whole layer on 1).
pub const SMALL_BOARDS: Rates = Rates {
    enumerate_per_core: 1.49e6,
    solve_per_core: 0.746e6,
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
}

/// Estimated wall time of a job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Duration {
    /// Forward pass.
    pub enumerate_seconds: f64,
    /// Backward pass.
    pub solve_seconds: f64,
    /// Of both: stages that wait on their largest task beyond their share
    /// of the cluster's rate.
    pub small_layer_seconds: f64,
    /// Both passes.
    pub total_seconds: f64,
}

/// How many times faster a task runs on `threads` than on one, when
/// `parallel` of its work spreads over them (Amdahl).
fn task_speedup(parallel: f64, threads: f64) -> f64 {
    1.0 / (parallel / threads + 1.0 - parallel)
}

/// The duration of a job over `parts` with `rates` on `cluster`: each
/// layer's pass takes its states over the cluster's cores, or its largest
/// task (a chunk of its largest part) on one worker, whichever is longer.
pub fn duration(parts: &[PartCount], rates: Rates, cluster: &Cluster) -> Duration {
    let cores = cluster.cores() as f64;
    let threads = cluster.threads_per_worker as f64;
    // Per layer: its states and its largest task's.
    let mut layers: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for p in parts {
        let layer = layers.entry(p.sum).or_default();
        layer.0 += p.states as f64;
        layer.1 = layer.1.max(p.states.min(cluster.chunk_size) as f64);
    }
    let (mut enumerate, mut solve, mut small) = (0.0, 0.0, 0.0);
    for &(states, largest_task) in layers.values() {
        for (rate, parallel, total) in [
            (
                rates.enumerate_per_core,
                rates.enumerate_parallel,
                &mut enumerate,
            ),
            (rates.solve_per_core, rates.solve_parallel, &mut solve),
        ] {
            let spread = states / (rate * cores);
            let one_task = largest_task / (rate * task_speedup(parallel, threads));
            *total += spread.max(one_task);
            small += (one_task - spread).max(0.0);
        }
    }
    Duration {
        enumerate_seconds: enumerate,
        solve_seconds: solve,
        small_layer_seconds: small,
        total_seconds: enumerate + solve,
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
        assert_eq!(two.total_seconds, one.total_seconds);
    }

    /// The runs the rates and shares were fitted on, against the model
    /// at 1 and 2 threads: (board, target, threads, forward and backward
    /// seconds measured). 4x4 to 16's rates come from 4x4 to 32, so its
    /// forward pass runs faster than planned.
    #[test]
    fn durations_follow_the_measured_runs() {
        const MEASURED: [(u8, u64, u32, f64, f64); 4] = [
            (4, 16, 1, 8.86, 18.57),
            (4, 16, 2, 7.15, 11.87),
            (3, 1024, 1, 16.87, 33.76),
            (3, 1024, 2, 15.38, 28.22),
        ];
        for (n, target, threads, forward, backward) in MEASURED {
            let parts = part_counts(&Game::new(n.into(), target, 1.0).unwrap());
            let d = duration(&parts, Rates::of_board(n), &cluster(1, threads));
            let within = |planned: f64, measured: f64, low: f64| {
                let ratio = measured / planned;
                assert!(
                    (low..=1.15).contains(&ratio),
                    "{n}x{n} to {target} at {threads} threads: {measured} s measured, \
                     {planned:.2} planned"
                );
            };
            within(
                d.enumerate_seconds,
                forward,
                if n == 4 { 0.6 } else { 0.85 },
            );
            within(d.solve_seconds, backward, 0.85);
        }
    }
}
