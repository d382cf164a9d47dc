//! Every state of a layer with its value and optimal action, read chunk by
//! chunk in stored order: small games (2x2) read whole, to draw their MDP
//! graph, and any game streamed for export.

use solve2048_core::task::SolvedRef;
use solve2048_core::Direction;

use crate::solution::{QueryError, Solution};

/// A stored state with its value and optimal action (canonical orientation).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct StateValue {
    /// The canonical state.
    pub state: u64,
    /// Its value under optimal play (win probability or expected score).
    pub value: f64,
    /// Its optimal action, in the canonical orientation.
    pub action: Direction,
}

/// One solved chunk read back: its states in stored (ascending) order, with
/// their values and optimal actions (canonical orientation).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkStates {
    /// The canonical states.
    pub states: Vec<u64>,
    /// Their values under optimal play.
    pub values: Vec<f64>,
    /// Their optimal actions.
    pub actions: Vec<Direction>,
}

impl Solution {
    /// The solved chunks of the layer of tile sum `sum` in stored order:
    /// part by part (ascending max tile), then by group and index. Empty for
    /// a sum that is no layer.
    pub async fn layer_chunks(&self, sum: u32) -> Result<Vec<SolvedRef>, QueryError> {
        let Some(layer) = self.layer(sum).await? else {
            return Ok(Vec::new());
        };
        Ok(layer
            .parts
            .iter()
            .flat_map(|p| p.solved.iter().copied())
            .collect())
    }

    /// One solved chunk read back and verified, without keeping it.
    pub async fn chunk_states(&self, solved: &SolvedRef) -> Result<ChunkStates, QueryError> {
        let chunk = self.read_chunk(solved).await?;
        let actions = chunk
            .policy
            .iter()
            .map(|&code| {
                Direction::from_code(code).ok_or_else(|| QueryError::Damaged {
                    object: solve2048_store::layout::policy_of(solved),
                    reason: format!("action code {code} is no move"),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ChunkStates {
            states: chunk.states,
            values: chunk.values,
            actions,
        })
    }

    /// Every state of the layer of tile sum `sum`, part by part (ascending
    /// max tile), in stored order; empty for a sum that is no layer. Reads
    /// the layer's chunks without keeping them: meant for small games.
    pub async fn layer_states(&self, sum: u32) -> Result<Vec<StateValue>, QueryError> {
        let mut out = Vec::new();
        for solved in self.layer_chunks(sum).await? {
            let chunk = self.chunk_states(&solved).await?;
            for i in 0..chunk.states.len() {
                out.push(StateValue {
                    state: chunk.states[i],
                    value: chunk.values[i],
                    action: chunk.actions[i],
                });
            }
        }
        Ok(out)
    }
}
