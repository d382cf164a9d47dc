//! The task model: what a coordinator hands a worker and what the worker
//! reports back. Pure data (serde), so the same tasks run in-process or over
//! the network.
//!
//! Forward: one [`Task::Seed`] writes the start states as runs; for each layer
//! in increasing tile sum, [`Task::Merge`] turns the runs of one group of one
//! part into final chunks, then [`Task::Enumerate`] turns each chunk into runs
//! for the parts two and four tile-sum steps up, and into requests: the
//! chunk's distinct afterstates, by the group their spawns land in.
//!
//! Backward, for each layer L in decreasing tile sum: [`Task::Solve`] writes
//! one chunk's values and policy from its responses; then [`Task::Gather`]
//! answers, for one group of layer L, the requests of layers L-2 (spawned 2s)
//! and L-4 (spawned 4s): for each afterstate, the sum of the values of its
//! spawns, which all lie in that group. So a task reads one chunk or one
//! group and what was addressed to it, never a whole layer, and the bytes
//! read do not depend on the number of workers. [`Task::StartValue`] finally
//! takes the expectation over the start.

use serde::{Deserialize, Serialize};

use crate::evaluation::{ChunkEvaluation, Evaluation, EvaluationSummary, PushRef};
use crate::part::{ChunkId, PartId};

/// Default largest number of states in one chunk. Larger chunks share more
/// successors inside one enumerate task, so fewer keys go through the runs
/// and merges (on 4x4 to 32: about 19 keys per state at 1 Mi states per
/// chunk, 9 at 4 Mi); an enumerate task of 3.9 M states held about 2 GB.
pub const DEFAULT_CHUNK_SIZE: u64 = 1 << 22;

/// The two passes of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Forward enumeration of the reachable states.
    Enumerate,
    /// Backward solve of values and policy.
    Solve,
}

/// The whole job a task belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The game.
    pub game: crate::Game,
    /// Largest number of states in one chunk.
    pub chunk_size: u64,
    /// zstd compression level of written chunks.
    pub zstd_level: i32,
    /// What states are valued by: `None` for the solve (the best move, on
    /// canonical states), or a player to evaluate (its moves, on the boards
    /// as they lie; see [`crate::evaluation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluate: Option<Evaluation>,
}

/// The job manifest (`job.json`): what the store holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobManifest {
    /// Chunk format version of every object.
    pub format_version: u16,
    /// The job.
    pub job: JobSpec,
}

/// Why a job manifest could not be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ManifestError {
    /// Written by another format version.
    #[error(
        "format version {found}; this build reads version {}",
        crate::chunk::FORMAT_VERSION
    )]
    Version {
        /// Version found.
        found: u16,
    },
    /// Not a manifest.
    #[error("damaged: {0}")]
    Damaged(String),
}

impl JobManifest {
    /// Parse `job.json`, checking the format version before the shape so that
    /// an older or newer store gets a version message, not a parse error.
    pub fn parse(bytes: &[u8]) -> Result<JobManifest, ManifestError> {
        let damaged = |e: serde_json::Error| ManifestError::Damaged(e.to_string());
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(damaged)?;
        let found = value
            .get("format_version")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u16;
        if found != crate::chunk::FORMAT_VERSION {
            return Err(ManifestError::Version { found });
        }
        serde_json::from_value(value).map_err(damaged)
    }
}

/// One attempt at a task: a lease. Unique across coordinator restarts (the
/// coordinator's epoch in the high 32 bits, a counter in the low ones), so
/// every attempt writes its outputs under names of its own and the
/// coordinator alone decides, by committing, which attempt's outputs count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AttemptId(pub u64);

impl AttemptId {
    /// The attempt `seq` of coordinator epoch `epoch`.
    pub fn new(epoch: u32, seq: u32) -> AttemptId {
        AttemptId(((epoch as u64) << 32) | seq as u64)
    }

    /// The coordinator epoch that issued it.
    pub fn epoch(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for AttemptId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a{:016x}", self.0)
    }
}

/// A stored chunk of states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// Which chunk.
    pub id: ChunkId,
    /// Number of states.
    pub count: u64,
    /// Payload checksum of the states object.
    pub checksum: u64,
    /// The merge attempt that wrote it.
    pub attempt: AttemptId,
}

/// A solved chunk: its states and the solve attempt that wrote its values
/// and policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolvedRef {
    /// The states.
    pub chunk: ChunkRef,
    /// The solve attempt that wrote values and policy.
    pub attempt: AttemptId,
    /// Payload checksum of the values object.
    pub values_checksum: u64,
    /// Payload checksum of the policy object.
    pub policy_checksum: u64,
}

