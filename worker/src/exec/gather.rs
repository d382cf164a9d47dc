//! The gather task: one group answers the requests addressed to it, for
//! each afterstate the sums of the values of its spawns, which all lie in
//! the group. A solve answers with the layer's optimal values; an
//! evaluation answers each request twice, with the player's values and with
//! the solved store's ([`Sums`]).

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use rayon::prelude::*;
use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind, FormatError};
use solve2048_core::kernel::value_table::ValueTable;
use solve2048_core::kernel::{self, SolveError};
use solve2048_core::rules::canonical::{canonical, Orientation};
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{GatherGroup, GatherPiece, RequestRef, ResponseRef, TaskOutput};
use solve2048_core::Game;
use solve2048_store::{layout, StoreError};

use super::bundle::Bundle;
use super::bundle::{target_id, TRANSIENT_ZSTD_LEVEL};
use super::error::WorkerError;
use super::run::{Run, READS_IN_FLIGHT};
use super::slice::Slice;

/// One request's answers from one slice: how many afterstates it holds there
/// and their encoded responses (their sums, in order), one for each of the
/// gather's [`Sums`].
type Answered = (u64, Vec<Vec<u8>>);

/// Why a group could not answer its requests.
enum Unanswered {
    /// The request at this index is damaged.
    Damaged(usize, FormatError),
    /// A spawn the group must hold is missing from it.
    Inconsistent(SolveError),
    /// The requests hold more keys than a union can place (`u32::MAX`).
    TooMany(u64),
}

/// What a gather answers each request with: the spawn sums of one table of
/// a group's values.
#[derive(Clone)]
enum Sums {
    /// The group's own values, keyed as the afterstates are: canonical (a
    /// solve) or as they lie (an evaluation: the player's values).
    Own(Arc<ValueTable>, Orientation),
    /// The solved store's optimal values, keyed by canonical board, for
    /// afterstates as they lie (an evaluation's reference responses).
    Optimal(Arc<ValueTable>),
}

impl Sums {
    /// The sums for `afterstates` (of layer `sum`, spawning tile `tile`).
    fn of(
        &self,
        game: &Game,
        sum: u32,
        tile: u8,
        afterstates: &[u64],
    ) -> Result<Vec<f64>, SolveError> {
        match self {
            Sums::Own(t, keys) => kernel::gather(game, *keys, sum, tile, afterstates, t),
            Sums::Optimal(t) => {
                let n = game.shape;
                let canon: Vec<u64> = afterstates.iter().map(|&a| canonical(a, n)).collect();
                kernel::gather(game, Orientation::Canonical, sum, tile, &canon, t)
            }
        }
    }

    /// Whether its responses are the reference's ([`ResponseRef::reference`]).
    fn reference(&self) -> bool {
        matches!(self, Sums::Optimal(_))
    }
}

/// A gather's requests of one tile, read ([`Run::read_requests`]).
struct Requests {
    /// Each request's verified, compressed bytes.
    loaded: Vec<Vec<u8>>,
    /// Each request's header.
    headers: Vec<ChunkHeader>,
    /// The header of each request's response.
    answer_headers: Vec<ChunkHeader>,
}

/// Answer requests of one tile from one group's values, once for each of
/// `sums`: the sums of the spawns' values of each request's afterstates
/// (verified, compressed, in `loaded`) in the slice, in order, encoded as
/// responses (the keys are the request's: the solve reads them there). Each
/// distinct afterstate is valued once, however many requests name it.
/// Requests are decoded once, as streams merged into the union, which
/// notes where each request's afterstates lie in it (4 bytes a key, where
/// decoding each request again and seeking its keys took about 5% of 4x4
/// to 32's backward pass); their compressed bytes are dropped once merged.
#[allow(clippy::too_many_arguments)]
fn answer_requests(
    game: &Game,
    sum: u32,
    tile: u8,
    slice: Slice,
    sums: &[Sums],
    loaded: Vec<Vec<u8>>,
    headers: &[ChunkHeader],
    answer_headers: &[ChunkHeader],
    level: i32,
) -> Result<Vec<Option<Answered>>, Unanswered> {
    let keys: u64 = headers.iter().map(|h| h.count).sum();
    if keys > u64::from(u32::MAX) {
        return Err(Unanswered::TooMany(keys));
    }
    let damaged = |(i, e): (usize, FormatError)| Unanswered::Damaged(i, e);
    let union = slice.union(&loaded, headers, game.shape).map_err(damaged)?;
    drop(loaded);
    let valued = sums
        .iter()
        .map(|s| s.of(game, sum, tile, &union.keys))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Unanswered::Inconsistent)?;
    drop(union.keys);
    // Each request answered on its own, on all the worker's threads.
    let answered = (union.places.par_iter().enumerate())
        .map(|(i, places)| {
            // A request with no afterstate in this slice gets no response.
            let count = places.len() as u64;
            (count > 0).then(|| {
                let h = ChunkHeader {
                    count,
                    ..answer_headers[i]
                };
                let blobs = (valued.iter())
                    .map(|v| {
                        let answer: Vec<f64> = places.iter().map(|&at| v[at as usize]).collect();
                        chunk::encode_values(&h, &answer, level)
                    })
                    .collect();
                (count, blobs)
            })
        })
        .collect();
    Ok(answered)
}

