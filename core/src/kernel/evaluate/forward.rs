//! The forward pass of an evaluation: how likely the player is to reach
//! each board of a chunk ([`Reach`]), and the chunk's successors, requests
//! and pushes under the player's moves ([`enumerate_under`]), on boards as
//! they lie.
//!
//! Every sum here is taken in an order fixed by the inputs alone (boards in
//! key order, moves in action-code order, pushes in the order given), never
//! by the threads, so a task rerun anywhere writes the same bits.

use std::collections::btree_map::{BTreeMap, Entry};

use rayon::prelude::*;

use super::check::same_length;
use super::error::EvaluateError;
use super::moves::Moves;
use super::spawns::for_each_spawn_as_it_lies;
use crate::kernel::batch::BATCH;
use crate::kernel::enumerate::{
    by_part, successors_in_slices, GroupedKeys, RecentFilter, UnplannedPart, SLICE,
};
use crate::kernel::gather::empty_cells;
use crate::rules::direction::Direction;
use crate::rules::moves::{has_exponent, Mover};
use crate::rules::spawn::{empty_bits, SpawnRule, Starts};
use crate::space::ids::{spawn_group, PartId};
use crate::space::parts::successor_part;
use crate::{Game, Shape};

/// Afterstates of a push whose spawns the kernel makes at a time: what it
/// holds besides the chunk is one slice's spawns found in the chunk.
const PUSH_SLICE: usize = 1 << 16;

/// The discounted probability that the player reaches each board of a chunk
/// (sorted, as they lie), added up from the start distribution and from
/// what the layers below pushed to the chunk's group.
pub struct Reach<'a> {
    shape: Shape,
    rule: SpawnRule,
    states: &'a [u64],
    reach: Vec<f64>,
}

