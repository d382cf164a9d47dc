//! Reading a solved store: the value and optimal action of any board, in the
//! orientation the user gave, and seeded games played with the optimal policy.
//!
//! A state is found through the layer index: its tile sum names the layer, its
//! max tile the part, its hash the group; the group's few chunks are read
//! (verified) once and kept in memory for later lookups.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use solve2048_core::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::chunk::{ChunkHeader, ChunkKind, FORMAT_VERSION};
use solve2048_core::kernel;
use solve2048_core::moves::{has_exponent, Mover};
use solve2048_core::part::{group_of, ChunkId};
use solve2048_core::spawn::{empty_bits, for_each_spawn, P_FOUR, P_TWO};
use solve2048_core::table::ValueTable;
use solve2048_core::task::{
    layout, result_digest, JobManifest, LayerIndex, ManifestError, SolvedRef, SolvedSummary,
};
use solve2048_core::{Board, Direction, Game};

use crate::store::{Store, StoreError};

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
    #[error("store {location} uses chunk format version {found}; this build reads version {FORMAT_VERSION}")]
    FormatVersion {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// A board of another size than the game's.
    #[error("the board is {found}x{found} but the store solves {game}")]
    WrongSize {
        /// Board side given.
        found: usize,
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

/// What [`Solution::verify`] read and checked.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Verified {
    /// Layers read.
    pub layers: usize,
    /// Solved chunks read (each a states, a values and a policy object).
    pub chunks: usize,
    /// States read; equals the summary's count.
    pub states: u64,
    /// Result digest recomputed from every (state, value, action); equals
    /// the summary's.
    pub digest: String,
}

/// Where a board stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The target tile is on the board.
    Won,
    /// No legal move.
    Lost,
    /// Still playing.
    Playing,
}

/// The answer to a query, in the orientation of the board asked about.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Answer {
    /// Won, lost or playing.
    pub status: Status,
    /// Win probability under optimal play.
    pub value: f64,
    /// Value of each action (left, right, up, down); None where illegal.
    pub actions: [Option<f64>; 4],
    /// The optimal action (the stored policy, mapped to this orientation).
    pub best: Option<Direction>,
}

struct Loaded {
    states: Vec<u64>,
    values: Vec<f64>,
    policy: Vec<u8>,
}

