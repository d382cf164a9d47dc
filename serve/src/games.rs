//! Seeded games. A game's tiles come from [`SeededRng::new(seed)`]
//! (`solve2048_core::rules::rng`), drawn as `solve2048 play` and the players' games
//! draw them, so a seed names the same tiles everywhere: a person who plays
//! the moves the optimal player played sees the same game.
//!
//! - [`play`]: a player's game (`optimal` and the others alike, through
//!   [`solve2048_players::simulate_with`]), each board with its win
//!   probability and the value of the move played.
//! - [`replay`]: a person's moves (`"LURD..."`) replayed from the seed: the
//!   board they lead to. The server keeps no game: the page sends its moves.
//!
//! [`SeededRng::new(seed)`]: solve2048_core::rules::rng::SeededRng::new

use std::sync::Arc;

use serde::Serialize;
use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::{Board, Direction, Game, Shape};
use solve2048_players::{GameRecord, NotExact, Outcome, Player, PlayerSpec};
use solve2048_solution::{OptimalPlayer, Report, Solution};

use crate::ApiError;

/// One move of a played game.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayedStep {
    /// The board before the move (hex form).
    pub board: String,
    /// Its win probability under optimal play.
    pub value: f64,
    /// The move played.
    #[serde(rename = "move")]
    pub dir: Direction,
    /// The win probability after playing this move (then playing optimally).
    pub move_value: f64,
    /// The optimal move.
    pub best: Direction,
    /// The move's score (the value its merges make).
    pub score: u32,
}

/// How a played game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum End {
    /// The target tile appeared.
    Won,
    /// No legal move was left.
    Lost,
    /// Cut at the number of moves asked for.
    Stopped,
}

/// A player's seeded game, as `POST /api/play` answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayedGame {
    /// The game solved.
    pub game: String,
    /// The seed of the tiles.
    pub seed: u64,
    /// The player.
    pub player: String,
    /// Every move, in order.
    pub steps: Vec<PlayedStep>,
    /// The last board: after the last move played.
    pub last: Report,
    /// How the game ended.
    pub end: End,
    /// The sum of the moves' scores.
    pub score: u64,
}

/// Play `player`'s game of seed `seed` for at most `moves` moves (the game
/// may end first). Games of players other than `optimal` run on a blocking
/// thread, at most `games` at once.
pub async fn play(
    solution: &Arc<Solution>,
    player: &PlayerSpec,
    seed: u64,
    moves: usize,
    games: &Arc<tokio::sync::Semaphore>,
) -> Result<PlayedGame, ApiError> {
    let game = *solution.game();
    let n = game.shape;
    let built = build_player(solution, player)?;
    let record = run_game(built, &game, seed, player, games).await?;
    let ended = match record.outcome {
        Outcome::Won => End::Won,
        Outcome::Lost => End::Lost,
        Outcome::Resigned | Outcome::TileLimit => {
            return Err(ApiError::Internal(format!(
                "player {player} stopped with legal moves left ({:?})",
                record.outcome
            )))
        }
    };
    let boards: Vec<(u64, Direction)> = record.steps.iter().map(|s| (s.board, s.dir)).collect();
    let last = record.last;
    let (last, end) = if boards.len() > moves {
        (boards[moves].0, End::Stopped)
    } else {
        (last, ended)
    };
    let (steps, score) = played_steps(solution, n, &boards[..boards.len().min(moves)]).await?;
    Ok(PlayedGame {
        game: game.name(),
        seed,
        player: player.to_string(),
        steps,
        last: solution.report(last, n).await?,
        end,
        score,
    })
}

/// The player `player` names, for the solved game.
fn build_player(
    solution: &Arc<Solution>,
    player: &PlayerSpec,
) -> Result<Box<dyn Player>, ApiError> {
    let game = *solution.game();
    let n = game.shape;
    Ok(if *player == PlayerSpec::Optimal {
        Box::new(
            OptimalPlayer::new(
                solution.clone(),
                tokio::runtime::Handle::current(),
                n,
                game.target_exp,
            )
            .map_err(ApiError::from)?,
        )
    } else {
        player
            .build(n, &game.spawn_rule(), 0)
            .map_err(|e| ApiError::Internal(format!("player {player}: {e}")))?
    })
}

