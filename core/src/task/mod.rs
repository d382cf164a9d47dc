//! The task model: what a coordinator hands a worker and what the worker
//! reports back. Pure data (serde), so the same tasks run in-process or over
//! the network.
//!
//! Forward: one [`Task::Seed`] writes the start states as runs; for each layer
//! in increasing tile sum, [`Task::Expand`] turns the runs of one group of
//! one part into final chunks (the spawns of its afterstate runs and the
//! keys of its state runs, sorted and distinct; a group too large to sort
//! at once comes out as sorted state runs, which [`Task::Merge`] then turns
//! into chunks), then [`Task::Enumerate`] turns each chunk into its distinct
//! afterstates, filed as runs by the group their spawns of each tile land
//! in, for the layers two and four tile-sum steps up. Each state's moves
//! and canonical forms are made once, and a chunk sends about two keys a
//! state (its afterstates, once a tile) to the layers above, not every
//! successor.
//!
//! Backward, for each layer L in decreasing tile sum: [`Task::Solve`] writes
//! one chunk's values and policy from its responses, and beside it
//! [`Task::Ask`] writes the requests of one chunk of layer L-4 (and, at the
//! top, of L-2): its distinct afterstates, by the group their spawns land
//! in; then [`Task::Gather`] answers, for one group of layer L, the requests
//! of layers L-2 (spawned 2s) and L-4 (spawned 4s): for each afterstate, the
//! sum of the values of its spawns, which all lie in that group (the sums
//! only: the solve of L-2 or L-4 reads its chunk's requests beside them for
//! their keys). Requests are made just before they are needed, so they live
//! from the ask to their chunk's solve, two layers at a time, not from the
//! forward pass to the backward one. (An evaluation job's enumerate writes them in
//! the forward pass, with the player's masses.) So a task reads one chunk
//! or one group and what was addressed to it, never a whole layer, and the
//! bytes read do not depend on the number of workers. [`Task::StartValue`] finally
//! takes the expectation over the start.
//!
//! Beside the task model:
//! - [`footprint`]: the memory each task holds, by which workers admit tasks
//!   and `plan` sizes workers.
//! - [`evaluation`]: evaluating a player exactly, as a mode of the same job:
//!   what it compares with and what it reports.

use serde::{Deserialize, Serialize};

mod cuts;
pub mod evaluation;
pub mod footprint;
mod job;
mod objects;

pub use cuts::{
    gather_cuts, merge_pieces, run_frame_keys, EXPAND_CHUNKS, GATHER_ANSWER_CHUNKS,
    GATHER_READ_CHUNKS, GATHER_SLICE_CHUNKS, MERGE_RUN_CHUNKS, PIECE_CHUNKS, RUN_FRAMES_PER_CHUNK,
    SLICE_INSERT_KEYS, SPAWNS_PER_AFTERSTATE,
};
pub use job::{
    result_digest, values_recomputed, JobManifest, JobSpec, LayerIndex, ManifestError, PartIndex,
    Phase, SolvedSummary, StageKind,
};
pub use objects::{
    frames_checksum, AttemptId, ChunkRef, PieceRef, PushRef, RequestRef, ResponseRef, RunFrame,
    RunRef, SolvedRef, RUN_SAMPLES,
};

use crate::space::ids::{ChunkId, PartId};
use crate::task::evaluation::ChunkEvaluation;

