//! The backward tasks of an evaluation: gathers that answer each request
//! twice (the spawn sums of the player's values, as the boards lie, and of
//! the solved store's optimal values), solves that value each board as the
//! expectation over the player's moves beside what those moves give up, and
//! the value from the random start as the boards lie.

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use solve2048_core::canonical::canonical;
use solve2048_core::chunk::{self, ChunkHeader, ChunkKind, FormatError};
use solve2048_core::evaluation::PushRef;
use solve2048_core::kernel::evaluate::{gather_as_they_lie, solve_under, Optimal};
use solve2048_core::kernel::{self, Answer, SpawnSums};
use solve2048_core::part::{ChunkId, PartId};
use solve2048_core::spawn::Starts;
use solve2048_core::table::ValueTable;
use solve2048_core::task::{
    result_digest, ChunkRef, GatherGroup, GatherPiece, RequestRef, ResponseRef, SolvedRef,
    TaskOutput,
};
use solve2048_core::Game;
use solve2048_store::layout;

use super::super::backward::{Requests, Unanswered, READS_IN_FLIGHT};
use super::super::bundle::Bundle;
use super::super::error::WorkerError;
use super::super::forward::TRANSIENT_ZSTD_LEVEL;
use super::super::run::Run;
use super::super::slice::{in_union, Slice};
use super::evaluator::Evaluator;

/// One request's two answers from one slice: its afterstates there, and
/// the encoded responses of the player's sums and of the optimal ones.
type Answered = (u64, Vec<u8>, Vec<u8>);

