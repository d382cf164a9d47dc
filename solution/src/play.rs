//! Seeded games played with the optimal policy.

use solve2048_core::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::moves::has_exponent;
use solve2048_core::spawn::{empty_bits, P_FOUR};
use solve2048_core::{Board, Direction};

use crate::solution::{QueryError, Solution};

/// A small, fully specified random number generator (splitmix64), so that a
/// seed gives the same game on every platform and version.
pub struct SeededRng(u64);

impl SeededRng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        solve2048_core::part::mix(self.0.wrapping_sub(0x9E37_79B9_7F4A_7C15))
    }

    /// A uniform integer below `k`.
    pub fn below(&mut self, k: u64) -> u64 {
        ((self.next_u64() as u128 * k as u128) >> 64) as u64
    }

    /// Place a tile by the spawn rule: uniform empty cell, 4 with probability 0.1.
    pub fn spawn(&mut self, x: u64, n: usize) -> u64 {
        let mut empties = empty_bits(x, n);
        let k = empties.count_ones() as u64;
        for _ in 0..self.below(k) {
            empties &= empties - 1;
        }
        let cell = empties.trailing_zeros();
        let four = ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < P_FOUR;
        x | ((if four { 2u64 } else { 1 }) << cell)
    }
}

/// One move of a played game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Step {
    /// Board before the move (hex).
    pub board: String,
    /// Win probability of that board under optimal play.
    pub value: f64,
    /// The move played.
    pub action: Direction,
}

/// A played game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Played {
    /// The seed.
    pub seed: u64,
    /// Every move.
    pub steps: Vec<Step>,
    /// The final board (hex).
    pub last: String,
    /// Whether the target was reached.
    pub won: bool,
}

impl Solution {
    /// Play one game with the optimal policy and tiles drawn from `seed`;
    /// `on_step` sees each board before its move.
    pub async fn play(
        &self,
        seed: u64,
        mut on_step: impl FnMut(&Step),
    ) -> Result<Played, QueryError> {
        let n = self.game.size();
        let mut rng = SeededRng::new(seed);
        let mut x = rng.spawn(0, n);
        x = rng.spawn(x, n);
        let mut steps = Vec::new();
        loop {
            if has_exponent(x, self.game.target_exp) || self.mover.is_lost(x) {
                break;
            }
            let (canon, g) = canonical_with_symmetry(x, n);
            let (value, best) =
                self.lookup(canon)
                    .await?
                    .ok_or_else(|| QueryError::Unreachable {
                        board: Board(x).to_text(n),
                        game: self.game.name(),
                    })?;
            let action = direction_image(best, inverse(g));
            let step = Step {
                board: format!("{:#018x}", x),
                value,
                action,
            };
            on_step(&step);
            steps.push(step);
            x = rng.spawn(self.mover.apply(x, action), n);
        }
        let won = has_exponent(x, self.game.target_exp);
        Ok(Played {
            seed,
            steps,
            last: format!("{x:#018x}"),
            won,
        })
    }
}
