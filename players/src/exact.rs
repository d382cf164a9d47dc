//! A slow, obvious exact evaluator: a player's probability of winning a game
//! from the random start, by memoised recursion over actual boards (not
//! canonical ones), with the rules taken from [`solve2048_core::slow`].
//!
//! For tests and small games: it keeps every reachable board in a hash map.

use std::collections::HashMap;

use solve2048_core::{slow, Game};

use crate::{NotExact, Player};

/// The probability that `player` wins `game` from the random start, each move
/// weighted by the discount as in [`Game`].
///
/// `V(x)` is 0 for a lost board; otherwise the sum, over the player's move
/// distribution on `x`, of the move's probability times the discount times: 1
/// if the move makes the target tile, else the sum over spawns of their
/// probability times `V(next)`. The start distribution is the two spawns on
/// the empty board, as actual boards ([`slow::spawns`] twice).
///
/// Fails with [`NotExact`] for a player without a move distribution. Panics
/// if the player's distribution names an illegal move.
pub fn slow_win_probability(game: &Game, player: &mut dyn Player) -> Result<f64, NotExact> {
    let n = game.size();
    let mut memo: HashMap<u64, f64> = HashMap::new();
    let mut total = 0.0;
    for (one, p1) in slow::spawns(0, n) {
        for (two, p2) in slow::spawns(one, n) {
            total += p1 * p2 * value(game, player, two, &mut memo)?;
        }
    }
    Ok(total)
}

fn value(
    game: &Game,
    player: &mut dyn Player,
    x: u64,
    memo: &mut HashMap<u64, f64>,
) -> Result<f64, NotExact> {
    if let Some(&v) = memo.get(&x) {
        return Ok(v);
    }
    let n = game.size();
    let mut v = 0.0;
    if !slow::is_lost(x, n) {
        for (dir, p) in player.distribution(x)? {
            let after = slow::apply(x, n, dir);
            assert_ne!(
                after,
                x,
                "{} plays illegal {dir:?} on {x:#x}",
                player.name()
            );
            let q = if slow::is_won(after, n, game.target_exp) {
                1.0
            } else {
                let mut q = 0.0;
                for (next, ps) in slow::spawns(after, n) {
                    q += ps * value(game, player, next, memo)?;
                }
                q
            };
            v += p * game.discount * q;
        }
    }
    memo.insert(x, v);
    Ok(v)
}
