//! The tasks that make keys from states: the seed, enumerate (successor
//! runs) and merge (runs into the chunks of one group, or of one key range
//! of a large group) of the forward pass, and ask (a chunk's afterstates as
//! requests) of the backward pass.

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind};
use solve2048_core::kernel::evaluate::GroupedMasses;
use solve2048_core::kernel::{self, GroupedKeys, Merged};
use solve2048_core::space::ids::{group_of, ChunkId, PartId};
use solve2048_core::space::parts::part_of;
use solve2048_core::task::{
    frames_checksum, run_frame_keys, ChunkRef, MergePiece, PushRef, RequestRef, RunFrame, RunRef,
    TargetGroups, TaskOutput, PIECE_CHUNKS, RUN_SAMPLES,
};
use solve2048_core::Game;
use solve2048_store::{layout, StoreError};

use super::bundle::Bundle;
use super::error::WorkerError;
use super::run::Run;

/// Highest zstd level for runs, requests and responses: they live only
/// until they are read, and at the job's level (3 by default) compressing
/// runs took a tenth of the forward pass.
pub(super) const TRANSIENT_ZSTD_LEVEL: i32 = 1;

/// The group count the task gives successor part `part`, if any.
pub(super) fn group_count(targets: &[TargetGroups], part: PartId) -> Option<u32> {
    targets.iter().find(|t| t.part == part).map(|t| t.groups)
}

/// The id in the header of a run, request or push to `group` of `part`
/// (the index field is unused: 0).
pub(super) fn target_id((part, group): (PartId, u32)) -> ChunkId {
    ChunkId {
        part,
        group,
        index: 0,
    }
}

/// Keys at evenly spaced ranks of sorted `keys` ([`RUN_SAMPLES`] of them).
fn samples(keys: &[u64]) -> Vec<u64> {
    let n = RUN_SAMPLES.min(keys.len());
    (0..n).map(|i| keys[i * keys.len() / n]).collect()
}