/// A stored run: sorted successors of one source for one group of one part.
/// A task writes all its runs as one bundle object (one put, one delete);
/// each run is a whole chunk-format blob at a byte range of it, read on its
/// own and verified on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Target part.
    pub part: PartId,
    /// Target group.
    pub group: u32,
    /// The bundle object it lies in.
    pub object: String,
    /// Its first byte in the object.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of keys.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
    /// Keys at evenly spaced ranks of the run ([`RUN_SAMPLES`] of them, or
    /// every key of a shorter run): what a merge splits a large group by.
    #[serde(default)]
    pub samples: Vec<u64>,
}

/// Keys a run records as samples of its key range.
pub const RUN_SAMPLES: usize = 16;

/// Requests of one chunk to one group: the chunk's distinct canonical
/// afterstates (sorted) whose spawns of one tile all land in that group of
/// that part. The tile is the part's tile sum less the chunk's (2 or 4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRef {
    /// The chunk whose afterstates these are.
    pub source: ChunkId,
    /// The part their spawns land in.
    pub part: PartId,
    /// The group of that part.
    pub group: u32,
    /// The bundle object it lies in.
    pub object: String,
    /// Its first byte in the object.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of afterstates.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
}

impl RequestRef {
    /// Exponent of the spawned tile: 1 for a 2, 2 for a 4.
    pub fn tile(&self) -> u8 {
        ((self.part.sum - self.source.part.sum) / 2) as u8
    }
}

/// The answer to one [`RequestRef`]: for each of its afterstates, in order,
/// the sum over the afterstate's empty cells of the values of its spawns of
/// the request's tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseRef {
    /// The chunk that asked (whose solve reads it).
    pub source: ChunkId,
    /// The part that answered.
    pub part: PartId,
    /// The group that answered.
    pub group: u32,
    /// The bundle object it lies in.
    pub object: String,
    /// Its first byte in the object.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of afterstates.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
    /// Evaluation jobs: true for the sums of the solved store's optimal
    /// values, false for those of the evaluated player's values (each
    /// request of an evaluation is answered with both).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
}

impl ResponseRef {
    /// Exponent of the spawned tile: 1 for a 2, 2 for a 4.
    pub fn tile(&self) -> u8 {
        ((self.part.sum - self.source.part.sum) / 2) as u8
    }
}

/// One key range of a group merged in pieces: a large group's merge is cut
/// by key into pieces that run as tasks of their own, so no stage waits on
/// one long merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergePiece {
    /// Its position among the group's pieces; its chunks are numbered from
    /// `index * PIECE_CHUNKS`, so a group's chunks stay in key order.
    pub index: u32,
    /// Smallest key it takes.
    pub lo: u64,
    /// Keys from here on are the next piece's (`u64::MAX`: none).
    pub hi: u64,
}

/// One group a gather task answers for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatherGroup {
    /// The group.
    pub group: u32,
    /// Its solved chunks (none when every spawn landing there is lost).
    pub chunks: Vec<SolvedRef>,
    /// The requests to answer.
    pub requests: Vec<RequestRef>,
    /// Evaluation jobs: the solved store's chunks of the same group, whose
    /// optimal values answer beside the player's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference: Vec<SolvedRef>,
}

/// One piece of the gather of a large group: one slice of its states and of
/// the afterstates asked of it ([`crate::part::slice_of`]: the spawns of an
/// afterstate all lie in its slice), for one share of its requests. A task
/// then holds a slice's values and a share's requests, however large the
/// group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatherPiece {
    /// The slice it answers.
    pub slice: u32,
    /// The slices the group is cut into.
    pub slices: u32,
    /// Its position among the group's pieces.
    pub index: u32,
}

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

/// Request keys a gather task reads at most, in chunks of the job: it holds
/// them compressed (about 2 bytes a key) while it answers them.
pub const GATHER_READ_CHUNKS: u64 = 16;

/// Distinct request keys a gather task answers at most, in chunks: it holds
/// each with its sum and its answer.
pub const GATHER_ANSWER_CHUNKS: u64 = 2;