/// A solved store, opened for questions.
pub struct Solution {
    store: Store,
    game: Game,
    summary: SolvedSummary,
    mover: Mover,
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
        let manifest = JobManifest::parse(&manifest).map_err(|e| match e {
            ManifestError::Version { found } => QueryError::FormatVersion {
                location: location.clone(),
                found,
            },
            ManifestError::Damaged(reason) => QueryError::Damaged {
                object: layout::JOB.to_string(),
                reason,
            },
        })?;
        let game = manifest.job.game;
        let summary = store
            .get(layout::SUMMARY)
            .await?
            .ok_or_else(|| QueryError::NotSolved {
                location: location.clone(),
                game: game.name(),
            })?;
        let summary = parse(layout::SUMMARY, &summary)?;
        Ok(Solution {
            store,
            game,
            summary,
            mover: Mover::new(game.size()),
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

    async fn layer(&self, sum: u32) -> Result<Option<Arc<LayerIndex>>, QueryError> {
        if let Some(l) = self.layers.lock().unwrap().get(&sum) {
            return Ok(l.clone());
        }
        let object = layout::layer_index(sum);
        let index = match self.store.get(&object).await? {
            Some(bytes) => Some(Arc::new(parse::<LayerIndex>(&object, &bytes)?)),
            None => None,
        };
        self.layers.lock().unwrap().insert(sum, index.clone());
        Ok(index)
    }

    async fn chunk(&self, solved: &SolvedRef) -> Result<Arc<Loaded>, QueryError> {
        let id = solved.chunk.id;
        if let Some(c) = self.chunks.lock().unwrap().get(&id) {
            return Ok(c.clone());
        }
        let loaded = Arc::new(self.read_chunk(solved).await?);
        self.chunks.lock().unwrap().insert(id, loaded.clone());
        Ok(loaded)
    }

    /// Read and verify a solved chunk's states, values and policy (uncached).
    async fn read_chunk(&self, solved: &SolvedRef) -> Result<Loaded, QueryError> {
        let h = |kind| ChunkHeader {
            kind,
            game: self.game,
            id: solved.chunk.id,
            count: solved.chunk.count,
        };
        let states = self
            .store
            .read_keys(&solved.chunk.states_object(), &h(ChunkKind::States))
            .await?;
        let values = self
            .store
            .read_values(&solved.values_object(), &h(ChunkKind::Values))
            .await?;
        let policy = self
            .store
            .read_policy(&solved.policy_object(), &h(ChunkKind::Policy))
            .await?;
        Ok(Loaded {
            states,
            values,
            policy,
        })
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

    /// Answer for a board given by a person (any orientation, side `n`).
    pub async fn query(&self, board: u64, n: usize) -> Result<Answer, QueryError> {
        let game = self.game;
        if n != game.size() || !Board(board).fits(game.size()) {
            return Err(QueryError::WrongSize {
                found: n,
                game: game.name(),
            });
        }
        let unreachable = || QueryError::Unreachable {
            board: Board(board).to_text(n),
            game: game.name(),
        };
        if has_exponent(board, game.target_exp) {
            return Ok(Answer {
                status: Status::Won,
                value: 1.0,
                actions: [None; 4],
                best: None,
            });
        }
        if self.mover.is_lost(board) {
            return Ok(Answer {
                status: Status::Lost,
                value: 0.0,
                actions: [None; 4],
                best: None,
            });
        }
        let (canon, g) = canonical_with_symmetry(board, n);
        let (value, canon_best) = self.lookup(canon).await?.ok_or_else(unreachable)?;
        // Look up every non-terminal successor, then evaluate the moves with
        // the solver's own formula (kernel::action_values), in this orientation.
        let sum = Board(board).tile_sum();
        let mut successors = Vec::new();
        for dir in Direction::ALL {
            let t = self.mover.apply(board, dir);
            if t != board && !has_exponent(t, game.target_exp) {
                for_each_spawn(t, n, self.mover.tables(), |two, four| {
                    successors.push((two, four))
                });
            }
        }
        let plus2 = ValueTable::with_capacity(successors.len());
        let plus4 = ValueTable::with_capacity(successors.len());
        for &(two, four) in &successors {
            for (key, table) in [(two, &plus2), (four, &plus4)] {
                if !self.mover.is_lost(key) {
                    let (v, _) = self.lookup(key).await?.ok_or_else(unreachable)?;
                    table.insert(key, v);
                }
            }
        }
        let actions = kernel::action_values(&game, &self.mover, sum, board, &plus2, &plus4)
            .map_err(|_| unreachable())?;
        let best = direction_image(canon_best, inverse(g));
        Ok(Answer {
            status: Status::Playing,
            value,
            actions,
            best: Some(best),
        })
    }
}

fn parse<T: serde::de::DeserializeOwned>(object: &str, bytes: &[u8]) -> Result<T, QueryError> {
    serde_json::from_slice(bytes).map_err(|e| QueryError::Damaged {
        object: object.to_string(),
        reason: e.to_string(),
    })
}

/// A small, fully specified random number generator (splitmix64), so that a
/// seed gives the same game on every platform and version.
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        solve2048_core::part::mix(self.0.wrapping_sub(0x9E37_79B9_7F4A_7C15))
    }

    /// A uniform integer below `k`.
    pub fn below(&mut self, k: u64) -> u64 {
        ((self.next_u64() as u128 * k as u128) >> 64) as u64
    }

    /// Place a tile by the spawn rule: uniform empty cell, 4 with probability 0.1.
    pub fn spawn(&mut self, x: u64, n: usize) -> u64 {
        let mut empties = empty_bits(x, n);
        let k = empties.count_ones() as u64;
        for _ in 0..self.below(k) {
            empties &= empties - 1;
        }
        let cell = empties.trailing_zeros();
        let four = ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < P_FOUR;
        x | ((if four { 2u64 } else { 1 }) << cell)
    }
}

/// One move of a played game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Step {
    /// Board before the move (hex).
    pub board: String,
    /// Win probability of that board under optimal play.
    pub value: f64,
    /// The move played.
    pub action: Direction,
}

