//! The solve kernel: values and optimal actions of one chunk's states from
//! the spawn sums of its distinct afterstates (what the gather tasks of the
//! two layers above answered).

use rayon::prelude::*;

use super::batch::BATCH;
use super::error::SolveError;
use super::gather::{empty_cells, Spawned};
use super::merge::Merged;
use crate::kernel::value_table::ValueTable;
use crate::rules::canonical::canonical;
use crate::rules::direction::Direction;
use crate::rules::moves::{has_exponent, Mover};
use crate::rules::spawn::SpawnRule;
use crate::rules::symmetry::Symmetry;
use crate::Game;

/// The spawn sums of a chunk's distinct afterstates: for each afterstate
/// (sorted), the sum of the values of its 2-spawns and of its 4-spawns
/// ([`super::gather`](mod@super::gather)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpawnSums {
    /// The afterstates, sorted and distinct.
    pub afterstates: Vec<u64>,
    /// The sum over its empty cells of the value of a 2 spawned there.
    pub twos: Vec<f64>,
    /// The sum over its empty cells of the value of a 4 spawned there.
    pub fours: Vec<f64>,
}

/// The answers of the gathers to one request: its afterstates (sorted) and
/// the spawn sum of each.
pub type Answer = (Vec<u64>, Vec<f64>);

impl SpawnSums {
    /// A chunk's spawn sums from the answers to its requests for 2s and for
    /// 4s: each answer is sorted, and together the answers of each tile must
    /// name the same afterstates, each once (None if not). A tile `rule`
    /// never spawns is not asked for: it has no answers (None if it has) and
    /// sums of 0. The answers are merged k ways, not sorted again (unstable
    /// sorts, these among them, took 4% of a profile of the backward pass of
    /// 4x4 to 32).
    pub fn from_answers(
        rule: &SpawnRule,
        twos: Vec<Answer>,
        fours: Vec<Answer>,
    ) -> Option<SpawnSums> {
        let tile = |spawns: bool, answers: Vec<Answer>| match spawns {
            true => merge_answers(answers).map(Some),
            false => answers.is_empty().then_some(None),
        };
        let (twos, fours) = (tile(rule.spawns(1), twos)?, tile(rule.spawns(2), fours)?);
        let zeros = |afterstates: &[u64]| vec![0.0; afterstates.len()];
        match (twos, fours) {
            (Some((afterstates, twos)), Some((same, fours))) => {
                (afterstates == same).then_some(SpawnSums {
                    afterstates,
                    twos,
                    fours,
                })
            }
            (Some((afterstates, twos)), None) => Some(SpawnSums {
                fours: zeros(&afterstates),
                afterstates,
                twos,
            }),
            (None, Some((afterstates, fours))) => Some(SpawnSums {
                twos: zeros(&afterstates),
                afterstates,
                fours,
            }),
            (None, None) => None,
        }
    }
}

/// Sorted answers merged into one, its keys strictly increasing; None when a
/// key repeats or an answer is not sorted. Merged through the tree of losers
/// of [`Merged`] (with a binary heap, this merge took 3% of a profile of the
/// stored job of 4x4 to 32).
fn merge_answers(answers: Vec<Answer>) -> Option<Answer> {
    let total = answers.iter().map(|a| a.0.len()).sum();
    let (mut keys, mut sums) = (Vec::with_capacity(total), Vec::with_capacity(total));
    let mut next = vec![0usize; answers.len()];
    let runs = answers
        .iter()
        .map(|a| a.0.iter().map(|&k| Ok::<u64, std::convert::Infallible>(k)))
        .collect();
    let mut merged = Merged::new(runs);
    while let Some((key, i)) = merged.next_head().unwrap_or_else(|(_, e)| match e {}) {
        if keys.last().is_some_and(|&last| last >= key) {
            return None;
        }
        keys.push(key);
        sums.push(*answers[i].1.get(next[i])?);
        next[i] += 1;
    }
    Some((keys, sums))
}

