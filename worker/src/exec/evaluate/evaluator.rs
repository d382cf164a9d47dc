//! What every task of an evaluation job shares ([`Evaluator`]): the player
//! (built once a thread from its spec, or from the store's copy of its
//! weights) and the solved store, opened read-only.

use std::sync::Arc;

use rayon::prelude::*;
use solve2048_core::kernel::evaluate::Moves;
use solve2048_core::task::evaluation::{weights_checksum, Evaluation, WEIGHTS};
use solve2048_core::task::JobSpec;
use solve2048_core::Shape;
use solve2048_players::{PlayerFactory, PlayerSpec};
use solve2048_store::{Access, Store};

use super::super::error::{Unplayable, WorkerError};
use super::group::Group;

/// Boards a thread asks its player about at a time.
const PLAYER_BATCH: usize = 256;

/// What every task of an evaluation job shares.
pub(crate) struct Evaluator {
    /// The solved store the player is compared with, opened read-only.
    pub(crate) reference: Store,
    /// Builds the player; `None` for `optimal`, which plays the solved
    /// store's policy.
    player: Option<PlayerFactory>,
    /// The player's spec.
    name: String,
    /// The board's shape.
    n: Shape,
}

/// Why the player's moves on a board cannot be had.
pub(crate) enum MovesError {
    /// The board is not where the solved store should hold it (optimal).
    Missing(String),
    /// The player gave no move distribution.
    Player(solve2048_players::NotExact),
}

impl Evaluator {
    /// The evaluator of `job` (whose evaluation is `e`) on `store`: the
    /// solved store opened and the player built once (an n-tuple player
    /// from the store's copy of its weights), so that a player that cannot
    /// be built fails the first task, naming why.
    pub(crate) async fn open(
        store: &Store,
        job: &JobSpec,
        e: &Evaluation,
    ) -> Result<Arc<Evaluator>, WorkerError> {
        let player = |source: Unplayable| WorkerError::Player {
            player: e.player.clone(),
            source,
        };
        let spec = PlayerSpec::parse(&e.player).map_err(|err| player(err.into()))?;
        let mut weights = None;
        if let PlayerSpec::NTuple { .. } = spec {
            let bytes = (store.get(WEIGHTS).await?).ok_or(player(Unplayable::NoWeights))?;
            if e.weights.as_deref() != Some(weights_checksum(&bytes).as_str()) {
                return Err(player(Unplayable::OtherWeights));
            }
            weights = Some(bytes);
        }
        let n = job.game.shape;
        let factory = spec
            .exact(n, &job.game.spawn_rule(), weights.as_deref())
            .map_err(|err| player(err.into()))?;
        Ok(Arc::new(Evaluator {
            reference: Store::open(&e.reference, Access::ReadOnly)?,
            player: factory,
            name: e.player.clone(),
            n,
        }))
    }

    /// A failure to get the player's moves, for `task`.
    pub(super) fn moves_failed(
        &self,
        e: MovesError,
        invalid: impl Fn(String) -> WorkerError,
    ) -> WorkerError {
        match e {
            MovesError::Missing(reason) => invalid(reason),
            MovesError::Player(source) => WorkerError::Player {
                player: self.name.clone(),
                source: source.into(),
            },
        }
    }

    /// Whether the player is `optimal` (it plays the solved policy).
    pub(super) fn plays_optimal(&self) -> bool {
        self.player.is_none()
    }

    /// The player's moves on each of `states` (as they lie): asked of the
    /// player, or for `optimal` read from `group`'s policy (which must hold
    /// every board's canonical form).
    pub(super) fn moves(&self, states: &[u64], group: &Group) -> Result<Vec<Moves>, MovesError> {
        let Some(factory) = &self.player else {
            return states
                .par_iter()
                .map(|&s| {
                    let (_, best) = group.lookup(s, self.n).map_err(MovesError::Missing)?;
                    let mut p = [0.0; 4];
                    p[best as usize] = 1.0;
                    Ok(p)
                })
                .collect();
        };
        let batches: Vec<Result<Vec<Moves>, MovesError>> = states
            .par_chunks(PLAYER_BATCH)
            .map_init(factory, |player, batch| {
                batch
                    .iter()
                    .map(|&s| {
                        let mut p = [0.0; 4];
                        for (d, q) in player.distribution(s).map_err(MovesError::Player)? {
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
