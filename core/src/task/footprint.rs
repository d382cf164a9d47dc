//! What each task holds in memory, as the kernels allocate it: a worker
//! admits tasks by it (`worker --memory`), and `plan` sizes workers by it.
//! Each figure is an upper estimate from the kernels' buffers; the measured
//! peaks they were checked against are on the book's Benchmarks page.

use crate::kernel::enumerate::SLICE;
use crate::kernel::value_table::{insert_bytes, ValueTable};
use crate::task::{
    JobSpec, MergePiece, RunRef, Task, EXPAND_CHUNKS, SLICE_INSERT_KEYS, SPAWNS_PER_AFTERSTATE,
};

/// Bytes a worker process holds besides its tasks: code, the async
/// runtime, connection and I/O buffers, allocator slack.
pub const PROCESS_BYTES: u64 = 64 << 20;

/// Distinct canonical afterstates a chunk's states make, per state (0.83 on
/// the largest part of layer 84 of 4x4 to 32; rounded up).
const AFTERSTATES_PER_STATE: f64 = 0.9;

/// Distinct successors an enumerate task emits per state (5.3 on the
/// largest part of layer 84 of 4x4 to 32; rounded up).
const SUCCESSORS_PER_STATE: f64 = 6.0;

/// Raw (not yet deduplicated) successors of one afterstate: 2 tiles on each
/// empty cell, at most 15 on 4x4, fewer after the filter of recent keys.
const RAW_PER_AFTERSTATE: f64 = 16.0;

/// Bytes an enumerate task of `states` states holds: the states, the
/// distinct afterstates, the successors it has made so far, and one slice's
/// raw moves and raw successors (with the slack of growing vectors).
pub fn enumerate_bytes(states: u64) -> u64 {
    let s = states as f64;
    let slice = states.min(SLICE as u64) as f64;
    let after = s * AFTERSTATES_PER_STATE;
    let held = 8.0 * s + 8.0 * after + 8.0 * SUCCESSORS_PER_STATE * s;
    let working = 2.0 * 8.0 * 4.0 * slice + 2.0 * 8.0 * RAW_PER_AFTERSTATE * slice.min(after);
    (held + working) as u64
}

/// Bytes an ask task of `states` states holds: the states, the distinct
/// afterstates twice (as such and filed as requests, one copy a tile at
/// most), their encoded bundle, and one slice's raw moves (with the slack
/// of growing vectors).
pub fn ask_bytes(states: u64) -> u64 {
    let s = states as f64;
    let slice = states.min(SLICE as u64) as f64;
    let after = s * AFTERSTATES_PER_STATE;
    (8.0 * s + 8.0 * 3.0 * after + 2.0 * 8.0 * 4.0 * slice) as u64
}

/// Bytes an expand task holds: the blobs of its runs, compressed as read
/// (about a byte a key: `read_keys`), of which it spawns `afterstate_keys`;
/// one blob a run being decoded (`decoding`); its raw spawns up to
/// [`EXPAND_CHUNKS`] chunks (sorted in place) with one batch's slack, and
/// their encoded chunks; and, for a group that makes more, two of the
/// sorted runs of states it writes instead as it makes them, compressed
/// (at most a byte a key): one being written, one waiting.
pub fn expand_bytes(read_keys: u64, afterstate_keys: u64, decoding: u64, chunk_size: u64) -> u64 {
    let most_spawns = SPAWNS_PER_AFTERSTATE * afterstate_keys + read_keys;
    let held = most_spawns.min(EXPAND_CHUNKS * chunk_size);
    let runs = if most_spawns > held { 2 * held } else { 0 };
    read_keys + decoding + 8 * (held + chunk_size.min(most_spawns)) + 2 * held + runs
}

/// Bytes a merge task holds: the blobs of its runs that hold its key range,
/// compressed as read (about a byte a key: `read_keys`); the blobs being
/// decoded, one a run at a time (`decoding`, from [`decoded_blob_bytes`]);
/// and two chunks of output: one being filled, one being written.
pub fn merge_bytes(read_keys: u64, decoding: u64, chunk_size: u64) -> u64 {
    read_keys + decoding + 2 * 8 * chunk_size
}

