//! The forward task of an evaluation that differs from the solve's:
//! enumerate tasks that add up how likely each board of their chunk is
//! reached, ask the player its moves, and write the successors, requests
//! and pushes those moves make.

use std::sync::Arc;

use futures::TryStreamExt;
use solve2048_core::formats::chunk::{self, ChunkKind};
use solve2048_core::kernel::evaluate::{enumerate_under, EvaluateError, Reach};
use solve2048_core::task::{ChunkRef, PushRef, SolvedRef, TargetGroups, TaskOutput};

use super::super::bundle::target_id;
use super::super::error::WorkerError;
use super::super::forward::group_count;
use super::super::run::Run;
use super::super::runs::grouped_runs;
use super::evaluator::Evaluator;
use super::group::Group;

impl Run<'_> {
    /// How likely the player is to reach each board of `chunk` (`states`):
    /// the start distribution, then `pushes` (what the layers below pushed
    /// to its group) in the order given, each read as the sums take it.
    pub(in crate::exec) async fn reach(
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
        let (game, states) = (self.job.game, states.clone());
        let starts = (id.part.sum <= 8).then(|| self.starts());
        let (tx, mut rx) = tokio::sync::mpsc::channel::<(u8, Vec<u64>, Vec<f64>)>(2);
        let adding = tokio::task::spawn_blocking(move || {
            let mut reach = Reach::new(&game, &states);
            if let Some(starts) = &starts {
                reach.add_starts(starts);
            }
            while let Some((tile, keys, masses)) = rx.blocking_recv() {
                reach.add_pushes(tile, &keys, &masses)?;
            }
            Ok::<_, EvaluateError>(reach.finish())
        });
        let id_of = |p: &PushRef| target_id((p.part, p.group));
        let mut read = self.read_pieces(ChunkKind::Pushes, id_of, pushes, chunk::decode_pushes);
        while let Some((p, (keys, masses))) = read.try_next().await? {
            if tx.send((p.tile(), keys, masses)).await.is_err() {
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
    pub(in crate::exec) async fn enumerate_under(
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
        let successors = grouped_runs(made.successors, |_| None);
        let runs = self.write_runs(Some(&chunk.id), successors).await?;
        let (requests, pushes) = self
            .write_requests(&chunk.id, made.requests, Some(&made.masses))
            .await?;
        Ok(TaskOutput::Enumerated {
            runs,
            requests,
            pushes,
        })
    }
}
