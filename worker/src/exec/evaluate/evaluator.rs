//! What every task of an evaluation job shares ([`Evaluator`]): the player
//! (built once a thread from its spec, or from the store's copy of its
//! weights) and the solved store, opened read-only.

use std::sync::Arc;

use rayon::prelude::*;
use solve2048_core::kernel::evaluate::Moves;
use solve2048_core::task::evaluation::{weights_checksum, Evaluation, WEIGHTS};
use solve2048_core::task::JobSpec;
use solve2048_core::Shape;
use solve2048_players::player::square_side;
use solve2048_players::{Network, Player, PlayerSpec};
use solve2048_store::{Access, Store};

use super::super::error::WorkerError;
use super::group::Group;

/// Boards a thread asks its player about at a time.
const PLAYER_BATCH: usize = 256;

/// Builds one player (each thread asks its own).
type PlayerFactory = Box<dyn Fn() -> Box<dyn Player> + Send + Sync>;

/// What every task of an evaluation job shares.
pub(crate) struct Evaluator {
    /// The solved store the player is compared with, opened read-only.
    pub(super) reference: Store,
    /// Builds the player; `None` for `optimal`, which plays the solved
    /// store's policy.
    player: Option<PlayerFactory>,
    /// Board side.
    n: Shape,
}

impl Evaluator {
    /// The evaluator of `job` (whose evaluation is `e`) on `store`: the
    /// solved store opened and the player built once, so that a player that
    /// cannot be built fails the first task, naming why.
    pub(crate) async fn open(
        store: &Store,
        job: &JobSpec,
        e: &Evaluation,
    ) -> Result<Arc<Evaluator>, WorkerError> {
        let player = |reason: String| WorkerError::Player(format!("{}: {reason}", e.player));
        let n = job.game.shape;
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
                let side = square_side(n, "ntuple").map_err(|e| player(e.to_string()))?;
                if net.n() != side {
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
                let rule = job.game.spawn_rule();
                other
                    .build(n, &rule, 0)
                    .map_err(|e| player(e.to_string()))?;
                // Built once above with the same arguments.
                Some(Box::new(move || {
                    other.build(n, &rule, 0).expect("it built")
                }))
            }
        };
        Ok(Arc::new(Evaluator {
            reference,
            player: factory,
            n,
        }))
    }

    /// Whether the player is `optimal` (it plays the solved policy).
    pub(super) fn plays_optimal(&self) -> bool {
        self.player.is_none()
    }

    /// The player's moves on each of `states` (as they lie): asked of the
    /// player, or for `optimal` read from `group`'s policy (which must hold
    /// every board's canonical form).
    pub(super) fn moves(&self, states: &[u64], group: &Group) -> Result<Vec<Moves>, String> {
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
