//! The job as a whole: what it solves, its manifest, the index of each
//! layer and the summary a finished job writes.

use serde::{Deserialize, Serialize};

use super::objects::{ChunkRef, SolvedRef};
use crate::space::ids::PartId;
use crate::task::evaluation::{Evaluation, EvaluationSummary};

/// The two passes of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Forward enumeration of the reachable states.
    Enumerate,
    /// Backward solve of values and policy.
    Solve,
}

/// What a stage's tasks do, one kind a stage: the forward pass's seed,
/// expand, merge and enumerate, the backward pass's ask, solve, gather and
/// start value. Written as its lowercase name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StageKind {
    /// The start states' runs.
    Seed,
    /// A group's states from the afterstates filed to it.
    Expand,
    /// A group's chunks from its sorted runs of states.
    Merge,
    /// A chunk's afterstates, filed by the groups their spawns land in.
    Enumerate,
    /// A chunk's requests for its afterstates' spawn sums.
    Ask,
    /// A chunk's values and policy.
    Solve,
    /// A group's answers to the requests addressed to it.
    Gather,
    /// The start value.
    Start,
}

impl StageKind {
    /// Its lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            StageKind::Seed => "seed",
            StageKind::Expand => "expand",
            StageKind::Merge => "merge",
            StageKind::Enumerate => "enumerate",
            StageKind::Ask => "ask",
            StageKind::Solve => "solve",
            StageKind::Gather => "gather",
            StageKind::Start => "start",
        }
    }

    /// Whether its tasks count toward the job's work in states: every state
    /// is enumerated once and solved once.
    pub fn counts_states(self) -> bool {
        matches!(self, StageKind::Enumerate | StageKind::Solve)
    }
}

impl std::fmt::Display for StageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
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
    /// as they lie; see [`crate::task::evaluation`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evaluate: Option<Evaluation>,
    /// Keep the values of only two layers in every five once the job is
    /// solved ([`JobSpec::stores_values`]); readers recompute the others
    /// from the policy and the layers above. Off unless asked for.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recompute_values: bool,
}

/// How many consecutive layers (by tile sum, in steps of 2) a store with
/// recomputed values ([`JobSpec::recompute_values`]) leaves without values
/// in each [`VALUE_PERIOD`]: a state's successors lie one and two layers
/// up, so a recomputed value reaches stored ones within this many steps.
const RECOMPUTED_LAYERS: u32 = 3;

/// The period, in layers, of the layers whose values a store with
/// recomputed values keeps: two consecutive layers kept, then
/// [`RECOMPUTED_LAYERS`] recomputed.
const VALUE_PERIOD: u32 = RECOMPUTED_LAYERS + 2;

/// Whether a solved store with recomputed values
/// ([`JobSpec::recompute_values`]) leaves the values of layer `sum` to be
/// recomputed: all but those of the start layers (sums 4 to 8, which the
/// start value reads) and of two layers in every [`VALUE_PERIOD`] (half
/// the sum modulo the period 0 or 1).
pub fn values_recomputed(sum: u32) -> bool {
    sum > 8 && (sum / 2) % VALUE_PERIOD >= 2
}

impl JobSpec {
    /// Whether the solved store holds the values of layer `sum`: always,
    /// unless [`JobSpec::recompute_values`] and [`values_recomputed`].
    pub fn stores_values(&self, sum: u32) -> bool {
        !(self.recompute_values && values_recomputed(sum))
    }

    /// Whether the store holds the values of layer `sum` now: every
    /// layer's until the job is `solved` (its summary written), then
    /// [`JobSpec::stores_values`].
    pub fn holds_values(&self, sum: u32, solved: bool) -> bool {
        !solved || self.stores_values(sum)
    }
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
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Written by a format version this build does not read.
    #[error(
        "format version {found}; this build reads versions {} to {}",
        crate::formats::chunk::OLDEST_READABLE_VERSION,
        crate::formats::chunk::FORMAT_VERSION
    )]
    Version {
        /// Version found.
        found: u16,
    },
    /// Not a manifest: its cause (not a sealed record, a checksum mismatch,
    /// JSON that does not parse as a manifest).
    #[error(transparent)]
    Damaged(Box<dyn std::error::Error + Send + Sync>),
}

impl JobManifest {
    /// Parse `job.json`, checking the format version before the shape so that
    /// an older or newer store gets a version message, not a parse error. A
    /// store of an older version this build reads parses (its chunks say how
    /// they are coded); only a solve refuses to add to it.
    pub fn parse(bytes: &[u8]) -> Result<JobManifest, ManifestError> {
        let damaged = |e: serde_json::Error| ManifestError::Damaged(Box::new(e));
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(damaged)?;
        let found = value
            .get("format_version")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u16;
        use crate::formats::chunk::{FORMAT_VERSION, OLDEST_READABLE_VERSION};
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&found) {
            return Err(ManifestError::Version { found });
        }
        serde_json::from_value(value).map_err(damaged)
    }
}

