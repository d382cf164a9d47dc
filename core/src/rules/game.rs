//! A validated game definition: board shape, target tile, discount, the
//! spawn rule and the objective.

use serde::{Deserialize, Serialize};

use crate::rules::board::Board;
use crate::rules::moves::has_exponent;
use crate::rules::shape::{Shape, ShapeError};
use crate::rules::spawn::SpawnRule;

/// Errors for a game that cannot be played or solved.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum GameError {
    /// A board shape outside 2 to 4 rows of 2 to 4 cells.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Target not a power of two.
    #[error("target {0} is not a power of two")]
    TargetNotPowerOfTwo(u64),
    /// Target outside the range this board can reach.
    #[error("target {target} is out of range for {shape}: use a power of two from 8 to {max}")]
    TargetRange {
        /// Board shape.
        shape: Shape,
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
    /// An objective other than `win` and `score`.
    #[error("objective {0:?} is not supported: use win or score")]
    Objective(String),
    /// The win objective without a target.
    #[error("a game without a target cannot be won: give a target, or use the score objective")]
    NoTarget,
    /// A board whose tiles would outgrow a nybble if played to the end.
    #[error(
        "{shape} cannot be played to the end: its tiles would outgrow 32768, the largest the \
         board encoding holds; give a target"
    )]
    NoEnd {
        /// Board shape.
        shape: Shape,
    },
}

/// What a game's values measure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Objective {
    /// The win probability: 1 for reaching the target tile, 0 for a lost
    /// game.
    #[default]
    Win,
    /// The expected score: the sum of the values of the tiles that merges
    /// make (a spawned tile scores nothing). Reaching the target, if the
    /// game has one, ends the game; without one it ends when no move is left.
    Score,
}

impl Objective {
    /// Its name on the command line and in records (`win`, `score`).
    pub fn name(self) -> &'static str {
        match self {
            Objective::Win => "win",
            Objective::Score => "score",
        }
    }
}

impl std::str::FromStr for Objective {
    type Err = GameError;

    fn from_str(s: &str) -> Result<Objective, GameError> {
        match s {
            "win" => Ok(Objective::Win),
            "score" => Ok(Objective::Score),
            _ => Err(GameError::Objective(s.to_string())),
        }
    }
}

/// A game to solve: a board of `shape` played to tile `2^target_exp` (or to
/// the end, see [`Game::to_the_end`]), with a discount, a spawn rule and an
/// objective.
///
/// In JSON a square's shape is `"n"` (its side); a rectangle's is `"rows"`
/// and `"columns"`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "GameRecord", into = "GameRecord")]
pub struct Game {
    /// The board's shape.
    pub shape: Shape,
    /// Exponent of the target tile (target = 2^target_exp). A game played
    /// to the end has a target no board of its size can make
    /// ([`Game::ends_at_target`]).
    pub target_exp: u8,
    /// Discount per move, in (0, 1].
    pub discount: f64,
    /// Chance that a spawned tile is a 4, in millionths (0 to 1,000,000).
    /// Stored as `four_probability` and left out when it is the standard
    /// rule's, so a standard game's records do not name it.
    pub fours_per_million: u32,
    /// What the values measure. Left out of JSON when it is `win`, so a
    /// win game's records do not name it.
    pub objective: Objective,
}

/// A [`Game`] as JSON holds it.
#[derive(Serialize, Deserialize)]
struct GameRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    columns: Option<u8>,
    target_exp: u8,
    discount: f64,
    #[serde(
        rename = "four_probability",
        default = "standard_fours",
        skip_serializing_if = "is_standard_fours",
        with = "millionths"
    )]
    fours_per_million: u32,
    #[serde(default, skip_serializing_if = "is_win")]
    objective: Objective,
}

impl From<Game> for GameRecord {
    fn from(g: Game) -> GameRecord {
        let (rows, cols) = (g.shape.rows() as u8, g.shape.cols() as u8);
        let (n, rows, columns) = if g.shape.is_square() {
            (Some(rows), None, None)
        } else {
            (None, Some(rows), Some(cols))
        };
        GameRecord {
            n,
            rows,
            columns,
            target_exp: g.target_exp,
            discount: g.discount,
            fours_per_million: g.fours_per_million,
            objective: g.objective,
        }
    }
}

impl TryFrom<GameRecord> for Game {
    type Error = String;

    fn try_from(r: GameRecord) -> Result<Game, String> {
        let shape = match (r.n, r.rows, r.columns) {
            (Some(n), None, None) => Shape::new(n.into(), n.into()),
            (None, Some(rows), Some(cols)) => Shape::new(rows.into(), cols.into()),
            _ => return Err("a game has either n, or rows and columns".into()),
        }
        .map_err(|e| e.to_string())?;
        Ok(Game {
            shape,
            target_exp: r.target_exp,
            discount: r.discount,
            fours_per_million: r.fours_per_million,
            objective: r.objective,
        })
    }
}

