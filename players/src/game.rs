//! Seeded games of one player against the random tiles, and their summary.
//!
//! A game's tiles come from [`SeededRng::new(seed)`](SeededRng): the start is
//! [`SeededRng::start`] and every move is followed by [`SeededRng::spawn`],
//! exactly as `solve2048 play` draws them. The player's own randomness comes
//! from a separate stream, [`player_seed(seed)`](player_seed), which
//! [`simulate`] sets with [`Player::reseed`] before the first move. So a seed
//! gives the same game every time, whatever the player played before.

use std::time::Instant;

use serde::Serialize;
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::rules::rng::SeededRng;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::{Board, Direction, Shape};

use crate::{Player, PlayerError};

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The board before the move.
    pub board: u64,
    /// The move played.
    pub dir: Direction,
    /// The move's score (the value its merges make).
    pub score: u32,
    /// The nybble index (`4r + c`) of the cell the tile after the move was
    /// spawned in.
    pub spawn_cell: u8,
    /// The spawned tile's exponent (1 for a 2, 2 for a 4).
    pub spawn_exp: u8,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The target tile appeared.
    Won,
    /// No move was legal (with no target, every game ends this way).
    Lost,
    /// The player returned no move, or an illegal one, while a legal move
    /// remained (a broken player, or one whose store failed;
    /// [`simulate_with`] makes this an error).
    Resigned,
    /// The player's move would merge two 32768 tiles: a 65536 does not fit
    /// the board's 4-bit cells, so the game stops before that move. Only on
    /// 4x4, and far beyond the players here (none has reached 32768).
    TileLimit,
}

/// A whole game, for displays and summaries.
#[derive(Clone, Debug, Serialize)]
pub struct GameRecord {
    /// The board's shape.
    pub shape: Shape,
    /// The target exponent, if the game stopped at a target tile.
    pub target_exp: Option<u8>,
    /// The seed of the tiles (and, through [`player_seed`], of the player).
    pub seed: u64,
    /// The player's name.
    pub player: String,
    /// The start board.
    pub start: u64,
    /// Every move, in order. The board after step `i` is step `i + 1`'s
    /// board, or [`GameRecord::last`]. A caller that keeps many records only
    /// for their [`summary`] may empty it ([`GameRecord::drop_steps`]).
    pub steps: Vec<Step>,
    /// The number of moves played (the length of `steps` unless dropped).
    pub moves: usize,
    /// The final board.
    pub last: u64,
    /// The game's score: the sum of its moves' scores.
    pub score: u64,
    /// The largest exponent on the final board.
    pub max_exp: u8,
    /// How the game ended.
    pub outcome: Outcome,
    /// Wall-clock seconds the player spent choosing moves.
    pub seconds: f64,
}

impl GameRecord {
    /// Number of moves played.
    pub fn moves(&self) -> usize {
        self.moves
    }

    /// Free the steps (a long 4x4 game holds thousands), keeping everything
    /// a [`summary`] reads.
    pub fn drop_steps(&mut self) {
        self.steps = Vec::new();
    }

    /// Whether the target was reached.
    pub fn won(&self) -> bool {
        self.outcome == Outcome::Won
    }

    /// The largest tile's value.
    pub fn max_tile(&self) -> u32 {
        1 << self.max_exp
    }
}

/// The seed of the player's own stream in the game of seed `seed`.
pub fn player_seed(seed: u64) -> u64 {
    // A fixed, arbitrary stream label ("player") keeps the player's stream
    // apart from the tiles' stream, which starts from `seed` itself.
    solve2048_core::space::ids::mix(seed ^ 0x0070_6C61_7965_7200)
}

/// Play one game of a board of `shape` with `player` from seed `seed`, tiles
/// placed by `rule`, until the target tile (exponent `target_exp`) appears
/// or no move is legal.
/// `None` plays to the end of the game. A player that gives no legal move
/// while one remains ends the game [`Outcome::Resigned`] (use
/// [`simulate_with`] to have that as an error).
pub fn simulate(
    shape: Shape,
    target_exp: Option<u8>,
    rule: &SpawnRule,
    player: &mut dyn Player,
    seed: u64,
) -> GameRecord {
    let mut rng = SeededRng::new(seed).with_rule(rule);
    let start = rng.start(shape);
    play(shape, target_exp, player, seed, (rng, start), |_, _| {})
}

