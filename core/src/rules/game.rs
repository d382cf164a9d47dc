//! A validated game definition: board size, target tile, discount and the
//! spawn rule.

use serde::{Deserialize, Serialize};

use crate::rules::spawn::SpawnRule;

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
    /// Probability of a 4 outside [0, 1] or finer than a millionth.
    #[error(
        "four probability {0} is not supported: use a number from 0 to 1 with at most 6 decimals"
    )]
    FourProbability(f64),
}

/// A game to solve: `n x n` board played to tile `2^target_exp`, with a
/// discount and a spawn rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// Board side, 2..=4.
    pub n: u8,
    /// Exponent of the target tile (target = 2^target_exp).
    pub target_exp: u8,
    /// Discount per move, in (0, 1].
    pub discount: f64,
    /// Chance that a spawned tile is a 4, in millionths (0 to 1,000,000).
    /// Stored as `four_probability` and left out when it is the standard
    /// rule's, so a standard game's records are as they were before the
    /// field existed.
    #[serde(
        rename = "four_probability",
        default = "standard_fours",
        skip_serializing_if = "is_standard_fours",
        with = "millionths"
    )]
    pub fours_per_million: u32,
}

fn standard_fours() -> u32 {
    SpawnRule::STANDARD_FOURS_PER_MILLION
}

fn is_standard_fours(m: &u32) -> bool {
    *m == SpawnRule::STANDARD_FOURS_PER_MILLION
}

/// `fours_per_million` as the probability it is, in JSON.
mod millionths {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(m: &u32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*m as f64 / 1e6)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
        let p = f64::deserialize(d)?;
        super::Game::check_four_probability(p).map_err(D::Error::custom)
    }
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
            fours_per_million: SpawnRule::STANDARD_FOURS_PER_MILLION,
        })
    }

    /// This game with a spawned tile a 4 with probability `p` (0 to 1, in
    /// steps of a millionth; the standard rule is 0.1).
    pub fn with_four_probability(self, p: f64) -> Result<Game, GameError> {
        Ok(Game {
            fours_per_million: Game::check_four_probability(p)?,
            ..self
        })
    }

    /// Check a probability of a 4 a person gives (0 to 1, in steps of a
    /// millionth), as [`Game::with_four_probability`] checks it; in
    /// millionths.
    pub fn check_four_probability(p: f64) -> Result<u32, GameError> {
        let m = (p * 1e6).round();
        if !((0.0..=1e6).contains(&m) && (p * 1e6 - m).abs() < 1e-6) {
            return Err(GameError::FourProbability(p));
        }
        Ok(m as u32)
    }

    /// The spawn rule: the chances of a 2 and of a 4.
    pub fn spawn_rule(&self) -> SpawnRule {
        SpawnRule::new(self.fours_per_million)
    }

    /// Chance that a spawned tile is a 4.
    pub fn four_probability(&self) -> f64 {
        self.fours_per_million as f64 / 1e6
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

    /// Short name used in logs and store paths, e.g. `3x3-to-1024`,
    /// `3x3-to-1024-discount-0.99` or `3x3-to-1024-four-0.5`.
    pub fn name(&self) -> String {
        let mut name = format!("{n}x{n}-to-{}", self.target(), n = self.n);
        if self.discount != 1.0 {
            name += &format!("-discount-{}", self.discount);
        }
        if !is_standard_fours(&self.fours_per_million) {
            name += &format!("-four-{}", self.four_probability());
        }
        name
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

    #[test]
    fn four_probability() {
        let g = Game::new(3, 64, 1.0).unwrap();
        assert_eq!(g.four_probability(), 0.1);
        assert_eq!(g.with_four_probability(0.1), Ok(g));
        let half = g.with_four_probability(0.5).unwrap();
        assert_eq!(half.fours_per_million, 500_000);
        assert_eq!(half.name(), "3x3-to-64-four-0.5");
        assert_eq!(g.with_four_probability(0.0).unwrap().fours_per_million, 0);
        assert_eq!(
            g.with_four_probability(1.0).unwrap().fours_per_million,
            1_000_000
        );
        assert_eq!(
            g.with_four_probability(0.123456).unwrap().fours_per_million,
            123_456
        );
        for bad in [1.5, -0.1, 0.1234567, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(
                    g.with_four_probability(bad),
                    Err(GameError::FourProbability(_))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_standard_game_serialises_as_before_and_others_carry_the_rule() {
        let g = Game::new(3, 64, 1.0).unwrap();
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(json, r#"{"n":3,"target_exp":6,"discount":1.0}"#);
        assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), g);
        let half = g.with_four_probability(0.25).unwrap();
        let json = serde_json::to_string(&half).unwrap();
        assert_eq!(
            json,
            r#"{"n":3,"target_exp":6,"discount":1.0,"four_probability":0.25}"#
        );
        assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), half);
        let bad = r#"{"n":3,"target_exp":6,"discount":1.0,"four_probability":2.0}"#;
        assert!(serde_json::from_str::<Game>(bad).is_err());
    }
}
