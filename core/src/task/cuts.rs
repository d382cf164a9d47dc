//! How large merges and gathers are cut into tasks of bounded size.

/// Raw spawns an expand task holds before it sorts them, in chunks of the
/// job: a group whose spawns are more is written as sorted runs of states
/// this large, which [`Task::Merge`](crate::task::Task::Merge) then takes.
/// Most groups' spawns are under one chunk; 4x4 to 32's largest group
/// (16 M states) makes several times this many.
pub const EXPAND_CHUNKS: u64 = 4;

/// Spawns an afterstate of a run makes at most: a tile on each empty cell of
/// a 4x4 board (15 at most, an afterstate having a tile).
pub const SPAWNS_PER_AFTERSTATE: u64 = 15;

/// Run keys a merge task takes at most, in chunks of the job: a group whose
/// runs hold more is merged in key-range pieces ([`merge_pieces`]). A group
/// of 4x4 to 32 read up to 21 chunks of run keys (88 M keys for 16 M
/// states), a merge of several seconds on one thread while other tasks take
/// under one.
pub const MERGE_RUN_CHUNKS: u64 = 8;

/// How many key-range pieces a group whose runs hold `run_keys` keys is
/// merged in.
pub fn merge_pieces(run_keys: u64, chunk_size: u64) -> usize {
    run_keys
        .div_ceil(MERGE_RUN_CHUNKS * chunk_size.max(1))
        .max(1) as usize
}

/// Frames a chunk of keys makes in a run: a run longer than
/// [`run_frame_keys`] is written in frames of that many keys, so a merge
/// piece reads, of each run, the frames of its key range and at most two
/// more (at its ends), not the whole run.
pub const RUN_FRAMES_PER_CHUNK: u64 = 256;

/// Keys in one frame of a run at chunk size `chunk_size`: 1/256 of a chunk
/// (16 Ki keys at the default chunk), but at least 256 so that the small
/// chunks of tests do not write frames mostly of headers, or 1/16 of a
/// chunk below 4,096 states (where tests watch a merge stay bounded).
pub fn run_frame_keys(chunk_size: u64) -> u64 {
    (chunk_size / RUN_FRAMES_PER_CHUNK)
        .max(256.min(chunk_size / 16))
        .max(1)
}

/// Request keys a gather task reads at most, in chunks of the job: it holds
/// them compressed (about 2 bytes a key) while it answers them.
pub const GATHER_READ_CHUNKS: u64 = 16;

/// Distinct request keys a gather task answers at most, in chunks: it holds
/// each with its sum and its answer.
pub const GATHER_ANSWER_CHUNKS: u64 = 2;

/// States a gather slice holds at most, in chunks: a group of more is
/// gathered in slices ([`gather_cuts`]). Each slice reads and filters all
/// of its group's states and requests, so fewer slices read less: at two
/// chunks a slice instead of one, 4x4 to 32's gathers read 3,099 MB
/// instead of 4,232 and its stored job took 3 to 4% less core time. Each chunk
/// more a slice adds a table of 1.5 chunks to the largest gather piece;
/// at two it is charged 792 MiB at the default chunk, within a `--memory
/// 1` worker's budget (`a_default_chunk_fits_a_gib` in `footprint`).
pub const GATHER_SLICE_CHUNKS: u64 = 2;

/// States of its group a sliced gather filters at a time as it fills its
/// slice's table: it holds those it keeps of these, and the insert's
/// partition of them ([`crate::kernel::value_table::insert_bytes`]), not
/// the whole slice's.
pub const SLICE_INSERT_KEYS: u64 = 1 << 21;

/// How a group of `states` states asked `keys` request keys is gathered:
/// in `slices` slices of at most [`GATHER_SLICE_CHUNKS`] chunks of states
/// each ([`GatherPiece`](crate::task::GatherPiece)), and its requests in
/// `shares` shares, so that a task holds a bounded number of values and
/// requests whatever the group's size. Bytes read grow with the pieces
/// (each reads the group's values and its share's requests), never with
/// the number of workers.
pub fn gather_cuts(states: u64, keys: u64, chunk_size: u64) -> (u32, u32) {
    let chunk_size = chunk_size.max(1);
    let slices = states.div_ceil(GATHER_SLICE_CHUNKS * chunk_size).max(1);
    let per_share = (GATHER_ANSWER_CHUNKS * chunk_size * slices)
        .min(GATHER_READ_CHUNKS * chunk_size)
        .max(1);
    (slices as u32, keys.div_ceil(per_share).max(1) as u32)
}

/// Chunk numbers each piece of a group has room for ([`MergePiece`](crate::task::MergePiece)).
pub const PIECE_CHUNKS: u32 = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::DEFAULT_CHUNK_SIZE;

    #[test]
    fn gathers_and_merges_are_cut_by_chunks() {
        assert_eq!(gather_cuts(0, 0, 100), (1, 1));
        assert_eq!(gather_cuts(200, 200, 100), (1, 1));
        assert_eq!(gather_cuts(201, 200, 100), (2, 1));
        // Up to 2 chunks of distinct keys a slice, 16 chunks read a task.
        assert_eq!(gather_cuts(100, 201, 100), (1, 2));
        assert_eq!(gather_cuts(2000, 2000, 100), (10, 2));
        assert_eq!(gather_cuts(2000, 1600, 100), (10, 1));
        assert_eq!(merge_pieces(0, 100), 1);
        assert_eq!(merge_pieces(800, 100), 1);
        assert_eq!(merge_pieces(801, 100), 2);
        assert_eq!(run_frame_keys(DEFAULT_CHUNK_SIZE), 16 << 10);
        assert_eq!(run_frame_keys(20_000), 256);
        assert_eq!(run_frame_keys(400), 25);
        assert_eq!(run_frame_keys(3), 1);
    }
}