/// [`simulate`], calling `on_step` with each move as it is played and the
/// board after it (its spawn included), for a live display. A player that
/// gives no legal move while one remains is an error,
/// [`PlayerError::Resigned`], with the player's reason
/// ([`Player::take_failure`]).
pub fn simulate_with(
    shape: Shape,
    target_exp: Option<u8>,
    rule: &SpawnRule,
    player: &mut dyn Player,
    seed: u64,
    on_step: impl FnMut(&Step, u64),
) -> Result<GameRecord, PlayerError> {
    let mut rng = SeededRng::new(seed).with_rule(rule);
    let start = rng.start(shape);
    let record = play(shape, target_exp, player, seed, (rng, start), on_step);
    if record.outcome == Outcome::Resigned {
        return Err(PlayerError::Resigned {
            player: record.player,
            board: Board(record.last).to_text(shape),
            reason: player.take_failure().unwrap_or_else(|| {
                "it answered no legal move while one remained (a broken player)".to_string()
            }),
        });
    }
    Ok(record)
}

/// The game loop of [`simulate`] and [`simulate_with`], from `start` with
/// the tiles' stream `rng` after it.
fn play(
    shape: Shape,
    target_exp: Option<u8>,
    player: &mut dyn Player,
    seed: u64,
    (mut rng, start): (SeededRng, u64),
    mut on_step: impl FnMut(&Step, u64),
) -> GameRecord {
    let mover = Mover::new(shape);
    player.reseed(player_seed(seed));
    let mut x = start;
    let mut steps = Vec::new();
    let mut score = 0u64;
    let mut seconds = 0.0;
    let outcome = loop {
        if target_exp.is_some_and(|t| has_exponent(x, t)) {
            break Outcome::Won;
        }
        if mover.is_lost(x) {
            break Outcome::Lost;
        }
        let clock = Instant::now();
        let choice = player.choose(x);
        seconds += clock.elapsed().as_secs_f64();
        let Some(dir) = choice else {
            break Outcome::Resigned;
        };
        let (after, gained) = mover.apply_scored(x, dir);
        if after == x {
            break Outcome::Resigned;
        }
        // Two 32768s merged into a 65536, which overflows its 4-bit cell: the
        // tiles no longer add up to what they did (a move keeps the sum).
        if has_exponent(x, MAX_EXPONENT) && Board(after).tile_sum() != Board(x).tile_sum() {
            break Outcome::TileLimit;
        }
        let next = rng.spawn(after, shape);
        let new = next ^ after;
        let cell = (new.trailing_zeros() / 4) as u8;
        let step = Step {
            board: x,
            dir,
            score: gained,
            spawn_cell: cell,
            spawn_exp: (new >> (4 * cell)) as u8,
        };
        on_step(&step, next);
        steps.push(step);
        score += u64::from(gained);
        x = next;
    };
    GameRecord {
        shape,
        target_exp,
        seed,
        player: player.name(),
        start,
        moves: steps.len(),
        steps,
        last: x,
        score,
        max_exp: Board(x).max_exponent(),
        outcome,
        seconds,
    }
}

/// The largest exponent a cell holds (32768).
const MAX_EXPONENT: u8 = 15;

/// What a set of games came to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Games summarised.
    pub games: usize,
    /// Games won (reaching their target), when the games had one.
    pub won: Option<usize>,
    /// Mean score.
    pub mean_score: f64,
    /// Median score (the mean of the two middle ones for an even count).
    pub median_score: f64,
    /// Mean number of moves per game.
    pub mean_moves: f64,
    /// Moves per second of the player's thinking time.
    pub moves_per_second: f64,
    /// `(tile, share of games whose largest tile reached it)`, for each
    /// power of two from 128 (or the smallest largest tile of any game, if
    /// smaller) to the largest tile of any game.
    pub reached: Vec<(u32, f64)>,
}

