//! Reading a whole solved store back: every chunk verified, the count and
//! the result digest checked against the summary.

use solve2048_core::task::result_digest;
use solve2048_store::layout;

use crate::solution::{Loaded, QueryError, Solution};

/// What [`Solution::verify`] read and checked.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Verified {
    /// Layers read.
    pub layers: usize,
    /// Solved chunks read (each a states, a values and a policy object).
    pub chunks: usize,
    /// States read; equals the summary's count.
    pub states: u64,
    /// Result digest recomputed from every (state, value, action); equals
    /// the summary's.
    pub digest: String,
}

impl Solution {
    /// Read back every solved chunk of the store, one at a time: each object's
    /// header and checksums are verified on read (a damaged or foreign one is
    /// named), states must be strictly increasing, and the recomputed state
    /// count and result digest must equal the summary's. This is how a copy
    /// of a store (or the store itself, after an incident) is checked.
    pub async fn verify(&self, mut on_chunk: impl FnMut(u32, u64)) -> Result<Verified, QueryError> {
        let mut out = Verified {
            layers: 0,
            chunks: 0,
            states: 0,
            digest: String::new(),
        };
        let mut digest = 0u64;
        for &sum in &self.summary().layers {
            let object = layout::layer_index(sum);
            let layer = self.layer(sum).await?.ok_or_else(|| QueryError::Mismatch {
                object: object.clone(),
                reason: "the summary lists this layer but its index is missing".into(),
            })?;
            out.layers += 1;
            for part in &layer.parts {
                if part.solved.len() != part.chunks.len() {
                    return Err(QueryError::Mismatch {
                        object: object.clone(),
                        reason: format!(
                            "part {} has {} chunks but {} solved",
                            part.part,
                            part.chunks.len(),
                            part.solved.len()
                        ),
                    });
                }
                for c in &part.solved {
                    // Uncached: one chunk in memory at a time.
                    let Loaded {
                        states,
                        values,
                        policy,
                    } = self.read_chunk(c).await?;
                    if let Some(w) = states.windows(2).position(|w| w[0] >= w[1]) {
                        return Err(QueryError::Mismatch {
                            object: layout::states_of(&c.chunk),
                            reason: format!("states out of order at position {}", w + 1),
                        });
                    }
                    digest = digest.wrapping_add(result_digest(&states, &values, &policy));
                    out.states += states.len() as u64;
                    out.chunks += 1;
                    on_chunk(sum, states.len() as u64);
                }
            }
        }
        out.digest = format!("{digest:016x}");
        if out.states != self.summary().states || out.digest != self.summary().digest {
            return Err(QueryError::Mismatch {
                object: layout::SUMMARY.to_string(),
                reason: format!(
                    "read {} states with digest {}, but the summary records {} states with digest {}",
                    out.states, out.digest, self.summary().states, self.summary().digest
                ),
            });
        }
        Ok(out)
    }
}
