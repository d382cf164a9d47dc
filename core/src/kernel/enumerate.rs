//! The enumerate kernel: the canonical non-terminal successors of one chunk,
//! by successor part and hash group, through the chunk's distinct
//! afterstates.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::BATCH;
use crate::canonical::canonical;
use crate::direction::Direction;
use crate::layer::successor_part;
use crate::moves::{has_exponent, Mover};
use crate::part::{group_of, PartId};
use crate::spawn::{empty_bits, for_each_spawn};
use crate::Game;

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
    let slot_part = |slot: usize| successor_part(part, (slot / 2 + 1) as u8, slot % 2 == 1);
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Successors of 4x4 states with a few tiles below 16, canonical and
    /// sorted, with largest tile 8.
    pub(crate) fn sample_states() -> Vec<u64> {
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
}
