//! The memory a worker needs: what its largest task holds, from the same
//! footprints by which a worker admits tasks ([`solve2048_core::task::footprint`]).
//!
//! No task holds a layer: an enumerate or solve task holds one chunk, a
//! gather task about a chunk of values ([`gather_cuts`]) and a merge task
//! about [`MERGE_RUN_CHUNKS`] chunks of run keys, compressed, a frame of each
//! run and two chunks. So a worker's memory follows the chunk size (and,
//! through the runs a merge opens, the largest group), not the size of the
//! layers, and a worker with more memory runs more tasks at once instead of
//! being needed at all.

use serde::Serialize;
use solve2048_core::task::footprint::{self, PROCESS_BYTES};
use solve2048_core::task::{
    gather_cuts, run_frame_keys, GATHER_ANSWER_CHUNKS, GATHER_READ_CHUNKS, GATHER_SLICE_CHUNKS,
    MERGE_RUN_CHUNKS,
};

use crate::cluster::Cluster;
use crate::counts::LayerCount;

/// The most one task of one kind holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TaskMemory {
    /// enumerate, merge, gather or solve.
    pub kind: &'static str,
    /// Bytes.
    pub bytes: u64,
}

/// Bytes a worker needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Memory {
    /// The largest task of each kind.
    pub tasks: Vec<TaskMemory>,
    /// The largest of them.
    pub largest_task_bytes: u64,
    /// The least a worker can run the job with, one task at a time: the
    /// process and its largest task.
    pub minimum_bytes: u64,
    /// What a worker needs to run `slots` of the largest tasks at once: the
    /// process and `slots` times the largest task.
    pub needed_bytes: u64,
    /// States of the largest group (its merge holds its runs), and whether
    /// that is measured or modelled.
    pub largest_group_states: u64,
    /// The coordinator's: the references to the requests of the two
    /// layers that have asked but are not yet solved.
    pub coordinator_bytes: u64,
}

/// States a chunk holds on average with the default chunk size: 4x4 to 32
/// made 1,000 chunks of 1,566,798,892 states (groups are smaller than a
/// chunk, so most chunks are not full).
const STATES_PER_CHUNK_OF_DEFAULT: f64 = 1_566_798.892;

/// Requests an enumerate task makes (one per group its afterstates' spawns
/// land in): 22,518 for the 1,000 chunks of 4x4 to 32.
const REQUESTS_PER_CHUNK: f64 = 22.5;

/// Bytes the coordinator holds for one request's reference (its object
/// name and fields, in a map).
const REQUEST_REF_BYTES: f64 = 200.0;

/// Bytes the coordinator holds for every chunk of the job until it ends:
/// its reference in the layers' index, its solved reference, and the names
/// of its states, values and policy objects kept for the final sweep. An
/// upper estimate from the records' sizes (three names of about 60 bytes,
/// two references of about 120, map and allocation overhead), not measured.
const CHUNK_RECORD_BYTES: f64 = 512.0;

/// The coordinator's memory for a job of `layers` with chunks of
/// `chunk_size`: a record of every chunk, and the references to requests. A
/// layer's chunks ask in the backward pass, once the layer four above
/// their own is solved, and their requests are freed once their layer is
/// solved, so at most two adjacent layers' requests are referenced at once
/// (and, in the forward pass, two layers' runs, whose frames it adds).
pub fn coordinator_bytes(layers: &[LayerCount], chunk_size: u64) -> u64 {
    let fill = STATES_PER_CHUNK_OF_DEFAULT / solve2048_core::task::DEFAULT_CHUNK_SIZE as f64;
    let chunks_of = |states: u64| states as f64 / (fill * chunk_size.max(1) as f64);
    let records = chunks_of(layers.iter().map(|l| l.states).sum()) * CHUNK_RECORD_BYTES;
    let states = |sum: u32| {
        layers
            .iter()
            .filter(|l| l.sum == sum)
            .map(|l| l.states)
            .sum::<u64>()
    };
    let held = |layers_held: u32| {
        let below = |l: &LayerCount| -> u64 {
            (1..layers_held)
                .map(|i| states(l.sum.saturating_sub(2 * i)))
                .sum()
        };
        layers
            .iter()
            .map(|l| l.states + below(l))
            .max()
            .unwrap_or(0)
    };
    let references = chunks_of(held(2)) * REQUESTS_PER_CHUNK * REQUEST_REF_BYTES;
    // The forward pass references two layers' runs, and their frames.
    let frames = held(2) as f64 * RUN_KEYS_PER_STATE / run_frame_keys(chunk_size) as f64;
    (records + references + frames * RUN_FRAME_REF_BYTES) as u64 + PROCESS_BYTES
}

/// Bytes the coordinator holds for one frame of a run (`RunFrame`: five
/// integers in a vector).
const RUN_FRAME_REF_BYTES: f64 = 40.0;

