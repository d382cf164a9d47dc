//! Running the tasks of an evaluation job ([`solve2048_core::evaluation`]):
//! the solve's tasks on boards as they lie, under the player's moves, beside
//! the solved store the job names.
//!
//! - [`Evaluator`]: what every task of the job shares: the player (built
//!   once a thread from its spec, or from the store's copy of its weights)
//!   and the solved store, opened read-only.
//! - [`forward`]: the seed, and enumerate tasks that first add up how
//!   likely each board of their chunk is reached.
//! - [`backward`]: gathers that answer with the player's values and the
//!   optimal ones, solves that value each board under the player, and the
//!   start value.
//!
//! The player is asked for its moves on every board of a chunk in the
//! enumerate task and again in the solve task (rather than storing them):
//! even `expectimax:2` costs little beside the rest of a task.

mod backward;
pub(super) mod evaluator;
mod forward;
mod group;

use std::sync::Arc;

use solve2048_core::chunk::ChunkKind;
use solve2048_core::kernel::evaluate::{EvaluateError, Moves};
use solve2048_core::task::{SolvedRef, Task, TaskOutput};
use solve2048_store::layout;

use super::error::WorkerError;
use super::run::Run;
pub(super) use evaluator::Evaluator;
use group::Group;

impl Run<'_> {
    /// Run this task as a task of an evaluation.
    pub(super) async fn evaluate(&self, e: &Arc<Evaluator>) -> Result<TaskOutput, WorkerError> {
        match self.task {
            Task::Seed { targets } => self.seed_as_they_lie(targets).await,
            Task::Enumerate {
                chunk,
                targets,
                pushes,
                reference,
            } => {
                self.enumerate_under(e, chunk, targets, pushes, reference)
                    .await
            }
            Task::Merge {
                part,
                group,
                runs,
                piece,
            } => self.merge(*part, *group, runs, *piece).await,
            Task::Gather {
                part,
                groups,
                piece,
            } => self.gather_under(e, *part, groups, *piece).await,
            Task::Solve {
                chunk,
                responses,
                pushes,
                reference,
            } => {
                self.solve_under(e, chunk, responses, pushes, reference)
                    .await
            }
            Task::StartValue { layers } => self.start_value_as_they_lie(layers).await,
            Task::Ask { .. } => Err(self.invalid(
                "an evaluation's chunks ask in its forward pass, with the player's masses",
            )),
        }
    }

    /// The solved store's chunks `chunks` (one group's, in order), read.
    async fn read_group(&self, e: &Evaluator, chunks: &[SolvedRef]) -> Result<Group, WorkerError> {
        let mut group = Group::default();
        for c in chunks {
            let (id, count) = (c.chunk.id, c.chunk.count);
            let states = e
                .reference
                .read_keys(
                    &layout::states_of(&c.chunk),
                    &self.header(ChunkKind::States, id, count),
                )
                .await?;
            if group
                .states
                .last()
                .is_some_and(|&l| states.first() <= Some(&l))
            {
                return Err(self.invalid(format!("reference chunk {id} is out of key order")));
            }
            let values = e
                .reference
                .read_values(
                    &layout::values_of(c),
                    &self.header(ChunkKind::Values, id, count),
                )
                .await?;
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
        let (e, states, group) = (e.clone(), states.clone(), group.clone());
        self.blocking(move || e.moves(&states, &group))
            .await?
            .map_err(|reason| self.player_error(reason))
    }

    /// An evaluation kernel's error, for this task.
    fn evaluation(&self, source: EvaluateError) -> WorkerError {
        WorkerError::Evaluate {
            task: self.task.key(),
            source,
        }
    }

    /// The player or the solved store could not say what it must.
    fn player_error(&self, reason: String) -> WorkerError {
        WorkerError::InvalidTask {
            task: self.task.key(),
            reason,
        }
    }
}