/// Summarise games (of one board size and player). Empty input gives zeros.
pub fn summary(records: &[GameRecord]) -> Summary {
    let games = records.len();
    if games == 0 {
        return Summary {
            games,
            won: None,
            mean_score: 0.0,
            median_score: 0.0,
            mean_moves: 0.0,
            moves_per_second: 0.0,
            reached: Vec::new(),
        };
    }
    let mut scores: Vec<u64> = records.iter().map(|r| r.score).collect();
    scores.sort_unstable();
    let median_score = if games % 2 == 1 {
        scores[games / 2] as f64
    } else {
        (scores[games / 2 - 1] + scores[games / 2]) as f64 / 2.0
    };
    let moves: usize = records.iter().map(GameRecord::moves).sum();
    let seconds: f64 = records.iter().map(|r| r.seconds).sum();
    let lo = records.iter().map(|r| r.max_exp).min().unwrap_or(0).min(7);
    let hi = records.iter().map(|r| r.max_exp).max().unwrap_or(0);
    let reached = (lo..=hi)
        .map(|e| {
            let k = records.iter().filter(|r| r.max_exp >= e).count();
            (1u32 << e, k as f64 / games as f64)
        })
        .collect();
    Summary {
        games,
        won: records
            .iter()
            .any(|r| r.target_exp.is_some())
            .then(|| records.iter().filter(|r| r.won()).count()),
        mean_score: scores.iter().sum::<u64>() as f64 / games as f64,
        median_score,
        mean_moves: moves as f64 / games as f64,
        moves_per_second: if seconds > 0.0 {
            moves as f64 / seconds
        } else {
            0.0
        },
        reached,
    }
}

impl Summary {
    /// The share of games won, when the games had a target.
    pub fn win_rate(&self) -> Option<f64> {
        self.won.map(|w| w as f64 / self.games.max(1) as f64)
    }
}

impl std::fmt::Display for Summary {
    /// Indented lines: games won (with a target), score, moves, and the
    /// share of games whose largest tile reached each tile.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let (Some(won), Some(rate)) = (self.won, self.win_rate()) {
            // The standard error of a share estimated from this many games.
            let se = (rate * (1.0 - rate) / self.games.max(1) as f64).sqrt();
            writeln!(
                f,
                "  won {won} of {} ({rate:.4} +- {se:.4}, one standard error)",
                self.games
            )?;
        }
        writeln!(
            f,
            "  score: mean {:.1}, median {:.1}",
            self.mean_score, self.median_score
        )?;
        writeln!(
            f,
            "  moves: {:.1} a game, {} moves/s (the player's thinking time)",
            self.mean_moves,
            per_second(self.moves_per_second)
        )?;
        writeln!(f, "  largest tile reached:")?;
        for (tile, share) in &self.reached {
            writeln!(f, "  {tile:>7}  {:>6.2}%", 100.0 * share)?;
        }
        Ok(())
    }
}

