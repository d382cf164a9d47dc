//! The forward pass under the optimal policy: each state's probability of
//! being visited from the random start, the win/lose split and the expected
//! number of moves.

use std::collections::HashMap;

use solve2048_core::rules::board::empty_bits;
use solve2048_core::rules::moves::has_exponent;
use solve2048_core::rules::spawn::for_each_spawn;
use solve2048_core::{Board, Direction};

use crate::solution::{QueryError, Solution};

/// Visit probabilities under optimal play from the random start.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Occupancy {
    /// Probability that the game ends won.
    pub win: f64,
    /// Probability that the game ends lost.
    pub lose: f64,
    /// Expected number of moves until the game ends (each visited
    /// non-terminal state is left by exactly one move).
    pub expected_moves: f64,
    /// States visited with nonzero probability.
    pub visited_states: u64,
}

impl Solution {
    /// The forward pass under the optimal policy: layer by layer in increasing
    /// tile sum, each state's visit probability flows through its optimal move
    /// to its successors. `on_state(state, probability, action)` sees every
    /// visited state (in canonical orientation), layer by layer, in state
    /// order. Holds the probabilities of three layers at a time.
    pub async fn occupancy(
        &self,
        mut on_state: impl FnMut(u64, f64, Direction),
    ) -> Result<Occupancy, QueryError> {
        use std::collections::BTreeMap;
        let n = self.game.shape;
        let rule = self.game.spawn_rule();
        let starts = solve2048_core::rules::spawn::Starts::new(n, &rule);
        let mut pending: BTreeMap<u32, HashMap<u64, f64>> = BTreeMap::new();
        for &s in starts.weights.keys() {
            *pending
                .entry(Board(s).tile_sum())
                .or_default()
                .entry(s)
                .or_default() += starts.probability(s);
        }
        let (mut win, mut lose, mut moves, mut visited) = (0.0f64, 0.0f64, 0.0f64, 0u64);
        while let Some((sum, layer)) = pending.pop_first() {
            // Sorted, so that every sum is taken in the same order on every run.
            let mut layer: Vec<(u64, f64)> = layer.into_iter().collect();
            layer.sort_unstable_by_key(|&(s, _)| s);
            for (s, p) in layer {
                let (_, action) = self
                    .lookup(s)
                    .await?
                    .ok_or_else(|| QueryError::Unreachable {
                        board: Board(s).to_text(n),
                        game: self.game.name(),
                    })?;
                on_state(s, p, action);
                visited += 1;
                moves += p;
                let t = self.mover.apply(s, action);
                if has_exponent(t, self.game.target_exp) {
                    win += p;
                    continue;
                }
                let k = empty_bits(t, n).count_ones() as f64;
                let mut spawns = Vec::new();
                for_each_spawn(t, n, |two, four| spawns.push((two, four)));
                for (two, four) in spawns {
                    for (key, q, step) in [(two, rule.two, 2), (four, rule.four, 4)] {
                        if q == 0.0 {
                            // A tile the rule never spawns visits nothing.
                            continue;
                        }
                        let mass = p * q / k;
                        if self.mover.is_lost(key) {
                            lose += mass;
                        } else {
                            *pending
                                .entry(sum + step)
                                .or_default()
                                .entry(key)
                                .or_default() += mass;
                        }
                    }
                }
            }
        }
        Ok(Occupancy {
            win,
            lose,
            expected_moves: moves,
            visited_states: visited,
        })
    }
}
