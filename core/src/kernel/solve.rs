//! The solve kernel: values and optimal actions of one chunk's states from
//! the values of the layers two and four tile-sum steps up.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::BATCH;
use crate::canonical::canonical;
use crate::direction::Direction;
use crate::moves::{has_exponent, Mover};
use crate::spawn::{for_each_spawn, P_FOUR, P_TWO};
use crate::table::ValueTable;
use crate::Game;

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
}
