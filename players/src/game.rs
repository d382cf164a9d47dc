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
use solve2048_core::moves::{has_exponent, Mover};
use solve2048_core::rng::SeededRng;
use solve2048_core::{Board, Direction};

use crate::Player;

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
pub enum Outcome {
    /// The target tile appeared.
    Won,
    /// No move was legal (with no target, every game ends this way).
    Lost,
    /// The player returned no move, or an illegal one, while a legal move
    /// remained (a broken player; never happens with this crate's players).
    Resigned,
}

/// A whole game, for replays and summaries.
#[derive(Clone, Debug, Serialize)]
pub struct GameRecord {
    /// Board side.
    pub n: usize,
    /// The target exponent, if the game stopped at a target tile.
    pub target_exp: Option<u8>,
    /// The seed of the tiles (and, through [`player_seed`], of the player).
    pub seed: u64,
    /// The player's name.
    pub player: String,
    /// The start board.
    pub start: u64,
    /// Every move, in order. The board after step `i` is step `i + 1`'s
    /// board, or [`GameRecord::last`].
    pub steps: Vec<Step>,
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
        self.steps.len()
    }

    /// Whether the target was reached.
    pub fn won(&self) -> bool {
        self.outcome == Outcome::Won
    }

    /// The largest tile's value.
    pub fn max_tile(&self) -> u32 {
        1 << self.max_exp
    }

    /// The game move by move: each board, the move and the spawned tile.
    pub fn replay(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.steps.iter().enumerate() {
            out.push_str(&Board(s.board).to_grid(self.n));
            let (r, c) = (s.spawn_cell / 4, s.spawn_cell % 4);
            out.push_str(&format!(
                "move {}: {} (+{}), then a {} at row {r} column {c}\n\n",
                i + 1,
                s.dir.name(),
                s.score,
                1u32 << s.spawn_exp
            ));
        }
        out.push_str(&Board(self.last).to_grid(self.n));
        out.push_str(&format!(
            "{:?} after {} moves, score {}, max tile {}\n",
            self.outcome,
            self.moves(),
            self.score,
            self.max_tile()
        ));
        out
    }
}

/// The seed of the player's own stream in the game of seed `seed`.
pub fn player_seed(seed: u64) -> u64 {
    // A fixed, arbitrary stream label ("player") keeps the player's stream
    // apart from the tiles' stream, which starts from `seed` itself.
    solve2048_core::part::mix(seed ^ 0x0070_6C61_7965_7200)
}

/// Play one game of the `n x n` board with `player` from seed `seed`, until
/// the target tile (exponent `target_exp`) appears or no move is legal.
/// `None` plays to the end of the game.
pub fn simulate(
    n: usize,
    target_exp: Option<u8>,
    player: &mut dyn Player,
    seed: u64,
) -> GameRecord {
    simulate_with(n, target_exp, player, seed, |_| {})
}

/// [`simulate`], calling `on_step` with each move as it is played (for a live
/// display).
pub fn simulate_with(
    n: usize,
    target_exp: Option<u8>,
    player: &mut dyn Player,
    seed: u64,
    mut on_step: impl FnMut(&Step),
) -> GameRecord {
    let mover = Mover::new(n);
    let mut rng = SeededRng::new(seed);
    player.reseed(player_seed(seed));
    let start = rng.start(n);
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
        let next = rng.spawn(after, n);
        let new = next ^ after;
        let cell = (new.trailing_zeros() / 4) as u8;
        let step = Step {
            board: x,
            dir,
            score: gained,
            spawn_cell: cell,
            spawn_exp: (new >> (4 * cell)) as u8,
        };
        on_step(&step);
        steps.push(step);
        score += u64::from(gained);
        x = next;
    };
    GameRecord {
        n,
        target_exp,
        seed,
        player: player.name(),
        start,
        steps,
        last: x,
        score,
        max_exp: Board(x).max_exponent(),
        outcome,
        seconds,
    }
}

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

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} games: mean score {:.1}, median {:.1}, {:.1} moves a game, {:.0} moves/s",
            self.games, self.mean_score, self.median_score, self.mean_moves, self.moves_per_second
        )?;
        if let Some(won) = self.won {
            write!(
                f,
                "; won {won} ({:.4})",
                won as f64 / self.games.max(1) as f64
            )?;
        }
        writeln!(f)?;
        for (tile, share) in &self.reached {
            writeln!(f, "  reached {tile:>6}: {:>6.2}%", 100.0 * share)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simple::{OrderPlayer, RandomPlayer};

    #[test]
    fn a_seed_gives_the_same_game_and_steps_chain() {
        for n in 2..=4 {
            let mut p = RandomPlayer::new(n, 1).unwrap();
            let a = simulate(n, None, &mut p, 17);
            // The same player object, after other games.
            simulate(n, None, &mut p, 18);
            let b = simulate(n, None, &mut p, 17);
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
        let mut p = OrderPlayer::new(3, OrderPlayer::parse_order("LDRU").unwrap()).unwrap();
        let a = simulate(3, Some(6), &mut p, 5);
        assert_eq!(a.start, SeededRng::new(5).start(3));
        if a.won() {
            assert!(has_exponent(a.last, 6));
        }
    }

    #[test]
    fn summary_counts_tiles_and_medians() {
        let rec = |score, max_exp, outcome| GameRecord {
            n: 4,
            target_exp: Some(11),
            seed: 0,
            player: "x".into(),
            start: 0,
            steps: Vec::new(),
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
        assert!(s.to_string().contains("won 1 (0.2500)"));
    }
}
