//! TD(0) afterstate learning of n-tuple networks (Szubert & Jaśkowski 2014),
//! resumable from a checkpoint.
//!
//! Each training game is played by the network itself: on each board it takes
//! the legal move with the largest score plus value of its afterstate. After
//! the next spawn and move, the previous afterstate's value moves toward the
//! next move's score plus the next afterstate's value: every weight it reads
//! gets `learning_rate * (r' + V(a') - V(a))`; at the end of the game the
//! target is 0. There is no other exploration than the random tiles, and no
//! target tile: games run until no move is legal.
//!
//! Game `g` (counting from 0 over the whole run) draws its tiles from
//! `SeededRng::new(game_seed(seed, g))`. A checkpoint holds the weights and
//! the number of games played, so a run resumed from a checkpoint plays the
//! same games with the same weights as a run that was never stopped: both end
//! with bit-identical weights. The progress window (recent mean score and
//! tiles) restarts empty on resume.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::rng::SeededRng;
use solve2048_core::{Board, Shape};

use crate::ntuple::{Network, TupleSpec};
use crate::player::check_size;
use crate::PlayerError;

/// Settings of a training run.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    /// Board side.
    pub n: usize,
    /// The network's tuples (their board side must be `n`).
    pub tuples: TupleSpec,
    /// Total training games: a resumed run plays only those not yet played.
    pub games: u64,
    /// The run's seed (game `g` uses [`game_seed`]`(seed, g)`).
    pub seed: u64,
    /// The step of each weight read, per unit of TD error.
    pub learning_rate: f32,
    /// Where to write checkpoints, and to resume from when the file exists.
    pub checkpoint: Option<PathBuf>,
    /// Write a checkpoint every this many games (and at the end).
    pub checkpoint_every: u64,
}

impl TrainConfig {
    /// A run of `games` games on side `n` with the default tuples
    /// ([`TupleSpec::default_for`]), the default learning rate and no
    /// checkpoint.
    pub fn new(n: usize, games: u64, seed: u64) -> Result<TrainConfig, PlayerError> {
        check_size(n)?;
        let tuples = TupleSpec::default_for(n);
        Ok(TrainConfig {
            n,
            learning_rate: TrainConfig::default_learning_rate(&tuples),
            tuples,
            games,
            seed,
            checkpoint: None,
            checkpoint_every: 10_000,
        })
    }

    /// The default learning rate: 0.1 spread over the weights a value reads
    /// (8 per tuple); 0.0025 for the 5 tuples of `4x4-rows-squares`, the
    /// paper's rate.
    pub fn default_learning_rate(tuples: &TupleSpec) -> f32 {
        0.1 / (8 * tuples.tuples().len()) as f32
    }

    /// Refuse settings that cannot work.
    pub fn validate(&self) -> Result<(), PlayerError> {
        check_size(self.n)?;
        if self.tuples.n() != self.n {
            return Err(PlayerError::TrainConfig {
                field: "tuples",
                reason: format!(
                    "the tuple spec is for {m}x{m}, the run is {n}x{n}",
                    m = self.tuples.n(),
                    n = self.n
                ),
            });
        }
        if self.games == 0 {
            return Err(PlayerError::TrainConfig {
                field: "games",
                reason: "train at least 1 game".to_string(),
            });
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(PlayerError::TrainConfig {
                field: "learning rate",
                reason: format!("{} is not a positive number", self.learning_rate),
            });
        }
        if self.checkpoint_every == 0 {
            return Err(PlayerError::TrainConfig {
                field: "checkpoint every",
                reason: "write a checkpoint every 1 game or more".to_string(),
            });
        }
        Ok(())
    }
}

/// The tile seed of training game `g` of a run seeded `seed`.
pub fn game_seed(seed: u64, g: u64) -> u64 {
    solve2048_core::space::ids::mix(seed ^ solve2048_core::space::ids::mix(g))
}

/// How many recent games [`Progress`] summarises.
pub const WINDOW: usize = 1000;

/// Where a training run stands, after each game.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Games the network has been trained on, this one included.
    pub games_done: u64,
    /// Games the run trains to.
    pub games_total: u64,
    /// This game's score.
    pub score: u64,
    /// This game's largest exponent.
    pub max_exp: u8,
    /// This game's moves.
    pub moves: u64,
    /// Games in the window (up to [`WINDOW`], fewer just after the start).
    pub recent_games: usize,
    /// Mean score over the window.
    pub recent_mean_score: f64,
    /// `recent_reached[e]`: games in the window whose largest exponent was
    /// at least `e`.
    pub recent_reached: [u32; 16],
}

/// Train a network (see the module docs). With a checkpoint path whose file
/// exists, training resumes from it; its tuple spec, seed and learning rate
/// must be this run's. `progress` is called after every game.
pub fn train(
    config: &TrainConfig,
    mut progress: impl FnMut(&Progress),
) -> Result<Network, PlayerError> {
    config.validate()?;
    let mut net = match &config.checkpoint {
        Some(path) if path.exists() => resume(config, path)?,
        _ => {
            let mut net = Network::new(config.tuples.clone());
            net.seed = config.seed;
            net.learning_rate = config.learning_rate;
            net
        }
    };
    let mover = Mover::new(Shape::square(config.n as u8));
    let mut window = Window::default();
    while net.games < config.games {
        let seed = game_seed(config.seed, net.games);
        let (score, max_exp, moves) = train_game(&mut net, &mover, seed, config.learning_rate);
        net.games += 1;
        window.push(score, max_exp);
        progress(&Progress {
            games_done: net.games,
            games_total: config.games,
            score,
            max_exp,
            moves,
            recent_games: window.games.len(),
            recent_mean_score: window.score as f64 / window.games.len() as f64,
            recent_reached: window.reached,
        });
        if let Some(path) = &config.checkpoint {
            if net.games % config.checkpoint_every == 0 {
                net.save(path)?;
            }
        }
    }
    if let Some(path) = &config.checkpoint {
        net.save(path)?;
    }
    Ok(net)
}

