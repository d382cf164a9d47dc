//! The cluster shapes a plan compares, the one it recommends and why a
//! game gets none, and a larger chunk size where requests cost too much.

use serde::Serialize;

use crate::cluster::Cluster;
use crate::cost::{cost, Cost, Prices};
use crate::counts::{LayerCount, PartCount};
use crate::duration::{duration, duration_range, Duration, Rates};
use crate::memory::{memory, Memory};
use crate::requests::{store_requests, StoreRequests};
use crate::span::Span;
use crate::store_size::StoreSize;

/// Worker memory sizes offered in the options table, in GiB.
const MEMORY_SIZES_GIB: [u64; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Worker counts offered in the options table, beside the one asked for.
const WORKER_COUNTS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The longest job the recommendation rule accepts, at the slow end of its
/// duration range.
const RECOMMENDED_WITHIN_SECONDS: f64 = 24.0 * 3600.0;

/// The rule by which a plan recommends one of its options.
pub const RECOMMENDATION_RULE: &str =
    "the fewest workers that finish within a day even at the slow end of the duration range, \
     else the fastest; each with the threads asked for and the smallest memory size that holds \
     its slots";

/// Chunk sizes a plan tries, as multiples of the one asked for, when the
/// store requests would cost more than the machines.
const CHUNK_SIZE_MULTIPLES: [u64; 6] = [2, 4, 8, 16, 32, 64];

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
    /// How long the job takes, by the model at the measured rates.
    pub duration: Duration,
    /// Its range ([`duration_range`]).
    pub duration_range: Span,
    /// What it costs ([`cost`]).
    pub cost: Cost,
    /// Whether this is the worker count asked for.
    pub asked: bool,
}

/// A larger chunk size, suggested when the store requests would cost more
/// than the machines: a larger chunk makes fewer chunks and far fewer pairs
/// of joined chunks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChunkSizeHint {
    /// The chunk size suggested (`--chunk-size`).
    pub chunk_size: u64,
    /// The store requests at that size.
    pub requests: u64,
    /// Their price, in US dollars.
    pub requests_usd: f64,
    /// The memory a worker needs at that size with the slots asked for.
    pub worker_memory_bytes: u64,
    /// The least memory a worker needs at that size (one slot).
    pub least_worker_memory_bytes: u64,
}

/// What a job's options are reckoned from.
pub(crate) struct Job<'a> {
    pub(crate) parts: &'a [PartCount],
    pub(crate) states: u64,
    pub(crate) states_range: Span,
    pub(crate) rates: Rates,
    pub(crate) store: &'a StoreSize,
    pub(crate) requests_usd: f64,
    pub(crate) prices: Prices,
}

impl Job<'_> {
    /// The job on `cluster` with workers of `worker_memory_gib`.
    pub(crate) fn option(
        &self,
        cluster: &Cluster,
        worker_memory_gib: u64,
        asked: bool,
    ) -> ClusterOption {
        let d = duration(self.parts, self.rates, cluster);
        let range = duration_range(&d, self.states, self.states_range);
        ClusterOption {
            workers: cluster.workers,
            threads_per_worker: cluster.threads_per_worker,
            worker_memory_gib,
            duration: d,
            duration_range: range,
            cost: cost(
                cluster,
                range,
                Span {
                    low: self.store.range.peak_low_bytes as f64,
                    high: self.store.range.peak_high_bytes as f64,
                },
                Span {
                    low: self.store.range.final_low_bytes as f64,
                    high: self.store.range.final_high_bytes as f64,
                },
                self.requests_usd,
                self.prices,
            ),
            asked,
        }
    }
}

/// Each offered worker count and the one asked for, in order, with
/// `cluster`'s threads and slots: its duration and cost, and the memory
/// size that holds `needed_bytes`.
pub(crate) fn cluster_options(
    job: &Job,
    cluster: &Cluster,
    needed_bytes: u64,
) -> Vec<ClusterOption> {
    let mut counts: Vec<u32> = WORKER_COUNTS.to_vec();
    counts.push(cluster.workers);
    counts.sort_unstable();
    counts.dedup();
    counts
        .into_iter()
        .map(|workers| {
            let c = Cluster {
                workers,
                ..*cluster
            };
            job.option(&c, gib_for(needed_bytes), workers == cluster.workers)
        })
        .collect()
}

/// A larger chunk size when the requests on `asked` would cost more than
/// its machines at the fast end: the smallest of [`CHUNK_SIZE_MULTIPLES`]
/// whose requests cost less than those machines, else the one whose
/// requests cost least.
pub(crate) fn chunk_size_hint(
    parts: &[PartCount],
    layers: &[LayerCount],
    largest_part: Option<PartCount>,
    cluster: &Cluster,
    asked: &ClusterOption,
) -> Option<ChunkSizeHint> {
    let machines = asked.cost.machines_usd.low;
    if asked.cost.requests_usd <= machines {
        return None;
    }
    let hints: Vec<ChunkSizeHint> = CHUNK_SIZE_MULTIPLES
        .iter()
        .map(|m| {
            let c = Cluster {
                chunk_size: cluster.chunk_size.saturating_mul(*m),
                ..*cluster
            };
            let r = store_requests(parts, c.chunk_size);
            let m = memory(layers, largest_part.map_or(0, |p| p.states), &c);
            ChunkSizeHint {
                chunk_size: c.chunk_size,
                requests: r.total,
                requests_usd: r.price_usd,
                worker_memory_bytes: m.needed_bytes,
                least_worker_memory_bytes: m.minimum_bytes,
            }
        })
        .collect();
    hints
        .iter()
        .find(|h| h.requests_usd <= machines)
        .or_else(|| {
            hints
                .iter()
                .min_by(|a, b| a.requests_usd.total_cmp(&b.requests_usd))
        })
        .copied()
}

/// Why no cluster is recommended: too long even on the most workers, too
/// large a task, too large a bill for requests, or too large a store.
pub(crate) fn infeasible(
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
    let most_workers = options.iter().map(|o| o.workers).max().unwrap_or(0);
    if fastest > LONGEST_RECOMMENDED_SECONDS {
        Some(format!(
            "no cluster offered here finishes within {} days: even {} workers of {} threads \
             would take {:.0} days",
            LONGEST_RECOMMENDED_SECONDS / 86400.0,
            most_workers,
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

/// The option recommended by [`RECOMMENDATION_RULE`] among `options` (in
/// order of workers): none when infeasible.
pub(crate) fn recommended(options: &[ClusterOption], infeasible: bool) -> Option<usize> {
    if infeasible {
        return None;
    }
    options
        .iter()
        .position(|o| o.duration_range.high <= RECOMMENDED_WITHIN_SECONDS)
        .or_else(|| {
            (0..options.len()).min_by(|&a, &b| {
                let t = |i: usize| options[i].duration.total_seconds;
                t(a).total_cmp(&t(b))
            })
        })
}

/// The smallest offered memory size, in GiB, that holds `bytes`.
pub(crate) fn gib_for(bytes: u64) -> u64 {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    MEMORY_SIZES_GIB
        .iter()
        .copied()
        .find(|&m| m as f64 >= gib)
        .unwrap_or_else(|| gib.ceil() as u64)
}
