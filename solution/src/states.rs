//! Every state of a layer with its value and optimal action: small games
//! (2x2) read whole, to draw their MDP graph.

use solve2048_core::Direction;

use crate::solution::{QueryError, Solution};

/// A stored state with its value and optimal action (canonical orientation).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct StateValue {
    /// The canonical state.
    pub state: u64,
    /// Its win probability under optimal play.
    pub value: f64,
    /// Its optimal action, in the canonical orientation.
    pub action: Direction,
}

impl Solution {
    /// Every state of the layer of tile sum `sum`, part by part (ascending
    /// max tile), in stored order; empty for a sum that is no layer. Reads
    /// the layer's chunks without keeping them: meant for small games.
    pub async fn layer_states(&self, sum: u32) -> Result<Vec<StateValue>, QueryError> {
        let Some(layer) = self.layer(sum).await? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for part in &layer.parts {
            for solved in &part.solved {
                let chunk = self.read_chunk(solved).await?;
                for i in 0..chunk.states.len() {
                    out.push(StateValue {
                        state: chunk.states[i],
                        value: chunk.values[i],
                        action: Direction::from_code(chunk.policy[i]).ok_or_else(|| {
                            QueryError::Damaged {
                                object: solve2048_store::layout::policy_of(solved),
                                reason: format!("action code {} is no move", chunk.policy[i]),
                            }
                        })?,
                    });
                }
            }
        }
        Ok(out)
    }
}