/// The largest group (by tiles, `core::space::ids::group_of`) against the largest
/// part: a group holds whole tile classes, and one class of the largest
/// part holds about a quarter of it. Measured: 4x4 to 16, 430,017 states in
/// the largest class of layer 60 (1,656,782 states in its one part of max
/// tile 8: 0.26); 4x4 to 32, 15,988,907 states in its largest group against
/// 62,812,882 in its largest part (0.25).
pub const LARGEST_GROUP_OF_PART: f64 = 0.26;

/// Run keys a merge reads per state of its group: the largest group of 4x4
/// to 32 read 88,306,208 keys for 15,988,907 states (5.5).
pub const RUN_KEYS_PER_STATE: f64 = 5.6;

/// Distinct afterstates a chunk's states make per state, each asked of two
/// layers (0.83 on the largest part of layer 84 of 4x4 to 32; rounded up).
const RESPONSE_KEYS_PER_STATE: f64 = 2.0 * 0.9;

/// The memory a worker of `cluster` needs for a job with `layers`, whose
/// largest part holds `largest_part` states.
pub fn memory(layers: &[LayerCount], largest_part: u64, cluster: &Cluster) -> Memory {
    let largest_layer = layers.iter().map(|l| l.states).max().unwrap_or(0);
    // No task holds more than a layer's states of anything.
    let chunk = cluster.chunk_size.min(largest_layer).max(1);
    let group = ((largest_part as f64 * LARGEST_GROUP_OF_PART) as u64).min(largest_part);
    let enumerate = footprint::enumerate_bytes(chunk);
    let ask = footprint::ask_bytes(chunk);
    let expand = largest_expand(group, chunk, cluster.chunk_size);
    let merge = largest_merge(group, chunk, cluster.chunk_size);
    let solve = footprint::solve_bytes(chunk, (chunk as f64 * RESPONSE_KEYS_PER_STATE) as u64);
    let gather = largest_gather(chunk);
    let tasks = vec![
        TaskMemory {
            kind: "enumerate",
            bytes: enumerate,
        },
        TaskMemory {
            kind: "expand",
            bytes: expand,
        },
        TaskMemory {
            kind: "merge",
            bytes: merge,
        },
        TaskMemory {
            kind: "ask",
            bytes: ask,
        },
        TaskMemory {
            kind: "gather",
            bytes: gather,
        },
        TaskMemory {
            kind: "solve",
            bytes: solve,
        },
    ];
    let largest = tasks.iter().map(|t| t.bytes).max().unwrap_or(0);
    Memory {
        largest_task_bytes: largest,
        minimum_bytes: PROCESS_BYTES + largest,
        needed_bytes: PROCESS_BYTES + cluster.slots as u64 * largest,
        largest_group_states: group,
        coordinator_bytes: coordinator_bytes(layers, cluster.chunk_size),
        tasks,
    }
}

/// Run keys a run to one of the largest groups holds, per state of a
/// chunk: the 33 groups of more than 8 chunks of run keys in layers 4 to
/// 98 of 4x4 to 128 at the default chunk (4 Mi states) read 0.67 M keys a
/// run (the largest, 123 M keys in 144 runs, 0.86 M): a chunk's successors
/// land in many groups.
pub const RUN_KEYS_PER_RUN_OF_CHUNK: f64 = 0.16;

/// Afterstate run keys an expand reads per state of its group: the 0.83
/// distinct afterstates a state of a chunk makes (the largest part of layer
/// 84 of 4x4 to 32), filed once a tile, from the two layers below, of about
/// as many states as the group's own; rounded up.
pub const AFTERSTATE_RUN_KEYS_PER_STATE: f64 = 2.0;

/// The most an expand task of a group of `group` states holds, with chunks
/// of `chunk` states (`chunk_size` as the job sets it): its afterstate runs
/// whole, a frame of each decoded at a time, and its spawns
/// ([`footprint::expand_bytes`]).
fn largest_expand(group: u64, chunk: u64, chunk_size: u64) -> u64 {
    let keys = (group as f64 * AFTERSTATE_RUN_KEYS_PER_STATE) as u64;
    let runs = (keys as f64 / (RUN_KEYS_PER_RUN_OF_CHUNK * chunk as f64)).ceil() as u64;
    let frame = run_frame_keys(chunk_size).min(keys.max(1));
    footprint::expand_bytes(
        keys,
        keys,
        runs * footprint::decoded_blob_bytes(frame),
        chunk_size,
    )
}

/// The most a merge task of a group of `group` states holds, with chunks of
/// `chunk` states (`chunk_size` as the job sets it): a group of more than
/// [`MERGE_RUN_CHUNKS`] chunks of run keys is merged in pieces, each of
/// which reads that many keys and at most two more frames of each run
/// ([`run_frame_keys`]); each run has one frame decoded at a time.
fn largest_merge(group: u64, chunk: u64, chunk_size: u64) -> u64 {
    let run_keys = (group as f64 * RUN_KEYS_PER_STATE) as u64;
    let runs = (run_keys as f64 / (RUN_KEYS_PER_RUN_OF_CHUNK * chunk as f64)).ceil() as u64;
    let frame = run_frame_keys(chunk_size).min(run_keys.max(1));
    let read = if run_keys <= MERGE_RUN_CHUNKS * chunk {
        run_keys
    } else {
        MERGE_RUN_CHUNKS * chunk + 2 * runs * frame
    };
    footprint::merge_bytes(read, runs * footprint::decoded_blob_bytes(frame), chunk)
}

