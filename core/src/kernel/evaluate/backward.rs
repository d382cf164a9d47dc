//! The backward pass of an evaluation (its gathers are the solve's, keyed
//! as the boards lie): each board's value as the expectation over the
//! player's moves, beside the optimal value of those moves and what they
//! give up ([`solve_under`]).

use rayon::prelude::*;

use super::check::same_length;
use super::error::EvaluateError;
use super::moves::Moves;
use crate::kernel::batch::BATCH;
use crate::kernel::error::SolveError;
use crate::kernel::gather::empty_cells;
use crate::kernel::solve::{afterstate_value, SpawnSums};
use crate::rules::direction::Direction;
use crate::rules::moves::Mover;
use crate::task::evaluation::{keep_worst, ChunkEvaluation, WorstState, WORST_STATES};
use crate::Game;

/// The optimal side of a chunk of an evaluation, from the solved store.
pub struct Optimal<'a> {
    /// Each board's optimal value.
    pub values: &'a [f64],
    /// Each board's optimal move, in its orientation.
    pub best: &'a [Direction],
    /// The spawn sums of the optimal values of the chunk's afterstates.
    pub sums: &'a SpawnSums,
}

/// What solving a chunk under a player gives.
#[derive(Debug, PartialEq)]
pub struct Valued {
    /// Each board's value under the player.
    pub values: Vec<f64>,
    /// Each board's most likely move of the player (the first in action
    /// code order on ties): what the chunk's policy object holds.
    pub actions: Vec<u8>,
    /// What the boards cost the player against optimal play.
    pub evaluation: ChunkEvaluation,
}

/// Values of `states` (sorted, as they lie) when the player plays
/// `moves[i]` on `states[i]`, from the spawn sums `sums` of the player's
/// values over the chunk's afterstates (both tiles); beside them, from
/// `optimal`, what each board's moves give up against its optimal value,
/// weighted by how likely the player reaches it (`reach`).
///
/// A move's value is [`Game::move_value`], its afterstate's value
/// [`afterstate_value`]; a board's is the sum over the player's moves of
/// probability times value, in action code order.
pub fn solve_under(
    game: &Game,
    states: &[u64],
    moves: &[Moves],
    reach: &[f64],
    sums: &SpawnSums,
    optimal: Optimal,
) -> Result<Valued, EvaluateError> {
    same_length("moves", states.len(), moves.len())?;
    same_length("reach", states.len(), reach.len())?;
    same_length("optimal values", states.len(), optimal.values.len())?;
    same_length("optimal moves", states.len(), optimal.best.len())?;
    let shape = game.shape;
    let mover = Mover::new(shape);
    let rule = game.spawn_rule();
    // The value of the move from `s` to `t` with afterstates' values from `sums`.
    let move_value = |sums: &SpawnSums, s: u64, t: u64| {
        game.move_value(s, t, || {
            let i = (sums.afterstates.binary_search(&t)).map_err(|_| SolveError::NoSums {
                afterstate: t,
                state: s,
            })?;
            Ok::<_, SolveError>(afterstate_value(
                &rule,
                sums.twos[i],
                sums.fours[i],
                empty_cells(t, shape),
            ))
        })
    };
    let each: Vec<Result<(f64, u8, f64), EvaluateError>> = (0..states.len())
        .into_par_iter()
        .with_min_len(BATCH)
        .map(|i| {
            let (s, p) = (states[i], &moves[i]);
            super::check::check_moves(&mover, s, p)?;
            let (mut value, mut kept) = (0.0, 0.0);
            let mut action = Direction::Left;
            for d in Direction::ALL {
                let pd = p[d as usize];
                if pd <= 0.0 {
                    continue;
                }
                if pd > p[action as usize] {
                    action = d;
                }
                let t = mover.apply(s, d);
                value += pd * move_value(sums, s, t)?;
                kept += pd * move_value(optimal.sums, s, t)?;
            }
            let loss = optimal.values[i] - kept;
            if loss < -1e-9 {
                return Err(EvaluateError::AboveOptimal {
                    state: s,
                    player: kept,
                    optimal: optimal.values[i],
                });
            }
            Ok((value, action as u8, loss))
        })
        .collect();
    let mut values = Vec::with_capacity(states.len());
    let mut actions = Vec::with_capacity(states.len());
    let mut losses = Vec::with_capacity(states.len());
    for r in each {
        let (v, a, l) = r?;
        values.push(v);
        actions.push(a);
        losses.push(l);
    }
    // In board order, whatever the threads.
    let cost = losses.iter().zip(reach).map(|(l, r)| r * l).sum();
    let worst = worst_of(states, moves, reach, &values, &losses, &optimal);
    Ok(Valued {
        values,
        actions,
        evaluation: ChunkEvaluation { cost, worst },
    })
}

/// The boards of largest cost (reach times loss), largest first.
fn worst_of(
    states: &[u64],
    moves: &[Moves],
    reach: &[f64],
    values: &[f64],
    losses: &[f64],
    optimal: &Optimal,
) -> Vec<WorstState> {
    let cost = |i: usize| reach[i] * losses[i];
    let mut order: Vec<usize> = (0..states.len()).filter(|&i| cost(i) > 0.0).collect();
    let by_cost =
        |&a: &usize, &b: &usize| cost(b).total_cmp(&cost(a)).then(states[a].cmp(&states[b]));
    if order.len() > WORST_STATES {
        order.select_nth_unstable_by(WORST_STATES - 1, by_cost);
        order.truncate(WORST_STATES);
    }
    let mut worst = Vec::new();
    keep_worst(
        &mut worst,
        order.into_iter().map(|i| WorstState {
            board: states[i],
            reach: reach[i],
            optimal: optimal.values[i],
            value: values[i],
            loss: losses[i],
            moves: moves[i],
            best: optimal.best[i],
        }),
    );
    worst
}
