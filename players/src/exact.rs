//! A slow, obvious exact evaluator: a player's probability of winning a game
//! (or its expected score) from the random start, by memoised recursion over
//! actual boards (not canonical ones). Moves come from the core's tables (tested exhaustively
//! against the slow rules), spawns and the start from
//! [`solve2048_core::rules::slow`].
//!
//! For tests and small games: it keeps every reachable board in a hash map.

use solve2048_core::rules::moves::Mover;
use solve2048_core::{rules::slow, Game, Objective};

use solve2048_core::rules::board::empty_bits;
use solve2048_core::rules::spawn::SpawnRule;

use crate::player::BoardMap;
use crate::{NotExact, Player};

/// The value of `game` from the random start when `player` plays: the
/// probability that it wins, or with the score objective its expected score;
/// each move weighted by the discount as in [`Game`].
///
/// `V(x)` is 0 for a lost board; otherwise the sum, over the player's move
/// distribution on `x`, of the move's probability times its
/// [`Game::move_value`], the afterstate's value the sum over spawns of their
/// probability times `V(next)`. The start distribution is the two spawns on
/// the empty board, as actual boards ([`slow::spawns`] twice).
///
/// Fails with [`NotExact`] for a player without a move distribution. Panics
/// if the player's distribution names an illegal move.
pub fn slow_value(game: &Game, player: &mut dyn Player) -> Result<f64, NotExact> {
    let n = game.shape;
    let mut eval = Eval {
        game,
        rule: game.spawn_rule(),
        mover: Mover::new(n),
        memo: BoardMap::default(),
    };
    let four = game.four_probability();
    let mut total = 0.0;
    for (one, p1) in slow::spawns(0, n, four) {
        for (two, p2) in slow::spawns(one, n, four) {
            total += p1 * p2 * eval.value(player, two)?;
        }
    }
    Ok(total)
}

/// The game, the moves and the values found so far.
struct Eval<'a> {
    game: &'a Game,
    rule: SpawnRule,
    mover: Mover,
    memo: BoardMap<f64>,
}

impl Eval<'_> {
    /// `V(x)` (see [`slow_value`]).
    fn value(&mut self, player: &mut dyn Player, x: u64) -> Result<f64, NotExact> {
        if let Some(&v) = self.memo.get(&x) {
            return Ok(v);
        }
        let mut v = 0.0;
        if !self.mover.is_lost(x) {
            for (dir, p) in player.distribution(x)? {
                let (after, points) = self.mover.apply_scored(x, dir);
                assert_ne!(
                    after,
                    x,
                    "{} plays illegal {dir:?} on {x:#x}",
                    player.name()
                );
                let game = self.game;
                // What the move earns, from the move tables' points: an
                // independent check of the formula the kernels use.
                if game.objective == Objective::Score {
                    assert_eq!(game.reward(x, after), f64::from(points), "{x:#x} {dir:?}");
                }
                v += p * game.move_value(x, after, || self.afterstate_value(player, after))?;
            }
        }
        self.memo.insert(x, v);
        Ok(v)
    }

    /// The value of the board `after` before its spawn: a 2 or a 4 in each
    /// empty cell, the cell uniform; a tile the rule never spawns is not
    /// followed.
    fn afterstate_value(&mut self, player: &mut dyn Player, after: u64) -> Result<f64, NotExact> {
        let mut empties = empty_bits(after, self.game.shape);
        let k = f64::from(empties.count_ones());
        let mut q = 0.0;
        while empties != 0 {
            let bit = empties & empties.wrapping_neg();
            for (tile, chance) in [(bit, self.rule.two), (bit << 1, self.rule.four)] {
                if chance > 0.0 {
                    q += chance / k * self.value(player, after | tile)?;
                }
            }
            empties &= empties - 1;
        }
        Ok(q)
    }
}
