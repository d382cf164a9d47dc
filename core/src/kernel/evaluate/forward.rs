//! The forward pass of an evaluation: how likely the player is to reach
//! each board of a chunk ([`Reach`]), and the chunk's successors, requests
//! and pushes under the player's moves ([`enumerate_under`]), on boards as
//! they lie.
//!
//! Every sum here is taken in an order fixed by the inputs alone (boards in
//! key order, moves in action-code order, pushes in the order given), never
//! by the threads, so a task rerun anywhere writes the same bits.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::check::{check_all, same_length};
use super::error::EvaluateError;
use super::moves::Moves;
use crate::kernel::batch::BATCH;
use crate::kernel::enumerate::{
    distinct_afterstates, file_requests, successors, GroupedKeys, SLICE,
};
use crate::kernel::gather::empty_cells;
use crate::kernel::merge::seek;
use crate::rules::canonical::Orientation;
use crate::rules::direction::Direction;
use crate::rules::moves::{has_exponent, Mover};
use crate::rules::spawn::{for_each_spawn_of_in, SpawnRule, Starts};
use crate::space::ids::PartId;
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
                        for_each_spawn_of_in(Orientation::AsTheyLie, a, shape, tile, |s| {
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
/// successor part's group count. The solve's enumerate kernel on the
/// afterstates of the player's moves, keyed as they lie: won afterstates
/// and lost successors are absorbing and not emitted; a move that is not
/// legal is an error.
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
    check_all(&mover, states, moves)?;
    let after = distinct_afterstates(states, SLICE, |first, batch, out| {
        for (j, &s) in batch.iter().enumerate() {
            played(game, &mover, s, &moves[first + j], |t, _| out.push(t))
        }
    });
    let requests = file_requests(game, part, &after, &groups)?;
    let successors = successors(game, Orientation::AsTheyLie, part, &after, &groups, SLICE)?;
    let mass = masses(game, &mover, states, moves, reach, &after);
    // A group's keys are sorted, as `after` is: a cursor finds each one.
    let mass_of = |keys: &Vec<u64>| -> Vec<f64> {
        let mut at = 0;
        keys.iter()
            .map(|&k| {
                at = seek(&after, at, k);
                mass[at]
            })
            .collect()
    };
    let masses = requests
        .iter()
        .map(|(&p, groups)| (p, groups.iter().map(mass_of).collect()))
        .collect();
    Ok(Followed {
        successors,
        requests,
        masses,
    })
}

/// Calls `f(afterstate, probability)` for each move the player plays on
/// `s` (probabilities `p`) that does not win, in action code order.
fn played(game: &Game, mover: &Mover, s: u64, p: &Moves, mut f: impl FnMut(u64, f64)) {
    for d in Direction::ALL {
        let pd = p[d as usize];
        if pd > 0.0 {
            let t = mover.apply(s, d);
            if !has_exponent(t, game.target_exp) {
                f(t, pd);
            }
        }
    }
}

/// The discounted probability that the player makes each of `after` (the
/// distinct afterstates of its moves on `states`): the sum over the boards
/// and moves that make it of reach times the move's probability times the
/// discount, in board and move order, [`SLICE`] boards at a time (each
/// slice's sum added to the total).
fn masses(
    game: &Game,
    mover: &Mover,
    states: &[u64],
    moves: &[Moves],
    reach: &[f64],
    after: &[u64],
) -> Vec<f64> {
    let mut total = vec![0.0; after.len()];
    for start in (0..states.len()).step_by(SLICE) {
        let end = (start + SLICE).min(states.len());
        let mut made: Vec<(u64, f64)> = (start..end)
            .into_par_iter()
            .with_min_len(BATCH)
            .flat_map_iter(|i| {
                let mut out = Vec::with_capacity(4);
                played(game, mover, states[i], &moves[i], |t, p| {
                    out.push((t, reach[i] * p * game.discount))
                });
                out
            })
            .collect();
        // Stable: the masses of one afterstate stay in board and move order.
        // Rayon's stable sort on one thread is slower than the standard's.
        if rayon::current_num_threads() > 1 {
            made.par_sort_by_key(|m| m.0);
        } else {
            made.sort_by_key(|m| m.0);
        }
        let mut at = 0;
        for same in made.chunk_by(|a, b| a.0 == b.0) {
            at = seek(after, at, same[0].0);
            total[at] += same[1..].iter().fold(same[0].1, |sum, m| sum + m.1);
        }
    }
    total
}