/// Play `built`'s game of seed `seed` to its end on a blocking thread, once
/// one of the `games` permits is free.
async fn run_game(
    mut built: Box<dyn Player>,
    game: &Game,
    seed: u64,
    player: &PlayerSpec,
    games: &Arc<tokio::sync::Semaphore>,
) -> Result<GameRecord, ApiError> {
    let (n, target_exp, rule) = (game.shape, game.target_exp, game.spawn_rule());
    let permit = games
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| ApiError::Internal("the server is stopping".into()))?;
    tokio::task::spawn_blocking(move || {
        // Held until the game ends, even if the request gave up on it, so
        // that no more than `games` games ever run at once.
        let _permit = permit;
        solve2048_players::simulate_with(
            n,
            Some(target_exp),
            &rule,
            built.as_mut(),
            seed,
            |_, _| {},
        )
    })
    .await
    .map_err(|e| ApiError::Internal(format!("the game stopped: {e}")))?
    .map_err(|e| ApiError::Internal(format!("player {player}: {e}")))
}

/// Each of `boards` with the move played on it, with their values; and the
/// sum of the moves' scores.
async fn played_steps(
    solution: &Solution,
    n: Shape,
    boards: &[(u64, Direction)],
) -> Result<(Vec<PlayedStep>, u64), ApiError> {
    let mover = Mover::new(n);
    let mut steps = Vec::with_capacity(boards.len());
    let mut score = 0u64;
    for &(board, dir) in boards {
        let answer = solution.query(board, n).await?;
        let gained = mover.apply_scored(board, dir).1;
        score += u64::from(gained);
        steps.push(PlayedStep {
            board: format!("{board:#018x}"),
            value: answer.value,
            dir,
            move_value: answer.actions[dir as usize].unwrap_or(0.0),
            best: answer.best.unwrap_or(dir),
            score: gained,
        });
    }
    Ok((steps, score))
}

/// Read a person's moves: letters `L`, `R`, `U`, `D` (either case), at most
/// `max` of them.
pub fn parse_moves(text: &str, max: usize) -> Result<Vec<Direction>, ApiError> {
    if text.len() > max {
        return Err(ApiError::field(
            "moves",
            format!(
                "{} moves is more than the {max} a game may have here",
                text.len()
            ),
        ));
    }
    text.chars()
        .enumerate()
        .map(|(i, c)| match c.to_ascii_uppercase() {
            'L' => Ok(Direction::Left),
            'R' => Ok(Direction::Right),
            'U' => Ok(Direction::Up),
            'D' => Ok(Direction::Down),
            _ => Err(ApiError::field(
                "moves",
                format!(
                    "move {} is {c:?}: moves are the letters L, R, U and D",
                    i + 1
                ),
            )),
        })
        .collect()
}

/// The letter of a move, as [`parse_moves`] reads it.
pub fn letter(d: Direction) -> char {
    match d {
        Direction::Left => 'L',
        Direction::Right => 'R',
        Direction::Up => 'U',
        Direction::Down => 'D',
    }
}

/// Where the last tile appeared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Spawn {
    /// Its row (0 at the top).
    pub row: u8,
    /// Its column (0 at the left).
    pub col: u8,
    /// The tile: 2 or 4.
    pub tile: u32,
}

/// A person's game after their moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The board now.
    pub board: u64,
    /// Moves played.
    pub moves: usize,
    /// The sum of the moves' scores.
    pub score: u64,
    /// The tile that appeared after the last move (None before any move).
    pub spawn: Option<Spawn>,
}

/// Replay `moves` from the start of the game of seed `seed` on boards of
/// `n` to `target_exp`, tiles placed by `rule`. A move that changes
/// nothing, or one after the game has ended, is refused naming it.
pub fn replay(
    n: Shape,
    target_exp: u8,
    rule: &SpawnRule,
    seed: u64,
    moves: &[Direction],
) -> Result<Replayed, ApiError> {
    let mut script = Scripted {
        moves: moves.to_vec(),
        next: 0,
    };
    let record = solve2048_players::simulate(n, Some(target_exp), rule, &mut script, seed);
    let played = record.steps.len();
    if played < moves.len() {
        let over = |how: &str| {
            ApiError::field(
                "moves",
                format!(
                    "the game is over ({how}) after move {played}: move {} cannot be played",
                    played + 1
                ),
            )
        };
        return Err(match record.outcome {
            Outcome::Won => over("won"),
            Outcome::Lost => over("lost"),
            Outcome::TileLimit => over("at the largest tile a board holds"),
            Outcome::Resigned => ApiError::field(
                "moves",
                format!(
                    "move {} ({}) changes nothing on {}",
                    played + 1,
                    moves[played].name(),
                    Board(record.last).to_text(n)
                ),
            ),
        });
    }
    Ok(Replayed {
        board: record.last,
        moves: played,
        score: record.score,
        spawn: record.steps.last().map(|s| Spawn {
            row: s.spawn_cell / 4,
            col: s.spawn_cell % 4,
            tile: 1 << s.spawn_exp,
        }),
    })
}

