//! The backward task of an evaluation that differs from the solve's: solves
//! that value each board as the expectation over the player's moves beside
//! what those moves give up (its gathers answer with the solved store's
//! values beside the player's: [`super::super::gather`]).

use std::sync::Arc;

use solve2048_core::kernel::evaluate::{solve_under, Optimal};
use solve2048_core::kernel::SpawnSums;
use solve2048_core::task::{ChunkRef, PushRef, RequestRef, ResponseRef, SolvedRef, TaskOutput};

use super::super::backward::different;
use super::super::error::WorkerError;
use super::super::run::Run;
use super::evaluator::Evaluator;

impl Run<'_> {
    /// One chunk's values under the player, and what its boards cost the
    /// player against optimal play.
    pub(in crate::exec) async fn solve_under(
        &self,
        e: &Arc<Evaluator>,
        chunk: &ChunkRef,
        requests: &[RequestRef],
        responses: &[ResponseRef],
        pushes: &[PushRef],
        reference: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let states = Arc::new(self.read_states(chunk).await?);
        let reach = self.reach(chunk, &states, pushes).await?;
        let group = Arc::new(self.read_group(e, reference).await?);
        let moves = self.moves(e, &states, &group).await?;
        let n = self.job.game.shape;
        let (for_optimal, looked_up) = (states.clone(), group.clone());
        let (values, best) = self
            .blocking(move || looked_up.optimal(&for_optimal, n))
            .await?
            .map_err(|reason| self.invalid(reason))?;
        drop(group);
        let answers = self.read_answers(chunk, requests, responses).await?;
        let rule = self.job.game.spawn_rule();
        let [mine, optimal] =
            answers.map(|[twos, fours]| SpawnSums::from_answers(&rule, twos, fours));
        let (game, key, for_solve) = (self.job.game, self.task.key(), states.clone());
        let valued = self
            .blocking(move || {
                let (Some(mine), Some(optimal)) = (mine, optimal) else {
                    return Err(different(&key));
                };
                let optimal = Optimal {
                    values: &values,
                    best: &best,
                    sums: &optimal,
                };
                solve_under(&game, &for_solve, &moves, &reach, &mine, optimal)
                    .map_err(|source| WorkerError::Evaluate { task: key, source })
            })
            .await??;
        let evaluated = Some(valued.evaluation);
        self.write_solved(chunk, states, valued.values, valued.actions, evaluated)
            .await
    }
}
