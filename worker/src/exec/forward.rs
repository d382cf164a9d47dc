//! The tasks that make keys from states: the seed, enumerate (successor
//! runs) and merge (runs into the chunks of one group, or of one key range
//! of a large group) of the forward pass, and ask (a chunk's afterstates as
//! requests) of the backward pass.

use futures::{StreamExt, TryStreamExt};
use solve2048_core::chunk::{self, ChunkKind};
use solve2048_core::kernel::{self, GroupedKeys, Merged};
use solve2048_core::layer::start_parts;
use solve2048_core::part::{group_of, ChunkId, PartId};
use solve2048_core::task::{
    ChunkRef, MergePiece, RequestRef, RunRef, TargetGroups, TaskOutput, PIECE_CHUNKS, RUN_SAMPLES,
};
use solve2048_store::{layout, StoreError};

use super::{Bundle, Run, WorkerError};

/// Highest zstd level for runs, requests and responses: they live only
/// until they are read, and at the job's level (3 by default) compressing
/// runs took a tenth of the forward pass.
pub(super) const TRANSIENT_ZSTD_LEVEL: i32 = 1;

/// The group count the task gives successor part `part`, if any.
pub(super) fn group_count(targets: &[TargetGroups], part: PartId) -> Option<u32> {
    targets.iter().find(|t| t.part == part).map(|t| t.groups)
}

/// Keys at evenly spaced ranks of sorted `keys` ([`RUN_SAMPLES`] of them).
fn samples(keys: &[u64]) -> Vec<u64> {
    let n = RUN_SAMPLES.min(keys.len());
    (0..n).map(|i| keys[i * keys.len() / n]).collect()
}

impl Run<'_> {
    /// The start states, as runs of the start parts.
    pub(super) async fn seed(&self, targets: &[TargetGroups]) -> Result<TaskOutput, WorkerError> {
        let mut by_part = GroupedKeys::new();
        for (part, states) in start_parts(self.job.game.size()) {
            let groups = group_count(targets, part)
                .ok_or_else(|| self.invalid(kernel::UnplannedPart(part)))?;
            // Each part's start states are sorted: each group stays sorted.
            let mut split = vec![Vec::new(); groups as usize];
            for s in states {
                split[group_of(s, groups) as usize].push(s);
            }
            by_part.insert(part, split);
        }
        Ok(TaskOutput::Runs(self.write_runs(None, by_part).await?))
    }

    /// A chunk's successors, as runs (one bundle).
    pub(super) async fn enumerate(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
    ) -> Result<TaskOutput, WorkerError> {
        let states = self.read_states(chunk).await?;
        let (game, part) = (self.job.game, chunk.id.part);
        let groups: Vec<TargetGroups> = targets.to_vec();
        let made = self
            .blocking(move || kernel::enumerate(&game, part, &states, |p| group_count(&groups, p)))
            .await?
            .map_err(|e| self.invalid(e))?;
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
        let states = self.read_states(chunk).await?;
        let (game, part) = (self.job.game, chunk.id.part);
        let groups: Vec<TargetGroups> = targets.to_vec();
        let made = self
            .blocking(move || kernel::requests(&game, part, &states, |p| group_count(&groups, p)))
            .await?
            .map_err(|e| self.invalid(e))?;
        let object = layout::requests(&chunk.id, self.attempt);
        let mut bundle = Bundle::default();
        let mut requests = Vec::new();
        for (target, groups) in made {
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let group = group as u32;
                let id = ChunkId {
                    part: target,
                    group,
                    index: 0,
                };
                let (offset, len, checksum) = bundle.add(chunk::encode_keys(
                    &self.header(ChunkKind::Requests, id, keys.len() as u64),
                    &keys,
                    self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL),
                ));
                requests.push(RequestRef {
                    source: chunk.id,
                    part: target,
                    group,
                    object: object.clone(),
                    offset,
                    len,
                    count: keys.len() as u64,
                    checksum,
                });
            }
        }
        self.put_bundle(&object, bundle).await?;
        Ok(TaskOutput::Requests(requests))
    }

    /// Write one run per non-empty hash group of each successor part, as one
    /// bundle.
    pub(super) async fn write_runs(
        &self,
        source: Option<&ChunkId>,
        by_part: GroupedKeys,
    ) -> Result<Vec<RunRef>, WorkerError> {
        let object = layout::runs(source, self.attempt);
        let mut bundle = Bundle::default();
        let mut runs = Vec::new();
        for (part, groups) in by_part {
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let group = group as u32;
                // A run's header carries its target part and group; the index
                // field is unused (0).
                let id = ChunkId {
                    part,
                    group,
                    index: 0,
                };
                let (offset, len, checksum) = bundle.add(chunk::encode_keys(
                    &self.header(ChunkKind::Run, id, keys.len() as u64),
                    &keys,
                    self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL),
                ));
                runs.push(RunRef {
                    part,
                    group,
                    object: object.clone(),
                    offset,
                    len,
                    count: keys.len() as u64,
                    checksum,
                    samples: samples(&keys),
                });
            }
        }
        self.put_bundle(&object, bundle).await?;
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
        let header = |count| {
            self.header(
                ChunkKind::Run,
                ChunkId {
                    part,
                    group,
                    index: 0,
                },
                count,
            )
        };
        // A Vec of futures, not a lazy map: a closure in the stream would
        // make the task's future not Send for every lifetime.
        let mut reads = Vec::with_capacity(runs.len());
        for r in runs {
            reads.push(self.store.read_key_bytes_at(
                r.object.clone(),
                r.offset,
                r.len,
                header(r.count),
            ));
        }
        let loaded: Vec<Vec<u8>> = futures::stream::iter(reads)
            .buffered(8)
            .try_collect()
            .await?;
        let headers: Vec<_> = runs.iter().map(|r| header(r.count)).collect();
        let (lo, hi, first_index) = match piece {
            Some(p) => (p.lo, p.hi, p.index * PIECE_CHUNKS),
            None => (0, u64::MAX, 0),
        };
        let (job, chunk_size) = (self.job.clone(), self.job.chunk_size as usize);
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(ChunkId, u64, Vec<u8>)>(1);
        let merging = tokio::task::spawn_blocking(move || {
            let streams = loaded
                .iter()
                .zip(&headers)
                .enumerate()
                .map(|(i, (bytes, h))| {
                    chunk::stream_keys(bytes, h)
                        .map(|s| kernel::in_range(s, lo, hi))
                        .map_err(|e| (i, e))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut index = first_index;
            let mut keys = Vec::with_capacity(chunk_size.min(1 << 24));
            // False once the writer has stopped (its error is the task's).
            let send = |keys: &[u64], index: u32| {
                let id = ChunkId { part, group, index };
                let h = solve2048_core::chunk::ChunkHeader {
                    kind: ChunkKind::States,
                    game: job.game,
                    id,
                    count: keys.len() as u64,
                };
                let bytes = chunk::encode_keys(&h, keys, job.zstd_level);
                tx.blocking_send((id, keys.len() as u64, bytes)).is_ok()
            };
            for key in Merged::new(streams) {
                keys.push(key?);
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
            Ok::<(), (usize, chunk::FormatError)>(())
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
            .map_err(|(i, source)| StoreError::Rejected {
                object: format!(
                    "{} bytes {}..{}",
                    runs[i].object,
                    runs[i].offset,
                    runs[i].offset + runs[i].len
                ),
                source,
            })?;
        Ok(TaskOutput::Chunks(out))
    }
}
