//! The tasks that make keys from states: the seed, enumerate (a chunk's
//! afterstates as runs, by the group their spawns land in) and merge
//! (sorted state runs into the chunks of one group, or of one key range of
//! a large group) of the forward pass, and ask (a chunk's afterstates as
//! requests) of the backward pass. The expand is [`super::expand`].

use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind};
use solve2048_core::kernel::evaluate::GroupedMasses;
use solve2048_core::kernel::{self, GroupedKeys, Merged, UnplannedPart};
use solve2048_core::space::ids::{group_of, ChunkId, PartId};
use solve2048_core::space::parts::part_of;
use solve2048_core::task::{
    ChunkRef, MergePiece, PushRef, RequestRef, RunFrame, RunRef, TargetGroups, TaskOutput,
    PIECE_CHUNKS,
};
use solve2048_core::Game;
use solve2048_store::layout;

use super::bundle::{target_id, Bundle, TRANSIENT_ZSTD_LEVEL};
use super::error::WorkerError;
use super::run::Run;
use super::runs::{encode_states, grouped_runs, Blob, RunKeys};

/// The group count the task gives successor part `part`, if any.
pub(super) fn group_count(targets: &[TargetGroups], part: PartId) -> Option<u32> {
    targets.iter().find(|t| t.part == part).map(|t| t.groups)
}

/// A group a chunk asks: its part and group, its keys, and in an
/// evaluation their masses.
type AskedGroup = ((PartId, u32), Vec<u64>, Option<Vec<f64>>);

impl Run<'_> {
    /// The start boards ([`Run::starts`]), as runs of the start parts.
    pub(super) async fn seed(&self, targets: &[TargetGroups]) -> Result<TaskOutput, WorkerError> {
        let mut by_part = GroupedKeys::new();
        // In increasing board order: each group's run stays sorted.
        for &s in self.starts().weights.keys() {
            let part = part_of(s);
            let groups = group_count(targets, part)
                .ok_or_else(|| self.unplanned(kernel::UnplannedPart(part)))?;
            let split = by_part
                .entry(part)
                .or_insert_with(|| vec![Vec::new(); groups as usize]);
            split[group_of(s, groups) as usize].push(s);
        }
        let runs = grouped_runs(by_part, |_| None);
        Ok(TaskOutput::Runs(self.write_runs(None, runs).await?))
    }

    /// A chunk's distinct afterstates, as runs by the group their spawns of
    /// each tile land in (a bundle a target layer): what the expands of
    /// the layers two and four above spawn.
    pub(super) async fn enumerate(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
    ) -> Result<TaskOutput, WorkerError> {
        let filed = self
            .made_of_states(chunk, targets, |g, p, s, groups| {
                kernel::filed_afterstates(g, p, s, groups)
            })
            .await?;
        // A part two above holds the spawns of 2s, four above those of 4s.
        let sum = chunk.id.part.sum;
        let runs = grouped_runs(filed, |p| Some(if p.sum == sum + 2 { 1 } else { 2 }));
        Ok(TaskOutput::Enumerated {
            runs: self.write_runs(Some(&chunk.id), runs).await?,
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
                kernel::filed_afterstates(g, p, s, groups)
            })
            .await?;
        let (requests, _) = self.write_requests(&chunk.id, made, None).await?;
        Ok(TaskOutput::Requests(requests))
    }

    /// What `make` (a kernel) makes of the states of `chunk`, on a blocking
    /// thread, given the group count of each successor part `targets` plan.
    async fn made_of_states<T>(
        &self,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
        make: impl FnOnce(
                &Game,
                PartId,
                &[u64],
                &dyn Fn(PartId) -> Option<u32>,
            ) -> Result<T, UnplannedPart>
            + Send
            + 'static,
    ) -> Result<T, WorkerError>
    where
        T: Send + 'static,
    {
        let states = self.read_states(chunk).await?;
        let (game, part, groups) = (self.job.game, chunk.id.part, targets.to_vec());
        self.blocking(move || make(&game, part, &states, &|p| group_count(&groups, p)))
            .await?
            .map_err(|e| self.unplanned(e))
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
        // Each non-empty group's keys, with their masses in an evaluation.
        let asked: Vec<AskedGroup> = requests
            .into_iter()
            .flat_map(|(to, groups)| {
                groups
                    .into_iter()
                    .enumerate()
                    .filter(|(_, keys)| !keys.is_empty())
                    .map(move |(g, keys)| {
                        let mass = masses.map(|m| {
                            let mass = m.get(&to).and_then(|m| m.get(g));
                            mass.map_or(Vec::new(), Clone::clone)
                        });
                        ((to, g as u32), keys, mass)
                    })
            })
            .collect();
        let (game, level) = (self.job.game, self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL));
        // Each group's request, and its push in an evaluation, encoded on all
        // the worker's threads.
        let encoded = self
            .blocking(move || {
                use rayon::prelude::*;
                asked
                    .into_par_iter()
                    .map(|(target, keys, mass)| {
                        let (id, count) = (target_id(target), keys.len() as u64);
                        let h = |kind| ChunkHeader {
                            kind,
                            game,
                            id,
                            count,
                        };
                        let request = chunk::encode_keys(&h(ChunkKind::Requests), &keys, level);
                        let push = mass
                            .map(|m| chunk::encode_pushes(&h(ChunkKind::Pushes), &keys, &m, level));
                        (target, count, request, push)
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        let mut bundle = Bundle::new(layout::requests(chunk, self.attempt));
        let (mut asked, mut pushed) = (Vec::new(), Vec::new());
        for (target, count, request, push) in encoded {
            asked.push(bundle.add_piece(*chunk, target, count, request));
            if let Some(push) = push {
                pushed.push(bundle.add_piece(*chunk, target, count, push));
            }
        }
        self.put_bundle(bundle).await?;
        Ok((asked, pushed))
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
        let (lo, hi, first_index) = match piece {
            Some(p) => (p.lo, p.hi, p.index * PIECE_CHUNKS),
            None => (0, u64::MAX, 0),
        };
        let read = self.read_runs(part, group, runs, (lo, hi)).await?;
        let sections: Vec<Vec<Blob>> = read.iter().map(|(_, b)| b.clone()).collect();
        let (job, chunk_size) = (self.job.clone(), self.job.chunk_size as usize);
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(ChunkId, u64, Vec<u8>)>(1);
        let merging = tokio::task::spawn_blocking(move || {
            // A run's blobs are verified and decoded one after another as
            // the merge reaches them, the first of each on all threads.
            let streams = RunKeys::decoded(
                (sections.iter().enumerate())
                    .map(|(i, run)| RunKeys::new(i, run, lo, hi))
                    .collect(),
            );
            let mut index = first_index;
            let mut keys = Vec::with_capacity(chunk_size.min(1 << 24));
            // False once the writer has stopped (its error is the task's).
            let send = |keys: &[u64], index: u32| {
                let id = ChunkId { part, group, index };
                let bytes = encode_states(&job, id, keys);
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
            .map_err(|e| self.damaged_run(&read, e))?;
        Ok(TaskOutput::Chunks(out))
    }
}
