//! The enumerate kernel: the distinct afterstates of one chunk, filed by the
//! part and group their spawns of each tile land in
//! ([`filed_afterstates`]): the runs of the forward pass (which
//! [`super::expand`](mod@super::expand) spawns in each group) and the
//! requests of the backward pass (made again just before the layers they
//! ask are gathered). And the non-terminal successors of afterstates by
//! part and group ([`successors`]), which an evaluation's forward pass
//! sends on as they lie.

use std::collections::btree_map::{BTreeMap, Entry};

use rayon::prelude::*;

use super::batch::{append, BATCH};
use super::distinct::{distinct_of_pieces, sort_distinct};
use crate::rules::board::empty_bits;
use crate::rules::canonical::Orientation;
use crate::rules::moves::{has_exponent, Mover};
use crate::rules::symmetry::Symmetry;
use crate::space::ids::{spawn_group, PartId};
use crate::space::parts::successor_part;
use crate::Game;

/// Keys by target part, split into that part's hash groups: entry `[g]`
/// holds group `g`'s keys, sorted and distinct.
pub type GroupedKeys = BTreeMap<PartId, Vec<Vec<u64>>>;

/// A successor landed in a part that the caller gave no group count for.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("successors in {0}, which the task gives no group count")]
pub struct UnplannedPart(pub PartId);

/// States whose moves a slice of the kernel takes at a time, and distinct
/// afterstates whose spawns it takes at a time. Work is done slice by slice
/// and each slice's sorted keys are merged into the output, so a task holds
/// its output and one slice's raw keys, not every raw key of the chunk.
/// Fixed, so the output never depends on memory.
pub const SLICE: usize = 1 << 20;

/// The distinct canonical afterstates of `states` (all in `part`) by the
/// part and group that their spawns of each tile land in ([`spawn_group`]):
/// the runs of the forward pass and the requests of the backward pass (each
/// key list sorted). `groups` gives each successor part's group count.
/// Every afterstate is filed once for each tile the game spawns, even when
/// all its spawns are lost.
pub fn filed_afterstates(
    game: &Game,
    part: PartId,
    states: &[u64],
    groups: impl Fn(PartId) -> Option<u32>,
) -> Result<GroupedKeys, UnplannedPart> {
    let after = afterstates(game, &Mover::new(game.shape), states);
    file_requests(game, part, &after, groups)
}

/// The part of slot `slot` of successors of states in `part`: slot
/// `(tile - 1) * 2 + grew` (the spawned tile's exponent, and whether the
/// move made a new largest tile).
fn slot_part(part: PartId, slot: usize) -> PartId {
    successor_part(part, (slot / 2 + 1) as u8, slot % 2 == 1)
}

/// The group count `groups` gives each slot's part.
fn planned(part: PartId, groups: impl Fn(PartId) -> Option<u32>) -> [Option<u32>; 4] {
    std::array::from_fn(|slot| groups(slot_part(part, slot)))
}

/// The non-terminal successors, keyed by `orientation`, of distinct
/// afterstates `after` (keyed alike, not won, made from states in `part`),
/// by part and group, `slice` afterstates at a time; `groups` gives each
/// successor part's group count.
pub(crate) fn successors(
    game: &Game,
    orientation: Orientation,
    part: PartId,
    after: &[u64],
    groups: impl Fn(PartId) -> Option<u32>,
    slice: usize,
) -> Result<GroupedKeys, UnplannedPart> {
    let mover = Mover::new(game.shape);
    let planned = planned(part, groups);
    let counts = planned.map(|g| g.unwrap_or(1).max(1));
    let acc = successors_in_slices(after, slice, counts, |batch| {
        successors_of_batch(game, orientation, &mover, part.max_exp, batch, counts)
    });
    by_part(acc, &planned, |slot| slot_part(part, slot))
}