/// The most a gather task can hold with chunks of `chunk` states: one piece
/// of a group cut by [`gather_cuts`], over slice counts, its group as large
/// as that count allows ([`GATHER_SLICE_CHUNKS`] chunks a slice) and asked
/// as many keys as one share holds. A batch of small groups (a chunk of
/// states, [`GATHER_ANSWER_CHUNKS`] chunks of keys) holds less than a whole
/// group of one slice.
fn largest_gather(chunk: u64) -> u64 {
    (1..=64u64)
        .map(|slices| {
            let states = slices * GATHER_SLICE_CHUNKS * chunk;
            let keys = (GATHER_ANSWER_CHUNKS * slices).min(GATHER_READ_CHUNKS) * chunk;
            let (slices, shares) = gather_cuts(states, keys, chunk);
            footprint::gather_bytes(states, slices, keys.div_ceil(shares as u64))
        })
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::Source;

    fn cluster(chunk_size: u64, slots: u32) -> Cluster {
        Cluster {
            workers: 2,
            threads_per_worker: 4,
            worker_memory_bytes: 16 << 30,
            slots,
            chunk_size,
            recompute_values: false,
        }
    }

    fn layer(sum: u32, states: u64) -> LayerCount {
        LayerCount {
            sum,
            parts: 1,
            states,
            source: Source::Exact,
        }
    }

    /// Memory follows the chunk size and the largest group, not the layers:
    /// layers a thousand times larger need no more, as long as the chunks
    /// and the largest group stay the same.
    #[test]
    fn memory_follows_chunks_not_layers() {
        let c = cluster(1 << 20, 2);
        let small = memory(&[layer(10, 1 << 24)], 1 << 22, &c);
        let large = memory(&[layer(10, 1 << 34), layer(12, 1 << 33)], 1 << 22, &c);
        assert_eq!(small.tasks, large.tasks);
        assert_eq!(small.needed_bytes, large.needed_bytes);
        // Only the coordinator grows with the states: a record a chunk,
        // and the request references of the largest two adjacent layers.
        assert!(large.coordinator_bytes > 1000 * (small.coordinator_bytes - PROCESS_BYTES));
        let pair = |a: u32, b: u32| memory(&[layer(a, 1 << 30), layer(b, 1 << 30)], 1 << 22, &c);
        let adjacent = pair(10, 12).coordinator_bytes;
        let apart = pair(10, 20).coordinator_bytes;
        let requests_of_a_layer = adjacent - apart;
        assert!(requests_of_a_layer > 0);
        // A hundred layers hold a few layers' requests at a time, and a record
        // of every chunk: far less than every layer's requests.
        let many: Vec<LayerCount> = (0..100).map(|i| layer(10 + 4 * i, 1 << 30)).collect();
        let held = memory(&many, 1 << 22, &c).coordinator_bytes - PROCESS_BYTES;
        assert!(
            held < 100 * requests_of_a_layer / 5,
            "{held} {requests_of_a_layer}"
        );
        assert_eq!(
            small.minimum_bytes,
            PROCESS_BYTES + small.largest_task_bytes
        );
        assert_eq!(
            small.needed_bytes,
            PROCESS_BYTES + 2 * small.largest_task_bytes
        );
        // A larger largest part means a larger merge.
        let merge = |m: &Memory| m.tasks.iter().find(|t| t.kind == "merge").unwrap().bytes;
        assert!(merge(&memory(&[layer(10, 1 << 34)], 1 << 32, &c)) > merge(&large));
        // Smaller chunks, less memory; a tiny game is held to its layers.
        let half = memory(&[layer(10, 1 << 24)], 1 << 22, &cluster(1 << 19, 2));
        assert!(half.largest_task_bytes < small.largest_task_bytes);
        let tiny = memory(&[layer(10, 1000)], 1000, &c);
        assert!(tiny.largest_task_bytes < 1 << 20, "{tiny:?}");
    }

    /// Every piece the driver can plan is within the modelled gather.
    #[test]
    fn the_largest_gather_bounds_every_cut() {
        let chunk = 1000;
        let most = largest_gather(chunk);
        for states in [1, 999, 1000, 1001, 5000, 64_000, 200_000] {
            for keys in [0, 10, 2000, 2001, 16_000, 100_000, 1_000_000] {
                let (slices, shares) = gather_cuts(states, keys, chunk);
                let piece = footprint::gather_bytes(states, slices, keys.div_ceil(shares as u64));
                assert!(
                    piece <= most,
                    "{states} states, {keys} keys: {piece} > {most}"
                );
            }
        }
    }
}
