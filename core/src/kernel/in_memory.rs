//! A whole small game (2x2, 3x3, 4x4 to 16) enumerated and solved in memory,
//! layer by layer, with the same kernels a stored job runs: the exact counts
//! of `plan` for small games, the reference the kernel tests compare
//! against the slow implementation, and the kernels' floor on larger games
//! (`core/examples/floor.rs`: their cost with no store).

use std::collections::{BTreeMap, HashMap};

use crate::kernel::value_table::ValueTable;
use crate::kernel::{self, SpawnSums, Union};
use crate::rules::canonical::Orientation;
use crate::rules::moves::Mover;
use crate::rules::spawn::Starts;
use crate::space::ids::PartId;
use crate::space::parts::{part_of, start_parts};
use crate::Game;

/// What a part waits for until its layer comes: runs of states (the start
/// states) and, for each tile, sorted runs of afterstates whose spawns of
/// that tile land in it.
#[derive(Default)]
struct Pending {
    states: Union,
    afterstates: [Union; 2],
}

/// Every part of `game`, in (sum, max tile) order, with its number of
/// states; `visit` is handed each part's sorted states once, to keep or
/// drop (not copied, and with no spare capacity: a whole game's states are
/// gigabytes). A part's states are the spawns of the afterstates filed to
/// it ([`kernel::expand`]), as in a stored job, with one group a part.
/// Holds the afterstates filed to the next two layers.
pub fn enumerate(game: &Game, mut visit: impl FnMut(PartId, Vec<u64>)) -> Vec<(PartId, u64)> {
    let mut pending: BTreeMap<PartId, Pending> = BTreeMap::new();
    for (part, states) in start_parts(game) {
        pending.entry(part).or_default().states.push(states);
    }
    let mut out = Vec::new();
    while let Some((part, p)) = pending.pop_first() {
        let [twos, fours] = p.afterstates.map(Union::finish);
        let mut states = kernel::expand(
            game,
            Orientation::Canonical,
            [&twos, &fours],
            &p.states.finish(),
        );
        drop((twos, fours));
        // A part whose afterstates' spawns are all lost has no states.
        if states.is_empty() {
            continue;
        }
        out.push((part, states.len() as u64));
        let filed = kernel::filed_afterstates(game, part, &states, |_| Some(1))
            .expect("every part has one group");
        // The expand's buffer held every raw spawn: its spare room goes back
        // before a caller keeps it.
        states.shrink_to_fit();
        visit(part, states);
        for (p, mut groups) in filed {
            let tile = if p.sum == part.sum + 2 { 0 } else { 1 };
            let keys = groups.pop().expect("one group");
            pending.entry(p).or_default().afterstates[tile].push(keys);
        }
    }
    out
}

/// A small game solved in memory.
pub struct Solved {
    /// The states of every part, sorted.
    pub parts: BTreeMap<PartId, Vec<u64>>,
    /// The value of every state.
    pub values: HashMap<u64, f64>,
    /// The value of the game from the random start.
    pub start_value: f64,
}

/// Enumerate and solve `game` in memory (every state and value is held: for
/// small games only).
pub fn solve(game: &Game) -> Solved {
    let mut parts = BTreeMap::new();
    enumerate(game, |part, states| {
        parts.insert(part, states);
    });
    let mut values = HashMap::new();
    solve_parts(game, &parts, |_, states, v| {
        values.extend(states.iter().copied().zip(v.iter().copied()));
    });
    let start_value = Starts::new(game.shape, &game.spawn_rule()).expect(|s| values[&s]);
    debug_assert!(values
        .keys()
        .all(|&s| parts[&part_of(s)].binary_search(&s).is_ok()));
    Solved {
        parts,
        values,
        start_value,
    }
}

/// Solve the `parts` of `game` (every part, as [`enumerate`] made them)
/// from the last layer down; `visit` sees each part's states and their
/// values once. Holds the value tables of three layers at a time.
pub fn solve_parts(
    game: &Game,
    parts: &BTreeMap<PartId, Vec<u64>>,
    mut visit: impl FnMut(PartId, &[u64], &[f64]),
) {
    let mover = Mover::new(game.shape);
    let rule = game.spawn_rule();
    let mut tables: BTreeMap<u32, ValueTable> = BTreeMap::new();
    let empty = ValueTable::with_capacity(1);
    let max_sum = parts.keys().map(|p| p.sum).max().unwrap_or(0);
    for sum in (4..=max_sum).rev().step_by(2) {
        let layer = parts.iter().filter(|(p, _)| p.sum == sum);
        let mut layer_table = ValueTable::with_capacity(layer.clone().map(|(_, s)| s.len()).sum());
        for (&part, states) in layer {
            // A whole layer holds every group, so each tile's gather looks
            // its spawns up in the whole next layer.
            let after = kernel::afterstates(game, &mover, states);
            let table = |tile: u8| tables.get(&(sum + (1 << tile))).unwrap_or(&empty);
            // A tile the rule never spawns has no successors to look up.
            let zeros = || vec![0.0; after.len()];
            let canonical = Orientation::Canonical;
            let [twos, fours] = match (rule.spawns(1), rule.spawns(2)) {
                (true, true) => {
                    kernel::gather_pair(game, canonical, sum, &after, table(1), table(2))
                }
                (two, _) => {
                    let tile = if two { 1 } else { 2 };
                    kernel::gather(game, canonical, sum, tile, &after, table(tile)).map(|sums| {
                        if two {
                            [sums, zeros()]
                        } else {
                            [zeros(), sums]
                        }
                    })
                }
            }
            .expect("a whole game's layers are complete");
            let sums = SpawnSums {
                twos,
                fours,
                afterstates: after,
            };
            let (v, _) = kernel::solve(game, states, &sums).expect("every afterstate has sums");
            layer_table.insert_many(states, &v);
            visit(part, states, &v);
        }
        tables.insert(sum, layer_table);
        // The next layer down looks up this one and the one above it only.
        tables.retain(|&s, _| s <= sum + 2);
    }
}
