//! What the server offers (its players) and its limits, with their defaults
//! and the checks that reject impossible settings.

use std::time::Duration;

use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::Shape;
use solve2048_players::{PlayerError, PlayerSpec};

/// Why a configuration is refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A player spec that does not parse.
    #[error("player {player}")]
    Player {
        /// The spec as given.
        player: String,
        /// Why it does not parse.
        source: PlayerError,
    },
    /// A player that cannot play boards of this game (a weights file
    /// missing, damaged or for another board).
    #[error("player {player} cannot play this game")]
    Unplayable {
        /// The spec as given.
        player: String,
        /// Why.
        source: PlayerError,
    },
    /// Limits no request could meet.
    #[error("{0}")]
    Limits(String),
}

/// The players offered besides `optimal` when none are named: the cheap
/// ones (a request cannot name any other, so that one request cannot ask
/// for minutes of work).
pub const DEFAULT_PLAYERS: &[&str] = &["random", "order:LDRU", "greedy", "schain", "expectimax:2"];

/// The largest seed: 2^53 - 1, the largest whole number JavaScript's numbers
/// hold exactly, so that a seed the page shows is the seed the server used.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// Bounds on what clients may ask.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Largest request body, in bytes.
    pub body_bytes: usize,
    /// Requests per second one client (IP address) may make on average;
    /// 0 for no limit.
    pub rate: f64,
    /// Requests one client may make at once after being idle.
    pub burst: u32,
    /// Requests handled at once; more wait (up to `timeout`).
    pub in_flight: usize,
    /// Longest a request may take, waiting included.
    pub timeout: Duration,
    /// Most moves in one played game or one replayed game.
    pub moves: usize,
    /// Player games computed at once (they run on threads of their own).
    pub games_at_once: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            body_bytes: 16 * 1024,
            rate: 50.0,
            burst: 100,
            in_flight: 128,
            timeout: Duration::from_secs(30),
            moves: 20_000,
            games_at_once: std::thread::available_parallelism().map_or(2, |n| n.get()),
        }
    }
}

/// The server's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Players a request may name besides `optimal`, which is always offered.
    pub players: Vec<PlayerSpec>,
    /// Bounds on requests.
    pub limits: Limits,
}

impl Config {
    /// A configuration offering `players` (spec strings; `optimal` may be
    /// among them or not) with `limits`, validated: every player must build
    /// for boards of `shape` (so that a missing weights file fails now, not
    /// on a request).
    pub fn new(players: &[String], limits: Limits, shape: Shape) -> Result<Config, ConfigError> {
        let mut specs: Vec<PlayerSpec> = Vec::new();
        for p in players {
            let player = p.clone();
            let spec =
                (PlayerSpec::parse(p)).map_err(|source| ConfigError::Player { player, source })?;
            if spec == PlayerSpec::Optimal || specs.contains(&spec) {
                continue;
            }
            let player = p.clone();
            (spec.build(shape, &SpawnRule::standard(), 0))
                .map_err(|source| ConfigError::Unplayable { player, source })?;
            specs.push(spec);
        }
        let config = Config {
            players: specs,
            limits,
        };
        config.validate().map_err(ConfigError::Limits)?;
        Ok(config)
    }

    /// The default players and limits for boards of `shape`.
    pub fn default_for(n: Shape) -> Config {
        let players: Vec<String> = DEFAULT_PLAYERS.iter().map(|p| p.to_string()).collect();
        Config::new(&players, Limits::default(), n).expect("the default players build")
    }

    /// Reject settings that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        let l = &self.limits;
        if l.body_bytes < 256 {
            return Err(format!(
                "the body limit {} bytes is below 256: no request would fit",
                l.body_bytes
            ));
        }
        if !(l.rate.is_finite() && l.rate >= 0.0) {
            return Err(format!(
                "the rate {} is not a number of requests per second >= 0",
                l.rate
            ));
        }
        if l.rate > 0.0 && l.burst == 0 {
            return Err("a burst of 0 would refuse every request: use at least 1".into());
        }
        if l.in_flight == 0 {
            return Err("at least 1 request must be handled at once".into());
        }
        if l.timeout.is_zero() {
            return Err("the request timeout must be more than 0 seconds".into());
        }
        if l.moves == 0 || l.games_at_once == 0 {
            return Err("the move and game limits must be at least 1".into());
        }
        Ok(())
    }

    /// The names of the players offered, `optimal` first, as requests name them.
    pub fn player_names(&self) -> Vec<String> {
        std::iter::once("optimal".to_string())
            .chain(self.players.iter().map(PlayerSpec::to_string))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_are_parsed_deduplicated_and_checked() {
        let c = Config::new(
            &[
                "optimal".into(),
                "greedy".into(),
                "GREEDY".into(),
                "order:ldru".into(),
            ],
            Limits::default(),
            Shape::square(3),
        )
        .unwrap();
        assert_eq!(c.player_names(), ["optimal", "greedy", "order:LDRU"]);
        assert!(matches!(
            Config::new(&["minimax".into()], Limits::default(), Shape::square(3)),
            Err(ConfigError::Player { player, .. }) if player == "minimax"
        ));
        let missing = Config::new(
            &["ntuple:/nonexistent.weights".into()],
            Limits::default(),
            Shape::square(3),
        );
        assert!(matches!(missing, Err(ConfigError::Unplayable { .. })));
        assert_eq!(
            Config::default_for(Shape::square(4)).player_names().len(),
            DEFAULT_PLAYERS.len() + 1
        );
    }

    #[test]
    fn impossible_limits_are_refused() {
        let with = |f: fn(&mut Limits)| {
            let mut l = Limits::default();
            f(&mut l);
            Config::new(&[], l, Shape::square(3))
        };
        assert!(with(|_| {}).is_ok());
        assert!(with(|l| l.rate = 0.0).is_ok(), "0 means no rate limit");
        for bad in [
            with(|l| l.body_bytes = 10),
            with(|l| l.rate = f64::NAN),
            with(|l| l.rate = -1.0),
            with(|l| l.burst = 0),
            with(|l| l.in_flight = 0),
            with(|l| l.timeout = Duration::ZERO),
            with(|l| l.moves = 0),
        ] {
            assert!(bad.is_err());
        }
    }
}