impl<'a> Reach<'a> {
    /// Nothing reached yet, for the boards `states` of `game`.
    pub fn new(game: &Game, states: &'a [u64]) -> Reach<'a> {
        Reach {
            shape: game.shape,
            rule: game.spawn_rule(),
            states,
            reach: vec![0.0; states.len()],
        }
    }

    /// Add each start board's probability (`starts` as they lie) to it.
    pub fn add_starts(&mut self, starts: &Starts) {
        let denominator = starts.denominator as f64;
        for (&b, &w) in &starts.weights {
            if let Ok(i) = self.states.binary_search(&b) {
                self.reach[i] += w as f64 / denominator;
            }
        }
    }

    /// Add what afterstates `keys` pass on, made with discounted
    /// probabilities `masses`, to the boards that a tile of exponent `tile`
    /// makes on them: to each, the mass times the tile's probability over
    /// the number of empty cells. Boards not in the chunk (lost, or in
    /// another chunk of the group) are passed over.
    pub fn add_pushes(
        &mut self,
        tile: u8,
        keys: &[u64],
        masses: &[f64],
    ) -> Result<(), EvaluateError> {
        same_length("push masses", keys.len(), masses.len())?;
        let (Some(&lo), Some(&hi)) = (self.states.first(), self.states.last()) else {
            return Ok(());
        };
        let (shape, states) = (self.shape, self.states);
        let p_tile = self.rule.chance(tile);
        for (ks, ms) in keys.chunks(PUSH_SLICE).zip(masses.chunks(PUSH_SLICE)) {
            // Found in parallel, in order; added in that order.
            let adds: Vec<(usize, f64)> = ks
                .par_chunks(BATCH)
                .zip(ms.par_chunks(BATCH))
                .flat_map_iter(|(ks, ms)| {
                    let mut out = Vec::new();
                    for (&a, &mass) in ks.iter().zip(ms) {
                        let share = mass * (p_tile / empty_cells(a, shape) as f64);
                        for_each_spawn_as_it_lies(a, shape, tile, |s| {
                            if (lo..=hi).contains(&s) {
                                if let Ok(i) = states.binary_search(&s) {
                                    out.push((i, share));
                                }
                            }
                        });
                    }
                    out
                })
                .collect();
            for (i, v) in adds {
                self.reach[i] += v;
            }
        }
        Ok(())
    }

    /// Each board's reach, in the chunk's order.
    pub fn finish(self) -> Vec<f64> {
        self.reach
    }
}

/// A number per key of [`GroupedKeys`] of the same shape.
pub type GroupedMasses = BTreeMap<PartId, Vec<Vec<f64>>>;

/// What enumerating a chunk under a player makes.
#[derive(Debug, Default, PartialEq)]
pub struct Followed {
    /// The non-terminal successors (as they lie) by part and group: runs.
    pub successors: GroupedKeys,
    /// The chunk's distinct afterstates (as they lie, not won) by the part
    /// and group their spawns of each tile land in: requests.
    pub requests: GroupedKeys,
    /// For each request key, the discounted probability that the player
    /// makes that afterstate from the chunk: pushes (the same shape).
    pub masses: GroupedMasses,
}

/// The successors, requests and pushes of `states` (sorted, as they lie,
/// all in `part`) when the player plays `moves[i]` on `states[i]`, which it
/// reaches with discounted probability `reach[i]`; `groups` gives each
/// successor part's group count. Won afterstates and lost successors are
/// absorbing and not emitted; a move that is not legal is an error.
pub fn enumerate_under(
    game: &Game,
    part: PartId,
    states: &[u64],
    moves: &[Moves],
    reach: &[f64],
    groups: impl Fn(PartId) -> Option<u32>,
) -> Result<Followed, EvaluateError> {
    same_length("moves", states.len(), moves.len())?;
    same_length("reach", states.len(), reach.len())?;
    let mover = Mover::new(game.shape);
    let slot_part = |slot: usize| successor_part(part, (slot / 2 + 1) as u8, slot % 2 == 1);
    let planned: [Option<u32>; 4] = std::array::from_fn(|slot| groups(slot_part(slot)));
    let counts = planned.map(|g| g.unwrap_or(1).max(1));
    let (after, mass) = afterstates_under(game, &mover, states, moves, reach)?;
    let rule = game.spawn_rule();
    let (requests, masses) = requests(&after, &mass, part.max_exp, &rule, &planned, slot_part)?;
    let acc = successors_in_slices(&after, SLICE, counts, |batch| {
        successors_of_batch(game, &mover, part.max_exp, batch, counts)
    });
    let successors = by_part(acc, &planned, slot_part)?;
    Ok(Followed {
        successors,
        requests,
        masses,
    })
}

/// The distinct afterstates (as they lie, not won) of the player's moves on
/// `states`, sorted, each with the discounted probability that the player
/// makes it: the sum over the boards and moves that make it of reach times
/// the move's probability times the discount, in board and move order.
fn afterstates_under(
    game: &Game,
    mover: &Mover,
    states: &[u64],
    moves: &[Moves],
    reach: &[f64],
) -> Result<(Vec<u64>, Vec<f64>), EvaluateError> {
    let mut acc = (Vec::new(), Vec::new());
    for start in (0..states.len()).step_by(SLICE) {
        let end = (start + SLICE).min(states.len());
        let made: Vec<Result<Vec<(u64, f64)>, EvaluateError>> = (start..end)
            .into_par_iter()
            .chunks(BATCH)
            .map(|batch| {
                let mut out = Vec::with_capacity(4 * batch.len());
                for i in batch {
                    let (s, p) = (states[i], &moves[i]);
                    super::check::check_moves(mover, s, p)?;
                    for d in Direction::ALL {
                        let t = mover.apply(s, d);
                        if p[d as usize] > 0.0 && !has_exponent(t, game.target_exp) {
                            out.push((t, reach[i] * p[d as usize] * game.discount));
                        }
                    }
                }
                Ok(out)
            })
            .collect();
        let mut pairs = Vec::new();
        for m in made {
            pairs.extend(m?);
        }
        // Stable: the masses of one afterstate stay in board and move order.
        pairs.par_sort_by_key(|p| p.0);
        let (mut keys, mut sums): (Vec<u64>, Vec<f64>) = (Vec::new(), Vec::new());
        for (k, m) in pairs {
            if keys.last() == Some(&k) {
                *sums.last_mut().expect("one sum a key") += m;
            } else {
                keys.push(k);
                sums.push(m);
            }
        }
        union_with_masses(&mut acc, (keys, sums));
    }
    Ok(acc)
}

/// Merge sorted, distinct `more` into sorted, distinct `acc`, adding the
/// masses of a key in both (`acc`'s first).
fn union_with_masses(acc: &mut (Vec<u64>, Vec<f64>), more: (Vec<u64>, Vec<f64>)) {
    if more.0.is_empty() {
        return;
    }
    if acc.0.is_empty() {
        *acc = more;
        return;
    }
    let (a, b) = (std::mem::take(acc), more);
    let mut out = (
        Vec::with_capacity(a.0.len() + b.0.len()),
        Vec::with_capacity(a.0.len() + b.0.len()),
    );
    let (mut i, mut j) = (0, 0);
    while i < a.0.len() || j < b.0.len() {
        let take_a = j == b.0.len() || (i < a.0.len() && a.0[i] <= b.0[j]);
        let take_b = i == a.0.len() || (j < b.0.len() && b.0[j] <= a.0[i]);
        match (take_a, take_b) {
            (true, true) => {
                out.0.push(a.0[i]);
                out.1.push(a.1[i] + b.1[j]);
                i += 1;
                j += 1;
            }
            (true, false) => {
                out.0.push(a.0[i]);
                out.1.push(a.1[i]);
                i += 1;
            }
            _ => {
                out.0.push(b.0[j]);
                out.1.push(b.1[j]);
                j += 1;
            }
        }
    }
    *acc = out;
}

/// Keys with their masses by target part, split into that part's groups.
type GroupedPairs = BTreeMap<PartId, Vec<(Vec<u64>, Vec<f64>)>>;

/// The requests of distinct afterstates `after` (sorted, with masses
/// `mass`), made from boards whose largest exponent is `max_exp`: each goes
/// to the group of each tile's part its spawns of that tile land in, with
/// its mass, for each tile `rule` spawns.
fn requests(
    after: &[u64],
    mass: &[f64],
    max_exp: u8,
    rule: &SpawnRule,
    planned: &[Option<u32>; 4],
    slot_part: impl Fn(usize) -> PartId,
) -> Result<(GroupedKeys, GroupedMasses), EvaluateError> {
    type Slot = Vec<(Vec<u64>, Vec<f64>)>;
    let mut out: [Slot; 4] = planned.map(|g| vec![Default::default(); g.unwrap_or(1) as usize]);
    for (&a, &m) in after.iter().zip(mass) {
        let grew = has_exponent(a, max_exp + 1) as usize;
        for tile in rule.tiles() {
            let slot = (tile as usize - 1) * 2 + grew;
            let Some(groups) = planned[slot] else {
                return Err(UnplannedPart(slot_part(slot)).into());
            };
            let g = &mut out[slot][spawn_group(a, tile, groups) as usize];
            g.0.push(a);
            g.1.push(m);
        }
    }
    let mut by_part = GroupedPairs::new();
    for (slot, groups) in out.into_iter().enumerate() {
        if groups.iter().all(|g| g.0.is_empty()) {
            continue;
        }
        // Two slots can share a part (a 4 spawned beside a largest tile of
        // 2); their afterstates differ.
        match by_part.entry(slot_part(slot)) {
            Entry::Vacant(e) => {
                e.insert(groups);
            }
            Entry::Occupied(mut e) => {
                for (into, more) in e.get_mut().iter_mut().zip(groups) {
                    union_with_masses(into, more);
                }
            }
        }
    }
    let mut requests = GroupedKeys::new();
    let mut masses = BTreeMap::new();
    for (part, groups) in by_part {
        let (keys, m): (Vec<Vec<u64>>, Vec<Vec<f64>>) = groups.into_iter().unzip();
        requests.insert(part, keys);
        masses.insert(part, m);
    }
    Ok((requests, masses))
}

/// The non-terminal successors, as they lie, of `afterstates` (not won,
/// made from boards whose largest exponent is `max_exp`) in slot
/// `(tile - 1) * 2 + grew` and hash group (of `groups[slot]`), unsorted and
/// with repeats.
fn successors_of_batch(
    game: &Game,
    mover: &Mover,
    max_exp: u8,
    afterstates: &[u64],
    groups: [u32; 4],
) -> [Vec<Vec<u64>>; 4] {
    let shape = game.shape;
    let mut out: [Vec<Vec<u64>>; 4] = groups.map(|g| vec![Vec::new(); g as usize]);
    let mut recent = RecentFilter::new();
    let rule = game.spawn_rule();
    let tiles: Vec<u8> = rule.tiles().collect();
    for &t in afterstates {
        let grew = has_exponent(t, max_exp + 1) as usize;
        let full_after = empty_bits(t, shape).count_ones() == 1;
        for &tile in &tiles {
            let slot = (tile as usize - 1) * 2 + grew;
            // All spawns of one tile share a group ([`spawn_group`]).
            let group = &mut out[slot][spawn_group(t, tile, groups[slot]) as usize];
            for_each_spawn_as_it_lies(t, shape, tile, |s| {
                // A spawn that fills the board may leave no move: lost.
                if recent.fresh(s) && !(full_after && mover.is_lost(s)) {
                    group.push(s);
                }
            });
        }
    }
    out
}