/// How a group of `states` states asked `keys` request keys is gathered:
/// in `slices` slices of about a chunk of states each ([`GatherPiece`]),
/// and its requests in `shares` shares, so that a task holds about a chunk
/// of values and a bounded number of requests whatever the group's size.
/// Bytes read grow with the pieces (each reads the group's values and its
/// share's requests), never with the number of workers.
pub fn gather_cuts(states: u64, keys: u64, chunk_size: u64) -> (u32, u32) {
    let chunk_size = chunk_size.max(1);
    let slices = states.div_ceil(chunk_size).max(1);
    let per_share = (GATHER_ANSWER_CHUNKS * chunk_size * slices)
        .min(GATHER_READ_CHUNKS * chunk_size)
        .max(1);
    (slices as u32, keys.div_ceil(per_share).max(1) as u32)
}

/// Chunk numbers each piece of a group has room for ([`MergePiece`]).
pub const PIECE_CHUNKS: u32 = 1 << 16;

/// How many hash groups each target part is split into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetGroups {
    /// The part.
    pub part: PartId,
    /// Its number of groups.
    pub groups: u32,
}

/// A unit of work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Task {
    /// Write the start states as runs (targets: group counts of the start parts).
    Seed {
        /// Group counts of every part a start state can fall in.
        targets: Vec<TargetGroups>,
    },
    /// Successors of one chunk, as runs, and its requests.
    Enumerate {
        /// The source chunk.
        chunk: ChunkRef,
        /// Group counts of every part a successor can fall in.
        targets: Vec<TargetGroups>,
        /// Evaluation jobs: what the layers below pushed to the chunk's
        /// group, whence how likely each of its boards is reached.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pushes: Vec<PushRef>,
        /// Evaluation jobs: the solved store's chunks of the same group
        /// (`optimal` plays their policy).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reference: Vec<SolvedRef>,
    },
    /// Merge the runs of one group of one part (or of one key range of a
    /// large group) into final chunks.
    Merge {
        /// The part.
        part: PartId,
        /// The group.
        group: u32,
        /// Its runs.
        runs: Vec<RunRef>,
        /// The key range this task merges, when the group is merged in
        /// pieces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        piece: Option<MergePiece>,
    },
    /// Values and optimal actions of one chunk.
    Solve {
        /// The chunk.
        chunk: ChunkRef,
        /// The answers to its requests (every group its afterstates' spawns
        /// land in, for both tiles).
        responses: Vec<ResponseRef>,
        /// Evaluation jobs: as in [`Task::Enumerate`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pushes: Vec<PushRef>,
        /// Evaluation jobs: as in [`Task::Enumerate`] (their optimal values
        /// and moves beside the player's).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reference: Vec<SolvedRef>,
    },
    /// The answers of solved groups of one part to the requests addressed
    /// to them, one group at a time. A group asked more than a task should
    /// answer is answered in pieces, each task with a share of its requests.
    Gather {
        /// The part.
        part: PartId,
        /// The groups, in order, with their chunks and requests.
        groups: Vec<GatherGroup>,
        /// The piece of its one group, when the group is answered in pieces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        piece: Option<GatherPiece>,
    },
    /// Expected value over the random start.
    StartValue {
        /// Every solved chunk of the layers a start state can be in.
        layers: Vec<SolvedRef>,
    },
}

impl Task {
    /// A stable, unique name: the commit record's object name derives from it.
    pub fn key(&self) -> String {
        let c = |id: &ChunkId| {
            format!(
                "s{:05}-m{:02}-g{:04}-c{:04}",
                id.part.sum, id.part.max_exp, id.group, id.index
            )
        };
        match self {
            Task::Seed { .. } => "seed".to_string(),
            Task::Enumerate { chunk, .. } => format!("enumerate-{}", c(&chunk.id)),
            Task::Merge {
                part, group, piece, ..
            } => {
                let key = format!("merge-s{:05}-m{:02}-g{:04}", part.sum, part.max_exp, group);
                match piece {
                    Some(p) => format!("{key}-p{:03}", p.index),
                    None => key,
                }
            }
            Task::Solve { chunk, .. } => format!("solve-{}", c(&chunk.id)),
            Task::Gather {
                part,
                groups,
                piece,
            } => {
                let key = format!(
                    "gather-s{:05}-m{:02}-g{:04}",
                    part.sum,
                    part.max_exp,
                    groups.first().map_or(0, |g| g.group)
                );
                match piece {
                    Some(p) => format!("{key}-p{:03}", p.index),
                    None => key,
                }
            }
            Task::StartValue { .. } => "start-value".to_string(),
        }
    }
}