/// Default largest number of states in one chunk. Larger chunks share more
/// afterstates inside one enumerate task, so fewer keys go through the
/// runs, and a layer of fewer chunks makes fewer store requests (they grow
/// with the square of its chunks); the tasks' memory grows with it
/// ([`footprint`]).
pub const DEFAULT_CHUNK_SIZE: u64 = 1 << 22;

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
/// the afterstates asked of it ([`crate::space::ids::slice_of`]: the spawns of an
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
    /// Successors of one chunk, as runs (and, in an evaluation job, its
    /// requests and pushes).
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
    /// The states of one group of one part from its runs: the spawns of
    /// its afterstate runs and the keys of its state runs, sorted and
    /// distinct, as final chunks; or, for a group whose spawns are too many
    /// to sort at once, as sorted runs of states for [`Task::Merge`].
    Expand {
        /// The part.
        part: PartId,
        /// The group.
        group: u32,
        /// Its runs.
        runs: Vec<RunRef>,
    },
    /// Merge the state runs of one group of one part (or of one key range
    /// of a large group) into final chunks.
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
    /// The requests of one chunk: its distinct afterstates, by the group
    /// their spawns of each tile land in.
    Ask {
        /// The chunk.
        chunk: ChunkRef,
        /// Group counts of every part a successor can fall in.
        targets: Vec<TargetGroups>,
    },
    /// Values and optimal actions of one chunk.
    Solve {
        /// The chunk.
        chunk: ChunkRef,
        /// The answers to its requests (every group its afterstates' spawns
        /// land in, for both tiles).
        responses: Vec<ResponseRef>,
        /// Its own requests (what its ask wrote; an evaluation's enumerate):
        /// the afterstates each response's sums are for.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requests: Vec<RequestRef>,
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

/// The key of the task that solves chunk `id` ([`Task::key`] of a
/// [`Task::Solve`]), which names its commit record.
pub fn solve_key(id: &ChunkId) -> String {
    format!("solve-{}", id.name())
}

impl Task {
    /// What kind of task it is, the kind of the stage that runs it.
    pub fn kind(&self) -> StageKind {
        match self {
            Task::Seed { .. } => StageKind::Seed,
            Task::Enumerate { .. } => StageKind::Enumerate,
            Task::Expand { .. } => StageKind::Expand,
            Task::Merge { .. } => StageKind::Merge,
            Task::Ask { .. } => StageKind::Ask,
            Task::Solve { .. } => StageKind::Solve,
            Task::Gather { .. } => StageKind::Gather,
            Task::StartValue { .. } => StageKind::Start,
        }
    }

    /// A stable, unique name: the commit record's object name derives from it.
    pub fn key(&self) -> String {
        let c = ChunkId::name;
        match self {
            Task::Seed { .. } => "seed".to_string(),
            Task::Enumerate { chunk, .. } => format!("enumerate-{}", c(&chunk.id)),
            Task::Expand { part, group, .. } => {
                format!("expand-s{:05}-m{:02}-g{:04}", part.sum, part.max_exp, group)
            }
            Task::Merge {
                part, group, piece, ..
            } => {
                let key = format!("merge-s{:05}-m{:02}-g{:04}", part.sum, part.max_exp, group);
                match piece {
                    Some(p) => format!("{key}-p{:03}", p.index),
                    None => key,
                }
            }
            Task::Ask { chunk, .. } => format!("ask-{}", c(&chunk.id)),
            Task::Solve { chunk, .. } => solve_key(&chunk.id),
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
    /// It can never succeed: the task does not fit the job (a planner bug
    /// or a foreign task), or the store refuses a write. The job stops at
    /// once.
    Fatal,
    /// It can never succeed as the store is: an input the job committed is
    /// damaged or missing. The job stops at once, naming the object; a
    /// repair sets it aside and redoes the task that wrote it.
    Damaged,
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
    /// Runs written: the seed's start states; an expand's sorted states,
    /// when its group was too large to sort at once.
    Runs(Vec<RunRef>),
    /// Runs (and, in an evaluation job, requests) written (enumerate).
    Enumerated {
        /// Successor runs.
        runs: Vec<RunRef>,
        /// Evaluation jobs: the requests (a solve's come from [`Task::Ask`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        requests: Vec<RequestRef>,
        /// Evaluation jobs: the requests' afterstates with how likely the
        /// player makes them (in the requests' bundle).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pushes: Vec<PushRef>,
    },
    /// Requests written (ask).
    Requests(Vec<RequestRef>),
    /// Responses written (gather), one per request.
    Responses(Vec<ResponseRef>),
    /// Final state chunks written (expand, merge), in group order.
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