/// Bytes one blob of `keys` run keys takes while it is decoded: its varint
/// body (a few bytes a key) and its keys, whole.
pub fn decoded_blob_bytes(keys: u64) -> u64 {
    (RUN_BODY_BYTES_PER_KEY + 8) * keys
}

/// Varint body bytes a run key takes, rounded up: 2.23 over the 5,414
/// runs of layers 4 to 98 of 4x4 to 128 (0.64 compressed).
const RUN_BODY_BYTES_PER_KEY: u64 = 3;

/// The keys `runs` hold in the key range of `piece` (all, without one), and
/// what decoding one blob of each at a time holds: what a merge or an
/// expand reads.
fn read_of(runs: &[RunRef], piece: Option<MergePiece>) -> (u64, u64) {
    let (lo, hi) = piece.map_or((0, u64::MAX), |p| (p.lo, p.hi));
    let (mut read, mut decoding) = (0, 0);
    for r in runs {
        let blobs = r.blobs_in(lo, hi);
        read += blobs.iter().map(|b| b.count).sum::<u64>();
        decoding += blobs
            .iter()
            .map(|b| decoded_blob_bytes(b.count))
            .max()
            .unwrap_or(0);
    }
    (read, decoding)
}

/// Bytes a gather task holds for one group of `states` states, taken in
/// `slices` slices, answering `keys` request keys: the value table of its
/// slice and what building it holds (the group's keys and values
/// partitioned; when sliced, [`SLICE_INSERT_KEYS`] of them filtered and
/// those partitioned); the requests' compressed bytes (about 2 a key, both
/// tiles' at once); and for each key in the slice, its afterstate and sum
/// (16, counted as if every key were distinct) and its place in the union
/// (4), with the answers of the requests being answered and the encoded
/// responses in the 6 bytes left: 26.
pub fn gather_bytes(states: u64, slices: u32, keys: u64) -> u64 {
    let slice_states = slice_share(states, slices);
    let building = match slices > 1 {
        true => 2 * insert_bytes(slice_states.min(SLICE_INSERT_KEYS) as usize),
        false => insert_bytes(slice_states as usize),
    };
    ValueTable::bytes_for(slice_states as usize)
        + building
        + 2 * keys
        + 26 * slice_share(keys, slices)
}

/// What one of `slices` slices of a group is charged of the group's `n`
/// states or request keys: [`SLICE_IMBALANCE`] times its even share (at
/// most all `n`), since slices are hashed, not cut evenly. A sliced
/// gather sizes its table for this many states.
pub fn slice_share(n: u64, slices: u32) -> u64 {
    match slices > 1 {
        true => (n as f64 * SLICE_IMBALANCE / slices as f64).min(n as f64) as u64,
        false => n,
    }
}

/// How much more than its even share one slice of a gather may hold.
pub const SLICE_IMBALANCE: f64 = 1.5;

/// Bytes a solve task holds: per state, its key, its result and encoded
/// outputs (40); per response key, its request's key (8: the keys its sums
/// are for), the response decoded and merged (28) and its afterstate's slot
/// in the table of values, its value and its key and value partitioned
/// while the table is built (48 an afterstate, two response keys: one a
/// tile).
pub fn solve_bytes(states: u64, response_keys: u64) -> u64 {
    40 * states + 60 * response_keys
}

/// Bytes an evaluation holds beside what the solve's task of the same kind
/// holds for `states` boards ([`of`] adds it): per board, its reach and
/// move probabilities (40), the pairs and sums of its moves' afterstates
/// (up to 4 moves, 32 each); the reference chunks' states, values and
/// policy, decoded (`reference` of them, 17 each, twice while the best
/// moves are looked up); and a second answer per request key (`keys`).
pub fn evaluation_bytes(states: u64, reference: u64, keys: u64) -> u64 {
    40 * states + 128 * states.min(SLICE as u64) + 34 * reference + 26 * keys
}

