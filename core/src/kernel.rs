//! The kernels that tasks run: enumerate (successors of one chunk), merge
//! (runs into the final sorted states of one group), and solve (values and
//! optimal actions of one chunk from the values of the next two layers).
//!
//! Each kernel is a pure function of its inputs and parallelises with rayon;
//! its result does not depend on the number of threads.

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::moves::{has_exponent, Direction, Mover};
use crate::part::PartId;
use crate::spawn::{empty_bits, for_each_spawn, P_FOUR, P_TWO};
use crate::table::ValueTable;
use crate::Game;

/// States a rayon job takes at a time inside a kernel.
const BATCH: usize = 1024;

/// Sort and remove duplicates in place (LSD radix sort: linear time).
pub fn sort_dedup(keys: &mut Vec<u64>) {
    radsort::sort(keys);
    keys.dedup();
}

/// The canonical non-terminal successors of `states` (all in `part`), grouped
/// by successor part, each sorted and distinct. Won afterstates and lost
/// successors are absorbing and not emitted.
pub fn enumerate(game: &Game, part: PartId, states: &[u64]) -> BTreeMap<PartId, Vec<u64>> {
    let n = game.size();
    let mover = Mover::new(n);
    let tables = mover.tables();
    let m = part.max_exp;
    // Slot (tile - 1) * 2 + (1 if the move made a new max tile).
    let slot_part = |slot: usize| {
        let tile = (slot / 2 + 1) as u8;
        let mt = m + (slot % 2) as u8;
        PartId {
            sum: part.sum + (2u32 << (tile - 1)),
            max_exp: mt.max(tile),
        }
    };
    // Few large batches: successors repeat heavily within a chunk (about ten
    // times on 4x4), so each batch is sorted and deduplicated once, in
    // parallel, and the batches are then merged in linear time.
    let batch = states
        .len()
        .div_ceil(2 * rayon::current_num_threads())
        .max(BATCH);
    let pieces: Vec<[Vec<u64>; 4]> = states
        .par_chunks(batch)
        .map(|batch| {
            let mut out: [Vec<u64>; 4] = Default::default();
            for &s in batch {
                for dir in Direction::ALL {
                    let t = mover.apply(s, dir);
                    if t == s || has_exponent(t, game.target_exp) {
                        continue;
                    }
                    let grew = has_exponent(t, m + 1) as usize;
                    let full_after = empty_bits(t, n).count_ones() == 1;
                    // A spawn that fills the board may leave no move: lost,
                    // absorbing, not stored.
                    for_each_spawn(t, n, tables, |two, four| {
                        if !(full_after && mover.is_lost(two)) {
                            out[grew].push(two);
                        }
                        if !(full_after && mover.is_lost(four)) {
                            out[2 + grew].push(four);
                        }
                    });
                }
            }
            for v in out.iter_mut() {
                sort_dedup(v);
            }
            out
        })
        .collect();
    let mut by_part: BTreeMap<PartId, Vec<Vec<u64>>> = BTreeMap::new();
    for piece in pieces {
        for (slot, v) in piece.into_iter().enumerate() {
            if !v.is_empty() {
                by_part.entry(slot_part(slot)).or_default().push(v);
            }
        }
    }
    by_part
        .into_par_iter()
        .map(|(p, runs)| (p, merge_sorted(&runs)))
        .collect()
}

/// Merge sorted, distinct runs into one sorted, distinct list, in linear time
/// for a handful of runs.
pub fn merge_sorted(runs: &[Vec<u64>]) -> Vec<u64> {
    let total = runs.iter().map(Vec::len).sum();
    let mut out: Vec<u64> = Vec::with_capacity(total);
    let mut heads: Vec<&[u64]> = runs
        .iter()
        .map(Vec::as_slice)
        .filter(|r| !r.is_empty())
        .collect();
    while !heads.is_empty() {
        let (mut best, mut min) = (0, heads[0][0]);
        for (i, h) in heads.iter().enumerate().skip(1) {
            if h[0] < min {
                (best, min) = (i, h[0]);
            }
        }
        if out.last() != Some(&min) {
            out.push(min);
        }
        heads[best] = &heads[best][1..];
        if heads[best].is_empty() {
            heads.swap_remove(best);
        }
    }
    out
}

/// Merge sorted runs into one sorted, distinct list.
pub fn merge(runs: Vec<Vec<u64>>) -> Vec<u64> {
    let mut all = if runs.len() == 1 {
        runs.into_iter().next().unwrap()
    } else {
        let total = runs.iter().map(Vec::len).sum();
        let mut all = Vec::with_capacity(total);
        for r in runs {
            all.extend_from_slice(&r);
        }
        all
    };
    sort_dedup(&mut all);
    all
}

/// Split `len` items into the fewest pieces of at most `max` items, with sizes
/// differing by at most one.
pub fn balanced_splits(len: usize, max: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return Vec::new();
    }
    let pieces = len.div_ceil(max.max(1));
    (0..pieces)
        .map(|i| (i * len / pieces)..((i + 1) * len / pieces))
        .collect()
}

/// A state the solve kernel needed but found in no table: the input layers
/// are incomplete or damaged.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SolveError {
    /// A non-terminal successor missing from the layer that must hold it.
    #[error("successor {state:#018x} of {from:#018x} is missing from layer {sum}")]
    Missing {
        /// The successor.
        state: u64,
        /// The state being solved.
        from: u64,
        /// Tile sum of the layer that should hold it.
        sum: u32,
    },
    /// A state with no legal move inside a chunk of non-terminal states.
    #[error("state {0:#018x} has no legal move but is stored as non-terminal")]
    Terminal(u64),
}