/// The value of an afterstate with `cells` empty cells whose 2-spawns'
/// values sum to `twos` and 4-spawns' to `fours`: a 2 or a 4, with the chances
/// of `rule`, lands on a uniformly random empty cell. The one formula of the
/// solve and of `query`. Averaging over the cells first keeps a certain win
/// exactly 1 (a rule's two chances sum to 1 in floating point, see
/// [`SpawnRule`]; 0.9 k + 0.1 k over k need not be).
#[inline]
pub fn afterstate_value(rule: &SpawnRule, twos: f64, fours: f64, cells: u32) -> f64 {
    let cells = cells as f64;
    rule.two * (twos / cells) + rule.four * (fours / cells)
}

/// Value and optimal action of each state of `states`, given the spawn sums
/// of their distinct canonical afterstates. Ties go to the first action in
/// [`Direction::ALL`] order. A move's value is [`Game::move_value`], its
/// afterstate's value [`afterstate_value`].
///
/// Each move looks its afterstate's value up in a table of the chunk's
/// afterstates, prefetched a few states ahead. (Sorting the chunk's
/// (afterstate, move) pairs and walking them beside `sums` instead takes
/// 1.1 to 2.2 times as long on the largest chunk of 4x4 to 16 with tables
/// of 0.3 to 2.1 M afterstates, twice as long on a chunk of 4x4 to 32, and
/// holds 96 bytes a state against the table's 24 an afterstate.)
pub fn solve(
    game: &Game,
    states: &[u64],
    sums: &SpawnSums,
) -> Result<(Vec<f64>, Vec<u8>), SolveError> {
    let shape = game.shape;
    let mover = Mover::new(shape);
    let rule = game.spawn_rule();
    let after_values: Vec<f64> = (sums.afterstates.par_iter().enumerate())
        .map(|(i, &a)| afterstate_value(&rule, sums.twos[i], sums.fours[i], empty_cells(a, shape)))
        .collect();
    let mut table = ValueTable::with_capacity(sums.afterstates.len());
    table.insert_many(&sums.afterstates, &after_values);
    drop(after_values);
    let mut values = vec![0.0; states.len()];
    let mut actions = vec![0u8; states.len()];
    // Each batch writes its states' values and actions in place; the
    // first error in state order is returned.
    let errors: Vec<Option<SolveError>> = states
        .par_chunks(BATCH)
        .zip(values.par_chunks_mut(BATCH))
        .zip(actions.par_chunks_mut(BATCH))
        .map(|((batch, values), actions)| {
            solve_batch(game, &mover, &table, batch, values, actions).err()
        })
        .collect();
    match errors.into_iter().flatten().next() {
        Some(e) => Err(e),
        None => Ok((values, actions)),
    }
}

/// [`solve`] of one batch of states, into `values` and `actions`: each
/// state's moves and their canonical afterstates (0 for a move that is
/// illegal or wins: no lookup) are made first, so that the lookups of state
/// i + [`PREFETCH_AHEAD`] are in flight while state i's complete.
fn solve_batch(
    game: &Game,
    mover: &Mover,
    table: &ValueTable,
    batch: &[u64],
    values: &mut [f64],
    actions: &mut [u8],
) -> Result<(), SolveError> {
    let moves: Vec<([u64; 4], [u64; 4])> = crate::with_symmetry!(game.shape, |sym| {
        batch
            .iter()
            .map(|&s| {
                let t = mover.apply_all(s);
                let lookup = t.map(|t| t != s && !has_exponent(t, game.target_exp));
                (t, sym.canonical4(t, lookup))
            })
            .collect()
    });
    let prefetch = |i: usize| {
        if let Some((_, after)) = moves.get(i) {
            for &a in after.iter().filter(|&&a| a != 0) {
                table.prefetch(a);
            }
        }
    };
    (0..PREFETCH_AHEAD).for_each(prefetch);
    for (i, &s) in batch.iter().enumerate() {
        prefetch(i + PREFETCH_AHEAD);
        let (t, after) = moves[i];
        let mut q = [None; 4];
        for d in 0..4 {
            if t[d] != s {
                let afterstate = || {
                    table.get(after[d]).ok_or(SolveError::NoSums {
                        afterstate: after[d],
                        state: s,
                    })
                };
                q[d] = Some(game.move_value(s, t[d], afterstate)?);
            }
        }
        let (v, a) = best_action(&q).ok_or(SolveError::Terminal(s))?;
        (values[i], actions[i]) = (v, a as u8);
    }
    Ok(())
}

