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
mod forward;

use std::sync::Arc;

use rayon::prelude::*;
use solve2048_core::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::chunk::ChunkKind;
use solve2048_core::evaluation::{weights_checksum, Evaluation, WEIGHTS};
use solve2048_core::kernel::evaluate::{EvaluateError, Moves};
use solve2048_core::task::{JobSpec, SolvedRef, Task, TaskOutput};
use solve2048_core::Direction;
use solve2048_players::{Network, Player, PlayerSpec};
use solve2048_store::{layout, Access, Store};

use super::{Run, WorkerError};

/// Boards a thread asks its player about at a time.
const PLAYER_BATCH: usize = 256;

/// Builds one player (each thread asks its own).
type PlayerFactory = Box<dyn Fn() -> Box<dyn Player> + Send + Sync>;

/// What every task of an evaluation job shares.
pub(crate) struct Evaluator {
    /// The solved store the player is compared with, opened read-only.
    reference: Store,
    /// Builds the player; `None` for `optimal`, which plays the solved
    /// store's policy.
    player: Option<PlayerFactory>,
    /// Board side.
    n: usize,
}

impl Evaluator {
    /// The evaluator of `job` (whose evaluation is `e`) on `store`: the
    /// solved store opened and the player built once, so that a player that
    /// cannot be built fails the first task, naming why.
    pub(super) async fn open(
        store: &Store,
        job: &JobSpec,
        e: &Evaluation,
    ) -> Result<Arc<Evaluator>, WorkerError> {
        let player = |reason: String| WorkerError::Player(format!("{}: {reason}", e.player));
        let n = job.game.size();
        let reference = Store::open(&e.reference, Access::ReadOnly)?;
        let spec = PlayerSpec::parse(&e.player).map_err(|err| player(err.to_string()))?;
        let factory: Option<PlayerFactory> = match spec {
            PlayerSpec::Optimal => None,
            PlayerSpec::NTuple { path } => {
                let bytes = store.get(WEIGHTS).await?.ok_or_else(|| {
                    player(format!(
                        "the store holds no copy of its weights ({WEIGHTS})"
                    ))
                })?;
                if e.weights.as_deref() != Some(weights_checksum(&bytes).as_str()) {
                    return Err(player(format!(
                        "{WEIGHTS} is not the weights file this evaluation began with"
                    )));
                }
                let net = Network::from_bytes(&bytes, &path).map_err(|e| player(e.to_string()))?;
                if net.n() != n {
                    return Err(player(format!("its weights are for {0}x{0}", net.n())));
                }
                let (net, name) = (Arc::new(net), e.player.clone());
                Some(Box::new(move || {
                    Box::new(solve2048_players::ntuple::NTuplePlayer::new(
                        net.clone(),
                        name.clone(),
                    ))
                }))
            }
            other => {
                if !other.is_exact() {
                    return Err(player("it has no exact move distribution".into()));
                }
                other.build(n, 0).map_err(|e| player(e.to_string()))?;
                // Built once above with the same arguments.
                Some(Box::new(move || other.build(n, 0).expect("it built")))
            }
        };
        Ok(Arc::new(Evaluator {
            reference,
            player: factory,
            n,
        }))
    }

    /// Whether the player is `optimal` (it plays the solved policy).
    fn plays_optimal(&self) -> bool {
        self.player.is_none()
    }

    /// The player's moves on each of `states` (as they lie): asked of the
    /// player, or for `optimal` read from `group`'s policy (which must hold
    /// every board's canonical form).
    fn moves(&self, states: &[u64], group: &Group) -> Result<Vec<Moves>, String> {
        let Some(factory) = &self.player else {
            return states
                .par_iter()
                .map(|&s| {
                    let (_, best) = group.lookup(s, self.n)?;
                    let mut p = [0.0; 4];
                    p[best as usize] = 1.0;
                    Ok(p)
                })
                .collect();
        };
        let batches: Vec<Result<Vec<Moves>, String>> = states
            .par_chunks(PLAYER_BATCH)
            .map_init(factory, |player, batch| {
                batch
                    .iter()
                    .map(|&s| {
                        let mut p = [0.0; 4];
                        for (d, q) in player.distribution(s).map_err(|e| e.to_string())? {
                            p[d as usize] += q;
                        }
                        Ok(p)
                    })
                    .collect()
            })
            .collect();
        let mut out = Vec::with_capacity(states.len());
        for b in batches {
            out.extend(b?);
        }
        Ok(out)
    }
}

/// The solved store's chunks of one group, read whole: canonical states
/// (sorted: a group's chunks are in key order), optimal values and moves.
#[derive(Default)]
struct Group {
    states: Vec<u64>,
    values: Vec<f64>,
    policy: Vec<u8>,
}

impl Group {
    /// The optimal value of board `s` (as it lies) and its optimal move in
    /// that orientation.
    fn lookup(&self, s: u64, n: usize) -> Result<(f64, Direction), String> {
        let (canon, g) = canonical_with_symmetry(s, n);
        let i = self.states.binary_search(&canon).map_err(|_| {
            format!(
                "board {s:#018x} (canonical {canon:#018x}) is not in the solved store's \
                 chunks of its group"
            )
        })?;
        let best = Direction::from_code(self.policy[i]).ok_or("a policy code over 3")?;
        Ok((self.values[i], direction_image(best, inverse(g))))
    }

    /// Each board's optimal value and move.
    fn optimal(&self, states: &[u64], n: usize) -> Result<(Vec<f64>, Vec<Direction>), String> {
        let both: Result<Vec<(f64, Direction)>, String> =
            states.par_iter().map(|&s| self.lookup(s, n)).collect();
        Ok(both?.into_iter().unzip())
    }
}

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
