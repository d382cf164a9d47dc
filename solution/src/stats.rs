//! Per-layer counts and value histograms, for plots (drawn by
//! [`crate::figure`]).

use solve2048_core::Objective;

use crate::solution::{QueryError, Solution};

/// Number of value bins in [`LayerStats::values`].
pub const VALUE_BINS: usize = 20;

/// Counts of one layer, for plots.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerStats {
    /// Tile sum.
    pub sum: u32,
    /// (max-tile exponent, states) of each part.
    pub parts: Vec<(u8, u64)>,
    /// States whose value falls in each of [`VALUE_BINS`] equal bins of
    /// [0, `value_top`] (a value at or above the top counts in the last bin).
    pub values: [u64; VALUE_BINS],
    /// The top of the value bins: 1 for win probabilities, the start value
    /// for expected scores (a board's expected score to come is seldom
    /// above the start's).
    pub value_top: f64,
}

impl Solution {
    /// Per-layer state counts by part and value histograms, reading every
    /// value chunk once (keeping a layer's chunks and those of the layers
    /// above that recomputed values look up).
    pub async fn layer_stats(&self) -> Result<Vec<LayerStats>, QueryError> {
        let mut out = Vec::new();
        for &sum in &self.summary().layers {
            let Some(layer) = self.layer(sum).await? else {
                continue;
            };
            // Recomputed values look up the layers above: keep only those.
            self.forget_chunks_below(sum);
            let mut values = [0u64; VALUE_BINS];
            let value_top = match self.game.objective {
                Objective::Win => 1.0,
                Objective::Score => self.summary().start_value.max(f64::MIN_POSITIVE),
            };
            let mut parts = Vec::new();
            for part in &layer.parts {
                parts.push((part.part.max_exp, part.chunks.iter().map(|c| c.count).sum()));
                for c in &part.solved {
                    // Values coded by afterstate are read beside their
                    // states and policy.
                    for &v in &self.chunk(c).await?.values {
                        let bin = (v / value_top * VALUE_BINS as f64) as usize;
                        values[bin.min(VALUE_BINS - 1)] += 1;
                    }
                }
            }
            out.push(LayerStats {
                sum,
                parts,
                values,
                value_top,
            });
        }
        Ok(out)
    }
}