/// Answer requests of one tile from one group's tables: the player's values
/// (`player`, boards as they lie) and the optimal ones (`optimal`,
/// canonical). Like the solve's gather, each distinct afterstate is valued
/// once, and requests (verified, compressed, in `loaded`) are decoded as
/// streams, twice.
#[allow(clippy::too_many_arguments)]
fn answer_both(
    game: &Game,
    sum: u32,
    tile: u8,
    slice: Slice,
    (player, optimal): (&ValueTable, &ValueTable),
    loaded: &[Vec<u8>],
    headers: &[ChunkHeader],
    answer_headers: &[ChunkHeader],
    level: i32,
) -> Result<Vec<Option<Answered>>, Unanswered> {
    let n = game.size();
    let damaged = |(i, e): (usize, FormatError)| Unanswered::Damaged(i, e);
    let union = slice.union(loaded, headers, n).map_err(damaged)?;
    let mine =
        gather_as_they_lie(game, sum, tile, &union, player).map_err(Unanswered::Inconsistent)?;
    let canon: Vec<u64> = union.iter().map(|&a| canonical(a, n)).collect();
    let best =
        kernel::gather(game, sum, tile, &canon, optimal).map_err(Unanswered::Inconsistent)?;
    let mut encoded = Vec::with_capacity(loaded.len());
    for (i, (bytes, h)) in loaded.iter().zip(headers).enumerate() {
        let (mut keys, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for found in in_union(bytes, h, &union).map_err(|e| damaged((i, e)))? {
            let (key, at) = found.map_err(|e| damaged((i, e)))?;
            keys.push(key);
            a.push(mine[at]);
            b.push(best[at]);
        }
        encoded.push((!keys.is_empty()).then(|| {
            let h = ChunkHeader {
                count: keys.len() as u64,
                ..answer_headers[i]
            };
            (
                keys.len() as u64,
                chunk::encode_responses(&h, &keys, &a, level),
                chunk::encode_responses(&h, &keys, &b, level),
            )
        }));
    }
    Ok(encoded)
}

impl Run<'_> {
    /// The optimal values of the solved store's `chunks` (one group's) in
    /// `slice`, in one table keyed by canonical state.
    async fn optimal_table(
        &self,
        e: &Evaluator,
        chunks: &[SolvedRef],
        slice: Slice,
    ) -> Result<ValueTable, WorkerError> {
        let group = self.read_group(e, chunks).await?;
        let n = self.job.game.size();
        self.blocking(move || {
            let mut holds = slice.holds(n);
            let (keys, values): (Vec<u64>, Vec<f64>) = group
                .states
                .iter()
                .zip(&group.values)
                .filter(|(&k, _)| holds(k))
                .unzip();
            let table = ValueTable::with_capacity(keys.len());
            table.insert_many(&keys, &values);
            table
        })
        .await
    }

    /// Answer the requests addressed to groups of `part` with the player's
    /// sums and the optimal ones, one group at a time, into one bundle.
    pub(super) async fn gather_under(
        &self,
        e: &Evaluator,
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
            self.answer_both(e, part, g, slice, &object, &mut bundle, &mut out)
                .await?;
        }
        self.put_bundle(&object, bundle).await?;
        Ok(TaskOutput::Responses(out))
    }

    /// Answer the requests addressed to one group, twice (see
    /// [`answer_both`]).
    #[allow(clippy::too_many_arguments)]
    async fn answer_both(
        &self,
        e: &Evaluator,
        part: PartId,
        g: &GatherGroup,
        slice: Slice,
        object: &str,
        bundle: &mut Bundle,
        out: &mut Vec<ResponseRef>,
    ) -> Result<(), WorkerError> {
        let group = g.group;
        let foreign = |id: &ChunkId| id.part != part || id.group != group;
        if let Some(c) = g
            .chunks
            .iter()
            .chain(&g.reference)
            .find(|c| foreign(&c.chunk.id))
        {
            return Err(self.invalid(format!(
                "chunk {} is not in group {group} of {part}",
                c.chunk.id
            )));
        }
        if let Some(r) = g
            .requests
            .iter()
            .find(|r| r.part != part || r.group != group)
        {
            return Err(self.invalid(format!(
                "request {} is not addressed to this group",
                r.object
            )));
        }
        let player = Arc::new(self.table_of(&g.chunks, slice).await?);
        let optimal = Arc::new(self.optimal_table(e, &g.reference, slice).await?);
        for tile in 1..=2u8 {
            let asked: Vec<&RequestRef> = g.requests.iter().filter(|r| r.tile() == tile).collect();
            if asked.is_empty() {
                continue;
            }
            let Requests {
                loaded,
                headers,
                answer_headers,
            } = self.read_requests(part, group, &asked).await?;
            let level = self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
            let (game, sum) = (self.job.game, part.sum - (1 << tile));
            let (player, optimal) = (player.clone(), optimal.clone());
            let answered = self
                .blocking(move || {
                    answer_both(
                        &game,
                        sum,
                        tile,
                        slice,
                        (&player, &optimal),
                        &loaded,
                        &headers,
                        &answer_headers,
                        level,
                    )
                })
                .await?;
            let encoded = answered.map_err(|e| self.unanswered(&asked, e))?;
            for (r, answer) in asked.iter().zip(encoded) {
                let Some((count, mine, best)) = answer else {
                    continue;
                };
                for (blob, reference) in [(mine, false), (best, true)] {
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
                        reference,
                    });
                }
            }
        }
        Ok(())
    }

    /// One chunk's values under the player, and what its boards cost the
    /// player against optimal play.
    pub(super) async fn solve_under(
        &self,
        e: &Arc<Evaluator>,
        chunk: &ChunkRef,
        responses: &[ResponseRef],
        pushes: &[PushRef],
        reference: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let states = Arc::new(self.read_states(chunk).await?);
        let reach = self.reach(chunk, &states, pushes).await?;
        let group = Arc::new(self.read_group(e, reference).await?);
        let moves = self.moves(e, &states, &group).await?;
        let n = self.job.game.size();
        let (for_optimal, looked_up) = (states.clone(), group.clone());
        let (values, best) = self
            .blocking(move || looked_up.optimal(&for_optimal, n))
            .await?
            .map_err(|reason| self.player_error(reason))?;
        drop(group);
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
                read.map(|(keys, sums)| (r.reference, r.tile(), keys, sums))
            });
        }
        let answers: Vec<(bool, u8, Vec<u64>, Vec<f64>)> = futures::stream::iter(reads)
            .buffered(READS_IN_FLIGHT)
            .try_collect()
            .await?;
        let mut by: [[Vec<Answer>; 2]; 2] = Default::default();
        for (reference, tile, keys, sums) in answers {
            by[reference as usize][tile as usize - 1].push((keys, sums));
        }
        let game = self.job.game;
        let key = self.task.key();
        let [mine, optimal] = by.map(|[twos, fours]| SpawnSums::from_answers(twos, fours));
        let (states_for, done) = (states.clone(), states);
        let valued = self
            .blocking(move || {
                let (Some(mine), Some(optimal)) = (mine, optimal) else {
                    return Err(format!(
                        "{key}: the responses for 2s and for 4s name different afterstates"
                    ));
                };
                let optimal = Optimal {
                    values: &values,
                    best: &best,
                    sums: &optimal,
                };
                solve_under(&game, &states_for, &moves, &reach, &mine, optimal)
                    .map_err(|e| format!("{key}: {e}"))
            })
            .await?
            .map_err(|reason| self.player_error(reason))?;
        let digest = result_digest(&done, &valued.values, &valued.actions);
        let level = self.job.zstd_level;
        let vbytes = chunk::encode_values(
            &self.header(ChunkKind::Values, chunk.id, chunk.count),
            &valued.values,
            level,
        );
        let pbytes = chunk::encode_policy(
            &self.header(ChunkKind::Policy, chunk.id, chunk.count),
            &valued.actions,
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
            evaluated: Some(valued.evaluation),
        })
    }

    /// The expected value under the player over the start boards as they
    /// lie, from the solved chunks of the start parts.
    pub(super) async fn start_value_as_they_lie(
        &self,
        layers: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let starts = Starts::actual(self.job.game.size());
        self.expect_over_starts(layers, &starts, "start board")
            .await
    }
}
