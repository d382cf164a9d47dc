//! The kernels that tasks run: enumerate (successors of one chunk), merge
//! (runs into the final sorted states of one group), and solve (values and
//! optimal actions of one chunk from the values of the next two layers).
//!
//! Each kernel is a pure function of its inputs and parallelises with rayon;
//! its result does not depend on the number of threads.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use crate::canonical::canonical;
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
    let after = afterstates(game, &mover, states);
    // Few large batches, one or two per thread, each filling buckets; each
    // bucket (of all batches) is then sorted on its own.
    let batch = after
        .len()
        .div_ceil(2 * rayon::current_num_threads())
        .max(BATCH);
    let pieces: Vec<[Vec<Vec<u64>>; 4]> = after
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

/// The distinct canonical afterstates of `states`: the boards their legal
/// moves make, before a tile spawns, sorted. Won afterstates (absorbing) are
/// left out.
///
/// Many states share an afterstate: the 27.9 M states of the largest part of
/// layer 74 of 4x4 to 32 make 108 M afterstates, of which 6.5 M are distinct.
/// Spawning from each distinct afterstate once, rather than from each move of
/// each state, halves the successors a chunk makes.
fn afterstates(game: &Game, mover: &Mover, states: &[u64]) -> Vec<u64> {
    let n = game.size();
    let mut after: Vec<u64> = states
        .par_chunks(BATCH)
        .flat_map_iter(|batch| {
            let mut out = Vec::with_capacity(4 * batch.len());
            for &s in batch {
                for dir in Direction::ALL {
                    let t = mover.apply(s, dir);
                    if t != s && !has_exponent(t, game.target_exp) {
                        out.push(canonical(t, n));
                    }
                }
            }
            out
        })
        .collect();
    after.par_sort_unstable();
    after.dedup();
    after
}

/// The canonical non-terminal successors of `afterstates` (canonical, not
/// won, made from states whose largest exponent is `max_exp`) in slot
/// `(tile - 1) * 2 + grew` (the spawned tile's exponent, and whether the move
/// made a new largest tile) and hash group (of `groups[slot]`), unsorted and
/// with repeats.
fn successors_of_batch(
    game: &Game,
    mover: &Mover,
    max_exp: u8,
    afterstates: &[u64],
    groups: [u32; 4],
) -> [Vec<Vec<u64>>; 4] {
    let n = game.size();
    let tables = mover.tables();
    let mut out: [Vec<Vec<u64>>; 4] = groups.map(|g| vec![Vec::new(); g as usize]);
    let mut recent = RecentFilter::new();
    for &t in afterstates {
        let grew = has_exponent(t, max_exp + 1) as usize;
        let full_after = empty_bits(t, n).count_ones() == 1;
        // A spawn that fills the board may leave no move: lost, absorbing,
        // not stored.
        for_each_spawn(t, n, tables, |two, four| {
            if recent.fresh(two) && !(full_after && mover.is_lost(two)) {
                out[grew][group_of(two, groups[grew]) as usize].push(two);
            }
            if recent.fresh(four) && !(full_after && mover.is_lost(four)) {
                out[2 + grew][group_of(four, groups[2 + grew]) as usize].push(four);
            }
        });
    }
    out
}

/// Slots of [`RecentFilter`]: 256 KiB, so that it stays in a core's L2.
const RECENT_SLOTS: usize = 1 << 15;