/// The successors of afterstates `after`, `slice` afterstates at a time, by
/// slot and group (each sorted and distinct): `batch_of` makes one batch's
/// keys by slot and group, unsorted and with repeats. Few large batches,
/// one or two per thread, each fill buckets; then every bucket of every
/// slot (of all batches) is sorted on its own, all at once on the worker's
/// threads, and added to its [`Union`].
fn successors_in_slices(
    after: &[u64],
    slice: usize,
    counts: [u32; 4],
    batch_of: impl Fn(&[u64]) -> [Vec<Vec<u64>>; 4] + Sync,
) -> [Vec<Vec<u64>>; 4] {
    // Bucket (slot, group) is `acc[first[slot] + group]`.
    let first: Vec<usize> = (0..4)
        .map(|slot| counts[..slot].iter().map(|&g| g as usize).sum())
        .collect();
    let total = counts.iter().map(|&g| g as usize).sum();
    let mut acc: Vec<Union> = (0..total).map(|_| Union::default()).collect();
    for slice in after.chunks(slice) {
        let batch = slice
            .len()
            .div_ceil(2 * rayon::current_num_threads())
            .max(BATCH);
        let pieces: Vec<[Vec<Vec<u64>>; 4]> = slice.par_chunks(batch).map(&batch_of).collect();
        acc.par_iter_mut().enumerate().for_each(|(i, acc)| {
            let slot = first
                .iter()
                .rposition(|&f| f <= i)
                .expect("slot 0 starts at 0");
            let g = i - first[slot];
            let mut keys: Vec<u64> =
                Vec::with_capacity(pieces.iter().map(|p| p[slot][g].len()).sum());
            for p in &pieces {
                keys.extend_from_slice(&p[slot][g]);
            }
            sort_distinct(&mut keys);
            acc.push(keys);
        });
    }
    let mut acc = acc.into_iter();
    counts.map(|g| (&mut acc).take(g as usize).map(Union::finish).collect())
}
/// Successors by slot and group (`acc`) as keys by part: slot `slot` is part
/// `slot_part(slot)`, and two slots can share a part (a 4 spawned beside a
/// largest tile of 2). A slot with keys but no planned group count is an
/// error.
fn by_part(
    acc: [Vec<Vec<u64>>; 4],
    planned: &[Option<u32>; 4],
    slot_part: impl Fn(usize) -> PartId,
) -> Result<GroupedKeys, UnplannedPart> {
    let mut successors = GroupedKeys::new();
    for (slot, acc) in acc.into_iter().enumerate() {
        if acc.iter().all(Vec::is_empty) {
            continue;
        }
        if planned[slot].is_none() {
            return Err(UnplannedPart(slot_part(slot)));
        }
        match successors.entry(slot_part(slot)) {
            Entry::Vacant(e) => {
                e.insert(acc);
            }
            Entry::Occupied(mut e) => {
                for (into, keys) in e.get_mut().iter_mut().zip(acc) {
                    union_into(into, keys);
                }
            }
        }
    }
    Ok(successors)
}

/// The requests of a chunk's distinct afterstates `after` (sorted, made
/// from states in `part`): each afterstate goes to the group of each tile's
/// part its spawns of that tile land in, for each tile the game spawns;
/// `groups` gives each part's group count. Filed on all threads, each
/// taking a stretch of `after` (in order, so each group's keys stay sorted
/// when the stretches' are put end to end).
pub(crate) fn file_requests(
    game: &Game,
    part: PartId,
    after: &[u64],
    groups: impl Fn(PartId) -> Option<u32>,
) -> Result<GroupedKeys, UnplannedPart> {
    let stretch = after
        .len()
        .div_ceil(rayon::current_num_threads())
        .max(FILE_STRETCH);
    file_requests_by(game, part, after, groups, stretch)
}