/// The network of the checkpoint at `path`, refused unless its tuple spec,
/// seed and learning rate are `config`'s.
fn resume(config: &TrainConfig, path: &Path) -> Result<Network, PlayerError> {
    let net = Network::load_for(path, config.n)?;
    let mismatch = |field, found: String, expected: String| {
        Err(PlayerError::CheckpointMismatch {
            path: path.to_path_buf(),
            field,
            found,
            expected,
        })
    };
    if net.spec() != &config.tuples {
        return mismatch(
            "tuple spec",
            net.spec().to_string(),
            config.tuples.to_string(),
        );
    }
    if net.seed != config.seed {
        return mismatch("seed", net.seed.to_string(), config.seed.to_string());
    }
    if net.learning_rate.to_bits() != config.learning_rate.to_bits() {
        return mismatch(
            "learning rate",
            net.learning_rate.to_string(),
            config.learning_rate.to_string(),
        );
    }
    Ok(net)
}

/// The last [`WINDOW`] games of a run: their (score, largest exponent), the
/// sum of their scores, and how many reached each exponent.
struct Window {
    games: VecDeque<(u64, u8)>,
    score: u64,
    reached: [u32; 16],
}

impl Default for Window {
    fn default() -> Window {
        Window {
            games: VecDeque::with_capacity(WINDOW),
            score: 0,
            reached: [0; 16],
        }
    }
}

impl Window {
    /// Take in a game, dropping the oldest once the window is full.
    fn push(&mut self, score: u64, max_exp: u8) {
        if self.games.len() == WINDOW {
            let (s, e) = self.games.pop_front().unwrap();
            self.score -= s;
            self.reached
                .iter_mut()
                .take(e as usize + 1)
                .for_each(|k| *k -= 1);
        }
        self.games.push_back((score, max_exp));
        self.score += score;
        self.reached
            .iter_mut()
            .take(max_exp as usize + 1)
            .for_each(|k| *k += 1);
    }
}

/// One training game from tile seed `seed`: (score, largest exponent, moves).
pub fn train_game(net: &mut Network, mover: &Mover, seed: u64, rate: f32) -> (u64, u8, u64) {
    let n = Shape::square(net.n() as u8);
    let mut rng = SeededRng::new(seed);
    let mut x = rng.start(n);
    let Some((_, mut after, first, _)) = net.best_move(mover, x) else {
        return (0, Board(x).max_exponent(), 0);
    };
    let mut score = u64::from(first);
    let mut moves = 1;
    loop {
        x = rng.spawn(after, n);
        match net.best_move(mover, x) {
            None => {
                let v = net.value(after);
                net.update(after, -rate * v);
                break;
            }
            Some((_, next, reward, next_value)) => {
                let v = net.value(after);
                net.update(after, rate * (reward as f32 + next_value - v));
                after = next;
                score += u64::from(reward);
                moves += 1;
            }
        }
    }
    (score, Board(x).max_exponent(), moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{simulate, summary};
    use crate::ntuple::NTuplePlayer;
    use std::sync::Arc;

    #[test]
    fn a_resumed_run_ends_with_the_same_weights() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = TrainConfig::new(3, 60, 5).unwrap();
        let straight = train(&config, |_| {}).unwrap();
        config.checkpoint = Some(dir.path().join("ck.weights"));
        config.checkpoint_every = 7;
        config.games = 25;
        let mut seen = 0;
        train(&config, |p| seen = p.games_done).unwrap();
        assert_eq!(seen, 25);
        config.games = 60;
        let resumed = train(&config, |p| assert!(p.games_done > 25)).unwrap();
        assert_eq!(resumed.games, 60);
        assert_eq!(resumed.to_bytes(), straight.to_bytes());
        // Another seed cannot resume this checkpoint.
        config.seed = 6;
        config.games = 70;
        let e = train(&config, |_| {}).unwrap_err();
        assert!(
            matches!(e, PlayerError::CheckpointMismatch { field: "seed", .. }),
            "{e}"
        );
    }

    #[test]
    fn settings_are_validated() {
        let mut c = TrainConfig::new(3, 10, 1).unwrap();
        c.learning_rate = 0.0;
        assert!(c.validate().is_err());
        c.learning_rate = f32::NAN;
        assert!(c.validate().is_err());
        let mut c = TrainConfig::new(3, 0, 1).unwrap();
        assert!(c.validate().is_err());
        c.games = 5;
        c.tuples = TupleSpec::default_for(4);
        assert!(c.validate().is_err());
        assert!(TrainConfig::new(5, 10, 1).is_err());
    }

    #[test]
    fn a_short_training_run_beats_the_untrained_network_on_3x3() {
        let config = TrainConfig::new(3, 3000, 2).unwrap();
        let trained = train(&config, |_| {}).unwrap();
        let untrained = Network::new(config.tuples.clone());
        let mean = |net: Network| {
            let mut p = NTuplePlayer::new(Arc::new(net), "ntuple".into());
            let records: Vec<_> = (0..300)
                .map(|s| {
                    simulate(
                        Shape::square(3),
                        None,
                        &solve2048_core::rules::spawn::SpawnRule::standard(),
                        &mut p,
                        s,
                    )
                })
                .collect();
            summary(&records).mean_score
        };
        let (before, after) = (mean(untrained), mean(trained));
        assert!(after > 1.5 * before, "untrained {before}, trained {after}");
    }
}
