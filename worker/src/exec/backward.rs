//! The backward pass's tasks: gather (one group answers the requests
//! addressed to it), solve (one chunk's values and policy from its
//! responses) and the start value.

use futures::{StreamExt, TryStreamExt};
use solve2048_core::chunk::{self, ChunkHeader, ChunkKind, FormatError};
use solve2048_core::kernel::{self, Answer, SolveError, SpawnSums};
use solve2048_core::layer::part_of;
use solve2048_core::part::{ChunkId, PartId};
use solve2048_core::spawn::Starts;
use solve2048_core::table::{ValueTable, LOAD_IN_FLIGHT};
use solve2048_core::task::{
    result_digest, ChunkRef, GatherGroup, GatherPiece, RequestRef, ResponseRef, SolvedRef,
    TaskOutput,
};
use solve2048_core::Game;
use solve2048_store::{layout, StoreError};

use super::bundle::Bundle;
use super::error::WorkerError;
use super::run::Run;
use super::slice::{in_union, Slice};

/// Requests or responses a task reads at once: their reads are small, and a
/// remote store answers each after a round trip.
pub(super) const READS_IN_FLIGHT: usize = 16;

/// One request's answer from one slice: the afterstates it holds there and
/// their encoded response.
type Answered = (u64, Vec<u8>);

/// Why a group could not answer its requests.
pub(super) enum Unanswered {
    /// The request at this index is damaged.
    Damaged(usize, FormatError),
    /// A spawn the group must hold is missing from it.
    Inconsistent(SolveError),
}

/// A gather's requests of one tile, read ([`Run::read_requests`]).
pub(super) struct Requests {
    /// Each request's verified, compressed bytes.
    pub(super) loaded: Vec<Vec<u8>>,
    /// Each request's header.
    pub(super) headers: Vec<ChunkHeader>,
    /// The header of each request's response.
    pub(super) answer_headers: Vec<ChunkHeader>,
}

/// Answer requests of one tile from one group's values: each request's
/// afterstates (verified, compressed, in `loaded`) with the sums of their
/// spawns' values, encoded as responses. Each distinct afterstate is valued
/// once, however many requests name it; requests are decoded as streams, and
/// only one request's answer is held decoded at a time.
#[allow(clippy::too_many_arguments)]
fn answer_requests(
    game: &Game,
    sum: u32,
    tile: u8,
    slice: Slice,
    table: &ValueTable,
    loaded: &[Vec<u8>],
    headers: &[ChunkHeader],
    answer_headers: &[ChunkHeader],
    level: i32,
) -> Result<Vec<Option<Answered>>, Unanswered> {
    let n = game.size();
    let damaged = |(i, e): (usize, FormatError)| Unanswered::Damaged(i, e);
    let union = slice.union(loaded, headers, n).map_err(damaged)?;
    let sums = kernel::gather(game, sum, tile, &union, table).map_err(Unanswered::Inconsistent)?;
    let mut encoded = Vec::with_capacity(loaded.len());
    for (i, (bytes, h)) in loaded.iter().zip(headers).enumerate() {
        let (mut keys, mut answer) = (Vec::new(), Vec::new());
        for found in in_union(bytes, h, &union).map_err(|e| damaged((i, e)))? {
            let (key, at) = found.map_err(|e| damaged((i, e)))?;
            keys.push(key);
            answer.push(sums[at]);
        }
        // A request with no afterstate in this slice gets no response.
        encoded.push((!keys.is_empty()).then(|| {
            let h = ChunkHeader {
                count: keys.len() as u64,
                ..answer_headers[i]
            };
            (
                keys.len() as u64,
                chunk::encode_responses(&h, &keys, &answer, level),
            )
        }));
    }
    Ok(encoded)
}