/// A player that plays a list of moves, then none.
struct Scripted {
    moves: Vec<Direction>,
    next: usize,
}

impl Player for Scripted {
    fn choose(&mut self, _board: u64) -> Option<Direction> {
        let d = self.moves.get(self.next).copied();
        self.next += 1;
        d
    }

    fn distribution(&mut self, _board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Err(NotExact {
            player: self.name(),
            reason: "a person's moves are a list, not a policy".into(),
        })
    }

    fn name(&self) -> String {
        "person".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::rules::rng::SeededRng;

    #[test]
    fn moves_are_letters() {
        assert_eq!(
            parse_moves("lRuD", 10).unwrap(),
            [
                Direction::Left,
                Direction::Right,
                Direction::Up,
                Direction::Down
            ]
        );
        assert_eq!(parse_moves("", 10).unwrap(), []);
        let e = parse_moves("LXR", 10).unwrap_err().to_string();
        assert!(e.contains("move 2 is 'X'"), "{e}");
        assert!(parse_moves("LLLL", 3)
            .unwrap_err()
            .to_string()
            .contains("more than the 3"));
        for d in Direction::ALL {
            assert_eq!(parse_moves(&letter(d).to_string(), 1).unwrap(), [d]);
        }
    }

    #[test]
    fn replay_draws_the_tiles_play_draws() {
        // No moves: the seed's start board, as SeededRng::start makes it.
        for seed in [0, 1, 7, 1 << 40] {
            for n in Shape::all() {
                let r = replay(n, 11, &SpawnRule::standard(), seed, &[]).unwrap();
                assert_eq!(r.board, SeededRng::new(seed).start(n));
                assert_eq!((r.moves, r.score, r.spawn), (0, 0, None));
            }
        }
        // Moves: each followed by the next spawn of the same generator.
        let four = Shape::square(4);
        let mover = Mover::new(four);
        let mut rng = SeededRng::new(5);
        let mut x = rng.start(four);
        let mut moves = Vec::new();
        for _ in 0..30 {
            let d = Direction::ALL
                .into_iter()
                .find(|&d| mover.apply(x, d) != x)
                .unwrap();
            moves.push(d);
            x = rng.spawn(mover.apply(x, d), four);
            let r = replay(four, 11, &SpawnRule::standard(), 5, &moves).unwrap();
            assert_eq!(r.board, x);
            assert_eq!(r.moves, moves.len());
            let s = r.spawn.unwrap();
            assert!(s.tile == 2 || s.tile == 4);
            assert_eq!(
                Board(x).get(s.row as usize, s.col as usize),
                s.tile.trailing_zeros() as u8
            );
        }
    }

    #[test]
    fn replay_refuses_moves_that_change_nothing_or_come_too_late() {
        let n = Shape::square(2);
        let mover = Mover::new(n);
        let start = SeededRng::new(3).start(n);
        let stuck = Direction::ALL
            .into_iter()
            .find(|&d| mover.apply(start, d) == start)
            .expect("two tiles on a 2x2 board always block some move");
        let e = replay(n, 4, &SpawnRule::standard(), 3, &[stuck])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("move 1 (") && e.contains("changes nothing"),
            "{e}"
        );
        // Play legal moves until the 2x2 game to 16 ends, then one more.
        let mut moves = Vec::new();
        loop {
            let r = replay(n, 4, &SpawnRule::standard(), 3, &moves).unwrap();
            let Some(d) = Direction::ALL
                .into_iter()
                .find(|&d| mover.apply(r.board, d) != r.board)
            else {
                break;
            };
            if Board(r.board).max_exponent() >= 4 {
                break;
            }
            moves.push(d);
        }
        moves.push(Direction::Left);
        let e = replay(n, 4, &SpawnRule::standard(), 3, &moves)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the game is over"), "{e}");
        assert!(e.contains(&format!("move {} cannot", moves.len())), "{e}");
    }
}