/// A direct-mapped cache of recently emitted successors: the repeats that one
/// state's moves or nearby states make are dropped here, in cache, before
/// they reach a bucket. (Repeats far apart in the chunk are left to the
/// sort.) A key it forgets is
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
///
/// Each run is a stream of strictly increasing keys (a run object read with
/// [`crate::chunk::stream_keys`]), merged k ways through a heap that holds
/// one key per run: memory is the output and the runs' compressed bytes, not
/// every key of every run. A group's runs hold several times its states
/// (21 times a chunk for the largest group of 4x4 to 32), so this bounds a
/// merge by what it writes. A run's error stops the merge and comes back
/// with the run's index.
pub fn merge<E, R>(runs: Vec<R>) -> Result<Vec<u64>, (usize, E)>
where
    R: Iterator<Item = Result<u64, E>>,
{
    use std::cmp::Reverse;
    use std::collections::binary_heap::{BinaryHeap, PeekMut};
    let mut runs = runs;
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some(key) = run.next() {
            heap.push(Reverse((key.map_err(|e| (i, e))?, i)));
        }
    }
    let mut out: Vec<u64> = Vec::new();
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((key, i)) = *top;
        if out.last() != Some(&key) {
            out.push(key);
        }
        match runs[i].next() {
            // Replacing the top sifts it down once, cheaper than pop + push.
            Some(Ok(next)) => *top = Reverse((next, i)),
            Some(Err(e)) => return Err((i, e)),
            None => {
                PeekMut::pop(top);
            }
        }
    }
    Ok(out)
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
        /// A state (or afterstate) it is a successor of.
        from: u64,
        /// Tile sum of the layer that should hold it.
        sum: u32,
    },
    /// A state with no legal move inside a chunk of non-terminal states.
    #[error("state {0:#018x} has no legal move but is stored as non-terminal")]
    Terminal(u64),
}

impl SolveError {
    /// The same error, naming `state` (one that makes the afterstate it was
    /// found from) as the state being solved.
    fn naming_state(self, state: u64) -> SolveError {
        match self {
            SolveError::Missing { state: s, sum, .. } => SolveError::Missing {
                state: s,
                from: state,
                sum,
            },
            other => other,
        }
    }
}

/// Value and optimal action of each state of `states` (all with tile sum
/// `sum`), given the values of the layers with sums `sum + 2` and `sum + 4`.
/// Ties go to the first action in [`Direction::ALL`] order.
///
/// The value of a move is the discounted value of its canonical afterstate
/// ([`afterstate_value`]). The states of a chunk share many afterstates, so
/// each distinct afterstate is valued once: the chunk's (afterstate, move)
/// pairs are sorted, each distinct afterstate looks up its spawns in the
/// tables, and its value is handed back to every move that makes it. Table
/// lookups miss the cache and dominate the solve; this halves them.
pub fn solve(
    game: &Game,
    sum: u32,
    states: &[u64],
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    if plus2.heap_bytes() + plus4.heap_bytes() < SHARED_AFTERSTATES_ABOVE {
        return solve_each(game, sum, states, plus2, plus4);
    }
    let mut values = Vec::with_capacity(states.len());
    let mut actions = Vec::with_capacity(states.len());
    // A move is (state index * 4 + direction) in a u32.
    for piece in states.chunks(1 << 28) {
        let (v, a) = solve_piece(game, sum, piece, plus2, plus4)?;
        values.extend(v);
        actions.extend(a);
    }
    Ok((values, actions))
}

/// Table bytes from which [`solve`] values each distinct afterstate of a
/// chunk once. Below, lookups hit the cache and sorting the chunk's moves
/// costs more than it saves (3x3 to 1024 solved 10% slower that way), so
/// each move is valued on its own ([`solve_each`]); both give the same bits.
const SHARED_AFTERSTATES_ABOVE: u64 = 64 << 20;

/// [`solve`] move by move: each state's afterstates are valued where they
/// occur ([`action_values`]).
fn solve_each(
    game: &Game,
    sum: u32,
    states: &[u64],
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    let n = game.size();
    let mover = Mover::new(n);
    let best: Vec<Result<(f64, u8), SolveError>> = states
        .par_chunks(BATCH)
        .flat_map_iter(|batch| {
            batch.iter().map(|&s| {
                let q = action_values(game, &mover, sum, s, plus2, plus4)?;
                let (v, a) = best_action(&q).ok_or(SolveError::Terminal(s))?;
                Ok((v, a as u8))
            })
        })
        .collect();
    unzip_best(best)
}

