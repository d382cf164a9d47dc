//! Names of stored objects and of attempts: chunks, runs, requests and
//! responses as tasks read and write them.

use serde::{Deserialize, Serialize};

use crate::part::{ChunkId, PartId};

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
