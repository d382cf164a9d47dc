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
use crate::rules::board::empty_bits;
use crate::rules::canonical::Orientation;
use crate::rules::moves::Mover;
use crate::rules::symmetry::Symmetry;
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
    /// No spawns.
    const NONE: Spawned = Spawned {
        afterstate: 0,
        cells: 0,
        keys: [0; 16],
    };

    /// The spawns of exponent `tile` on afterstate `a`, keyed by `sym`.
    #[inline(always)]
    pub fn new(sym: impl Symmetry, a: u64, tile: u8) -> Spawned {
        let mut me = Spawned::NONE;
        me.make(sym, a, tile);
        me
    }

    /// Make the spawns of exponent `tile` on afterstate `a` here, in place.
    #[inline(always)]
    fn make(&mut self, sym: impl Symmetry, a: u64, tile: u8) {
        self.afterstate = a;
        self.cells = 0;
        sym.for_each_spawn_of(a, tile, |key| {
            self.keys[self.cells] = key;
            self.cells += 1;
        });
    }

    /// Make the spawns of a 2 (in `pair[0]`) and of a 4 (in `pair[1]`) on
    /// afterstate `a`, keyed by `sym`, in place and together (the images of
    /// `a` once for both).
    #[inline(always)]
    fn make_pair(pair: &mut [Spawned; 2], sym: impl Symmetry, a: u64) {
        let [two, four] = pair;
        let mut cells = 0;
        sym.for_each_spawn(a, |t, f| {
            two.keys[cells] = t;
            four.keys[cells] = f;
            cells += 1;
        });
        (two.afterstate, two.cells) = (a, cells);
        (four.afterstate, four.cells) = (a, cells);
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
    let [sums, _] = gather_tiles(
        game,
        orientation,
        sum,
        afterstates,
        [Some(table), None],
        tile,
    )?;
    Ok(sums)
}

/// [`gather`] of both tiles at once: the sums of each afterstate's 2-spawns
/// (their values in `twos`) and of its 4-spawns (in `fours`), each spawn
/// made once for both (what a whole game in memory holds both layers for).
pub fn gather_pair(
    game: &Game,
    orientation: Orientation,
    sum: u32,
    afterstates: &[u64],
    twos: &ValueTable,
    fours: &ValueTable,
) -> Result<[Vec<f64>; 2], SolveError> {
    gather_tiles(
        game,
        orientation,
        sum,
        afterstates,
        [Some(twos), Some(fours)],
        1,
    )
}

/// Afterstates a gather makes the spawns of, and prefetches their slots,
/// before it sums the first one's: the lookups of this many afterstates are
/// in flight at once.
const GATHER_AHEAD: usize = 4;

/// The gather kernel: with one table (`tables[0]`), the sums of the spawns
/// of exponent `tile`; with two, those of 2s in the first and of 4s in the
/// second.
fn gather_tiles(
    game: &Game,
    orientation: Orientation,
    sum: u32,
    afterstates: &[u64],
    tables: [Option<&ValueTable>; 2],
    tile: u8,
) -> Result<[Vec<f64>; 2], SolveError> {
    let (shape, mover) = (game.shape, Mover::new(game.shape));
    let sums: Vec<Result<[f64; 2], SolveError>> = afterstates
        .par_chunks(BATCH)
        .flat_map_iter(|batch| {
            crate::with_symmetry!(orientation, shape, |sym| {
                gather_batch(sym, &mover, sum, batch, tables, tile)
            })
        })
        .collect();
    let (mut first, mut second) = (
        Vec::with_capacity(afterstates.len()),
        Vec::with_capacity(if tables[1].is_some() {
            afterstates.len()
        } else {
            0
        }),
    );
    for s in sums {
        let [a, b] = s?;
        first.push(a);
        if tables[1].is_some() {
            second.push(b);
        }
    }
    Ok([first, second])
}

/// [`gather_tiles`] of one batch, in a software pipeline: the spawns of
/// afterstate `i + GATHER_AHEAD` are made and their slots prefetched while
/// afterstate `i`'s lookups complete. The spawns are made in place in a ring
/// of `GATHER_AHEAD + 1` slots and summed where they lie (copying them in
/// and out of the pipeline, 288 bytes an afterstate, took 15% of this
/// kernel's samples in a profile of 4x4 to 32's backward pass).
#[inline(always)]
fn gather_batch<S: Symmetry>(
    sym: S,
    mover: &Mover,
    sum: u32,
    batch: &[u64],
    tables: [Option<&ValueTable>; 2],
    tile: u8,
) -> Vec<Result<[f64; 2], SolveError>> {
    const RING: usize = GATHER_AHEAD + 1;
    let tiles = match tables[1] {
        Some(_) => [1, 2],
        None => [tile, tile],
    };
    let make = |slot: &mut [Spawned; 2], a: u64| {
        match tables[1] {
            Some(_) => Spawned::make_pair(slot, sym, a),
            None => slot[0].make(sym, a, tile),
        }
        for (s, table) in slot.iter().zip(tables) {
            if let Some(table) = table {
                s.boards().iter().for_each(|&key| table.prefetch(key));
            }
        }
    };
    let mut ring = [[Spawned::NONE; 2]; RING];
    for (i, &a) in batch.iter().take(GATHER_AHEAD).enumerate() {
        make(&mut ring[i], a);
    }
    let mut out = Vec::with_capacity(batch.len());
    for i in 0..batch.len() {
        if let Some(&a) = batch.get(i + GATHER_AHEAD) {
            make(&mut ring[(i + GATHER_AHEAD) % RING], a);
        }
        let current = &ring[i % RING];
        let mut sums = [0.0; 2];
        let mut error = None;
        for k in 0..2 {
            let Some(table) = tables[k] else { continue };
            let state_sum = sum + (1u32 << tiles[k]);
            let s = &current[k];
            match s.sum(mover, |key| {
                table.get(key).ok_or(SolveError::Missing {
                    state: key,
                    from: s.afterstate,
                    sum: state_sum,
                })
            }) {
                Ok(v) => sums[k] = v,
                Err(e) => error = error.or(Some(e)),
            }
        }
        out.push(match error {
            Some(e) => Err(e),
            None => Ok(sums),
        });
    }
    out
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

    /// Every afterstate's sums against the slow solver's values, both
    /// tiles at once as each alone, and a missing spawn named.
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
            let (plus2, plus4) = (table(sum + 2), table(sum + 4));
            let pair = gather_pair(&game, Orientation::Canonical, sum, &after, &plus2, &plus4);
            for tile in 1..=2u8 {
                let t = table(sum + (1 << tile));
                let sums = gather(&game, Orientation::Canonical, sum, tile, &after, &t).unwrap();
                // Both tiles at once, bit for bit.
                assert_eq!(pair.as_ref().unwrap()[tile as usize - 1], sums, "sum {sum}");
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