/// Values and actions of a chunk's states, in order, from each state's
/// best (value, action); the first error in state order if any.
fn unzip_best(best: Vec<Result<(f64, u8), SolveError>>) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    let mut values = Vec::with_capacity(best.len());
    let mut actions = Vec::with_capacity(best.len());
    for r in best {
        let (v, a) = r?;
        values.push(v);
        actions.push(a);
    }
    Ok((values, actions))
}

/// [`solve`] of at most 2^30 states.
fn solve_piece(
    game: &Game,
    sum: u32,
    states: &[u64],
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    let n = game.size();
    let mover = Mover::new(n);
    // Each move's value; NaN marks an illegal move.
    let q: Vec<AtomicU64> = (0..4 * states.len())
        .into_par_iter()
        .map(|_| AtomicU64::new(f64::NAN.to_bits()))
        .collect();
    // (afterstate << 32 | move) of every legal move that does not win.
    let mut pairs: Vec<u128> = states
        .par_chunks(BATCH)
        .enumerate()
        .flat_map_iter(|(b, batch)| {
            let mut out = Vec::with_capacity(4 * batch.len());
            for (j, &s) in batch.iter().enumerate() {
                let i = b * BATCH + j;
                for dir in Direction::ALL {
                    let t = mover.apply(s, dir);
                    let slot = 4 * i + dir as usize;
                    if t == s {
                        continue;
                    } else if has_exponent(t, game.target_exp) {
                        q[slot].store((game.discount * 1.0).to_bits(), Relaxed);
                    } else {
                        out.push((canonical(t, n) as u128) << 32 | slot as u128);
                    }
                }
            }
            out
        })
        .collect();
    pairs.par_sort_unstable();
    // Runs of equal afterstates, in pieces that never split a run.
    let pieces = run_aligned_pieces(&pairs, BATCH * 4);
    pieces.par_iter().try_for_each(|range| {
        let pairs = &pairs[range.clone()];
        let mut runs = Vec::with_capacity(pairs.len());
        let mut start = 0;
        while start < pairs.len() {
            let key = (pairs[start] >> 32) as u64;
            let mut end = start + 1;
            while end < pairs.len() && (pairs[end] >> 32) as u64 == key {
                end += 1;
            }
            runs.push((key, start..end));
            start = end;
        }
        // Software pipeline: gather and prefetch the spawns of the next
        // afterstate while the current one's lookups complete.
        let mut next = runs
            .first()
            .map(|(a, _)| Spawns::gather(n, &mover, *a, plus2, plus4));
        for (k, (_, run)) in runs.iter().enumerate() {
            let current = next.take().expect("gathered");
            next = runs
                .get(k + 1)
                .map(|(a, _)| Spawns::gather(n, &mover, *a, plus2, plus4));
            let v = current.value(&mover, sum, plus2, plus4).map_err(|e| {
                // Name a state that makes this afterstate.
                let from = states[(pairs[run.start] as u32 as usize) / 4];
                e.naming_state(from)
            })?;
            let bits = (game.discount * v).to_bits();
            for &p in &pairs[run.clone()] {
                q[p as u32 as usize].store(bits, Relaxed);
            }
        }
        Ok::<(), SolveError>(())
    })?;
    drop(pairs);
    let best: Vec<Result<(f64, u8), SolveError>> = states
        .par_iter()
        .enumerate()
        .map(|(i, &s)| {
            let qs: [Option<f64>; 4] = std::array::from_fn(|d| {
                let v = f64::from_bits(q[4 * i + d].load(Relaxed));
                (!v.is_nan()).then_some(v)
            });
            best_action(&qs)
                .map(|(v, a)| (v, a as u8))
                .ok_or(SolveError::Terminal(s))
        })
        .collect();
    unzip_best(best)
}