/// [`file_requests`], `stretch` afterstates a thread.
fn file_requests_by(
    game: &Game,
    part: PartId,
    after: &[u64],
    groups: impl Fn(PartId) -> Option<u32>,
    stretch: usize,
) -> Result<GroupedKeys, UnplannedPart> {
    let planned = planned(part, groups);
    let (slot_part, rule) = (|slot: usize| slot_part(part, slot), game.spawn_rule());
    // The first unplanned slot in `after`'s order fails, as one pass would.
    let filed = after
        .par_chunks(stretch)
        .map(|after| {
            let mut out: [Vec<Vec<u64>>; 4] =
                planned.map(|g| vec![Vec::new(); g.unwrap_or(1) as usize]);
            for &a in after {
                let grew = has_exponent(a, part.max_exp + 1) as usize;
                for tile in rule.tiles() {
                    let slot = (tile as usize - 1) * 2 + grew;
                    let Some(groups) = planned[slot] else {
                        return Err(UnplannedPart(slot_part(slot)));
                    };
                    out[slot][spawn_group(a, tile, groups) as usize].push(a);
                }
            }
            Ok(out)
        })
        .collect::<Vec<_>>();
    let filed = filed.into_iter().collect::<Result<Vec<_>, _>>()?;
    let mut requests = GroupedKeys::new();
    for (slot, groups) in end_to_end(filed).into_iter().enumerate() {
        if groups.iter().any(|g| !g.is_empty()) {
            // Two slots can share a part (a 4 spawned beside a largest tile
            // of 2); their afterstates differ, so the union is a merge.
            match requests.entry(slot_part(slot)) {
                Entry::Vacant(e) => {
                    e.insert(groups);
                }
                Entry::Occupied(mut e) => {
                    for (into, keys) in e.get_mut().iter_mut().zip(groups) {
                        union_into(into, keys);
                    }
                }
            }
        }
    }
    Ok(requests)
}

/// Afterstates one thread files at least ([`file_requests`]): below this a
/// chunk is filed on one thread.
const FILE_STRETCH: usize = 1 << 16;

/// Keys filed by stretch (each stretch's, by slot and group) put end to end
/// by slot and group, each group on its own thread; a later stretch's keys
/// are freed once moved.
fn end_to_end(filed: Vec<[Vec<Vec<u64>>; 4]>) -> [Vec<Vec<u64>>; 4] {
    let mut stretches = filed.into_iter();
    let mut out = stretches.next().unwrap_or_default();
    let mut later: Vec<[Vec<Vec<u64>>; 4]> = stretches.collect();
    if later.is_empty() {
        return out;
    }
    for (slot, groups) in out.iter_mut().enumerate() {
        // Group g's keys of every later stretch, in stretch order.
        let mut pieces = vec![Vec::new(); groups.len()];
        for stretch in &mut later {
            for (g, keys) in std::mem::take(&mut stretch[slot]).into_iter().enumerate() {
                pieces[g].push(keys);
            }
        }
        groups
            .par_iter_mut()
            .zip(pieces)
            .for_each(|(keys, pieces)| {
                // Room for exactly these keys: `append` alone would let
                // the vector double.
                keys.reserve_exact(pieces.iter().map(Vec::len).sum());
                append(keys, pieces);
            });
    }
    out
}