/// A played game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Played {
    /// The seed.
    pub seed: u64,
    /// Every move.
    pub steps: Vec<Step>,
    /// The final board (hex).
    pub last: String,
    /// Whether the target was reached.
    pub won: bool,
}

impl Solution {
    /// Play one game with the optimal policy and tiles drawn from `seed`;
    /// `on_step` sees each board before its move.
    pub async fn play(
        &self,
        seed: u64,
        mut on_step: impl FnMut(&Step),
    ) -> Result<Played, QueryError> {
        let n = self.game.size();
        let mut rng = SeededRng::new(seed);
        let mut x = rng.spawn(0, n);
        x = rng.spawn(x, n);
        let mut steps = Vec::new();
        loop {
            if has_exponent(x, self.game.target_exp) || self.mover.is_lost(x) {
                break;
            }
            let (canon, g) = canonical_with_symmetry(x, n);
            let (value, best) =
                self.lookup(canon)
                    .await?
                    .ok_or_else(|| QueryError::Unreachable {
                        board: Board(x).to_text(n),
                        game: self.game.name(),
                    })?;
            let action = direction_image(best, inverse(g));
            let step = Step {
                board: format!("{:#018x}", x),
                value,
                action,
            };
            on_step(&step);
            steps.push(step);
            x = rng.spawn(self.mover.apply(x, action), n);
        }
        let won = has_exponent(x, self.game.target_exp);
        Ok(Played {
            seed,
            steps,
            last: format!("{x:#018x}"),
            won,
        })
    }
}

/// Visit probabilities under optimal play from the random start.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Occupancy {
    /// Probability that the game ends won.
    pub win: f64,
    /// Probability that the game ends lost.
    pub lose: f64,
    /// Expected number of moves until the game ends (each visited
    /// non-terminal state is left by exactly one move).
    pub expected_moves: f64,
    /// States visited with nonzero probability.
    pub visited_states: u64,
}

impl Solution {
    /// The forward pass under the optimal policy: layer by layer in increasing
    /// tile sum, each state's visit probability flows through its optimal move
    /// to its successors. `on_state(state, probability, action)` sees every
    /// visited state (in canonical orientation), layer by layer, in state
    /// order. Holds the probabilities of three layers at a time.
    pub async fn occupancy(
        &self,
        mut on_state: impl FnMut(u64, f64, Direction),
    ) -> Result<Occupancy, QueryError> {
        use std::collections::BTreeMap;
        let n = self.game.size();
        let starts = solve2048_core::spawn::Starts::new(n);
        let mut pending: BTreeMap<u32, HashMap<u64, f64>> = BTreeMap::new();
        for &s in starts.weights.keys() {
            *pending
                .entry(Board(s).tile_sum())
                .or_default()
                .entry(s)
                .or_default() += starts.probability(s);
        }
        let (mut win, mut lose, mut moves, mut visited) = (0.0f64, 0.0f64, 0.0f64, 0u64);
        while let Some((sum, layer)) = pending.pop_first() {
            // Sorted, so that every sum is taken in the same order on every run.
            let mut layer: Vec<(u64, f64)> = layer.into_iter().collect();
            layer.sort_unstable_by_key(|&(s, _)| s);
            for (s, p) in layer {
                let (_, action) = self
                    .lookup(s)
                    .await?
                    .ok_or_else(|| QueryError::Unreachable {
                        board: Board(s).to_text(n),
                        game: self.game.name(),
                    })?;
                on_state(s, p, action);
                visited += 1;
                moves += p;
                let t = self.mover.apply(s, action);
                if has_exponent(t, self.game.target_exp) {
                    win += p;
                    continue;
                }
                let k = empty_bits(t, n).count_ones() as f64;
                let mut spawns = Vec::new();
                for_each_spawn(t, n, self.mover.tables(), |two, four| {
                    spawns.push((two, four))
                });
                for (two, four) in spawns {
                    for (key, q, step) in [(two, P_TWO, 2), (four, P_FOUR, 4)] {
                        let mass = p * q / k;
                        if self.mover.is_lost(key) {
                            lose += mass;
                        } else {
                            *pending
                                .entry(sum + step)
                                .or_default()
                                .entry(key)
                                .or_default() += mass;
                        }
                    }
                }
            }
        }
        Ok(Occupancy {
            win,
            lose,
            expected_moves: moves,
            visited_states: visited,
        })
    }
}

