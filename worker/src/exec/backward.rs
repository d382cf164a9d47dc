//! The backward pass's tasks besides the gather ([`super::gather`]): solve
//! (one chunk's values and policy from its responses) and the start value,
//! and the value tables of a group that both read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use solve2048_core::formats::chunk::{self, ChunkKind, FormatError, SolvedChunk};
use solve2048_core::kernel::value_table::{ValueTable, LOAD_IN_FLIGHT};
use solve2048_core::kernel::{self, Answer, SpawnSums};
use solve2048_core::space::ids::PartId;
use solve2048_core::space::parts::part_of;
use solve2048_core::task::evaluation::ChunkEvaluation;
use solve2048_core::task::{
    footprint, result_digest, ChunkRef, RequestRef, ResponseRef, SolvedRef, TaskOutput,
    SLICE_INSERT_KEYS,
};
use solve2048_store::{layout, Store, StoreError};

use super::bundle::target_id;
use super::error::WorkerError;
use super::run::Run;
use super::slice::Slice;

impl Run<'_> {
    /// The values of the states of `chunks` of `store` (the job's, or an
    /// evaluation's solved store) in `slice`, in one table. The table is
    /// sized before anything is read: for the group's states, or for a
    /// slice's charged share of them ([`footprint::slice_share`]); each
    /// chunk is filtered and inserted as it arrives ([`Slice::fill`]), so
    /// that beside the table only the chunks in flight (and a piece of kept
    /// states) are held. A slice that holds more than its share (its
    /// group's states crowd into few layouts of large tiles) is read again
    /// and sized to what it keeps ([`Self::exact_slice_table`]).
    pub(super) async fn table_of(
        &self,
        store: &Store,
        chunks: &[SolvedRef],
        slice: Slice,
    ) -> Result<ValueTable, WorkerError> {
        let n = self.job.game.shape;
        let total: u64 = chunks.iter().map(|c| c.chunk.count).sum();
        let capacity = footprint::slice_share(total, slice.of) as usize;
        let mut table = Some(ValueTable::with_capacity(capacity));
        let mut pieces = self.solved_chunks(store, chunks);
        while let Some((s, v)) = pieces.try_next().await? {
            let Some(t) = table.take() else { break };
            table = self.blocking(move || slice.fill(t, n, &s, &v)).await?;
        }
        match table {
            Some(t) => Ok(t),
            None => {
                tracing::info!(
                    task = %self.task.key(),
                    "a slice holds more than its share of its group's states: read again"
                );
                self.exact_slice_table(store, chunks, slice).await
            }
        }
    }

    /// [`Self::table_of`] for a slice sized to what it keeps: each chunk is
    /// read and filtered as it arrives, then the table is sized to what was
    /// kept and filled [`SLICE_INSERT_KEYS`] keys at a time.
    async fn exact_slice_table(
        &self,
        store: &Store,
        chunks: &[SolvedRef],
        slice: Slice,
    ) -> Result<ValueTable, WorkerError> {
        let n = self.job.game.shape;
        let mut pieces = self.solved_chunks(store, chunks);
        let (mut states, mut values) = (Vec::new(), Vec::new());
        while let Some((s, v)) = pieces.try_next().await? {
            let kept = self
                .blocking(move || slice.keep(n, s.into_iter().zip(v)))
                .await?;
            states.extend(kept.0);
            values.extend(kept.1);
        }
        self.blocking(move || {
            let mut table = ValueTable::with_capacity(states.len());
            let piece = SLICE_INSERT_KEYS as usize;
            for (s, v) in states.chunks(piece).zip(values.chunks(piece)) {
                table.insert_many(s, v);
            }
            table
        })
        .await
    }

    /// The solved chunks `chunks` of `store`, in order, [`LOAD_IN_FLIGHT`]
    /// read at a time (from a Vec of futures, not a lazy map: see `merge`).
    fn solved_chunks<'a>(
        &'a self,
        store: &'a Store,
        chunks: &[SolvedRef],
    ) -> impl futures::Stream<Item = Result<(Vec<u64>, Vec<f64>), WorkerError>> + 'a {
        let mut reads = Vec::with_capacity(chunks.len());
        for c in chunks {
            reads.push(self.read_solved(store, *c));
        }
        futures::stream::iter(reads).buffered(LOAD_IN_FLIGHT)
    }

    /// A solved chunk of `store`: its states and values.
    pub(super) async fn read_solved(
        &self,
        store: &Store,
        c: SolvedRef,
    ) -> Result<(Vec<u64>, Vec<f64>), WorkerError> {
        let (id, count) = (c.chunk.id, c.chunk.count);
        let h = self.header(ChunkKind::States, id, count);
        let states = store.read_keys(&layout::states_of(&c.chunk), &h).await?;
        let h = self.header(ChunkKind::Policy, id, count);
        let policy = store.read_policy(&layout::policy_of(&c), &h).await?;
        let h = self.header(ChunkKind::Values, id, count);
        let solved = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let values = store
            .read_values(&layout::values_of(&c), &h, solved)
            .await?;
        Ok((states, values))
    }

    /// One chunk's values and optimal actions, from the answers to its
    /// requests.
    pub(super) async fn solve(
        &self,
        chunk: &ChunkRef,
        requests: &[RequestRef],
        responses: &[ResponseRef],
    ) -> Result<TaskOutput, WorkerError> {
        let states = Arc::new(self.read_states(chunk).await?);
        let [[twos, fours], _] = self.read_answers(chunk, requests, responses).await?;
        let game = self.job.game;
        let key = self.task.key();
        let for_solve = states.clone();
        let (values, actions) = self
            .blocking(move || {
                let states = for_solve;
                let sums = SpawnSums::from_answers(&game.spawn_rule(), twos, fours)
                    .ok_or_else(|| different(&key))?;
                kernel::solve(&game, &states, &sums)
                    .map_err(|source| WorkerError::Solve { task: key, source })
            })
            .await??;
        self.write_solved(chunk, states, values, actions, None)
            .await
    }

    /// The answers to a chunk's requests: its `requests` (one read a
    /// bundle), then their `responses` (read concurrently), each response's
    /// sums beside the keys of its request in the slice that answered it; by
    /// whether they are the reference's (an evaluation's optimal sums) and
    /// by tile.
    pub(super) async fn read_answers(
        &self,
        chunk: &ChunkRef,
        requests: &[RequestRef],
        responses: &[ResponseRef],
    ) -> Result<[[Vec<Answer>; 2]; 2], WorkerError> {
        for r in responses {
            let foreign = r.source != chunk.id || !(1..=2).contains(&r.tile());
            let slice = r.slice.is_some_and(|(index, of)| index >= of);
            if foreign || slice || (r.reference && self.evaluator.is_none()) {
                return Err(self.invalid(format!("response {} is not for this chunk", r.object)));
            }
        }
        if let Some(r) = requests.iter().find(|r| r.source != chunk.id) {
            return Err(self.invalid(format!("request {} is not this chunk's", r.object)));
        }
        let mut asked = self.read_own_requests(requests).await?;
        let n = self.job.game.shape;
        let mut by: [[Vec<Answer>; 2]; 2] = Default::default();
        let mut sliced: BTreeMap<(PartId, u32), SlicedKeys> = BTreeMap::new();
        let decode = chunk::decode_values;
        let mut answers = self.read_pieces(ChunkKind::Responses, |_| chunk.id, responses, decode);
        while let Some((r, sums)) = answers.try_next().await? {
            let target = (r.part, r.group);
            let keys: Vec<u64> = match r.slice {
                None => asked.get(&target).cloned().unwrap_or_default(),
                Some((index, of)) => {
                    let (cut, pieces) = sliced.entry(target).or_insert_with(|| {
                        let keys = asked.remove(&target).unwrap_or_default();
                        (of, Slice::split(keys, of, n))
                    });
                    if *cut != of {
                        return Err(self.invalid(format!(
                            "response {} cuts its group in {of} slices, another in {cut}",
                            r.object
                        )));
                    }
                    pieces[index as usize].clone()
                }
            };
            if keys.len() != sums.len() {
                return Err(self.invalid(format!(
                    "response {} holds {} sums for the {} afterstates of its request in its slice",
                    r.object,
                    sums.len(),
                    keys.len()
                )));
            }
            by[r.reference as usize][r.tile() as usize - 1].push((keys, sums));
        }
        Ok(by)
    }

    /// A chunk's own requests, by the part and group they ask: one read a
    /// bundle (its ask wrote them together), each section verified.
    async fn read_own_requests(
        &self,
        requests: &[RequestRef],
    ) -> Result<BTreeMap<(PartId, u32), Vec<u64>>, WorkerError> {
        let mut asked = BTreeMap::new();
        let objects: BTreeSet<&str> = requests.iter().map(|r| r.object.as_str()).collect();
        for object in objects {
            let of: Vec<&RequestRef> = requests.iter().filter(|r| r.object == object).collect();
            let start = of.iter().map(|r| r.offset).min().unwrap_or(0);
            let end = of.iter().map(|r| r.offset + r.len).max().unwrap_or(0);
            let bytes = self.store.get_range(object, start, end - start).await?;
            for r in of {
                let at = (r.offset - start) as usize;
                let h = self.header(ChunkKind::Requests, target_id((r.part, r.group)), r.count);
                let section = bytes
                    .get(at..at + r.len as usize)
                    .ok_or_else(|| FormatError::Body(format!("{} bytes read", bytes.len())));
                let keys = section
                    .and_then(|b| chunk::decode_keys(b, &h))
                    .map_err(|source| StoreError::Rejected {
                        object: format!("{object} bytes {}..{}", r.offset, r.offset + r.len),
                        source,
                    })?;
                if asked.insert((r.part, r.group), keys).is_some() {
                    return Err(self.invalid(format!("request {} names a group twice", r.object)));
                }
            }
        }
        Ok(asked)
    }

    /// Write a chunk's values and policy; the task's output, with its result
    /// digest and, in an evaluation, what its boards cost the player.
    pub(super) async fn write_solved(
        &self,
        chunk: &ChunkRef,
        states: Arc<Vec<u64>>,
        values: Vec<f64>,
        actions: Vec<u8>,
        evaluated: Option<ChunkEvaluation>,
    ) -> Result<TaskOutput, WorkerError> {
        let level = self.job.zstd_level;
        let (id, count) = (chunk.id, chunk.count);
        let (vh, ph) = (
            self.header(ChunkKind::Values, id, count),
            self.header(ChunkKind::Policy, id, count),
        );
        // Both encoded at once, off the async runtime (the values by the
        // afterstates the policy's moves lead to), the digest beside the
        // policy: the values take longest.
        let (vbytes, (pbytes, digest)) = self
            .blocking(move || {
                let solved = SolvedChunk {
                    states: &states,
                    policy: &actions,
                };
                rayon::join(
                    || chunk::encode_solved_values(&vh, &values, solved, level),
                    || {
                        let policy = chunk::encode_policy(&ph, &actions, level);
                        (policy, result_digest(&states, &values, &actions))
                    },
                )
            })
            .await?;
        let values_checksum = self
            .put_chunk(&layout::values(&id, self.attempt), vbytes)
            .await?;
        let policy_checksum = self
            .put_chunk(&layout::policy(&id, self.attempt), pbytes)
            .await?;
        Ok(TaskOutput::Solved {
            solved: SolvedRef {
                chunk: *chunk,
                attempt: self.attempt,
                values_checksum,
                policy_checksum,
            },
            digest,
            evaluated,
        })
    }

    /// The expected value over the random start ([`Run::starts`]), from
    /// the solved chunks of the start parts (a few states); a start with no
    /// stored value is an error naming it.
    pub(super) async fn start_value(
        &self,
        layers: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let starts = self.starts();
        let wanted: Vec<SolvedRef> = layers
            .iter()
            .filter(|c| {
                starts
                    .weights
                    .keys()
                    .any(|&s| part_of(s) == c.chunk.id.part)
            })
            .copied()
            .collect();
        let table = self.table_of(&self.store, &wanted, Slice::WHOLE).await?;
        let mut missing = None;
        let v = starts.expect(|s| {
            table.get(s).unwrap_or_else(|| {
                missing = Some(s);
                0.0
            })
        });
        if let Some(s) = missing {
            return Err(self.invalid(format!("start board {s:#018x} has no stored value")));
        }
        Ok(TaskOutput::StartValue(v))
    }
}

/// The keys of a chunk's request answered in slices: the number of slices,
/// and the keys cut into them ([`Slice::split`]), the first time a response
/// needs them.
type SlicedKeys = (u32, Vec<Vec<u64>>);

/// The error of a chunk's solve (task `key`) whose responses for 2s and for
/// 4s name different afterstates (every afterstate is answered once for
/// each tile).
pub(super) fn different(key: &str) -> WorkerError {
    WorkerError::InvalidTask {
        task: key.to_string(),
        reason: "the responses for 2s and for 4s name different afterstates".into(),
    }
}