/// Bytes `task` holds while it runs.
pub fn of(task: &Task, job: &JobSpec) -> u64 {
    as_solved(task, job)
        + match (task, &job.evaluate) {
            (_, None) => 0,
            (
                Task::Enumerate {
                    chunk, reference, ..
                }
                | Task::Solve {
                    chunk, reference, ..
                },
                Some(_),
            ) => evaluation_bytes(chunk.count, reference_states(reference), 0),
            (Task::Gather { groups, .. }, Some(_)) => groups
                .iter()
                .map(|g| {
                    evaluation_bytes(
                        0,
                        reference_states(&g.reference),
                        g.requests.iter().map(|r| r.count).sum(),
                    )
                })
                .max()
                .unwrap_or(0),
            _ => 0,
        }
}

/// States in `chunks`.
fn reference_states(chunks: &[crate::task::SolvedRef]) -> u64 {
    chunks.iter().map(|c| c.chunk.count).sum()
}

/// Bytes `task` holds as a task of the solve.
fn as_solved(task: &Task, job: &JobSpec) -> u64 {
    match task {
        Task::Seed { .. } | Task::StartValue { .. } => 1 << 20,
        Task::Enumerate { chunk, .. } => enumerate_bytes(chunk.count),
        Task::Ask { chunk, .. } => ask_bytes(chunk.count),
        Task::Merge { runs, piece, .. } => {
            let (read, decoding) = read_of(runs, *piece);
            merge_bytes(read, decoding, job.chunk_size)
        }
        Task::Expand { runs, .. } => {
            let (read, decoding) = read_of(runs, None);
            let afterstates = runs
                .iter()
                .filter(|r| r.spawns.is_some())
                .map(|r| r.count)
                .sum();
            expand_bytes(read, afterstates, decoding, job.chunk_size)
        }
        // One group at a time: the largest one's.
        Task::Gather { groups, piece, .. } => groups
            .iter()
            .map(|g| {
                gather_bytes(
                    g.chunks.iter().map(|c| c.chunk.count).sum(),
                    piece.map_or(1, |p| p.slices),
                    g.requests.iter().map(|r| r.count).sum(),
                )
            })
            .max()
            .unwrap_or(0),
        Task::Solve {
            chunk, responses, ..
        } => solve_bytes(chunk.count, responses.iter().map(|r| r.count).sum()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{gather_cuts, GATHER_ANSWER_CHUNKS, GATHER_READ_CHUNKS, GATHER_SLICE_CHUNKS};

    #[test]
    fn a_default_chunk_fits_a_gib() {
        let chunk = crate::task::DEFAULT_CHUNK_SIZE;
        for bytes in [
            enumerate_bytes(chunk),
            ask_bytes(chunk),
            merge_bytes(6 * chunk, 64 << 20, chunk),
            solve_bytes(chunk, 2 * chunk),
        ] {
            assert!(bytes < 1 << 30, "{bytes}");
        }
        // Every piece of a gather, whatever its group's size, fits a worker
        // of `--memory 1`: the largest group of each slice count, asked the
        // most keys one share holds (more keys make more shares).
        let budget = (1 << 30) - PROCESS_BYTES;
        for slices in 1..=64u64 {
            let states = slices * GATHER_SLICE_CHUNKS * chunk;
            let keys = (GATHER_ANSWER_CHUNKS * slices).min(GATHER_READ_CHUNKS) * chunk;
            assert_eq!(gather_cuts(states, keys, chunk), (slices as u32, 1));
            assert_eq!(gather_cuts(states, keys + 1, chunk), (slices as u32, 2));
            let piece = gather_bytes(states, slices as u32, keys);
            assert!(piece <= budget, "{slices} slices: {piece}");
        }
        // Grows with the work, never shrinks.
        assert!(enumerate_bytes(2 * chunk) > enumerate_bytes(chunk));
        assert!(enumerate_bytes(10) < enumerate_bytes(10_000));
    }
}
