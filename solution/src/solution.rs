//! A solved store opened for questions: the value and optimal action of any
//! canonical state, found through the layer index.
//!
//! A state is found through its layer's index: its tile sum names the layer,
//! its max tile the part, its tiles the group; the group's few chunks are
//! read (verified) once and kept in memory for later lookups.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use solve2048_core::chain::Chain;
use solve2048_core::formats::chunk::{
    ChunkHeader, ChunkKind, SolvedChunk, FORMAT_VERSION, OLDEST_READABLE_VERSION,
};
use solve2048_core::kernel;
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::rules::spawn::for_each_spawn;
use solve2048_core::space::ids::{group_of, ChunkId};
use solve2048_core::task::{
    result_digest, solve_key, JobSpec, LayerIndex, ManifestError, SolvedRef, SolvedSummary,
    TaskOutput,
};
use solve2048_core::{Board, Direction, Game};
use solve2048_store::{layout, Store, StoreError};

/// Why a question about a solution could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The store has no job at all.
    #[error("store {location} holds no solve2048 job (no job.json)")]
    NoJob {
        /// Store location.
        location: String,
    },
    /// The job exists but has not finished.
    #[error("store {location} is not solved yet ({game}): finish it with `solve2048 solve` first")]
    NotSolved {
        /// Store location.
        location: String,
        /// The game.
        game: String,
    },
    /// Another format version.
    #[error(
        "store {location} uses chunk format version {found}; this build reads versions \
         {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
    )]
    FormatVersion {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// A board written wrong (shape, cell or hex form).
    #[error(transparent)]
    BadBoard(#[from] solve2048_core::rules::board::BoardParseError),
    /// A store that solves another game than the one asked for.
    #[error("store {location} solves {solved}, not {asked}")]
    OtherGame {
        /// Store location.
        location: String,
        /// The game the store solves.
        solved: String,
        /// The game asked for.
        asked: String,
    },
    /// A board of another shape than the game's.
    #[error("the board is {found} but the store solves {game}")]
    WrongSize {
        /// The board's shape.
        found: solve2048_core::Shape,
        /// The game.
        game: String,
    },
    /// A board no play of this game reaches.
    #[error("board {board} is not reachable in {game}")]
    Unreachable {
        /// The board as text.
        board: String,
        /// The game.
        game: String,
    },
    /// A JSON record that does not parse.
    #[error("record {object} is damaged: {reason}")]
    Damaged {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// Reading the store failed or an object was rejected.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A solved chunk that reads back but does not agree with the job's
    /// records (wrong order, or totals that differ from the summary).
    #[error("verification failed at {object}: {reason}")]
    Mismatch {
        /// The object (or record) that disagrees.
        object: String,
        /// How.
        reason: String,
    },
}

/// A solved chunk read back: its states, values and policy.
pub(crate) struct Loaded {
    pub(crate) states: Vec<u64>,
    pub(crate) values: Vec<f64>,
    pub(crate) policy: Vec<u8>,
}

/// A chunk being read back (boxed: reading one whose values are
/// recomputed looks up chunks of the layers above). Concurrent look-ups of
/// a chunk not yet kept each read it.
type ChunkRead<'a> = Pin<Box<dyn Future<Output = Result<Arc<Loaded>, QueryError>> + Send + 'a>>;

/// States a chunk's values are recomputed by at once
/// ([`Solution::recompute`]): their spawns' keys and values, at most 30 of
/// each a state, stay a few MiB.
const RECOMPUTE_BATCH: usize = 1 << 14;

/// A solved store, opened for questions.
pub struct Solution {
    pub(crate) store: Store,
    pub(crate) game: Game,
    /// The job: which layers' values the store holds.
    job: JobSpec,
    summary: SolvedSummary,
    pub(crate) mover: Mover,
    // std Mutexes: held only for map look-ups and inserts, never across an await.
    layers: Mutex<HashMap<u32, Option<Arc<LayerIndex>>>>,
    chunks: Mutex<HashMap<ChunkId, Arc<Loaded>>>,
}

impl Solution {
    /// Open a solved store.
    pub async fn open(store: Store) -> Result<Solution, QueryError> {
        let location = store.location().to_string();
        let manifest = store
            .get(layout::JOB)
            .await?
            .ok_or_else(|| QueryError::NoJob {
                location: location.clone(),
            })?;
        let manifest = solve2048_store::record::manifest(&manifest).map_err(|e| match e {
            ManifestError::Version { found } => QueryError::FormatVersion {
                location: location.clone(),
                found,
            },
            ManifestError::Damaged(e) => QueryError::Damaged {
                object: layout::JOB.to_string(),
                reason: Chain(&*e).to_string(),
            },
        })?;
        let job = manifest.job;
        let game = job.game;
        let summary =
            store
                .get_json_opt(layout::SUMMARY)
                .await?
                .ok_or_else(|| QueryError::NotSolved {
                    location: location.clone(),
                    game: game.name(),
                })?;
        Ok(Solution {
            store,
            game,
            job,
            summary,
            mover: Mover::new(game.shape),
            layers: Mutex::new(HashMap::new()),
            chunks: Mutex::new(HashMap::new()),
        })
    }

    /// The game solved.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The summary written at the end of the solve.
    pub fn summary(&self) -> &SolvedSummary {
        &self.summary
    }

    pub(crate) async fn layer(&self, sum: u32) -> Result<Option<Arc<LayerIndex>>, QueryError> {
        if let Some(l) = self.layers.lock().unwrap().get(&sum) {
            return Ok(l.clone());
        }
        let object = layout::layer_index(sum);
        let index = self
            .store
            .get_json_opt::<LayerIndex>(&object)
            .await?
            .map(Arc::new);
        self.layers.lock().unwrap().insert(sum, index.clone());
        Ok(index)
    }

    /// A solved chunk, read once and kept (boxed: a chunk whose values are
    /// recomputed looks up chunks of the layers above).
    pub(crate) fn chunk<'a>(&'a self, solved: &'a SolvedRef) -> ChunkRead<'a> {
        Box::pin(async move {
            let id = solved.chunk.id;
            if let Some(c) = self.chunks.lock().unwrap().get(&id) {
                return Ok(c.clone());
            }
            let loaded = Arc::new(self.read_chunk(solved).await?);
            self.chunks.lock().unwrap().insert(id, loaded.clone());
            Ok(loaded)
        })
    }

    /// Read and verify a solved chunk's states, values and policy (uncached);
    /// the values of a layer the store does not hold
    /// ([`JobSpec::stores_values`]) are recomputed.
    pub(crate) async fn read_chunk(&self, solved: &SolvedRef) -> Result<Loaded, QueryError> {
        let h = |kind| ChunkHeader {
            kind,
            game: self.game,
            id: solved.chunk.id,
            count: solved.chunk.count,
        };
        let states = self
            .store
            .read_keys(&layout::states_of(&solved.chunk), &h(ChunkKind::States))
            .await?;
        let policy = self
            .store
            .read_policy(&layout::policy_of(solved), &h(ChunkKind::Policy))
            .await?;
        if !self.job.stores_values(solved.chunk.id.part.sum) {
            let values = self.recompute(solved, &states, &policy).await?;
            self.check_recomputed(solved, (&states, &values, &policy))
                .await?;
            return Ok(Loaded {
                states,
                values,
                policy,
            });
        }
        let solved_chunk = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let values = self
            .store
            .read_values(
                &layout::values_of(solved),
                &h(ChunkKind::Values),
                solved_chunk,
            )
            .await?;
        Ok(Loaded {
            states,
            values,
            policy,
        })
    }

    /// Check the values recomputed for the chunk `solved` against those its
    /// solve found: the result digest its commit record names.
    async fn check_recomputed(
        &self,
        solved: &SolvedRef,
        (states, values, policy): (&[u64], &[f64], &[u8]),
    ) -> Result<(), QueryError> {
        let object = layout::commit(&solve_key(&solved.chunk.id));
        let Some(TaskOutput::Solved { digest, .. }) = self.store.get_json_opt(&object).await?
        else {
            return Err(QueryError::Damaged {
                object,
                reason: "missing, or not the record of a solved chunk".into(),
            });
        };
        let found = result_digest(states, values, policy);
        if found != digest {
            return Err(QueryError::Mismatch {
                object,
                reason: format!(
                    "the values recomputed from the layers above have result digest \
                     {found:016x}, the solve's {digest:016x}"
                ),
            });
        }
        Ok(())
    }

    /// The values of the chunk `solved` of `states` with `policy`, in a
    /// layer whose values the store does not hold: each state's optimal
    /// move valued by the solver's formula ([`kernel::action_value`], the
    /// same bits) from its spawns' values, looked up in the layers above
    /// (recomputed in turn where they are not held, at most three layers
    /// deep).
    async fn recompute(
        &self,
        solved: &SolvedRef,
        states: &[u64],
        policy: &[u8],
    ) -> Result<Vec<f64>, QueryError> {
        let mut values = Vec::with_capacity(states.len());
        for (states, policy) in states
            .chunks(RECOMPUTE_BATCH)
            .zip(policy.chunks(RECOMPUTE_BATCH))
        {
            values.extend(self.recompute_batch(solved, states, policy).await?);
        }
        Ok(values)
    }

    /// [`Solution::recompute`] of a batch of states: the distinct spawns of
    /// their moves looked up once, then each move valued.
    async fn recompute_batch(
        &self,
        solved: &SolvedRef,
        states: &[u64],
        policy: &[u8],
    ) -> Result<Vec<f64>, QueryError> {
        let game = self.game;
        let damaged = |reason: String| QueryError::Mismatch {
            object: layout::policy_of(solved),
            reason,
        };
        let mut moves = Vec::with_capacity(states.len());
        for (&s, &code) in states.iter().zip(policy) {
            let dir = Direction::from_code(code)
                .ok_or_else(|| damaged(format!("action code {code} is no move")))?;
            let t = self.mover.apply(s, dir);
            if t == s {
                return Err(damaged(format!("the move of state {s:#x} is illegal")));
            }
            moves.push(t);
        }
        let missing = |key: u64| damaged(format!("a spawn {key:#x} of its moves is in no chunk"));
        let values = self.spawn_values(&moves, missing).await?;
        (states.iter().zip(moves))
            .map(|(&s, t)| {
                kernel::action_value(&game, &self.mover, s, t, |k| {
                    values.get(&k).copied().ok_or(k)
                })
                .map_err(|k| damaged(format!("no value for spawn {k:#x}")))
            })
            .collect()
    }

    /// The values of the spawns [`kernel::action_value`] asks for on the
    /// moves to each of `moves` (boards before the spawn), each looked up
    /// once: none for a move that makes the target tile, and none of a tile
    /// the rule never spawns or of a lost board (the store need not hold
    /// them). A spawn no chunk holds is `missing(spawn)`.
    pub(crate) async fn spawn_values(
        &self,
        moves: &[u64],
        missing: impl Fn(u64) -> QueryError,
    ) -> Result<HashMap<u64, f64>, QueryError> {
        let game = self.game;
        let rule = game.spawn_rule();
        let mut keys = Vec::new();
        for &t in moves.iter().filter(|&&t| !has_exponent(t, game.target_exp)) {
            for_each_spawn(t, game.shape, |two, four| {
                for (key, tile) in [(two, 1), (four, 2)] {
                    if rule.spawns(tile) && !self.mover.is_lost(key) {
                        keys.push(key);
                    }
                }
            });
        }
        keys.sort_unstable();
        keys.dedup();
        let mut values = HashMap::with_capacity(keys.len());
        for key in keys {
            let (v, _) = self.lookup(key).await?.ok_or_else(|| missing(key))?;
            values.insert(key, v);
        }
        Ok(values)
    }

    /// Drop the chunks that earlier look-ups kept, of every layer of tile
    /// sum below `sum`: a reader that walks the layers upwards (an export
    /// with each move's value) keeps only the layers it still needs.
    pub fn forget_chunks_below(&self, sum: u32) {
        self.chunks
            .lock()
            .unwrap()
            .retain(|id, _| id.part.sum >= sum);
    }

    /// Value and optimal action (in the canonical orientation) of a canonical
    /// non-terminal state; None when no play reaches it.
    pub async fn lookup(&self, state: u64) -> Result<Option<(f64, Direction)>, QueryError> {
        let b = Board(state);
        let Some(layer) = self.layer(b.tile_sum()).await? else {
            return Ok(None);
        };
        let Some(part) = layer
            .parts
            .iter()
            .find(|p| p.part.max_exp == b.max_exponent())
        else {
            return Ok(None);
        };
        let group = group_of(state, part.groups);
        for c in part.solved.iter().filter(|c| c.chunk.id.group == group) {
            let loaded = self.chunk(c).await?;
            if let Ok(i) = loaded.states.binary_search(&state) {
                let dir = Direction::from_code(loaded.policy[i]).unwrap_or(Direction::Left);
                return Ok(Some((loaded.values[i], dir)));
            }
        }
        Ok(None)
    }
}