fn is_win(o: &Objective) -> bool {
    *o == Objective::Win
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
    /// Validate and build a game on the `n x n` square from user-facing
    /// numbers: [`Game::on`] a square.
    pub fn new(n: u32, target: u64, discount: f64) -> Result<Game, GameError> {
        Game::on(Shape::new(n, n)?, target, discount)
    }

    /// Validate and build a game on boards of `shape` from user-facing
    /// numbers.
    pub fn on(shape: Shape, target: u64, discount: f64) -> Result<Game, GameError> {
        if !target.is_power_of_two() {
            return Err(GameError::TargetNotPowerOfTwo(target));
        }
        // A nybble holds exponents up to 15.
        let max_exp = (shape.largest_exp() as u8).min(15);
        let exp = target.trailing_zeros() as u8;
        if !(3..=max_exp).contains(&exp) {
            return Err(GameError::TargetRange {
                shape,
                target,
                max: 1u64 << max_exp,
            });
        }
        if !(discount > 0.0 && discount <= 1.0) {
            return Err(GameError::Discount(discount));
        }
        Ok(Game {
            shape,
            target_exp: exp,
            discount,
            fours_per_million: SpawnRule::STANDARD_FOURS_PER_MILLION,
            objective: Objective::Win,
        })
    }

    /// The score game on boards of `shape` played until no move is left:
    /// its target is a tile one above the largest the board can make.
    /// Boards whose tiles could outgrow a nybble (4x4, whose largest tile
    /// would be 2^18) are refused.
    pub fn to_the_end(shape: Shape, discount: f64) -> Result<Game, GameError> {
        let exp = shape.largest_exp() + 1;
        if exp > 15 {
            return Err(GameError::NoEnd { shape });
        }
        let game = Game {
            target_exp: exp as u8,
            ..Game::on(shape, 8, discount)?
        };
        game.with_objective(Objective::Score)
    }

    /// This game with objective `objective`; the win objective needs a
    /// target.
    pub fn with_objective(self, objective: Objective) -> Result<Game, GameError> {
        if objective == Objective::Win && !self.ends_at_target() {
            return Err(GameError::NoTarget);
        }
        Ok(Game { objective, ..self })
    }

    /// Whether the game ends at its target tile (false: played to the end).
    pub fn ends_at_target(&self) -> bool {
        u32::from(self.target_exp) <= self.shape.largest_exp()
    }

    /// The target tile, None for a game played to the end.
    pub fn target_tile(&self) -> Option<u64> {
        self.ends_at_target().then(|| self.target())
    }

    /// The value of a move that makes the target tile, beyond what it
    /// earns ([`Game::reward`]): 1 when the objective is to win, 0 when it is
    /// the score (the game ends).
    #[inline]
    pub fn target_value(&self) -> f64 {
        match self.objective {
            Objective::Win => 1.0,
            Objective::Score => 0.0,
        }
    }

    /// What the move from `s` to `t` (its board before the spawn) earns at
    /// once: nothing when the objective is to win, the values of the tiles
    /// its merges make when it is the score ([`Board::merge_score`]).
    #[inline]
    pub fn reward(&self, s: u64, t: u64) -> f64 {
        match self.objective {
            Objective::Win => 0.0,
            Objective::Score => Board::merge_score(s, t) as f64,
        }
    }

    /// The value of the move from `s` to `t` (its board before the spawn):
    /// what it earns ([`Game::reward`]) plus the discount times what follows,
    /// [`Game::target_value`] when `t` holds the target tile, else
    /// `afterstate()`, the value of `t`'s afterstate (asked only then). The
    /// one formula of the solve, `query`, evaluate and the exact players.
    #[inline]
    pub fn move_value<E>(
        &self,
        s: u64,
        t: u64,
        afterstate: impl FnOnce() -> Result<f64, E>,
    ) -> Result<f64, E> {
        let next = match has_exponent(t, self.target_exp) {
            true => self.target_value(),
            false => afterstate()?,
        };
        Ok(self.reward(s, t) + self.discount * next)
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

    /// Target tile value.
    pub fn target(&self) -> u64 {
        1u64 << self.target_exp
    }

    /// What this game's values are, in words: `win probability` or
    /// `expected score` (discounted when the discount is below 1).
    pub fn value_name(&self) -> String {
        let what = match self.objective {
            Objective::Win => "win probability",
            Objective::Score => "expected score",
        };
        if self.discount == 1.0 {
            what.to_string()
        } else {
            format!("{what} at discount {}", self.discount)
        }
    }

    /// Short name used in logs and store paths, e.g. `3x3-to-1024`,
    /// `3x4-to-2048` (3 rows of 4), `3x3-to-1024-discount-0.99`,
    /// `3x3-to-1024-four-0.5` or `3x3-to-the-end-score`.
    pub fn name(&self) -> String {
        let mut name = match self.target_tile() {
            Some(t) => format!("{}-to-{t}", self.shape),
            None => format!("{}-to-the-end", self.shape),
        };
        if self.discount != 1.0 {
            name += &format!("-discount-{}", self.discount);
        }
        if !is_standard_fours(&self.fours_per_million) {
            name += &format!("-four-{}", self.four_probability());
        }
        if self.objective != Objective::Win {
            name += &format!("-{}", self.objective.name());
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
        let bad = |s: &str| GameError::Shape(ShapeError(s.into()));
        assert_eq!(Game::new(5, 64, 1.0), Err(bad("5")));
        assert_eq!(Game::new(1, 64, 1.0), Err(bad("1")));
        let rect = Shape::new(2, 3).unwrap();
        assert_eq!(Game::on(rect, 256, 1.0).unwrap().name(), "2x3-to-256");
        assert_eq!(
            Game::on(rect, 512, 1.0),
            Err(GameError::TargetRange {
                shape: rect,
                target: 512,
                max: 256
            })
        );
        assert_eq!(
            Game::on(Shape::new(3, 4).unwrap(), 16384, 1.0)
                .unwrap()
                .target_exp,
            14
        );
        assert_eq!(
            Game::new(4, 100, 1.0),
            Err(GameError::TargetNotPowerOfTwo(100))
        );
        assert_eq!(
            Game::new(4, 4, 1.0),
            Err(GameError::TargetRange {
                shape: Shape::square(4),
                target: 4,
                max: 32768
            })
        );
        assert_eq!(
            Game::new(4, 65536, 1.0),
            Err(GameError::TargetRange {
                shape: Shape::square(4),
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
    fn objective() {
        let g = Game::new(3, 64, 1.0).unwrap();
        assert_eq!(g.objective, Objective::Win);
        assert_eq!((g.target_value(), g.reward(0x11, 0x2)), (1.0, 0.0));
        let score = g.with_objective(Objective::Score).unwrap();
        assert_eq!(score.name(), "3x3-to-64-score");
        assert_eq!((score.target_value(), score.reward(0x11, 0x2)), (0.0, 4.0));
        assert_eq!(score.target_tile(), Some(64));
        let end = Game::to_the_end(Shape::square(3), 1.0).unwrap();
        assert_eq!((end.objective, end.target_tile()), (Objective::Score, None));
        assert_eq!(end.name(), "3x3-to-the-end-score");
        assert_eq!(
            Game::to_the_end(Shape::square(2), 0.9).unwrap().name(),
            "2x2-to-the-end-discount-0.9-score"
        );
        assert!(
            Game::to_the_end(Shape::square(2), 1.0).unwrap().target_exp > 6,
            "past 2x2's largest tile"
        );
        let four = Shape::square(4);
        assert_eq!(
            Game::to_the_end(four, 1.0),
            Err(GameError::NoEnd { shape: four })
        );
        let three_by_four = Game::to_the_end(Shape::new(3, 4).unwrap(), 1.0).unwrap();
        assert_eq!(three_by_four.name(), "3x4-to-the-end-score");
        assert_eq!(three_by_four.target_exp, 15);
        assert_eq!(end.with_objective(Objective::Win), Err(GameError::NoTarget));
        assert_eq!("score".parse(), Ok(Objective::Score));
        assert_eq!("win".parse(), Ok(Objective::Win));
        assert_eq!(
            "speed".parse::<Objective>(),
            Err(GameError::Objective("speed".into()))
        );
        let json = serde_json::to_string(&end).unwrap();
        assert!(json.ends_with(r#","objective":"score"}"#), "{json}");
        assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), end);
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
        let rect = Game::on(Shape::new(2, 4).unwrap(), 64, 1.0).unwrap();
        let json = serde_json::to_string(&rect).unwrap();
        assert_eq!(
            json,
            r#"{"rows":2,"columns":4,"target_exp":6,"discount":1.0}"#
        );
        assert_eq!(serde_json::from_str::<Game>(&json).unwrap(), rect);
        for bad in [
            r#"{"rows":2,"target_exp":6,"discount":1.0}"#,
            r#"{"n":2,"rows":2,"columns":4,"target_exp":6,"discount":1.0}"#,
            r#"{"rows":5,"columns":2,"target_exp":6,"discount":1.0}"#,
        ] {
            assert!(serde_json::from_str::<Game>(bad).is_err(), "{bad}");
        }
    }
}