impl Run<'_> {
    /// The values of the states of `chunks` in `slice`, in one table.
    pub(super) async fn table_of(
        &self,
        chunks: &[SolvedRef],
        slice: Slice,
    ) -> Result<ValueTable, WorkerError> {
        if slice.of > 1 {
            return self.slice_table(chunks, slice).await;
        }
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

    /// [`Self::table_of`] for one slice of several: each chunk is read and
    /// filtered as it arrives, then the table is sized to what was kept.
    async fn slice_table(
        &self,
        chunks: &[SolvedRef],
        slice: Slice,
    ) -> Result<ValueTable, WorkerError> {
        let n = self.job.game.size();
        let mut reads = Vec::with_capacity(chunks.len());
        for c in chunks {
            reads.push(self.read_solved(*c));
        }
        let mut pieces = futures::stream::iter(reads).buffered(LOAD_IN_FLIGHT);
        let (mut states, mut values) = (Vec::new(), Vec::new());
        while let Some((s, v)) = pieces.try_next().await? {
            let kept = self
                .blocking(move || {
                    let mut holds = slice.holds(n);
                    s.into_iter()
                        .zip(v)
                        .filter(|&(k, _)| holds(k))
                        .unzip::<u64, f64, Vec<u64>, Vec<f64>>()
                })
                .await?;
            states.extend(kept.0);
            values.extend(kept.1);
        }
        self.blocking(move || {
            let table = ValueTable::with_capacity(states.len());
            table.insert_many(&states, &values);
            table
        })
        .await
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
        piece: Option<GatherPiece>,
    ) -> Result<TaskOutput, WorkerError> {
        let slice = self.gather_slice(groups.len(), piece)?;
        let first = groups.first().map_or(0, |g| g.group);
        let object = layout::responses(&part, first, self.attempt);
        let mut bundle = Bundle::default();
        let mut out = Vec::new();
        for g in groups {
            self.answer(part, g, slice, &object, &mut bundle, &mut out)
                .await?;
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
        slice: Slice,
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
        let table = std::sync::Arc::new(self.table_of(chunks, slice).await?);
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
            let Requests {
                loaded,
                headers,
                answer_headers,
            } = self.read_requests(part, group, &asked).await?;
            let level = self
                .job
                .zstd_level
                .min(super::forward::TRANSIENT_ZSTD_LEVEL);
            let (game, table) = (self.job.game, table.clone());
            let answered = self
                .blocking(move || {
                    answer_requests(
                        &game,
                        sum,
                        tile,
                        slice,
                        &table,
                        &loaded,
                        &headers,
                        &answer_headers,
                        level,
                    )
                })
                .await?;
            let encoded = answered.map_err(|e| self.unanswered(&asked, e))?;
            for (r, answer) in asked.iter().zip(encoded) {
                let Some((count, blob)) = answer else {
                    continue;
                };
                let (offset, len, checksum) = bundle.add(blob);
                out.push(ResponseRef {
                    source: r.source,
                    part,
                    group,
                    object: object.to_string(),
                    offset,
                    len,
                    count,
                    checksum,
                    reference: false,
                });
            }
        }
        Ok(())
    }

    /// The requests `asked` (of one tile, addressed to `group` of `part`):
    /// their verified, compressed bytes, read concurrently (a Vec of
    /// futures: see `merge`), with their headers and their responses'. Each
    /// is read twice as a stream, into the union and then to answer it, so
    /// a gather holds about two bytes a request key instead of eight.
    pub(super) async fn read_requests(
        &self,
        part: PartId,
        group: u32,
        asked: &[&RequestRef],
    ) -> Result<Requests, WorkerError> {
        let id = ChunkId {
            part,
            group,
            index: 0,
        };
        let headers: Vec<ChunkHeader> = asked
            .iter()
            .map(|r| self.header(ChunkKind::Requests, id, r.count))
            .collect();
        let mut reads = Vec::with_capacity(asked.len());
        for (r, h) in asked.iter().zip(&headers) {
            reads.push(
                self.store
                    .read_key_bytes_at(r.object.clone(), r.offset, r.len, *h),
            );
        }
        let loaded: Vec<Vec<u8>> = futures::stream::iter(reads)
            .buffered(READS_IN_FLIGHT)
            .try_collect()
            .await?;
        let answer_headers = asked
            .iter()
            .map(|r| self.header(ChunkKind::Responses, r.source, r.count))
            .collect();
        Ok(Requests {
            loaded,
            headers,
            answer_headers,
        })
    }

    /// The task's error for requests `asked` that could not be answered:
    /// the damaged request named, or the inconsistency.
    pub(super) fn unanswered(&self, asked: &[&RequestRef], e: Unanswered) -> WorkerError {
        match e {
            Unanswered::Damaged(i, source) => {
                let r = asked[i];
                StoreError::Rejected {
                    object: format!("{} bytes {}..{}", r.object, r.offset, r.offset + r.len),
                    source,
                }
                .into()
            }
            Unanswered::Inconsistent(e) => self.inconsistent(e),
        }
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
        let mut by_tile: [Vec<Answer>; 2] = [Vec::new(), Vec::new()];
        for (tile, keys, sums) in answers {
            by_tile[tile as usize - 1].push((keys, sums));
        }
        let game = self.job.game;
        let key = self.task.key();
        let (values, actions, digest) = self
            .blocking(move || {
                let [twos, fours] = by_tile;
                // Every afterstate is answered once for each tile.
                let Some(sums) = SpawnSums::from_answers(twos, fours) else {
                    return Err(format!(
                        "{key}: the responses for 2s and for 4s name different afterstates"
                    ));
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
            evaluated: None,
        })
    }

    /// The expected value over the random start, from the solved chunks of
    /// the start parts (a few states).
    pub(super) async fn start_value(
        &self,
        layers: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let starts = Starts::new(self.job.game.size());
        self.expect_over_starts(layers, &starts, "start state")
            .await
    }

    /// The expectation of the stored values over `starts`, from those of
    /// `layers` (solved chunks) in the start parts; a start (`what`) with no
    /// stored value is an error naming it.
    pub(super) async fn expect_over_starts(
        &self,
        layers: &[SolvedRef],
        starts: &Starts,
        what: &str,
    ) -> Result<TaskOutput, WorkerError> {
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
        let table = self.table_of(&wanted, Slice::WHOLE).await?;
        let mut missing = None;
        let v = starts.expect(|s| {
            table.get(s).unwrap_or_else(|| {
                missing = Some(s);
                0.0
            })
        });
        if let Some(s) = missing {
            return Err(self.invalid(format!("{what} {s:#018x} has no stored value")));
        }
        Ok(TaskOutput::StartValue(v))
    }
}
