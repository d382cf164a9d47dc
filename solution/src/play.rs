//! Seeded games played with the optimal policy.

use solve2048_core::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::moves::has_exponent;
use solve2048_core::rng::SeededRng;
use solve2048_core::{Board, Direction};

use crate::solution::{QueryError, Solution};

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
        let mut x = rng.start(n);
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