impl Run<'_> {
    /// The start boards ([`Run::starts`]), as runs of the start parts.
    pub(super) async fn seed(&self, targets: &[TargetGroups]) -> Result<TaskOutput, WorkerError> {
        let mut by_part = GroupedKeys::new();
        // In increasing board order: each group's run stays sorted.
        for &s in self.starts().weights.keys() {
            let part = part_of(s);
            let groups = group_count(targets, part)
                .ok_or_else(|| self.invalid(kernel::UnplannedPart(part)))?;
            let split = by_part
                .entry(part)
                .or_insert_with(|| vec![Vec::new(); groups as usize]);
            split[group_of(s, groups) as usize].push(s);
        }
        Ok(TaskOutput::Runs(self.write_runs(None, by_part).await?))
    }

    /// A chunk's successors, as runs (a bundle a target layer).
    pub(super) async fn enumerate(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
    ) -> Result<TaskOutput, WorkerError> {
        let made = self
            .made_of_states(chunk, targets, |g, p, s, groups| {
                kernel::enumerate(g, p, s, groups)
            })
            .await?;
        Ok(TaskOutput::Enumerated {
            runs: self.write_runs(Some(&chunk.id), made).await?,
            requests: Vec::new(),
            pushes: Vec::new(),
        })
    }

    /// A chunk's distinct afterstates as requests, by the group their
    /// spawns of each tile land in (one bundle).
    pub(super) async fn ask(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
    ) -> Result<TaskOutput, WorkerError> {
        let made = self
            .made_of_states(chunk, targets, |g, p, s, groups| {
                kernel::requests(g, p, s, groups)
            })
            .await?;
        let (requests, _) = self.write_requests(&chunk.id, made, None).await?;
        Ok(TaskOutput::Requests(requests))
    }

    /// What `make` (a kernel) makes of the states of `chunk`, on a blocking
    /// thread, given the group count of each successor part `targets` plan.
    async fn made_of_states<T, E>(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
        make: impl FnOnce(&Game, PartId, &[u64], &dyn Fn(PartId) -> Option<u32>) -> Result<T, E>
            + Send
            + 'static,
    ) -> Result<T, WorkerError>
    where
        T: Send + 'static,
        E: ToString + Send + 'static,
    {
        let states = self.read_states(chunk).await?;
        let (game, part, groups) = (self.job.game, chunk.id.part, targets.to_vec());
        self.blocking(move || make(&game, part, &states, &|p| group_count(&groups, p)))
            .await?
            .map_err(|e| self.invalid(e))
    }

    /// Write a chunk's distinct afterstates as requests, by the part and
    /// group their spawns land in, in one bundle; in an evaluation, with
    /// `masses` (how likely the player makes each) as pushes beside them.
    pub(super) async fn write_requests(
        &self,
        chunk: &ChunkId,
        requests: GroupedKeys,
        masses: Option<&GroupedMasses>,
    ) -> Result<(Vec<RequestRef>, Vec<PushRef>), WorkerError> {
        let mut bundle = Bundle::new(layout::requests(chunk, self.attempt));
        let (mut asked, mut pushed) = (Vec::new(), Vec::new());
        let level = self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
        for (to, groups) in requests {
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let (target, count) = ((to, group as u32), keys.len() as u64);
                let id = target_id(target);
                let h = self.header(ChunkKind::Requests, id, count);
                let blob = chunk::encode_keys(&h, &keys, level);
                asked.push(bundle.add_piece(*chunk, target, count, blob));
                if let Some(masses) = masses {
                    let mass = masses.get(&to).and_then(|m| m.get(group));
                    let mass = mass.map_or(&[][..], Vec::as_slice);
                    let h = self.header(ChunkKind::Pushes, id, count);
                    let blob = chunk::encode_pushes(&h, &keys, mass, level);
                    pushed.push(bundle.add_piece(*chunk, target, count, blob));
                }
            }
        }
        self.put_bundle(bundle).await?;
        Ok((asked, pushed))
    }

    /// Write one run per non-empty hash group of each successor part, as one
    /// bundle a target layer (so that each is deleted once its layer is
    /// merged); a run longer than a frame ([`run_frame_keys`]) as frames.
    pub(super) async fn write_runs(
        &self,
        source: Option<&ChunkId>,
        by_part: GroupedKeys,
    ) -> Result<Vec<RunRef>, WorkerError> {
        let mut bundles: BTreeMap<u32, Bundle> = BTreeMap::new();
        let mut runs = Vec::new();
        for (part, groups) in by_part {
            let bundle = bundles
                .entry(part.sum)
                .or_insert_with(|| Bundle::new(layout::runs(source, part.sum, self.attempt)));
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let group = group as u32;
                // A run's header carries its target part and group.
                let id = target_id((part, group));
                let level = self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
                let frame_keys = run_frame_keys(self.job.chunk_size) as usize;
                let mut frames: Vec<RunFrame> = keys
                    .chunks(frame_keys)
                    .map(|frame| {
                        let h = self.header(ChunkKind::Run, id, frame.len() as u64);
                        let (offset, len, checksum) =
                            bundle.add(chunk::encode_keys(&h, frame, level));
                        RunFrame {
                            first: frame[0],
                            offset,
                            len,
                            count: frame.len() as u64,
                            checksum,
                        }
                    })
                    .collect();
                let (offset, len) = (frames[0].offset, frames.iter().map(|f| f.len).sum());
                let checksum = match frames.as_slice() {
                    [one] => one.checksum,
                    many => frames_checksum(many),
                };
                if frames.len() == 1 {
                    frames.clear();
                }
                runs.push(RunRef {
                    part,
                    group,
                    object: bundle.object.clone(),
                    offset,
                    len,
                    count: keys.len() as u64,
                    checksum,
                    samples: samples(&keys),
                    frames,
                });
            }
        }
        for bundle in bundles.into_values() {
            self.put_bundle(bundle).await?;
        }
        Ok(runs)
    }

    pub(super) async fn read_states(&self, chunk: &ChunkRef) -> Result<Vec<u64>, WorkerError> {
        let h = self.header(ChunkKind::States, chunk.id, chunk.count);
        Ok(self.store.read_keys(&layout::states_of(chunk), &h).await?)
    }

    /// Merge a group's runs (or one key range of them) into chunks of the
    /// job's chunk size (the last one shorter), written as they fill: the
    /// task holds the runs' compressed bytes and two chunks, whatever the
    /// group's size.
    pub(super) async fn merge(
        &self,
        part: PartId,
        group: u32,
        runs: &[RunRef],
        piece: Option<MergePiece>,
    ) -> Result<TaskOutput, WorkerError> {
        let header = |count| self.header(ChunkKind::Run, target_id((part, group)), count);
        let (lo, hi, first_index) = match piece {
            Some(p) => (p.lo, p.hi, p.index * PIECE_CHUNKS),
            None => (0, u64::MAX, 0),
        };
        // Of each run, the blobs that may hold keys of the range: one byte
        // range a run. A Vec of futures, not a lazy map: a closure in the
        // stream would make the task's future not Send for every lifetime.
        let blobs: Vec<(&RunRef, Vec<RunFrame>)> = runs
            .iter()
            .map(|r| (r, r.blobs_in(lo, hi)))
            .filter(|(_, b)| !b.is_empty())
            .collect();
        let mut reads = Vec::with_capacity(blobs.len());
        for (r, b) in &blobs {
            let (start, end) = (b[0].offset, b[b.len() - 1].offset + b[b.len() - 1].len);
            reads.push(self.store.get_range(&r.object, start, end - start));
        }
        let loaded: Vec<bytes::Bytes> = futures::stream::iter(reads)
            .buffered(8)
            .try_collect()
            .await?;
        // Each blob's bytes, header and place, run by run.
        let mut sections: Vec<Vec<(bytes::Bytes, ChunkHeader, RunFrame)>> = Vec::new();
        for ((_, b), bytes) in blobs.iter().zip(loaded) {
            let base = b[0].offset;
            sections.push(
                b.iter()
                    .map(|f| {
                        let at = (f.offset - base) as usize;
                        (bytes.slice(at..at + f.len as usize), header(f.count), *f)
                    })
                    .collect(),
            );
        }
        let (job, chunk_size) = (self.job.clone(), self.job.chunk_size as usize);
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(ChunkId, u64, Vec<u8>)>(1);
        let merging = tokio::task::spawn_blocking(move || {
            // A run's blobs are verified and decoded one after another as
            // the merge reaches them.
            let streams = sections
                .iter()
                .enumerate()
                .map(|(i, run)| {
                    let keys = run.iter().flat_map(move |(bytes, h, f)| {
                        let keys: Box<dyn Iterator<Item = _>> = match chunk::stream_keys(bytes, h) {
                            Ok(s) => Box::new(s.map(move |k| k.map_err(|e| (i, *f, e)))),
                            Err(e) => Box::new(std::iter::once(Err((i, *f, e)))),
                        };
                        keys
                    });
                    kernel::in_range(keys, lo, hi)
                })
                .collect::<Vec<_>>();
            let mut index = first_index;
            let mut keys = Vec::with_capacity(chunk_size.min(1 << 24));
            // False once the writer has stopped (its error is the task's).
            let send = |keys: &[u64], index: u32| {
                let id = ChunkId { part, group, index };
                let h = solve2048_core::formats::chunk::ChunkHeader {
                    kind: ChunkKind::States,
                    game: job.game,
                    id,
                    count: keys.len() as u64,
                };
                let bytes = chunk::encode_keys(&h, keys, job.zstd_level);
                tx.blocking_send((id, keys.len() as u64, bytes)).is_ok()
            };
            for key in Merged::new(streams) {
                keys.push(key.map_err(|(_, e)| e)?);
                if keys.len() == chunk_size {
                    if !send(&keys, index) {
                        return Ok(());
                    }
                    keys.clear();
                    index += 1;
                }
            }
            if !keys.is_empty() {
                send(&keys, index);
            }
            Ok::<(), (usize, RunFrame, chunk::FormatError)>(())
        });
        let mut out = Vec::new();
        while let Some((id, count, bytes)) = rx.recv().await {
            let object = layout::states(&id, self.attempt);
            let checksum = self.put_chunk(&object, bytes).await?;
            out.push(ChunkRef {
                id,
                count,
                checksum,
                attempt: self.attempt,
            });
        }
        merging
            .await
            .map_err(|_| WorkerError::Panic {
                task: self.task.key(),
            })?
            .map_err(|(i, f, source)| StoreError::Rejected {
                object: format!(
                    "{} bytes {}..{}",
                    blobs[i].0.object,
                    f.offset,
                    f.offset + f.len
                ),
                source,
            })?;
        Ok(TaskOutput::Chunks(out))
    }
}
