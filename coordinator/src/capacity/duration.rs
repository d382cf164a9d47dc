//! How long a job takes on a cluster: per-core rates measured end to end,
//! times the cores a layer can keep busy.
//!
//! No work is replicated: every task reads one chunk, one group's runs or
//! one slice of a group's values and the requests addressed to it, whatever
//! the number of workers. So each layer's stages take its states over the
//! cluster's rate, except that a layer of fewer than a chunk a worker cannot
//! keep every worker busy: a stage takes at least its largest task, a chunk
//! on one worker's threads.

use serde::Serialize;

use super::counts::LayerCount;
use super::Cluster;

/// Forward pass (merge and enumerate) rate, states a second a core:
/// measured end to end on 4x4 to 32 (README, "Measured": 1,566,798,892
/// states in 451.1 s on 2 threads, `--memory 2`, 2026-11-24).
pub const ENUMERATE_RATE_PER_CORE: f64 = 1.74e6;

/// Backward pass (solve and gather) rate, states a second a core: measured
/// end to end on 4x4 to 32 (README, "Measured": 610.7 s in the same run).
pub const SOLVE_RATE_PER_CORE: f64 = 1.28e6;

/// Estimated wall time of a job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Duration {
    /// Forward pass.
    pub enumerate_seconds: f64,
    /// Backward pass.
    pub solve_seconds: f64,
    /// Of both: layers too small to keep every worker busy, beyond their
    /// share of the cluster's rate.
    pub small_layer_seconds: f64,
    /// Both passes.
    pub total_seconds: f64,
}

/// The duration of a job with `layers` on `cluster`.
pub fn duration(layers: &[LayerCount], cluster: &Cluster) -> Duration {
    let cores = cluster.cores() as f64;
    let threads = cluster.threads_per_worker as f64;
    let (mut enumerate, mut solve, mut small) = (0.0, 0.0, 0.0);
    for l in layers {
        let states = l.states as f64;
        let largest_task = l.states.min(cluster.chunk_size) as f64;
        for (rate, total) in [
            (ENUMERATE_RATE_PER_CORE, &mut enumerate),
            (SOLVE_RATE_PER_CORE, &mut solve),
        ] {
            let spread = states / (rate * cores);
            let one_task = largest_task / (rate * threads);
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
    use crate::capacity::counts::Source;

    fn cluster(workers: u32) -> Cluster {
        Cluster {
            workers,
            threads_per_worker: 16,
            worker_memory_bytes: 16 << 30,
            slots: 2,
            chunk_size: 1 << 22,
        }
    }

    #[test]
    fn large_layers_scale_with_the_cores_and_small_ones_take_a_task() {
        let big = [LayerCount {
            sum: 100,
            parts: 1,
            states: 1 << 36,
            source: Source::Exact,
        }];
        let (four, thirty_two) = (duration(&big, &cluster(4)), duration(&big, &cluster(32)));
        let ratio = four.total_seconds / thirty_two.total_seconds;
        assert!((ratio - 8.0).abs() < 1e-9, "{ratio}");
        assert_eq!(four.small_layer_seconds, 0.0);
        // A layer of one chunk takes one task on one worker, whatever the
        // cluster.
        let small = [LayerCount {
            states: 1 << 22,
            ..big[0]
        }];
        let (a, b) = (
            duration(&small, &cluster(4)),
            duration(&small, &cluster(32)),
        );
        assert_eq!(a.total_seconds, b.total_seconds);
        let want = (1u64 << 22) as f64 / 16.0
            * (1.0 / ENUMERATE_RATE_PER_CORE + 1.0 / SOLVE_RATE_PER_CORE);
        assert!((a.total_seconds - want).abs() < 1e-9);
        assert!(b.small_layer_seconds > 0.0);
    }
}