/// The index of one layer, written once its merges are committed: every part
/// with its group count and chunks. Readers (queries, plots) find a state's
/// chunk through it: part from the state, group from its tiles
/// ([`crate::space::ids::group_of`]).
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
/// bit exactly when their digests (and counts) agree. A large chunk's is
/// summed in pieces on all threads, so that neither a reader checking it
/// nor a solve (which sums it beside its policy's encoding) leaves a core
/// idle while one thread sums it.
pub fn result_digest(states: &[u64], values: &[f64], actions: &[u8]) -> u64 {
    use rayon::prelude::*;
    let digest = |((states, values), actions): ((&[u64], &[f64]), &[u8])| {
        use crate::space::ids::mix;
        (states.iter().zip(values).zip(actions)).fold(0u64, |acc, ((&s, &v), &a)| {
            acc.wrapping_add(mix(s ^ mix(v.to_bits() ^ mix(a as u64))))
        })
    };
    let n = states.len().min(values.len()).min(actions.len());
    let (states, values, actions) = (&states[..n], &values[..n], &actions[..n]);
    if n < 2 * DIGEST_PIECE {
        return digest(((states, values), actions));
    }
    (states.par_chunks(DIGEST_PIECE))
        .zip(values.par_chunks(DIGEST_PIECE))
        .zip(actions.par_chunks(DIGEST_PIECE))
        .map(digest)
        .reduce(|| 0, u64::wrapping_add)
}

/// States a piece of [`result_digest`] sums on one thread.
const DIGEST_PIECE: usize = 1 << 15;

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest summed in pieces on all threads is the sum of the digests
    /// of any cut of the states (here one state at a time, on one thread),
    /// and it tells a changed value bit, action or state apart.
    #[test]
    fn the_digest_of_pieces_is_the_sum_of_each_states() {
        use crate::space::ids::mix;
        let n = 5 * DIGEST_PIECE + 17;
        let states: Vec<u64> = (0..n as u64).map(|i| mix(i) | 1).collect();
        let values: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
        let actions: Vec<u8> = (0..n).map(|i| (i % 4) as u8).collect();
        let whole = result_digest(&states, &values, &actions);
        let each = (0..n).fold(0u64, |acc, i| {
            let one = result_digest(&states[i..=i], &values[i..=i], &actions[i..=i]);
            acc.wrapping_add(one)
        });
        assert_eq!(whole, each);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        assert_eq!(
            pool.install(|| result_digest(&states, &values, &actions)),
            whole
        );
        let mut other = values.clone();
        other[n / 2] = f64::from_bits(other[n / 2].to_bits() ^ 1);
        assert_ne!(result_digest(&states, &other, &actions), whole);
        let mut other = actions.clone();
        other[n - 1] ^= 1;
        assert_ne!(result_digest(&states, &values, &other), whole);
        let mut other = states.clone();
        other[0] ^= 2;
        assert_ne!(result_digest(&other, &values, &actions), whole);
    }

    /// With recomputed values, a layer's value is found from stored ones at
    /// most three layers up (its successors lie one and two layers up),
    /// three layers in five go without, and the start layers keep theirs;
    /// without, every layer keeps its values.
    #[test]
    fn recomputed_layers_reach_stored_ones_within_three_steps() {
        let job = |recompute_values| JobSpec {
            game: crate::Game::on(crate::Shape::square(3), 1024, 1.0).unwrap(),
            chunk_size: 1,
            zstd_level: 1,
            evaluate: None,
            recompute_values,
        };
        let (some, all) = (job(true), job(false));
        let top = 4000;
        let mut depth = vec![0u32; top as usize + 6];
        for sum in (4..=top).rev().step_by(2) {
            assert!(all.stores_values(sum));
            if !some.stores_values(sum) {
                let up = |d: u32| depth[(sum + d) as usize];
                depth[sum as usize] = 1 + up(2).max(up(4));
            }
        }
        assert_eq!(depth.iter().max(), Some(&RECOMPUTED_LAYERS));
        assert!((4..=8).step_by(2).all(|s| some.stores_values(s)));
        let dropped = (10..10 + 2 * 500)
            .step_by(2)
            .filter(|&s| !some.stores_values(s));
        assert_eq!(dropped.count(), 300);
    }
}
