//! What the tasks of an evaluation job ([`solve2048_core::task::evaluation`]) do
//! besides the solve's: its enumerate and solve value boards as they lie,
//! under the player's moves, beside the solved store the job names; the
//! other stages are the solve's ([`super::run::Run::go`]).
//!
//! - [`Evaluator`]: what every task of the job shares: the player (built
//!   once a thread from its spec, or from the store's copy of its weights)
//!   and the solved store, opened read-only.
//! - [`forward`]: enumerate tasks that first add up how likely each board
//!   of their chunk is reached.
//! - [`backward`]: the optimal values a gather answers with beside the
//!   player's, and solves that value each board under the player.
//!
//! The player is asked for its moves on every board of a chunk in the
//! enumerate task and again in the solve task (rather than storing them):
//! even `expectimax:2` costs little beside the rest of a task.

mod backward;
pub(super) mod evaluator;
mod forward;
mod group;

use std::sync::Arc;

use solve2048_core::formats::chunk::ChunkKind;
use solve2048_core::kernel::evaluate::{EvaluateError, Moves};
use solve2048_core::task::SolvedRef;
use solve2048_store::layout;

use super::error::WorkerError;
use super::run::Run;
pub(super) use evaluator::Evaluator;
use group::Group;

impl Run<'_> {
    /// The solved store's chunks `chunks` (one group's, in order), read.
    async fn read_group(&self, e: &Evaluator, chunks: &[SolvedRef]) -> Result<Group, WorkerError> {
        let mut group = Group::default();
        for c in chunks {
            let (id, count) = (c.chunk.id, c.chunk.count);
            let (states, values) = self.read_solved(&e.reference, *c).await?;
            if group
                .states
                .last()
                .is_some_and(|&l| states.first() <= Some(&l))
            {
                return Err(self.invalid(format!("reference chunk {id} is out of key order")));
            }
            let policy = e
                .reference
                .read_policy(
                    &layout::policy_of(c),
                    &self.header(ChunkKind::Policy, id, count),
                )
                .await?;
            group.states.extend(states);
            group.values.extend(values);
            group.policy.extend(policy);
        }
        Ok(group)
    }

    /// The player's moves on `states`, on a blocking thread.
    async fn moves(
        &self,
        e: &Arc<Evaluator>,
        states: &Arc<Vec<u64>>,
        group: &Arc<Group>,
    ) -> Result<Vec<Moves>, WorkerError> {
        let (ev, states, group) = (e.clone(), states.clone(), group.clone());
        self.blocking(move || ev.moves(&states, &group))
            .await?
            .map_err(|m| e.moves_failed(m, |reason| self.invalid(reason)))
    }

    /// An evaluation kernel's error, for this task.
    fn evaluation(&self, source: EvaluateError) -> WorkerError {
        WorkerError::Evaluate {
            task: self.task.key(),
            source,
        }
    }
}