/// What a failed attempt means for its task: decided once, by the side that
/// saw the failure, and carried to the coordinator with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    /// It may succeed if tried again (an I/O error that outlasted the
    /// store's retries, a lapsed lease, a kernel panic, a worker too small
    /// for the task): the task is retried and the attempt counts against the
    /// job's attempt limit.
    Retry,
    /// It can never succeed (an input the job committed is damaged or
    /// missing, or the task does not fit the job): the job stops at once,
    /// naming the object.
    Fatal,
}

/// A failed attempt: what it means and what happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Whether retrying can help.
    pub kind: FailureKind,
    /// The error, naming the object or task concerned.
    pub message: String,
}

impl Failure {
    /// A failure worth retrying.
    pub fn retry(message: impl Into<String>) -> Failure {
        Failure {
            kind: FailureKind::Retry,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What a finished task produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskOutput {
    /// Runs written (seed).
    Runs(Vec<RunRef>),
    /// Runs and requests written (enumerate).
    Enumerated {
        /// Successor runs.
        runs: Vec<RunRef>,
        /// Requests.
        requests: Vec<RequestRef>,
        /// Evaluation jobs: the requests' afterstates with how likely the
        /// player makes them (in the requests' bundle).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pushes: Vec<PushRef>,
    },
    /// Responses written (gather), one per request.
    Responses(Vec<ResponseRef>),
    /// Final state chunks written (merge), in group order.
    Chunks(Vec<ChunkRef>),
    /// Values and policy written (solve).
    Solved {
        /// Where they are.
        solved: SolvedRef,
        /// [`result_digest`] of the chunk's states, values and actions.
        digest: u64,
        /// Evaluation jobs: what the chunk's boards cost the player.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evaluated: Option<ChunkEvaluation>,
    },
    /// The value of the game.
    StartValue(f64),
}

/// The index of one layer, written once its merges are committed: every part
/// with its group count and chunks. Readers (queries, plots) find a state's
/// chunk through it: part from the state, group from its tiles
/// ([`crate::part::group_of`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerIndex {
    /// Tile sum.
    pub sum: u32,
    /// Parts of the layer, by max tile.
    pub parts: Vec<PartIndex>,
}

/// One part in a [`LayerIndex`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartIndex {
    /// The part.
    pub part: PartId,
    /// Its number of hash groups.
    pub groups: u32,
    /// Its chunks, in (group, index) order.
    pub chunks: Vec<ChunkRef>,
    /// The same chunks with their values and policy, once the layer is
    /// solved (empty before).
    #[serde(default)]
    pub solved: Vec<SolvedRef>,
}

/// What a finished job writes last (`summary.json`): its presence marks the
/// store as solved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolvedSummary {
    /// Non-terminal canonical states.
    pub states: u64,
    /// Value of the game from the random start.
    pub start_value: f64,
    /// Result digest (see [`result_digest`]).
    pub digest: String,
    /// Tile sums of every layer, ascending.
    pub layers: Vec<u32>,
    /// Evaluation jobs: the player's value beside the optimal one, and
    /// where it loses the most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluation: Option<EvaluationSummary>,
}

/// An order-independent digest of solved states: the wrapping sum over states
/// of a hash of (state, value bits, action). Digests of chunks add up to the
/// digest of the whole job, whatever the chunking, so two runs agree bit for
/// bit exactly when their digests (and counts) agree.
pub fn result_digest(states: &[u64], values: &[f64], actions: &[u8]) -> u64 {
    use crate::part::mix;
    states
        .iter()
        .zip(values)
        .zip(actions)
        .fold(0u64, |acc, ((&s, &v), &a)| {
            acc.wrapping_add(mix(s ^ mix(v.to_bits() ^ mix(a as u64))))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_and_merges_are_cut_by_chunks() {
        assert_eq!(gather_cuts(0, 0, 100), (1, 1));
        assert_eq!(gather_cuts(100, 200, 100), (1, 1));
        assert_eq!(gather_cuts(101, 200, 100), (2, 1));
        // Up to 2 chunks of distinct keys a slice, 16 chunks read a task.
        assert_eq!(gather_cuts(100, 201, 100), (1, 2));
        assert_eq!(gather_cuts(1000, 2000, 100), (10, 2));
        assert_eq!(gather_cuts(1000, 1600, 100), (10, 1));
        assert_eq!(merge_pieces(0, 100), 1);
        assert_eq!(merge_pieces(800, 100), 1);
        assert_eq!(merge_pieces(801, 100), 2);
    }
}
