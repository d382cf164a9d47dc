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
use crate::part::{group_of, PartId};
use crate::spawn::{empty_bits, for_each_spawn, P_FOUR, P_TWO};
use crate::table::ValueTable;
use crate::Game;

/// States a rayon job takes at a time inside a kernel.
const BATCH: usize = 1024;

/// Successors of a chunk by successor part, split into that part's hash
/// groups ([`group_of`]): entry `[g]` holds group `g`'s successors, sorted and
/// distinct.
pub type GroupedSuccessors = BTreeMap<PartId, Vec<Vec<u64>>>;

/// A successor landed in a part that the caller gave no group count for.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("successors in {0}, which the task gives no group count")]
pub struct UnplannedPart(pub PartId);

/// The canonical non-terminal successors of `states` (all in `part`), by
/// successor part and hash group; `groups` gives each successor part's group
/// count (None: no successor may land there). Won afterstates and lost
/// successors are absorbing and not emitted.
///
/// Keys go straight into their group's bucket as they are made, so each
/// bucket is small enough to sort in cache (sorting a whole chunk's tens of
/// millions of successors at once runs at memory speed).
pub fn enumerate(
    game: &Game,
    part: PartId,
    states: &[u64],
    groups: impl Fn(PartId) -> Option<u32>,
) -> Result<GroupedSuccessors, UnplannedPart> {
    let mover = Mover::new(game.size());
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
    let planned: [Option<u32>; 4] = std::array::from_fn(|slot| groups(slot_part(slot)));
    let counts = planned.map(|g| g.unwrap_or(1).max(1));
    // Few large batches, one or two per thread, each filling buckets; each
    // bucket (of all batches) is then sorted on its own.
    let batch = states
        .len()
        .div_ceil(2 * rayon::current_num_threads())
        .max(BATCH);
    let pieces: Vec<[Vec<Vec<u64>>; 4]> = states
        .par_chunks(batch)
        .map(|batch| successors_of_batch(game, &mover, m, batch, counts))
        .collect();
    // Two slots can share a part (a 4 spawned beside a largest tile of 2).
    let mut slots_of: BTreeMap<PartId, Vec<usize>> = BTreeMap::new();
    for slot in 0..4 {
        if pieces.iter().any(|p| p[slot].iter().any(|g| !g.is_empty())) {
            if planned[slot].is_none() {
                return Err(UnplannedPart(slot_part(slot)));
            }
            slots_of.entry(slot_part(slot)).or_default().push(slot);
        }
    }
    let mut out = GroupedSuccessors::new();
    for (target, slots) in slots_of {
        let merged: Vec<Vec<u64>> = (0..counts[slots[0]] as usize)
            .into_par_iter()
            .map(|g| {
                let buckets = || {
                    pieces
                        .iter()
                        .flat_map(|p| slots.iter().map(move |&slot| p[slot][g].as_slice()))
                };
                let mut keys = Vec::with_capacity(buckets().map(<[u64]>::len).sum());
                for bucket in buckets() {
                    keys.extend_from_slice(bucket);
                }
                keys.sort_unstable();
                keys.dedup();
                keys
            })
            .collect();
        out.insert(target, merged);
    }
    Ok(out)
}

/// The canonical non-terminal successors of `batch` (states whose largest
/// exponent is `max_exp`) in slot `(tile - 1) * 2 + grew` (the spawned
/// tile's exponent, and whether the move made a new largest tile) and hash
/// group (of `groups[slot]`), unsorted and with repeats.
fn successors_of_batch(
    game: &Game,
    mover: &Mover,
    max_exp: u8,
    batch: &[u64],
    groups: [u32; 4],
) -> [Vec<Vec<u64>>; 4] {
    let n = game.size();
    let tables = mover.tables();
    let mut out: [Vec<Vec<u64>>; 4] = groups.map(|g| vec![Vec::new(); g as usize]);
    let mut recent = RecentFilter::new();
    for &s in batch {
        for dir in Direction::ALL {
            let t = mover.apply(s, dir);
            if t == s || has_exponent(t, game.target_exp) {
                continue;
            }
            let grew = has_exponent(t, max_exp + 1) as usize;
            let full_after = empty_bits(t, n).count_ones() == 1;
            // A spawn that fills the board may leave no move: lost,
            // absorbing, not stored.
            for_each_spawn(t, n, tables, |two, four| {
                if recent.fresh(two) && !(full_after && mover.is_lost(two)) {
                    out[grew][group_of(two, groups[grew]) as usize].push(two);
                }
                if recent.fresh(four) && !(full_after && mover.is_lost(four)) {
                    out[2 + grew][group_of(four, groups[2 + grew]) as usize].push(four);
                }
            });
        }
    }
    out
}

