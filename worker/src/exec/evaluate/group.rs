//! The solved store's chunks of one group, read whole ([`Group`]): the
//! optimal value and move of each board an evaluation looks up.

use rayon::prelude::*;
use solve2048_core::rules::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::{Direction, Shape};

/// The solved store's chunks of one group, read whole: canonical states
/// (sorted: a group's chunks are in key order), optimal values and moves.
#[derive(Default)]
pub(super) struct Group {
    pub(super) states: Vec<u64>,
    pub(super) values: Vec<f64>,
    pub(super) policy: Vec<u8>,
}

impl Group {
    /// The optimal value of board `s` (as it lies) and its optimal move in
    /// that orientation.
    pub(super) fn lookup(&self, s: u64, n: Shape) -> Result<(f64, Direction), String> {
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
    pub(super) fn optimal(
        &self,
        states: &[u64],
        n: Shape,
    ) -> Result<(Vec<f64>, Vec<Direction>), String> {
        let both: Result<Vec<(f64, Direction)>, String> =
            states.par_iter().map(|&s| self.lookup(s, n)).collect();
        Ok(both?.into_iter().unzip())
    }
}