impl Run<'_> {
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
        let mut bundle = Bundle::new(layout::responses(&part, first, self.attempt));
        let mut out = Vec::new();
        for g in groups {
            self.answer(part, g, slice, &mut bundle, &mut out).await?;
        }
        self.put_bundle(bundle).await?;
        Ok(TaskOutput::Responses(out))
    }

    /// Answer the requests addressed to one group: for each afterstate, the
    /// sum of the values of its spawns, which all lie in the group.
    async fn answer(
        &self,
        part: PartId,
        g: &GatherGroup,
        slice: Slice,
        bundle: &mut Bundle,
        out: &mut Vec<ResponseRef>,
    ) -> Result<(), WorkerError> {
        let group = g.group;
        self.check_addressed(part, g)?;
        let sums = self.sums_of(g, slice).await?;
        let references: Vec<bool> = sums.iter().map(Sums::reference).collect();
        let asked: [Vec<&RequestRef>; 2] =
            [1, 2].map(|tile| g.requests.iter().filter(|r| r.tile() == tile).collect());
        let (twos, fours) = futures::try_join!(
            self.read_requests(part, group, &asked[0]),
            self.read_requests(part, group, &asked[1])
        )?;
        // Both tiles answered at once: each one's union of its requests is
        // made on one thread, so a group's gather keeps two cores busy.
        let level = self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
        let game = self.job.game;
        let answer = move |tile: u8, r: Requests, sums: &[Sums]| {
            let sum = part.sum - (1 << tile);
            answer_requests(
                &game,
                sum,
                tile,
                slice,
                sums,
                r.loaded,
                &r.headers,
                &r.answer_headers,
                level,
            )
        };
        let answered = self
            .blocking(move || rayon::join(|| answer(1, twos, &sums), || answer(2, fours, &sums)))
            .await?;
        for (asked, answered) in asked.iter().zip([answered.0, answered.1]) {
            let encoded = answered.map_err(|e| self.unanswered(asked, e))?;
            for (r, answer) in asked.iter().zip(encoded) {
                let Some((count, blobs)) = answer else {
                    continue;
                };
                for (blob, &reference) in blobs.into_iter().zip(&references) {
                    out.push(ResponseRef {
                        reference,
                        slice: (slice.of > 1).then_some((slice.index, slice.of)),
                        ..bundle.add_piece(r.source, (part, group), count, blob)
                    });
                }
            }
        }
        Ok(())
    }

    /// Fails unless every chunk and request of `g` is of its group of `part`.
    fn check_addressed(&self, part: PartId, g: &GatherGroup) -> Result<(), WorkerError> {
        let group = g.group;
        let foreign = |id: &ChunkId| id.part != part || id.group != group;
        let chunks = g.chunks.iter().chain(&g.reference);
        if let Some(c) = chunks.into_iter().find(|c| foreign(&c.chunk.id)) {
            return Err(self.invalid(format!(
                "chunk {} is not in group {group} of {part}",
                c.chunk.id
            )));
        }
        if let Some(r) = (g.requests.iter()).find(|r| r.part != part || r.group != group) {
            return Err(self.invalid(format!(
                "request {} is not addressed to this group",
                r.object
            )));
        }
        Ok(())
    }

    /// The tables the requests of `g` are answered from: the group's own
    /// values, and the optimal ones beside them when evaluating a player.
    async fn sums_of(&self, g: &GatherGroup, slice: Slice) -> Result<Vec<Sums>, WorkerError> {
        let own = Arc::new(self.table_of(&self.store, &g.chunks, slice).await?);
        Ok(match &self.evaluator {
            None => vec![Sums::Own(own, Orientation::Canonical)],
            Some(e) => {
                let optimal = self.table_of(&e.reference, &g.reference, slice).await?;
                vec![
                    Sums::Own(own, Orientation::AsTheyLie),
                    Sums::Optimal(Arc::new(optimal)),
                ]
            }
        })
    }

    /// The requests `asked` (of one tile, addressed to `group` of `part`):
    /// their verified, compressed bytes, read concurrently (a Vec of
    /// futures: see `merge`), with their headers and their responses'. Each
    /// is decoded once, as a stream into the union, so a gather holds about
    /// two bytes a request key (and four for its place in the union) instead
    /// of eight.
    async fn read_requests(
        &self,
        part: PartId,
        group: u32,
        asked: &[&RequestRef],
    ) -> Result<Requests, WorkerError> {
        let id = target_id((part, group));
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
    fn unanswered(&self, asked: &[&RequestRef], e: Unanswered) -> WorkerError {
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
            Unanswered::TooMany(keys) => self.invalid(format!(
                "its requests of one tile hold {keys} afterstates, more than one gather answers ({})",
                u32::MAX
            )),
        }
    }
}
