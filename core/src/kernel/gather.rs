//! The gather kernel: for afterstates whose spawns of one tile all land in
//! one group, the sum of those spawns' values, looked up in that group's
//! values alone.
//!
//! An afterstate's spawns of a tile hold its tiles and the new one, so they
//! all fall in one group ([`crate::space::ids::spawn_group`]). A gather task holds
//! one group's values and answers every request addressed to it: the layer
//! below asks for its 2-spawns, the one below that for its 4-spawns.

use rayon::prelude::*;

use super::batch::BATCH;
use super::error::SolveError;
use crate::kernel::value_table::ValueTable;
use crate::rules::canonical::Orientation;
use crate::rules::moves::Mover;
use crate::rules::spawn::{empty_bits, for_each_spawn_of_in};
use crate::{Game, Shape};

/// The spawns of one tile of an afterstate, gathered before any is looked up.
#[derive(Clone, Copy)]
pub struct Spawned {
    /// The afterstate.
    afterstate: u64,
    /// Its empty cells.
    cells: usize,
    /// The board made by the tile in each empty cell, in cell order.
    keys: [u64; 16],
}

impl Spawned {
    /// The spawns of exponent `tile` on afterstate `a`, keyed by
    /// `orientation`.
    #[inline]
    pub fn new(orientation: Orientation, shape: Shape, mover: &Mover, a: u64, tile: u8) -> Spawned {
        let mut me = Spawned {
            afterstate: a,
            cells: 0,
            keys: [0; 16],
        };
        for_each_spawn_of_in(orientation, a, shape, mover.cell_images(), tile, |key| {
            me.keys[me.cells] = key;
            me.cells += 1;
        });
        me
    }

    /// Its boards.
    pub fn boards(&self) -> &[u64] {
        &self.keys[..self.cells]
    }

    /// The sum over the empty cells, in cell order, of each spawn's value:
    /// `value(board)` for a board that can still move, 0 for a lost one (a
    /// spawn that fills the board and leaves no move: absorbing, not
    /// stored). The one formula of the gather kernel and of `query`, so both
    /// give the same bits.
    #[inline]
    pub fn sum<E>(
        &self,
        mover: &Mover,
        mut value: impl FnMut(u64) -> Result<f64, E>,
    ) -> Result<f64, E> {
        let full_after = self.cells == 1;
        let mut acc = 0.0f64;
        for &key in self.boards() {
            if !(full_after && mover.is_lost(key)) {
                acc += value(key)?;
            }
        }
        Ok(acc)
    }
}

/// For each afterstate of `afterstates` (keyed by `orientation`, not won,
/// tile sum `sum`), the sum over its empty cells of the values of its spawns
/// of exponent `tile` ([`Spawned::sum`]); `table` holds the values of the
/// group they land in, keyed alike. A spawn that can move but is not in
/// `table` is an error: the inputs are incomplete or damaged.
pub fn gather(
    game: &Game,
    orientation: Orientation,
    sum: u32,
    tile: u8,
    afterstates: &[u64],
    table: &ValueTable,
) -> Result<Vec<f64>, SolveError> {
    let shape = game.shape;
    let mover = Mover::new(shape);
    let state_sum = sum + (1u32 << tile);
    let sums: Vec<Result<f64, SolveError>> = afterstates
        .par_chunks(BATCH)
        .flat_map_iter(|batch| {
            // Software pipeline: gather and prefetch the spawns of the next
            // afterstate while the current one's lookups complete.
            let spawned = |a: u64| {
                let s = Spawned::new(orientation, shape, &mover, a, tile);
                for &key in s.boards() {
                    table.prefetch(key);
                }
                s
            };
            let mut next = batch.first().map(|&a| spawned(a));
            let mut out = Vec::with_capacity(batch.len());
            for i in 0..batch.len() {
                let current = next.take().expect("gathered");
                next = batch.get(i + 1).map(|&a| spawned(a));
                out.push(current.sum(&mover, |key| {
                    table.get(key).ok_or(SolveError::Missing {
                        state: key,
                        from: current.afterstate,
                        sum: state_sum,
                    })
                }));
            }
            out
        })
        .collect();
    sums.into_iter().collect()
}

/// The number of empty cells of an afterstate: what its spawn sums are
/// averaged over.
#[inline]
pub fn empty_cells(a: u64, shape: Shape) -> u32 {
    empty_bits(a, shape).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::afterstates;
    use crate::kernel::slow_layers::SlowLayers;

    /// Every afterstate's sums against the slow solver's values, and a
    /// missing spawn named.
    #[test]
    fn sums_are_the_spawns_values() {
        let game = Game::new(3, 32, 1.0).unwrap();
        let slow_game = SlowLayers::new(&game);
        let slow = &slow_game.values;
        let mover = Mover::new(crate::Shape::square(3));
        let (layer, table) = (|s| slow_game.layer(s), |s| slow_game.table(s));
        let mut checked = 0;
        for sum in (10..50).step_by(2) {
            let after = afterstates(&game, &mover, &layer(sum));
            for tile in 1..=2u8 {
                let t = table(sum + (1 << tile));
                let sums = gather(&game, Orientation::Canonical, sum, tile, &after, &t).unwrap();
                for (&a, &got) in after.iter().zip(&sums) {
                    let mut want = 0.0;
                    for (board, _) in crate::rules::slow::spawns(a, crate::Shape::square(3), 0.1) {
                        let e = (board ^ a).trailing_zeros() / 4;
                        if (board >> (4 * e)) & 15 == tile as u64 && !mover.is_lost(board) {
                            want += slow
                                [&crate::rules::slow::canonical(board, crate::Shape::square(3))];
                        }
                    }
                    assert!((got - want).abs() < 1e-12, "{a:#x}: {got} vs {want}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
        let after = afterstates(&game, &mover, &layer(30));
        let err = gather(
            &game,
            Orientation::Canonical,
            30,
            1,
            &after,
            &ValueTable::with_capacity(1),
        )
        .unwrap_err();
        assert!(matches!(err, SolveError::Missing { sum: 32, .. }), "{err}");
    }
}
