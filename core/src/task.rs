//! The task model: what a coordinator hands a worker and what the worker
//! reports back. Pure data (serde), so the same tasks run in-process or over
//! the network.
//!
//! Forward: one [`Task::Seed`] writes the start states as runs; for each layer
//! in increasing tile sum, [`Task::Merge`] turns the runs of one group of one
//! part into final chunks, then [`Task::Enumerate`] turns each chunk into runs
//! for the parts two and four tile-sum steps up. Backward: for each layer in
//! decreasing tile sum, [`Task::Solve`] writes one chunk's values and policy.
//! [`Task::StartValue`] finally takes the expectation over the start.

use serde::{Deserialize, Serialize};

use crate::part::{ChunkId, PartId};

/// The whole job a task belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    /// The game.
    pub game: crate::Game,
    /// Largest number of states in one chunk.
    pub chunk_size: u64,
    /// zstd compression level of written chunks.
    pub zstd_level: i32,
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

/// A stored chunk of states (and, once solved, of values and policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// Which chunk.
    pub id: ChunkId,
    /// Number of states.
    pub count: u64,
    /// Payload checksum of the states object.
    pub checksum: u64,
}

/// A stored run: sorted successors of one source for one group of one part.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Target part.
    pub part: PartId,
    /// Target group.
    pub group: u32,
    /// Object name.
    pub object: String,
    /// Number of keys.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
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
    /// Successors of one chunk, as runs.
    Enumerate {
        /// The source chunk.
        chunk: ChunkRef,
        /// Group counts of every part a successor can fall in.
        targets: Vec<TargetGroups>,
    },
    /// Merge the runs of one group of one part into final chunks.
    Merge {
        /// The part.
        part: PartId,
        /// The group.
        group: u32,
        /// Its runs.
        runs: Vec<RunRef>,
    },
    /// Values and optimal actions of one chunk.
    Solve {
        /// The chunk.
        chunk: ChunkRef,
        /// Every chunk of the layers with tile sum +2 and +4.
        next: Vec<ChunkRef>,
    },
    /// Expected value over the random start.
    StartValue {
        /// Every chunk of the layers a start state can be in.
        layers: Vec<ChunkRef>,
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
            Task::Merge { part, group, .. } => {
                format!("merge-s{:05}-m{:02}-g{:04}", part.sum, part.max_exp, group)
            }
            Task::Solve { chunk, .. } => format!("solve-{}", c(&chunk.id)),
            Task::StartValue { .. } => "start-value".to_string(),
        }
    }
}

/// What a finished task produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskOutput {
    /// Runs written (seed and enumerate).
    Runs(Vec<RunRef>),
    /// Final state chunks written (merge), in group order.
    Chunks(Vec<ChunkRef>),
    /// Values and policy written (solve).
    Solved {
        /// Payload checksum of the values object.
        values_checksum: u64,
        /// Payload checksum of the policy object.
        policy_checksum: u64,
        /// [`result_digest`] of the chunk's states, values and actions.
        digest: u64,
    },
    /// The value of the game.
    StartValue(f64),
}

/// The index of one layer, written once its merges are committed: every part
/// with its group count and chunks. Readers (queries, plots) find a state's
/// chunk through it: part from the state, group from its hash.
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

/// Object names in the store, relative to the job's root.
pub mod layout {
    use super::*;

    fn chunk_path(kind: &str, id: &ChunkId) -> String {
        format!(
            "{kind}/s{:05}/m{:02}/g{:04}-c{:04}.chunk",
            id.part.sum, id.part.max_exp, id.group, id.index
        )
    }

    /// The job manifest.
    pub const JOB: &str = "job.json";

    /// States of a chunk.
    pub fn states(id: &ChunkId) -> String {
        chunk_path("states", id)
    }

    /// Values of a chunk.
    pub fn values(id: &ChunkId) -> String {
        chunk_path("values", id)
    }

    /// Optimal actions of a chunk.
    pub fn policy(id: &ChunkId) -> String {
        chunk_path("policy", id)
    }

    /// A run for `group` of `part`, from `source` (a chunk, or the seed).
    pub fn run(part: &PartId, group: u32, source: Option<&ChunkId>) -> String {
        let from = match source {
            Some(id) => format!(
                "s{:05}-m{:02}-g{:04}-c{:04}",
                id.part.sum, id.part.max_exp, id.group, id.index
            ),
            None => "seed".to_string(),
        };
        format!(
            "runs/s{:05}/m{:02}/g{:04}/from-{from}.run",
            part.sum, part.max_exp, group
        )
    }

    /// The index of layer `sum`.
    pub fn layer_index(sum: u32) -> String {
        format!("layers/s{sum:05}.json")
    }

    /// The summary of a solved job.
    pub const SUMMARY: &str = "summary.json";

    /// Commit record of a task.
    pub fn commit(task_key: &str) -> String {
        format!("commits/{task_key}.json")
    }
}