/// Value and optimal action of each state of `states` (all with tile sum
/// `sum`), given the values of the layers with sums `sum + 2` and `sum + 4`.
/// Ties go to the first action in [`Direction::ALL`] order.
pub fn solve(
    game: &Game,
    sum: u32,
    states: &[u64],
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    let mover = Mover::new(game.size());
    let results: Vec<Result<Vec<(f64, u8)>, SolveError>> = states
        .par_chunks(BATCH)
        .map(|batch| {
            // Software pipeline: gather and prefetch the successors of the
            // next state while the current one's lookups complete.
            let mut out = Vec::with_capacity(batch.len());
            let mut current = Successors::gather(game, &mover, batch[0], plus2, plus4);
            for i in 0..batch.len() {
                let next = batch
                    .get(i + 1)
                    .map(|&s| Successors::gather(game, &mover, s, plus2, plus4));
                let q = current.action_values(game, &mover, sum, plus2, plus4)?;
                if let Some(next) = next {
                    current = next;
                }
                let (v, a) = best_action(&q).ok_or(SolveError::Terminal(batch[i]))?;
                out.push((v, a as u8));
            }
            Ok(out)
        })
        .collect();
    let mut values = Vec::with_capacity(states.len());
    let mut actions = Vec::with_capacity(states.len());
    for r in results {
        for (v, a) in r? {
            values.push(v);
            actions.push(a);
        }
    }
    Ok((values, actions))
}

/// Values of each action from `s` (None for an illegal action).
pub fn action_values(
    game: &Game,
    mover: &Mover,
    sum: u32,
    s: u64,
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<[Option<f64>; 4], SolveError> {
    Successors::gather(game, mover, s, plus2, plus4).action_values(game, mover, sum, plus2, plus4)
}

/// The best action and its value (first in [`Direction::ALL`] order on ties).
pub fn best_action(q: &[Option<f64>; 4]) -> Option<(f64, Direction)> {
    let mut best: Option<(f64, Direction)> = None;
    for dir in Direction::ALL {
        if let Some(v) = q[dir as usize] {
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, dir));
            }
        }
    }
    best
}

/// What one action leads to.
#[derive(Clone, Copy)]
enum Outcome {
    Illegal,
    Won,
    /// Spawns `keys[start..start + 2 * cells]` as (two, four) pairs, in cell order.
    Spawns {
        start: u8,
        cells: u8,
    },
}

/// The canonical successors of one state, gathered (and their table slots
/// prefetched) before any value is looked up.
struct Successors {
    state: u64,
    outcomes: [Outcome; 4],
    keys: [u64; 128],
}

impl Successors {
    #[inline]
    fn gather(game: &Game, mover: &Mover, s: u64, plus2: &ValueTable, plus4: &ValueTable) -> Self {
        let n = game.size();
        let tables = mover.tables();
        let mut me = Successors {
            state: s,
            outcomes: [Outcome::Illegal; 4],
            keys: [0; 128],
        };
        let mut len = 0usize;
        for dir in Direction::ALL {
            let t = mover.apply(s, dir);
            me.outcomes[dir as usize] = if t == s {
                Outcome::Illegal
            } else if has_exponent(t, game.target_exp) {
                Outcome::Won
            } else {
                let start = len;
                for_each_spawn(t, n, tables, |two, four| {
                    plus2.prefetch(two);
                    plus4.prefetch(four);
                    me.keys[len] = two;
                    me.keys[len + 1] = four;
                    len += 2;
                });
                Outcome::Spawns {
                    start: start as u8,
                    cells: ((len - start) / 2) as u8,
                }
            };
        }
        me
    }

    #[inline]
    fn action_values(
        &self,
        game: &Game,
        mover: &Mover,
        sum: u32,
        plus2: &ValueTable,
        plus4: &ValueTable,
    ) -> Result<[Option<f64>; 4], SolveError> {
        let mut out = [None; 4];
        for (slot, outcome) in self.outcomes.iter().enumerate() {
            let q = match *outcome {
                Outcome::Illegal => continue,
                Outcome::Won => 1.0,
                Outcome::Spawns { start, cells } => {
                    let full_after = cells == 1;
                    let value = |key: u64, table: &ValueTable, sum: u32| {
                        // A spawn that fills the board may leave no move: lost.
                        if full_after && mover.is_lost(key) {
                            return Ok(0.0);
                        }
                        table.get(key).ok_or(SolveError::Missing {
                            state: key,
                            from: self.state,
                            sum,
                        })
                    };
                    let pairs = &self.keys[start as usize..start as usize + 2 * cells as usize];
                    let mut acc = 0.0f64;
                    for pair in pairs.chunks_exact(2) {
                        acc += P_TWO * value(pair[0], plus2, sum + 2)?
                            + P_FOUR * value(pair[1], plus4, sum + 4)?;
                    }
                    acc / cells as f64
                }
            };
            out[slot] = Some(game.discount * q);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_balanced() {
        assert_eq!(balanced_splits(10, 4), vec![0..3, 3..6, 6..10]);
        assert_eq!(balanced_splits(8, 4), vec![0..4, 4..8]);
        assert_eq!(balanced_splits(3, 100), vec![0..3]);
        assert!(balanced_splits(0, 5).is_empty());
    }

    #[test]
    fn merge_dedups() {
        assert_eq!(
            merge(vec![vec![1, 5, 9], vec![2, 5, 10], vec![9]]),
            vec![1, 2, 5, 9, 10]
        );
    }
}