/// Slots of [`RecentFilter`]: 256 KiB, so that it stays in a core's L2.
const RECENT_SLOTS: usize = 1 << 15;

/// A direct-mapped cache of recently emitted successors: the repeats that one
/// state's moves or nearby states make are dropped here, in cache, before
/// they reach a bucket. (A chunk's states are a hash sample of its part, so
/// repeats far apart in the chunk are left to the sort.) A key it forgets is
/// emitted again and removed by the sort: it only ever drops true repeats.
struct RecentFilter {
    slots: Box<[u64; RECENT_SLOTS]>,
}

impl RecentFilter {
    fn new() -> RecentFilter {
        RecentFilter {
            // Key 0 (the empty board) is never a successor: free slots.
            slots: vec![0u64; RECENT_SLOTS].try_into().unwrap(),
        }
    }

    /// True unless `key` is in the filter; remembers it either way.
    #[inline(always)]
    fn fresh(&mut self, key: u64) -> bool {
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT_SLOTS.trailing_zeros()))
            as usize;
        let slot = &mut self.slots[i];
        let fresh = *slot != key;
        *slot = key;
        fresh
    }
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
    // A comparison sort: on 10 M random 4x4-to-32 keys it took 27 ns a key
    // here, an LSD radix sort (radsort) 56, as each radix pass scatters
    // across memory; in cache-sized pieces (enumerate's buckets) 18.
    all.sort_unstable();
    all.dedup();
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

    /// Successors of 4x4 states with a few tiles below 16, canonical and
    /// sorted, with largest tile 8.
    fn sample_states() -> Vec<u64> {
        let mut states: Vec<u64> = (0..5_000u64)
            .map(|i| {
                let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                (0..6).fold(3u64, |b, j| {
                    let cell = 1 + (x >> (6 * j)) % 15;
                    let e = 1 + (x >> (40 + 4 * j)) % 3;
                    b | (e << (4 * cell))
                })
            })
            .map(|b| crate::canonical::canonical(b, 4))
            .collect();
        states.sort_unstable();
        states.dedup();
        states
    }

    #[test]
    fn grouped_successors_are_the_flat_ones_split_by_group() {
        let game = Game::new(4, 32, 1.0).unwrap();
        let part = PartId { sum: 0, max_exp: 3 };
        let states = sample_states();
        let flat = enumerate(&game, part, &states, |_| Some(1)).unwrap();
        let grouped = enumerate(&game, part, &states, |p| Some(p.sum % 5 + 3)).unwrap();
        assert_eq!(
            flat.keys().collect::<Vec<_>>(),
            grouped.keys().collect::<Vec<_>>()
        );
        let mut total = 0;
        for (p, groups) in &grouped {
            let all = &flat[p][0];
            assert!(all.windows(2).all(|w| w[0] < w[1]));
            total += all.len();
            assert_eq!(groups.len() as u32, p.sum % 5 + 3);
            for (g, keys) in groups.iter().enumerate() {
                let expect: Vec<u64> = all
                    .iter()
                    .copied()
                    .filter(|&k| group_of(k, groups.len() as u32) == g as u32)
                    .collect();
                assert_eq!(keys, &expect, "{p} group {g}");
            }
        }
        assert!(total > 50_000, "{total} successors");
    }

    #[test]
    fn a_successor_in_an_unplanned_part_is_an_error() {
        let game = Game::new(4, 32, 1.0).unwrap();
        let part = PartId { sum: 0, max_exp: 3 };
        let states = sample_states();
        let twos = PartId { sum: 2, max_exp: 3 };
        let err = enumerate(&game, part, &states, |p| (p != twos).then_some(2)).unwrap_err();
        assert_eq!(err, UnplannedPart(twos));
    }

    #[test]
    fn merge_dedups() {
        assert_eq!(
            merge(vec![vec![0x1, 0x4, 0x21], vec![0x2, 0x4, 0x31], vec![0x21]]),
            vec![0x1, 0x2, 0x4, 0x21, 0x31]
        );
    }
}