/// A rate for people: `13.0 M`, `22.7 k`, `676`.
pub fn per_second(rate: f64) -> String {
    match rate {
        r if r >= 1e6 => format!("{:.1} M", r / 1e6),
        r if r >= 1e4 => format!("{:.1} k", r / 1e3),
        r => format!("{r:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simple::{OrderPlayer, RandomPlayer};
    use crate::NotExact;

    #[test]
    fn a_seed_gives_the_same_game_and_steps_chain() {
        for n in Shape::all() {
            let mut p = RandomPlayer::new(n, 1).unwrap();
            let a = simulate(n, None, &SpawnRule::standard(), &mut p, 17);
            // The same player object, after other games.
            simulate(n, None, &SpawnRule::standard(), &mut p, 18);
            let b = simulate(n, None, &SpawnRule::standard(), &mut p, 17);
            assert_eq!(a.steps, b.steps);
            assert_eq!((a.last, a.score), (b.last, b.score));
            assert_eq!(a.outcome, Outcome::Lost);
            let mover = Mover::new(n);
            let mut x = a.start;
            let mut score = 0;
            for s in &a.steps {
                assert_eq!(s.board, x);
                let (after, gained) = mover.apply_scored(x, s.dir);
                assert_eq!(gained, s.score);
                score += u64::from(gained);
                assert_eq!(after >> (4 * s.spawn_cell) & 0xF, 0);
                x = after | (u64::from(s.spawn_exp) << (4 * s.spawn_cell));
            }
            assert_eq!(x, a.last);
            assert_eq!(score, a.score);
            assert!(mover.is_lost(a.last));
        }
    }

    #[test]
    fn the_start_is_play_s_start() {
        let mut p =
            OrderPlayer::new(Shape::square(3), OrderPlayer::parse_order("LDRU").unwrap()).unwrap();
        let a = simulate(Shape::square(3), Some(6), &SpawnRule::standard(), &mut p, 5);
        assert_eq!(a.start, SeededRng::new(5).start(Shape::square(3)));
        if a.won() {
            assert!(has_exponent(a.last, 6));
        }
    }

    #[test]
    fn a_merge_past_32768_stops_the_game() {
        let four = Shape::square(4);
        let mut p = OrderPlayer::new(four, OrderPlayer::parse_order("LDRU").unwrap()).unwrap();
        let mut from = |text: &str| {
            let start = Board::parse(text).unwrap().0 .0;
            let r = play(four, None, &mut p, 0, (SeededRng::new(0), start), |_, _| {});
            (start, r)
        };
        let (start, r) = from("32768 32768 2 4 / 2 4 8 16 / . . . . / . . . .");
        assert_eq!(r.outcome, Outcome::TileLimit);
        assert!(r.steps.is_empty());
        assert_eq!((r.last, r.max_tile()), (start, 32768));
        // A 32768 alone plays on.
        let (_, r) = from("32768 . 2 4 / 2 4 8 16 / . . . . / . . . .");
        assert_eq!(r.outcome, Outcome::Lost);
        assert!(!r.steps.is_empty());
    }

    #[test]
    fn a_player_that_gives_up_is_an_error_with_its_reason() {
        struct Quitter;
        impl Player for Quitter {
            fn choose(&mut self, _: u64) -> Option<Direction> {
                None
            }
            fn distribution(&mut self, _: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
                Ok(Vec::new())
            }
            fn name(&self) -> String {
                "quitter".into()
            }
            fn take_failure(&mut self) -> Option<String> {
                Some("the store is down".into())
            }
        }
        assert_eq!(
            simulate(
                Shape::square(3),
                None,
                &SpawnRule::standard(),
                &mut Quitter,
                1
            )
            .outcome,
            Outcome::Resigned
        );
        let e = simulate_with(
            Shape::square(3),
            None,
            &SpawnRule::standard(),
            &mut Quitter,
            1,
            |_, _| {},
        )
        .unwrap_err();
        assert!(
            matches!(&e, PlayerError::Resigned { reason, .. } if reason == "the store is down"),
            "{e}"
        );
        let mut p = RandomPlayer::new(Shape::square(3), 1).unwrap();
        let mut seen = Vec::new();
        let r = simulate_with(
            Shape::square(3),
            Some(6),
            &SpawnRule::standard(),
            &mut p,
            4,
            |s, next| seen.push((s.clone(), next)),
        )
        .unwrap();
        assert_eq!(seen.len(), r.moves());
        assert_eq!(seen.last().unwrap().1, r.last);
        for (i, (s, _)) in seen.iter().enumerate().skip(1) {
            assert_eq!(s.board, seen[i - 1].1);
        }
    }

    #[test]
    fn summary_counts_tiles_and_medians() {
        let rec = |score, max_exp, outcome| GameRecord {
            shape: Shape::square(4),
            target_exp: Some(11),
            seed: 0,
            player: "x".into(),
            start: 0,
            steps: Vec::new(),
            moves: 0,
            last: 0,
            score,
            max_exp,
            outcome,
            seconds: 0.0,
        };
        let s = summary(&[
            rec(100, 7, Outcome::Lost),
            rec(300, 9, Outcome::Lost),
            rec(200, 11, Outcome::Won),
            rec(1000, 8, Outcome::Lost),
        ]);
        assert_eq!(s.mean_score, 400.0);
        assert_eq!(s.median_score, 250.0);
        assert_eq!(s.won, Some(1));
        assert_eq!(
            s.reached,
            vec![
                (128, 1.0),
                (256, 0.75),
                (512, 0.5),
                (1024, 0.25),
                (2048, 0.25)
            ]
        );
        assert_eq!(s.win_rate(), Some(0.25));
        let text = s.to_string();
        assert!(text.contains("won 1 of 4 (0.2500 +- 0.2165"), "{text}");
        assert!(text.contains("   2048   25.00%"), "{text}");
        assert_eq!(per_second(22_700.0), "22.7 k");
        assert_eq!(per_second(13.0e6), "13.0 M");
    }
}