/// Split sorted `(afterstate << 32 | move)` pairs into pieces of about `size`
/// that never split one afterstate's run.
fn run_aligned_pieces(pairs: &[u128], size: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < pairs.len() {
        let mut end = (start + size).min(pairs.len());
        while end < pairs.len() && pairs[end] >> 32 == pairs[end - 1] >> 32 {
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// Values of each action from `s` (None for an illegal action): the
/// discounted [`afterstate_value`] of the canonical afterstate, 1 for a win.
/// The same formula as [`solve`], bit for bit.
pub fn action_values(
    game: &Game,
    mover: &Mover,
    sum: u32,
    s: u64,
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<[Option<f64>; 4], SolveError> {
    // Gather (and prefetch) every move's spawns before looking any up.
    let gathered: [Option<Result<Spawns, ()>>; 4] = std::array::from_fn(|d| {
        let t = mover.apply(s, Direction::ALL[d]);
        if t == s {
            None
        } else if has_exponent(t, game.target_exp) {
            Some(Err(()))
        } else {
            let a = canonical(t, game.size());
            Some(Ok(Spawns::gather(game.size(), mover, a, plus2, plus4)))
        }
    });
    let mut out = [None; 4];
    for (slot, g) in gathered.iter().enumerate() {
        let v = match g {
            None => continue,
            // A win.
            Some(Err(())) => 1.0,
            Some(Ok(spawns)) => spawns
                .value(mover, sum, plus2, plus4)
                .map_err(|e| e.naming_state(s))?,
        };
        out[slot] = Some(game.discount * v);
    }
    Ok(out)
}

/// The value of canonical afterstate `a` (tile sum `sum`, not won): the
/// average over its empty cells, in cell order, of 0.9 times the value of
/// the 2 spawned there plus 0.1 times that of the 4. Values come from the
/// layers `sum + 2` and `sum + 4`; a spawn that fills the board and leaves no
/// move is lost (0).
pub fn afterstate_value(
    game: &Game,
    mover: &Mover,
    sum: u32,
    a: u64,
    plus2: &ValueTable,
    plus4: &ValueTable,
) -> Result<f64, SolveError> {
    Spawns::gather(game.size(), mover, a, plus2, plus4).value(mover, sum, plus2, plus4)
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

/// The canonical spawns of one afterstate, gathered (and their table slots
/// prefetched) before any value is looked up.
struct Spawns {
    afterstate: u64,
    cells: usize,
    /// (two, four) per empty cell, in cell order.
    keys: [(u64, u64); 16],
}

impl Spawns {
    #[inline]
    fn gather(n: usize, mover: &Mover, a: u64, plus2: &ValueTable, plus4: &ValueTable) -> Self {
        let mut me = Spawns {
            afterstate: a,
            cells: 0,
            keys: [(0, 0); 16],
        };
        for_each_spawn(a, n, mover.tables(), |two, four| {
            plus2.prefetch(two);
            plus4.prefetch(four);
            me.keys[me.cells] = (two, four);
            me.cells += 1;
        });
        me
    }

    #[inline]
    fn value(
        &self,
        mover: &Mover,
        sum: u32,
        plus2: &ValueTable,
        plus4: &ValueTable,
    ) -> Result<f64, SolveError> {
        let full_after = self.cells == 1;
        let value = |key: u64, table: &ValueTable, sum: u32| {
            // A spawn that fills the board may leave no move: lost.
            if full_after && mover.is_lost(key) {
                return Ok(0.0);
            }
            table.get(key).ok_or(SolveError::Missing {
                state: key,
                from: self.afterstate,
                sum,
            })
        };
        let mut acc = 0.0f64;
        for &(two, four) in &self.keys[..self.cells] {
            acc += P_TWO * value(two, plus2, sum + 2)? + P_FOUR * value(four, plus4, sum + 4)?;
        }
        Ok(acc / self.cells as f64)
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

    /// The chunk-wide path (distinct afterstates valued once) and the
    /// move-by-move path give the same bits, and agree with the slow solver.
    #[test]
    fn shared_afterstates_and_move_by_move_agree_bit_for_bit() {
        let game = Game::new(3, 32, 0.95).unwrap();
        let parts = crate::slow::enumerate(&game);
        let slow = crate::slow::solve(&game);
        let layer = |sum: u32| -> Vec<u64> {
            let mut v: Vec<u64> = parts
                .iter()
                .filter(|((s, _), _)| *s == sum)
                .flat_map(|(_, states)| states.iter().copied())
                .collect();
            v.sort_unstable();
            v
        };
        let table = |sum: u32| {
            let states = layer(sum);
            let t = ValueTable::with_capacity(states.len());
            for s in states {
                t.insert(s, slow[&s]);
            }
            t
        };
        let mut compared = 0;
        for sum in (10..60).step_by(2) {
            let states = layer(sum);
            if states.is_empty() {
                continue;
            }
            let (plus2, plus4) = (table(sum + 2), table(sum + 4));
            let shared = solve_piece(&game, sum, &states, &plus2, &plus4).unwrap();
            let each = solve_each(&game, sum, &states, &plus2, &plus4).unwrap();
            assert_eq!(shared.1, each.1, "actions of layer {sum}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&shared.0), bits(&each.0), "values of layer {sum}");
            for (s, v) in states.iter().zip(&shared.0) {
                assert!((v - slow[s]).abs() < 1e-12, "{s:#x}: {v} vs {}", slow[s]);
            }
            compared += states.len();
        }
        assert!(compared > 2_000, "{compared} states compared");
    }

    #[test]
    fn a_missing_successor_names_a_state_that_needs_it() {
        let game = Game::new(3, 32, 1.0).unwrap();
        let parts = crate::slow::enumerate(&game);
        let states: Vec<u64> = parts
            .iter()
            .filter(|((s, _), _)| *s == 30)
            .flat_map(|(_, v)| v.iter().copied())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let empty = ValueTable::with_capacity(1);
        for err in [
            solve_piece(&game, 30, &states, &empty, &empty).unwrap_err(),
            solve_each(&game, 30, &states, &empty, &empty).unwrap_err(),
        ] {
            let SolveError::Missing { from, sum, .. } = err else {
                panic!("{err:?}");
            };
            assert!(
                states.binary_search(&from).is_ok(),
                "{from:#x} is no state of the chunk"
            );
            assert!(sum == 32 || sum == 34);
        }
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

    fn runs(runs: Vec<Vec<u64>>) -> Vec<impl Iterator<Item = Result<u64, String>>> {
        runs.into_iter().map(|r| r.into_iter().map(Ok)).collect()
    }

    #[test]
    fn merge_dedups() {
        assert_eq!(
            merge(runs(vec![
                vec![0x1, 0x4, 0x21],
                vec![0x2, 0x4, 0x31],
                vec![0x21]
            ])),
            Ok(vec![0x1, 0x2, 0x4, 0x21, 0x31])
        );
        assert_eq!(merge(runs(vec![])), Ok(vec![]));
        assert_eq!(merge(runs(vec![vec![], vec![7]])), Ok(vec![7]));
    }

    /// The k-way merge against the obvious one: concatenate, sort, dedup.
    #[test]
    fn merge_equals_sorting_everything() {
        for k in [1usize, 2, 5, 64] {
            let input: Vec<Vec<u64>> = (0..k as u64)
                .map(|r| {
                    let mut v: Vec<u64> = (0..(r * 37 % 500))
                        .map(|i| crate::part::mix(r * 1000 + i) % 2000)
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            let mut expect: Vec<u64> = input.concat();
            expect.sort_unstable();
            expect.dedup();
            assert_eq!(merge(runs(input)), Ok(expect), "{k} runs");
        }
    }

    #[test]
    fn a_failing_run_stops_the_merge_and_is_named() {
        let bad = vec![Ok(1), Ok(5), Err("cut off".to_string())].into_iter();
        let good = vec![Ok(2), Ok(3)].into_iter();
        let ok: Vec<Box<dyn Iterator<Item = Result<u64, String>>>> =
            vec![Box::new(good), Box::new(bad)];
        assert_eq!(merge(ok), Err((1, "cut off".to_string())));
    }
}
