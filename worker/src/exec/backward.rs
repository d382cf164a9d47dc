//! The backward pass's tasks: gather (one group answers the requests
//! addressed to it), solve (one chunk's values and policy from its
//! responses) and the start value.

use futures::{StreamExt, TryStreamExt};
use solve2048_core::chunk::{self, ChunkKind};
use solve2048_core::kernel::{self, SpawnSums};
use solve2048_core::layer::part_of;
use solve2048_core::part::{ChunkId, PartId};
use solve2048_core::spawn::Starts;
use solve2048_core::table::{ValueTable, LOAD_IN_FLIGHT};
use solve2048_core::task::{
    result_digest, ChunkRef, GatherGroup, RequestRef, ResponseRef, SolvedRef, TaskOutput,
};
use solve2048_store::layout;

use super::{Bundle, Run, WorkerError};

/// Requests or responses a task reads at once: their reads are small, and a
/// remote store answers each after a round trip.
const READS_IN_FLIGHT: usize = 16;

impl Run<'_> {
    /// The values of `chunks` in one table.
    async fn table_of(&self, chunks: &[SolvedRef]) -> Result<ValueTable, WorkerError> {
        let total: u64 = chunks.iter().map(|c| c.chunk.count).sum();
        let table = std::sync::Arc::new(ValueTable::with_capacity(total as usize));
        // A Vec of futures, not a lazy map (see `merge`).
        let mut reads = Vec::with_capacity(chunks.len());
        for c in chunks {
            reads.push(self.read_solved(*c));
        }
        // Insert each chunk as it arrives: besides the table, only the chunks
        // in flight are held.
        let mut pieces = futures::stream::iter(reads).buffered(LOAD_IN_FLIGHT);
        while let Some((states, values)) = pieces.try_next().await? {
            let table = table.clone();
            self.blocking(move || table.insert_many(&states, &values))
                .await?;
        }
        Ok(std::sync::Arc::try_unwrap(table).unwrap_or_else(|_| unreachable!("no other owner")))
    }

    async fn read_solved(&self, c: SolvedRef) -> Result<(Vec<u64>, Vec<f64>), WorkerError> {
        let states = self.read_states(&c.chunk).await?;
        let h = self.header(ChunkKind::Values, c.chunk.id, c.chunk.count);
        let values = self.store.read_values(&layout::values_of(&c), &h).await?;
        Ok((states, values))
    }

    /// Answer the requests addressed to groups of `part`, one group at a
    /// time, into one bundle of responses.
    pub(super) async fn gather(
        &self,
        part: PartId,
        groups: &[GatherGroup],
    ) -> Result<TaskOutput, WorkerError> {
        let first = groups.first().map_or(0, |g| g.group);
        let object = layout::responses(&part, first, self.attempt);
        let mut bundle = Bundle::default();
        let mut out = Vec::new();
        for g in groups {
            self.answer(part, g, &object, &mut bundle, &mut out).await?;
        }
        self.put_bundle(&object, bundle).await?;
        Ok(TaskOutput::Responses(out))
    }

    /// Answer the requests addressed to one group: for each afterstate, the
    /// sum of the values of its spawns, which all lie in the group.
    async fn answer(
        &self,
        part: PartId,
        g: &GatherGroup,
        object: &str,
        bundle: &mut Bundle,
        out: &mut Vec<ResponseRef>,
    ) -> Result<(), WorkerError> {
        let (group, chunks, requests) = (g.group, &g.chunks, &g.requests);
        if let Some(c) = chunks
            .iter()
            .find(|c| c.chunk.id.part != part || c.chunk.id.group != group)
        {
            return Err(self.invalid(format!(
                "chunk {} is not in group {group} of {part}",
                c.chunk.id
            )));
        }
        let table = std::sync::Arc::new(self.table_of(chunks).await?);
        for tile in 1..=2u8 {
            let asked: Vec<&RequestRef> = requests.iter().filter(|r| r.tile() == tile).collect();
            if asked.is_empty() {
                continue;
            }
            if let Some(r) = requests.iter().find(|r| r.part != part || r.group != group) {
                return Err(self.invalid(format!(
                    "request {} is not addressed to this group",
                    r.object
                )));
            }
            let sum = part.sum - (1 << tile);
            let id = ChunkId {
                part,
                group,
                index: 0,
            };
            // Read the requests concurrently (a Vec of futures: see `merge`).
            let mut reads = Vec::with_capacity(asked.len());
            for r in &asked {
                let h = self.header(ChunkKind::Requests, id, r.count);
                reads.push(async move {
                    self.store
                        .read_keys_at(&r.object, r.offset, r.len, &h)
                        .await
                });
            }
            let keys: Vec<Vec<u64>> = futures::stream::iter(reads)
                .buffered(READS_IN_FLIGHT)
                .try_collect()
                .await?;
            let (game, table) = (self.job.game, table.clone());
            let (keys, answers) = self
                .blocking(move || {
                    // Each afterstate once, however many chunks ask for it.
                    let union = kernel::merge(
                        keys.iter()
                            .map(|k| k.iter().copied().map(Ok::<u64, ()>))
                            .collect(),
                    )
                    .expect("keys in memory");
                    let sums = kernel::gather(&game, sum, tile, &union, &table)?;
                    // Each request's sums, in its order (both are sorted).
                    let answers: Vec<Vec<f64>> = keys
                        .iter()
                        .map(|k| {
                            let mut at = 0;
                            k.iter()
                                .map(|key| {
                                    at += union[at..].partition_point(|u| u < key);
                                    sums[at]
                                })
                                .collect()
                        })
                        .collect();
                    Ok::<_, kernel::SolveError>((keys, answers))
                })
                .await?
                .map_err(|e| self.inconsistent(e))?;
            for ((r, k), sums) in asked.iter().zip(keys).zip(answers) {
                let (offset, len, checksum) = bundle.add(chunk::encode_responses(
                    &self.header(ChunkKind::Responses, r.source, r.count),
                    &k,
                    &sums,
                    self.job
                        .zstd_level
                        .min(super::forward::TRANSIENT_ZSTD_LEVEL),
                ));
                out.push(ResponseRef {
                    source: r.source,
                    part,
                    group,
                    object: object.to_string(),
                    offset,
                    len,
                    count: r.count,
                    checksum,
                });
            }
        }
        Ok(())
    }

    /// One chunk's values and optimal actions, from the answers to its
    /// requests.
    pub(super) async fn solve(
        &self,
        chunk: &ChunkRef,
        responses: &[ResponseRef],
    ) -> Result<TaskOutput, WorkerError> {
        let states = self.read_states(chunk).await?;
        let mut reads = Vec::with_capacity(responses.len());
        for r in responses {
            if r.source != chunk.id || !(1..=2).contains(&r.tile()) {
                return Err(self.invalid(format!("response {} is not for this chunk", r.object)));
            }
            let h = self.header(ChunkKind::Responses, chunk.id, r.count);
            reads.push(async move {
                let read = self
                    .store
                    .read_responses_at(&r.object, r.offset, r.len, &h)
                    .await;
                read.map(|(keys, sums)| (r.tile(), keys, sums))
            });
        }
        // Read the responses concurrently (a Vec of futures: see `merge`).
        let answers: Vec<(u8, Vec<u64>, Vec<f64>)> = futures::stream::iter(reads)
            .buffered(READS_IN_FLIGHT)
            .try_collect()
            .await?;
        let mut by_tile: [Vec<(u64, f64)>; 2] = [Vec::new(), Vec::new()];
        for (tile, keys, sums) in answers {
            by_tile[tile as usize - 1].extend(keys.into_iter().zip(sums));
        }
        let game = self.job.game;
        let key = self.task.key();
        let (values, actions, digest) = self
            .blocking(move || {
                let [mut twos, mut fours] = by_tile;
                twos.sort_unstable_by_key(|p| p.0);
                fours.sort_unstable_by_key(|p| p.0);
                // Every afterstate is answered once for each tile.
                let same = twos.len() == fours.len()
                    && twos.iter().zip(&fours).all(|(a, b)| a.0 == b.0)
                    && twos.windows(2).all(|w| w[0].0 < w[1].0);
                if !same {
                    return Err(format!(
                        "{key}: the responses for 2s and for 4s name different afterstates"
                    ));
                }
                let sums = SpawnSums {
                    afterstates: twos.iter().map(|p| p.0).collect(),
                    twos: twos.iter().map(|p| p.1).collect(),
                    fours: fours.iter().map(|p| p.1).collect(),
                };
                kernel::solve(&game, &states, &sums)
                    .map(|(v, a)| {
                        let d = result_digest(&states, &v, &a);
                        (v, a, d)
                    })
                    .map_err(|e| format!("{key}: {e}"))
            })
            .await?
            .map_err(|reason| WorkerError::InvalidTask {
                task: self.task.key(),
                reason,
            })?;
        let level = self.job.zstd_level;
        let vbytes = chunk::encode_values(
            &self.header(ChunkKind::Values, chunk.id, chunk.count),
            &values,
            level,
        );
        let pbytes = chunk::encode_policy(
            &self.header(ChunkKind::Policy, chunk.id, chunk.count),
            &actions,
            level,
        );
        let values_checksum = self
            .put_chunk(&layout::values(&chunk.id, self.attempt), vbytes)
            .await?;
        let policy_checksum = self
            .put_chunk(&layout::policy(&chunk.id, self.attempt), pbytes)
            .await?;
        Ok(TaskOutput::Solved {
            solved: SolvedRef {
                chunk: *chunk,
                attempt: self.attempt,
                values_checksum,
                policy_checksum,
            },
            digest,
        })
    }

    /// The expected value over the random start, from the solved chunks of
    /// the start parts (a few states).
    pub(super) async fn start_value(
        &self,
        layers: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let starts = Starts::new(self.job.game.size());
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
        let table = self.table_of(&wanted).await?;
        let mut missing = None;
        let v = starts.expect(|s| {
            table.get(s).unwrap_or_else(|| {
                missing = Some(s);
                0.0
            })
        });
        if let Some(s) = missing {
            return Err(self.invalid(format!("start state {s:#018x} has no stored value")));
        }
        Ok(TaskOutput::StartValue(v))
    }
}
