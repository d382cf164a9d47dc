//! The forward tasks of an evaluation: the seed (the start boards as they
//! lie), and enumerate tasks that add up how likely each board of their
//! chunk is reached, ask the player its moves, and write the successors,
//! requests and pushes those moves make.

use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use solve2048_core::chunk::{self, ChunkKind};
use solve2048_core::evaluation::PushRef;
use solve2048_core::kernel::evaluate::{enumerate_under, EvaluateError, Reach};
use solve2048_core::kernel::GroupedKeys;
use solve2048_core::layer::part_of;
use solve2048_core::part::{group_of, ChunkId};
use solve2048_core::spawn::Starts;
use solve2048_core::task::{ChunkRef, RequestRef, SolvedRef, TargetGroups, TaskOutput};
use solve2048_store::layout;

use super::super::backward::READS_IN_FLIGHT;
use super::super::bundle::Bundle;
use super::super::error::WorkerError;
use super::super::forward::{group_count, TRANSIENT_ZSTD_LEVEL};
use super::super::run::Run;
use super::evaluator::Evaluator;
use super::group::Group;

impl Run<'_> {
    /// The start boards as they lie, as runs of the start parts.
    pub(super) async fn seed_as_they_lie(
        &self,
        targets: &[TargetGroups],
    ) -> Result<TaskOutput, WorkerError> {
        let mut by_part = GroupedKeys::new();
        // In increasing board order: each group's run stays sorted.
        for &s in Starts::actual(self.job.game.size()).weights.keys() {
            let part = part_of(s);
            let groups = group_count(targets, part)
                .ok_or_else(|| self.invalid(solve2048_core::kernel::UnplannedPart(part)))?;
            let split = by_part
                .entry(part)
                .or_insert_with(|| vec![Vec::new(); groups as usize]);
            split[group_of(s, groups) as usize].push(s);
        }
        Ok(TaskOutput::Runs(self.write_runs(None, by_part).await?))
    }

    /// How likely the player is to reach each board of `chunk` (`states`):
    /// the start distribution, then `pushes` (what the layers below pushed
    /// to its group) in the order given, each read as the sums take it.
    pub(super) async fn reach(
        &self,
        chunk: &ChunkRef,
        states: &Arc<Vec<u64>>,
        pushes: &[PushRef],
    ) -> Result<Vec<f64>, WorkerError> {
        let id = chunk.id;
        if let Some(p) = pushes
            .iter()
            .find(|p| p.part != id.part || p.group != id.group || !(1..=2).contains(&p.tile()))
        {
            return Err(self.invalid(format!("push {} is not for this chunk's group", p.object)));
        }
        let (n, states) = (self.job.game.size(), states.clone());
        let from_start = id.part.sum <= 8;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(u8, Vec<u64>, Vec<f64>)>(2);
        let adding = tokio::task::spawn_blocking(move || {
            let mut reach = Reach::new(n, &states);
            if from_start {
                reach.add_starts(&Starts::actual(n));
            }
            while let Some((tile, keys, masses)) = rx.blocking_recv() {
                reach.add_pushes(tile, &keys, &masses)?;
            }
            Ok::<_, EvaluateError>(reach.finish())
        });
        // A Vec of futures, not a lazy map (see `merge`).
        let mut reads = Vec::with_capacity(pushes.len());
        for p in pushes {
            let h = self.header(ChunkKind::Pushes, target(p.part, p.group), p.count);
            reads.push(async move {
                let read = self
                    .store
                    .read_responses_at(&p.object, p.offset, p.len, &h)
                    .await;
                read.map(|(keys, masses)| (p.tile(), keys, masses))
            });
        }
        let mut read = futures::stream::iter(reads).buffered(READS_IN_FLIGHT);
        while let Some(pushed) = read.try_next().await? {
            if tx.send(pushed).await.is_err() {
                break; // the sums stopped on an error, reported below
            }
        }
        drop(tx);
        adding
            .await
            .map_err(|_| WorkerError::Panic {
                task: self.task.key(),
            })?
            .map_err(|e| self.evaluation(e))
    }

    /// A chunk's successors under the player as runs; its afterstates as
    /// requests, and with how likely the player makes them as pushes, both
    /// in one bundle.
    pub(super) async fn enumerate_under(
        &self,
        e: &Arc<Evaluator>,
        chunk: &ChunkRef,
        targets: &[TargetGroups],
        pushes: &[PushRef],
        reference: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let states = Arc::new(self.read_states(chunk).await?);
        let reach = self.reach(chunk, &states, pushes).await?;
        let group = Arc::new(if e.plays_optimal() {
            self.read_group(e, reference).await?
        } else {
            Group::default()
        });
        let moves = self.moves(e, &states, &group).await?;
        drop(group);
        let (game, part) = (self.job.game, chunk.id.part);
        let groups: Vec<TargetGroups> = targets.to_vec();
        let made = self
            .blocking(move || {
                enumerate_under(&game, part, &states, &moves, &reach, |p| {
                    group_count(&groups, p)
                })
            })
            .await?
            .map_err(|e| self.evaluation(e))?;
        let runs = self.write_runs(Some(&chunk.id), made.successors).await?;
        let object = layout::requests(&chunk.id, self.attempt);
        let mut bundle = Bundle::default();
        let (mut requests, mut pushes) = (Vec::new(), Vec::new());
        let level = self.job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
        for (to, groups) in made.requests {
            let masses = made.masses.get(&to).map_or(&[][..], |m| m.as_slice());
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let (group, count) = (group as u32, keys.len() as u64);
                let id = target(to, group);
                let (offset, len, checksum) = bundle.add(chunk::encode_keys(
                    &self.header(ChunkKind::Requests, id, count),
                    &keys,
                    level,
                ));
                requests.push(RequestRef {
                    source: chunk.id,
                    part: to,
                    group,
                    object: object.clone(),
                    offset,
                    len,
                    count,
                    checksum,
                });
                let mass = masses.get(group as usize).map_or(&[][..], |m| m.as_slice());
                let (offset, len, checksum) = bundle.add(chunk::encode_responses(
                    &self.header(ChunkKind::Pushes, id, count),
                    &keys,
                    mass,
                    level,
                ));
                pushes.push(PushRef {
                    source: chunk.id,
                    part: to,
                    group,
                    object: object.clone(),
                    offset,
                    len,
                    count,
                    checksum,
                });
            }
        }
        self.put_bundle(&object, bundle).await?;
        Ok(TaskOutput::Enumerated {
            runs,
            requests,
            pushes,
        })
    }
}

/// The name a request or push to group `group` of part `part` carries.
fn target(part: solve2048_core::part::PartId, group: u32) -> ChunkId {
    ChunkId {
        part,
        group,
        index: 0,
    }
}