/// The union of sorted, distinct `a` and `b`, sorted and distinct.
fn union(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        out.push(x.min(y));
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Merge sorted, distinct `keys` into sorted, distinct `acc`.
fn union_into(acc: &mut Vec<u64>, keys: Vec<u64>) {
    if keys.is_empty() {
        return;
    }
    if acc.is_empty() {
        *acc = keys;
        return;
    }
    *acc = union(acc, &keys);
}

/// The distinct canonical afterstates of `states`: the boards their legal
/// moves make, before a tile spawns, sorted. Won afterstates (absorbing) are
/// left out. Taken [`SLICE`] states at a time.
///
/// Many states share an afterstate: the 27.9 M states of the largest part of
/// layer 74 of 4x4 to 32 make 108 M afterstates, of which 6.5 M are distinct.
/// Spawning from each distinct afterstate once, rather than from each move of
/// each state, halves the successors a chunk makes.
pub fn afterstates(game: &Game, mover: &Mover, states: &[u64]) -> Vec<u64> {
    afterstates_in_slices(game, mover, states, SLICE)
}

fn afterstates_in_slices(game: &Game, mover: &Mover, states: &[u64], slice: usize) -> Vec<u64> {
    let (shape, target) = (game.shape, game.target_exp);
    distinct_afterstates(states, slice, |_, batch, out| {
        crate::with_symmetry!(shape, |sym| {
            for &s in batch {
                let moved = mover.apply_all(s);
                let wanted = moved.map(|t| t != s && !has_exponent(t, target));
                let keys = sym.canonical4(moved, wanted);
                for d in 0..4 {
                    if wanted[d] {
                        out.push(keys[d]);
                    }
                }
            }
        })
    })
}

/// The distinct afterstates that `made(first, batch, out)` pushes onto `out`
/// for a batch of states (`states[first..first + batch.len()]`), sorted;
/// `slice` states at a time. The repeats that nearby states make are
/// dropped by a [`RecentFilter`] before the sort.
pub(crate) fn distinct_afterstates(
    states: &[u64],
    slice: usize,
    made: impl Fn(usize, &[u64], &mut Vec<u64>) + Sync,
) -> Vec<u64> {
    let mut acc = Union::default();
    for (k, some) in states.chunks(slice).enumerate() {
        let first = k * slice;
        let pieces: Vec<Vec<u64>> = some
            .par_chunks(BATCH)
            .enumerate()
            .map_init(RecentFilter::new, |recent, (b, batch)| {
                let mut out = Vec::with_capacity(4 * batch.len());
                made(first + b * BATCH, batch, &mut out);
                out.retain(|&t| recent.fresh(t));
                out
            })
            .collect();
        acc.push(distinct_of_pieces(pieces));
    }
    acc.finish()
}

/// The non-terminal successors, keyed by `orientation`, of `afterstates`
/// (keyed alike, not won, made from states whose largest exponent is
/// `max_exp`) in slot `(tile - 1) * 2 + grew` (the spawned tile's exponent,
/// and whether the move made a new largest tile) and hash group (of
/// `groups[slot]`), unsorted and with repeats.
fn successors_of_batch(
    game: &Game,
    orientation: Orientation,
    mover: &Mover,
    max_exp: u8,
    afterstates: &[u64],
    groups: [u32; 4],
) -> [Vec<Vec<u64>>; 4] {
    let shape = game.shape;
    let mut out: [Vec<Vec<u64>>; 4] = groups.map(|g| vec![Vec::new(); g as usize]);
    let mut recent = RecentFilter::new();
    // A tile the rule never spawns makes no successor (the test is the same
    // for every afterstate, so the branch predictor keeps it free).
    let rule = game.spawn_rule();
    let (two_spawns, four_spawns) = (rule.spawns(1), rule.spawns(2));
    crate::with_symmetry!(orientation, shape, |sym| {
        for &t in afterstates {
            let grew = has_exponent(t, max_exp + 1) as usize;
            let full_after = empty_bits(t, shape).count_ones() == 1;
            // All spawns of one tile hold the same tiles, so share a group:
            // found once an afterstate, not once a successor.
            let [twos, fours] = [1, 2].map(|tile| {
                let slot = (tile as usize - 1) * 2 + grew;
                spawn_group(t, tile, groups[slot]) as usize
            });
            // A spawn that fills the board may leave no move: lost,
            // absorbing, not stored.
            sym.for_each_spawn(t, |two, four| {
                if two_spawns && recent.fresh(two) && !(full_after && mover.is_lost(two)) {
                    out[grew][twos].push(two);
                }
                if four_spawns && recent.fresh(four) && !(full_after && mover.is_lost(four)) {
                    out[2 + grew][fours].push(four);
                }
            });
        }
    });
    out
}

/// Sorted, distinct keys gathered as sorted runs: a run is merged into the
/// one before it while that one is at most twice its size, so each key is
/// copied a logarithmic number of times, not once a run (a whole part of
/// the floor's game comes in dozens of slices).
#[derive(Default)]
pub struct Union {
    runs: Vec<Vec<u64>>,
}

impl Union {
    /// Add sorted, distinct `keys`.
    pub fn push(&mut self, keys: Vec<u64>) {
        if keys.is_empty() {
            return;
        }
        self.runs.push(keys);
        while let [.., a, b] = self.runs.as_slice() {
            if a.len() > 2 * b.len() {
                break;
            }
            let b = self.runs.pop().expect("two runs");
            let a = self.runs.pop().expect("two runs");
            self.runs.push(union(&a, &b));
        }
    }

    /// The union of every run added.
    pub fn finish(mut self) -> Vec<u64> {
        let mut acc = self.runs.pop().unwrap_or_default();
        while let Some(a) = self.runs.pop() {
            acc = union(&a, &acc);
        }
        acc
    }
}

/// Slots of [`RecentFilter`]: 256 KiB, so that it stays in a core's L2.
const RECENT_SLOTS: usize = 1 << 15;

/// A direct-mapped cache of recently emitted successors or afterstates: the
/// repeats that one state's moves or nearby states make are dropped here, in
/// cache, before they reach a bucket or a sort. (Repeats far apart in the
/// chunk are left to the sort.) A key it forgets is emitted again and removed
/// by the sort: it only ever drops true repeats.
pub(crate) struct RecentFilter {
    slots: Box<[u64; RECENT_SLOTS]>,
}

impl RecentFilter {
    pub(crate) fn new() -> RecentFilter {
        RecentFilter {
            // Free slots hold u64::MAX, every cell 15: no successor (it has a
            // tile just spawned) and no afterstate (it has an empty cell).
            slots: vec![u64::MAX; RECENT_SLOTS].try_into().unwrap(),
        }
    }

    /// True unless `key` is in the filter; remembers it either way.
    #[inline(always)]
    pub(crate) fn fresh(&mut self, key: u64) -> bool {
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
    use crate::space::ids::group_of;

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
            .map(|b| crate::rules::canonical::canonical(b, crate::Shape::square(4)))
            .collect();
        states.sort_unstable();
        states.dedup();
        states
    }

    /// The canonical successors of `states` (of `part`) by part and group,
    /// `slice` afterstates at a time.
    fn enumerate_in_slices(
        game: &Game,
        part: PartId,
        states: &[u64],
        groups: impl Fn(PartId) -> Option<u32>,
        slice: usize,
    ) -> Result<GroupedKeys, UnplannedPart> {
        let after = afterstates(game, &Mover::new(game.shape), states);
        successors(game, Orientation::Canonical, part, &after, groups, slice)
    }

    fn enumerate(
        game: &Game,
        part: PartId,
        states: &[u64],
        groups: impl Fn(PartId) -> Option<u32>,
    ) -> Result<GroupedKeys, UnplannedPart> {
        enumerate_in_slices(game, part, states, groups, SLICE)
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

    /// The largest part of 3x3 to 256: a real chunk's states.
    fn real_part() -> (Game, PartId, Vec<u64>) {
        let game = Game::new(3, 256, 1.0).unwrap();
        let mut best = (PartId { sum: 0, max_exp: 0 }, Vec::new());
        crate::kernel::in_memory::enumerate(&game, |part, states| {
            if states.len() > best.1.len() {
                best = (part, states);
            }
        });
        (game, best.0, best.1)
    }

    /// Slices change how the work is cut, never what comes out.
    #[test]
    fn slices_do_not_change_the_output() {
        let (game, part, states) = real_part();
        assert!(states.len() > 40_000, "{}", states.len());
        let groups = |p: PartId| Some(p.sum % 3 + 2);
        let whole = enumerate(&game, part, &states, groups).unwrap();
        for slice in [97, 1000, 20_000] {
            let cut = enumerate_in_slices(&game, part, &states, groups, slice).unwrap();
            assert!(cut == whole, "slice {slice}");
        }
    }

    /// Filed afterstates hold each distinct afterstate once per tile, in the
    /// group every spawn of that tile lands in.
    #[test]
    fn filed_afterstates_cover_every_afterstate_once_per_tile() {
        let (game, part, states) = real_part();
        let mover = Mover::new(crate::Shape::square(3));
        let after = afterstates(&game, &mover, &states);
        let out = filed_afterstates(&game, part, &states, |p| Some(p.sum % 5 + 3)).unwrap();
        for tile in 1..=2u8 {
            let mut seen: Vec<u64> = Vec::new();
            let sum = part.sum + (1 << tile);
            for (p, groups) in out.iter().filter(|(p, _)| p.sum == sum) {
                for (g, keys) in groups.iter().enumerate() {
                    assert!(keys.windows(2).all(|w| w[0] < w[1]));
                    for &a in keys {
                        crate::rules::spawn::for_each_spawn_of(
                            a,
                            crate::Shape::square(3),
                            tile,
                            |s| {
                                assert_eq!(crate::space::parts::part_of(s), *p, "{a:#x}");
                                assert_eq!(group_of(s, groups.len() as u32), g as u32);
                            },
                        );
                    }
                    seen.extend(keys);
                }
            }
            seen.sort_unstable();
            assert_eq!(seen, after, "tile {tile}");
        }
    }

    /// Filing on many threads, a stretch of the afterstates each, files
    /// them as one pass does; an unplanned part fails the same way.
    #[test]
    fn stretches_do_not_change_the_filing() {
        let (game, part, states) = real_part();
        let after = afterstates(&game, &Mover::new(crate::Shape::square(3)), &states);
        let groups = |p: PartId| Some(p.sum % 5 + 3);
        let one = file_requests_by(&game, part, &after, groups, usize::MAX).unwrap();
        assert!(one.values().flatten().filter(|k| !k.is_empty()).count() > 4);
        for stretch in [1, 97, after.len() / 3, after.len()] {
            let cut = file_requests_by(&game, part, &after, groups, stretch).unwrap();
            assert!(cut == one, "stretch {stretch}");
        }
        let fours = |p: PartId| (p.sum != part.sum + 4).then_some(3);
        let want = file_requests_by(&game, part, &after, fours, usize::MAX).unwrap_err();
        assert_eq!(file_requests_by(&game, part, &after, fours, 97), Err(want));
    }

    /// Each state reaches the move rule with its own index, whatever the
    /// slices (an evaluation reads the player's moves by it).
    #[test]
    fn distinct_afterstates_give_each_state_its_index() {
        let states = sample_states();
        let all: Vec<u64> = (0..states.len() as u64).collect();
        for slice in [97, 1000, states.len()] {
            let got = distinct_afterstates(&states, slice, |first, batch, out| {
                for (j, &s) in batch.iter().enumerate() {
                    assert_eq!(states[first + j], s, "slice {slice}");
                    out.push((first + j) as u64);
                }
            });
            assert_eq!(got, all, "slice {slice}");
        }
    }

    /// Repeats near and far (which the recent filter and the sort drop)
    /// leave one copy each, and no key made once is lost.
    #[test]
    fn distinct_afterstates_are_the_set_of_the_keys_made() {
        let states = sample_states();
        let made = |first: usize, batch: &[u64], out: &mut Vec<u64>| {
            for (j, &s) in batch.iter().enumerate() {
                let i = first + j;
                out.extend([s % 97, s % 97, i as u64 / 3, u64::MAX - 1, s]);
            }
        };
        let mut want = Vec::new();
        made(0, &states, &mut want);
        want.sort_unstable();
        want.dedup();
        for slice in [97, 1000, states.len()] {
            assert_eq!(
                distinct_afterstates(&states, slice, made),
                want,
                "slice {slice}"
            );
        }
    }

    #[test]
    fn a_successor_in_an_unplanned_part_is_an_error() {
        let game = Game::new(4, 32, 1.0).unwrap();
        let part = PartId { sum: 0, max_exp: 3 };
        let states = sample_states();
        let twos = PartId { sum: 2, max_exp: 3 };
        let err = enumerate(&game, part, &states, |p| (p != twos).then_some(2)).unwrap_err();
        assert_eq!(err, UnplannedPart(twos));
        let err = filed_afterstates(&game, part, &states, |p| (p != twos).then_some(2));
        assert_eq!(err.unwrap_err(), UnplannedPart(twos));
    }
}