/// How many states ahead [`solve`] prefetches the table slots of
/// the afterstates it is about to look up.
const PREFETCH_AHEAD: usize = 8;

/// Values of each action from `s` (any orientation; None for an illegal
/// action): [`action_value`] of each legal one. The same formula as [`solve`],
/// bit for bit.
pub fn action_values<E>(
    game: &Game,
    mover: &Mover,
    s: u64,
    mut value: impl FnMut(u64) -> Result<f64, E>,
) -> Result<[Option<f64>; 4], E> {
    let mut out = [None; 4];
    for dir in Direction::ALL {
        let t = mover.apply(s, dir);
        if t != s {
            out[dir as usize] = Some(action_value(game, mover, s, t, &mut value)?);
        }
    }
    Ok(out)
}

/// The value of the move from `s` to `t` (its board before the spawn, not
/// `s`): [`Game::move_value`], with its canonical afterstate's
/// [`afterstate_value`] from each spawn's value from `value` (a board that
/// can still move; the spawns of a tile the rule never spawns are not asked
/// for, as the solve asks for no answers of them). The same formula as
/// [`solve`], bit for bit.
pub fn action_value<E>(
    game: &Game,
    mover: &Mover,
    s: u64,
    t: u64,
    mut value: impl FnMut(u64) -> Result<f64, E>,
) -> Result<f64, E> {
    let shape = game.shape;
    let rule = game.spawn_rule();
    let afterstate = || {
        let a = canonical(t, shape);
        let mut sum = |tile: u8| match rule.spawns(tile) {
            true => crate::with_symmetry!(shape, |sym| Spawned::new(sym, a, tile))
                .sum(mover, &mut value),
            false => Ok(0.0),
        };
        let (twos, fours) = (sum(1)?, sum(2)?);
        Ok(afterstate_value(&rule, twos, fours, empty_cells(a, shape)))
    };
    game.move_value(s, t, afterstate)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::slow_layers::SlowLayers;
    use crate::kernel::{afterstates, gather};
    use crate::rules::canonical::Orientation;
    use crate::rules::game::Objective;

    /// Answers merge into the sorted union of their afterstates; answers of
    /// the two tiles that name different afterstates, a repeat, or an
    /// unsorted answer give None.
    #[test]
    fn answers_merge_into_spawn_sums() {
        let answer = |keys: &[u64]| -> Answer {
            (
                keys.to_vec(),
                keys.iter().map(|&k| k as f64 / 10.0).collect(),
            )
        };
        let twos = vec![
            answer(&[3, 9, 12]),
            answer(&[1, 4]),
            answer(&[]),
            answer(&[7]),
        ];
        let fours = vec![answer(&[1, 3, 4, 7, 9, 12])];
        let std = SpawnRule::standard();
        let sums = SpawnSums::from_answers(&std, twos.clone(), fours.clone()).unwrap();
        assert_eq!(sums.afterstates, vec![1, 3, 4, 7, 9, 12]);
        assert_eq!(sums.twos, vec![0.1, 0.3, 0.4, 0.7, 0.9, 1.2]);
        assert_eq!(sums.fours, sums.twos);
        let mut repeat = twos.clone();
        repeat.push(answer(&[4]));
        assert_eq!(SpawnSums::from_answers(&std, repeat, fours.clone()), None);
        assert_eq!(
            SpawnSums::from_answers(&std, twos.clone(), vec![answer(&[1, 3])]),
            None
        );
        assert_eq!(
            SpawnSums::from_answers(&std, vec![answer(&[9, 3])], vec![answer(&[3, 9])]),
            None
        );
        // Many answers (a deeper tree of losers), of uneven lengths.
        let many: Vec<Answer> = (0..37u64)
            .map(|r| answer(&(1..=1000).filter(|k| k * 7 % 37 == r).collect::<Vec<_>>()))
            .collect();
        let whole = vec![answer(&(1..=1000).collect::<Vec<_>>())];
        let sums = SpawnSums::from_answers(&std, many, whole).unwrap();
        assert_eq!(sums.afterstates, (1..=1000).collect::<Vec<_>>());
        assert_eq!(sums.twos, sums.fours);
        let empty = SpawnSums::from_answers(&std, Vec::new(), Vec::new()).unwrap();
        assert!(empty.afterstates.is_empty());
        // A tile the rule never spawns has no answers and sums of 0; answers
        // for it are refused.
        let only_twos = SpawnRule::new(0);
        let sums = SpawnSums::from_answers(&only_twos, twos.clone(), Vec::new()).unwrap();
        assert_eq!(sums.afterstates, vec![1, 3, 4, 7, 9, 12]);
        assert_eq!(sums.fours, vec![0.0; 6]);
        assert_eq!(
            SpawnSums::from_answers(&only_twos, twos.clone(), fours.clone()),
            None
        );
        let only_fours = SpawnRule::new(1_000_000);
        let sums = SpawnSums::from_answers(&only_fours, Vec::new(), fours.clone()).unwrap();
        assert_eq!(sums.twos, vec![0.0; 6]);
        assert_eq!(sums.fours, vec![0.1, 0.3, 0.4, 0.7, 0.9, 1.2]);
        assert_eq!(SpawnSums::from_answers(&only_fours, twos, fours), None);
    }

    /// Layers of 3x3 to 32 (discount 0.95) solved from spawn sums gathered
    /// from the slow solver's values equal the slow solver's values, and
    /// `action_values` gives the same bits as the kernel.
    #[test]
    fn values_from_spawn_sums_match_the_slow_solver() {
        // Both objectives: the score game's moves also earn their merges.
        let win = Game::new(3, 32, 0.95).unwrap();
        for game in [win, win.with_objective(Objective::Score).unwrap()] {
            values_of_one_game_match_the_slow_solver(game);
        }
    }

    fn values_of_one_game_match_the_slow_solver(game: Game) {
        let slow_game = SlowLayers::new(&game);
        let slow = &slow_game.values;
        let mover = Mover::new(crate::Shape::square(3));
        let (layer, table) = (|s| slow_game.layer(s), |s| slow_game.table(s));
        let mut compared = 0;
        for sum in (10..60).step_by(2) {
            let states = layer(sum);
            if states.is_empty() {
                continue;
            }
            let (plus2, plus4) = (table(sum + 2), table(sum + 4));
            let after = afterstates(&game, &mover, &states);
            let sums = SpawnSums {
                twos: gather(&game, Orientation::Canonical, sum, 1, &after, &plus2).unwrap(),
                fours: gather(&game, Orientation::Canonical, sum, 2, &after, &plus4).unwrap(),
                afterstates: after,
            };
            let (values, actions) = solve(&game, &states, &sums).unwrap();
            for (i, &s) in states.iter().enumerate() {
                let close = 1e-12 * slow[&s].abs().max(1.0);
                assert!((values[i] - slow[&s]).abs() < close, "{s:#x}");
                let q = action_values(&game, &mover, s, |k| {
                    plus2.get(k).or(plus4.get(k)).ok_or(())
                })
                .unwrap();
                let (v, a) = best_action(&q).unwrap();
                assert_eq!(v.to_bits(), values[i].to_bits(), "{s:#x}");
                assert_eq!(a as u8, actions[i]);
            }
            compared += states.len();
        }
        assert!(
            compared > 2_000,
            "{}: {compared} states compared",
            game.name()
        );
    }

    #[test]
    fn a_certain_win_stays_exactly_one() {
        for m in [100_000, 0, 1_000_000, 300_000, 123_457] {
            let rule = SpawnRule::new(m);
            for cells in 1..=16u32 {
                let k = cells as f64;
                assert_eq!(
                    afterstate_value(&rule, k, k, cells),
                    1.0,
                    "{cells} cells, {m}"
                );
            }
        }
    }

    #[test]
    fn an_afterstate_without_sums_names_a_state_that_makes_it() {
        let game = Game::new(3, 32, 1.0).unwrap();
        let parts = crate::rules::slow::enumerate(&game);
        let states: Vec<u64> = parts
            .iter()
            .filter(|((s, _), _)| *s == 30)
            .flat_map(|(_, v)| v.iter().copied())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let err = solve(&game, &states, &SpawnSums::default()).unwrap_err();
        let SolveError::NoSums { state, .. } = err else {
            panic!("{err:?}");
        };
        assert!(states.binary_search(&state).is_ok());
    }
}
