//! A validated game definition: board size, target tile and discount.

use serde::{Deserialize, Serialize};

/// Errors for a game that cannot be played or solved.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GameError {
    /// Board side outside 2..=4.
    #[error("board size {0} is not supported: use 2, 3 or 4 (for 2x2, 3x3, 4x4)")]
    BoardSize(u32),
    /// Target not a power of two.
    #[error("target {0} is not a power of two")]
    TargetNotPowerOfTwo(u64),
    /// Target outside the range this board can reach.
    #[error("target {target} is out of range for {n}x{n}: use a power of two from 8 to {max}")]
    TargetRange {
        /// Board side.
        n: u32,
        /// Requested target.
        target: u64,
        /// Largest target this board can hold.
        max: u64,
    },
    /// Discount outside (0, 1].
    #[error("discount {0} is outside (0, 1]")]
    Discount(f64),
}

/// A game to solve: `n x n` board played to tile `2^target_exp`, with a discount.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// Board side, 2..=4.
    pub n: u8,
    /// Exponent of the target tile (target = 2^target_exp).
    pub target_exp: u8,
    /// Discount per move, in (0, 1].
    pub discount: f64,
}

impl Game {
    /// Check a board side a person gives (2, 3 or 4), as [`Game::new`]
    /// checks it, for uses that need a board but no target or discount.
    pub fn check_size(n: u32) -> Result<usize, GameError> {
        if !(2..=4).contains(&n) {
            return Err(GameError::BoardSize(n));
        }
        Ok(n as usize)
    }

    /// Validate and build a game from user-facing numbers.
    pub fn new(n: u32, target: u64, discount: f64) -> Result<Game, GameError> {
        Game::check_size(n)?;
        if !target.is_power_of_two() {
            return Err(GameError::TargetNotPowerOfTwo(target));
        }
        // The largest tile an n x n board can make is 2^(n*n + 2): cells holding
        // 2^(n*n+1), ..., 4 and a spawned 4 merge all the way up. A nybble
        // holds exponents up to 15.
        let max_exp = ((n * n + 2) as u8).min(15);
        let exp = target.trailing_zeros() as u8;
        if !(3..=max_exp).contains(&exp) {
            return Err(GameError::TargetRange {
                n,
                target,
                max: 1u64 << max_exp,
            });
        }
        if !(discount > 0.0 && discount <= 1.0) {
            return Err(GameError::Discount(discount));
        }
        Ok(Game {
            n: n as u8,
            target_exp: exp,
            discount,
        })
    }

    /// Board side as usize.
    #[inline]
    pub fn size(&self) -> usize {
        self.n as usize
    }

    /// Target tile value.
    pub fn target(&self) -> u64 {
        1u64 << self.target_exp
    }

    /// Short name used in logs and store paths, e.g. `3x3-to-1024`.
    pub fn name(&self) -> String {
        if self.discount == 1.0 {
            format!("{n}x{n}-to-{}", self.target(), n = self.n)
        } else {
            format!(
                "{n}x{n}-to-{}-discount-{}",
                self.target(),
                self.discount,
                n = self.n
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        assert!(Game::new(3, 1024, 1.0).is_ok());
        assert_eq!(Game::new(5, 64, 1.0), Err(GameError::BoardSize(5)));
        assert_eq!(Game::new(1, 64, 1.0), Err(GameError::BoardSize(1)));
        assert_eq!(Game::check_size(3), Ok(3));
        assert_eq!(Game::check_size(5), Err(GameError::BoardSize(5)));
        assert_eq!(
            Game::new(4, 100, 1.0),
            Err(GameError::TargetNotPowerOfTwo(100))
        );
        assert_eq!(
            Game::new(4, 4, 1.0),
            Err(GameError::TargetRange {
                n: 4,
                target: 4,
                max: 32768
            })
        );
        assert_eq!(
            Game::new(4, 65536, 1.0),
            Err(GameError::TargetRange {
                n: 4,
                target: 65536,
                max: 32768
            })
        );
        assert_eq!(
            Game::new(2, 64, 1.0).unwrap().target_exp,
            6,
            "2x2 can make 32 and 64 (a 4 spawn doubled up)"
        );
        assert!(Game::new(2, 128, 1.0).is_err());
        assert_eq!(Game::new(3, 8, 0.0), Err(GameError::Discount(0.0)));
        assert_eq!(Game::new(3, 8, 1.5), Err(GameError::Discount(1.5)));
        assert!(Game::new(3, 8, f64::NAN).is_err());
        assert_eq!(
            Game::new(3, 1024, 0.99).unwrap().name(),
            "3x3-to-1024-discount-0.99"
        );
    }
}