impl Solution {
    /// Read back every solved chunk of the store, one at a time: each object's
    /// header and checksums are verified on read (a damaged or foreign one is
    /// named), states must be strictly increasing, and the recomputed state
    /// count and result digest must equal the summary's. This is how a copy
    /// of a store (or the store itself, after an incident) is checked.
    pub async fn verify(&self, mut on_chunk: impl FnMut(u32, u64)) -> Result<Verified, QueryError> {
        let mut out = Verified {
            layers: 0,
            chunks: 0,
            states: 0,
            digest: String::new(),
        };
        let mut digest = 0u64;
        for &sum in &self.summary.layers {
            let object = layout::layer_index(sum);
            let layer = self.layer(sum).await?.ok_or_else(|| QueryError::Mismatch {
                object: object.clone(),
                reason: "the summary lists this layer but its index is missing".into(),
            })?;
            out.layers += 1;
            for part in &layer.parts {
                if part.solved.len() != part.chunks.len() {
                    return Err(QueryError::Mismatch {
                        object: object.clone(),
                        reason: format!(
                            "part {} has {} chunks but {} solved",
                            part.part,
                            part.chunks.len(),
                            part.solved.len()
                        ),
                    });
                }
                for c in &part.solved {
                    // Uncached: one chunk in memory at a time.
                    let Loaded {
                        states,
                        values,
                        policy,
                    } = self.read_chunk(c).await?;
                    if let Some(w) = states.windows(2).position(|w| w[0] >= w[1]) {
                        return Err(QueryError::Mismatch {
                            object: c.chunk.states_object(),
                            reason: format!("states out of order at position {}", w + 1),
                        });
                    }
                    digest = digest.wrapping_add(result_digest(&states, &values, &policy));
                    out.states += states.len() as u64;
                    out.chunks += 1;
                    on_chunk(sum, states.len() as u64);
                }
            }
        }
        out.digest = format!("{digest:016x}");
        if out.states != self.summary.states || out.digest != self.summary.digest {
            return Err(QueryError::Mismatch {
                object: layout::SUMMARY.to_string(),
                reason: format!(
                    "read {} states with digest {}, but the summary records {} states with digest {}",
                    out.states, out.digest, self.summary.states, self.summary.digest
                ),
            });
        }
        Ok(out)
    }
}

/// Number of value bins in [`LayerStats::values`].
pub const VALUE_BINS: usize = 20;

/// Counts of one layer, for plots.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerStats {
    /// Tile sum.
    pub sum: u32,
    /// (max-tile exponent, states) of each part.
    pub parts: Vec<(u8, u64)>,
    /// States whose value falls in each of [`VALUE_BINS`] equal bins of [0, 1]
    /// (a value of exactly 1 counts in the last bin).
    pub values: [u64; VALUE_BINS],
}

impl Solution {
    /// Per-layer state counts by part and value histograms, reading every
    /// value chunk once (one chunk in memory at a time).
    pub async fn layer_stats(&self) -> Result<Vec<LayerStats>, QueryError> {
        let mut out = Vec::new();
        for &sum in &self.summary.layers {
            let Some(layer) = self.layer(sum).await? else {
                continue;
            };
            let mut values = [0u64; VALUE_BINS];
            let mut parts = Vec::new();
            for part in &layer.parts {
                parts.push((part.part.max_exp, part.chunks.iter().map(|c| c.count).sum()));
                for c in &part.solved {
                    let h = ChunkHeader {
                        kind: ChunkKind::Values,
                        game: self.game,
                        id: c.chunk.id,
                        count: c.chunk.count,
                    };
                    for v in self.store.read_values(&c.values_object(), &h).await? {
                        values[((v * VALUE_BINS as f64) as usize).min(VALUE_BINS - 1)] += 1;
                    }
                }
            }
            out.push(LayerStats { sum, parts, values });
        }
        Ok(out)
    }
}
