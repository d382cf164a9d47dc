//! A question about a board a person gives (any orientation): its status,
//! its value, the value of each move and the best one, in that orientation;
//! and [`Report`], that answer as `query --json` prints it and the server's
//! `/api/query` returns it (one type, so that the two cannot drift apart).

use solve2048_core::kernel;
use solve2048_core::rules::canonical::{canonical_with_symmetry, direction_image, inverse};
use solve2048_core::rules::moves::has_exponent;
use solve2048_core::{Board, Direction, Shape};

use crate::solution::{QueryError, Solution};

/// Where a board stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The target tile is on the board.
    Won,
    /// No legal move.
    Lost,
    /// Still playing.
    Playing,
}

/// The answer to a query, in the orientation of the board asked about.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Answer {
    /// Won, lost or playing.
    pub status: Status,
    /// The value under optimal play: the win probability, or the expected
    /// score to come with the score objective.
    pub value: f64,
    /// Value of each action (left, right, up, down); None where illegal. In
    /// JSON an object keyed by the moves' names (`{"left": 0.9, ...}`).
    #[serde(serialize_with = "by_name")]
    pub actions: [Option<f64>; 4],
    /// The optimal action (the stored policy, mapped to this orientation).
    pub best: Option<Direction>,
}

/// An answer with the board and game it is about: what `query --json`
/// prints and `/api/query` returns.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// The game solved (`3x3-to-1024`).
    pub game: String,
    /// The board as text, rows separated by `" / "`, `.` for empty.
    pub board: String,
    /// The board's nybble hex form (`0x...`, 16 digits).
    pub hex: String,
    /// The answer, its fields inlined (`status`, `value`, `actions`, `best`).
    #[serde(flatten)]
    pub answer: Answer,
}

/// Write the four action values as an object keyed by move name, in
/// [`Direction::ALL`] order.
fn by_name<S: serde::Serializer>(actions: &[Option<f64>; 4], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(4))?;
    for d in Direction::ALL {
        map.serialize_entry(d.name(), &actions[d as usize])?;
    }
    map.end()
}

impl Solution {
    /// The board a person wrote (rows such as `"2 4 / . 8"`, or the hex form)
    /// and its shape, read for this store's game: the hex form does not fix
    /// the shape, so it is read as the game's board when its tiles fit there.
    pub fn parse_board(&self, text: &str) -> Result<(Board, Shape), QueryError> {
        let (board, shape) = Board::parse(text)?;
        if Board::is_hex_form(text) && board.fits(self.game.shape) {
            return Ok((board, self.game.shape));
        }
        Ok((board, shape))
    }

    /// The [`Report`] on a board a person wrote (see [`Solution::parse_board`]).
    pub async fn query_text(&self, text: &str) -> Result<Report, QueryError> {
        let (board, n) = self.parse_board(text)?;
        self.report(board.0, n).await
    }

    /// The [`Report`] on a board of `shape` (any orientation).
    pub async fn report(&self, board: u64, n: Shape) -> Result<Report, QueryError> {
        let answer = self.query(board, n).await?;
        Ok(Report {
            game: self.game.name(),
            board: Board(board).to_text(n),
            hex: format!("{board:#018x}"),
            answer,
        })
    }

    /// The value of each move of a non-terminal board of this game (left,
    /// right, up, down, in the board's orientation; None where illegal):
    /// every non-terminal successor the rule can make is looked up, then the
    /// moves are valued with the solver's own formula
    /// ([`kernel::action_values`]).
    pub async fn action_values(&self, board: u64) -> Result<[Option<f64>; 4], QueryError> {
        let game = self.game;
        let n = game.shape;
        let unreachable = || QueryError::Unreachable {
            board: Board(board).to_text(n),
            game: game.name(),
        };
        let moves: Vec<u64> = (Direction::ALL.iter())
            .map(|&dir| self.mover.apply(board, dir))
            .filter(|&t| t != board)
            .collect();
        let values = self.spawn_values(&moves, |_| unreachable()).await?;
        kernel::action_values(&game, &self.mover, board, |key| {
            values.get(&key).copied().ok_or(())
        })
        .map_err(|_| unreachable())
    }

    /// Answer for a board given by a person (any orientation, of `shape`
    /// `n`).
    pub async fn query(&self, board: u64, n: Shape) -> Result<Answer, QueryError> {
        let game = self.game;
        if n != game.shape || !Board(board).fits(game.shape) {
            return Err(QueryError::WrongSize {
                found: n,
                game: game.name(),
            });
        }
        let unreachable = || QueryError::Unreachable {
            board: Board(board).to_text(n),
            game: game.name(),
        };
        if has_exponent(board, game.target_exp) {
            return Ok(Answer {
                status: Status::Won,
                value: game.target_value(),
                actions: [None; 4],
                best: None,
            });
        }
        if self.mover.is_lost(board) {
            return Ok(Answer {
                status: Status::Lost,
                value: 0.0,
                actions: [None; 4],
                best: None,
            });
        }
        let (canon, g) = canonical_with_symmetry(board, n);
        let (value, canon_best) = self.lookup(canon).await?.ok_or_else(unreachable)?;
        let actions = self.action_values(board).await?;
        let best = direction_image(canon_best, inverse(g));
        Ok(Answer {
            status: Status::Playing,
            value,
            actions,
            best: Some(best),
        })
    }
}
