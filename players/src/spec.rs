//! Player spec strings: a name, then parameters after a colon.
//!
//! | spec | player |
//! |---|---|
//! | `random` | a uniformly random legal move ([`crate::simple::RandomPlayer`]) |
//! | `order:LDRU` | the first legal move in that order of L, R, U, D ([`crate::simple::OrderPlayer`]) |
//! | `greedy` | the legal move whose merges make the most value ([`crate::simple::GreedyPlayer`]) |
//! | `schain` | zero-depth snake chain ([`crate::schain`]) |
//! | `mc:N` | `N` random playouts per move, best mean score ([`crate::mc`]) |
//! | `expectimax:D` | expectimax searching `D` moves ([`crate::expectimax`]) |
//! | `ntuple:FILE` | an n-tuple network's weights file ([`crate::ntuple`]) |
//! | `optimal` | the solved policy, built from a store by the caller (the `solution` crate's `OptimalPlayer`) |
//!
//! Names are case-insensitive; `ntuple:FILE` takes everything after the first
//! colon as the path.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::{Direction, Shape};

use crate::expectimax::{ExpectimaxPlayer, MAX_DEPTH};
use crate::mc::MonteCarloPlayer;
use crate::ntuple::{NTuplePlayer, Network};
use crate::player::square_side;
use crate::schain::SChainPlayer;
use crate::simple::{GreedyPlayer, OrderPlayer, RandomPlayer};
use crate::{Player, PlayerError};

/// The known specs and what they are, for help texts and error messages.
pub const KNOWN: &[(&str, &str)] = &[
    ("random", "a uniformly random legal move"),
    (
        "order:LDRU",
        "the first legal move in the given order of L, R, U, D",
    ),
    ("greedy", "the legal move whose merges make the most value"),
    (
        "schain",
        "keep tiles decreasing along a snake from the top-left corner",
    ),
    (
        "mc:N",
        "N random playouts per move to the end; best mean score",
    ),
    (
        "expectimax:D",
        "expectimax over D moves and the spawns, heuristic leaves",
    ),
    ("ntuple:FILE", "an n-tuple network's weights file"),
    (
        "optimal",
        "the solved optimal policy (needs a solved store)",
    ),
];

/// Builds one player (each thread that plays asks its own).
pub type PlayerFactory = Box<dyn Fn() -> Box<dyn Player> + Send + Sync>;

/// A parsed player spec (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// `random`.
    Random,
    /// `order:XXXX`.
    Order([Direction; 4]),
    /// `greedy`.
    Greedy,
    /// `schain`.
    SChain,
    /// `mc:N`.
    MonteCarlo {
        /// Playouts per legal move (>= 1).
        playouts: u32,
    },
    /// `expectimax:D`.
    Expectimax {
        /// Moves searched (1 to [`MAX_DEPTH`]).
        depth: u8,
    },
    /// `ntuple:FILE`.
    NTuple {
        /// The weights file.
        path: PathBuf,
    },
    /// `optimal`: the caller builds it from a solved store.
    Optimal,
}

impl PlayerSpec {
    /// Parse a spec string; weights files are not read yet.
    pub fn parse(spec: &str) -> Result<PlayerSpec, PlayerError> {
        let spec = spec.trim();
        let (name, param) = match spec.split_once(':') {
            Some((name, param)) => (name.to_ascii_lowercase(), Some(param)),
            None => (spec.to_ascii_lowercase(), None),
        };
        let missing = |expected: &str| PlayerError::MissingParameter {
            player: name.clone(),
            expected: expected.to_string(),
        };
        let bad = |param: &str, reason: String| PlayerError::BadParameter {
            player: name.clone(),
            param: param.to_string(),
            reason,
        };
        let none = |value: PlayerSpec| match param {
            None => Ok(value),
            Some(p) => Err(bad(p, format!("{name} takes no parameter"))),
        };
        let required = |expected: &str| match param {
            Some(p) if !p.trim().is_empty() => Ok(p.trim()),
            _ => Err(missing(expected)),
        };
        match name.as_str() {
            "random" => none(PlayerSpec::Random),
            "greedy" => none(PlayerSpec::Greedy),
            "schain" => none(PlayerSpec::SChain),
            "optimal" => none(PlayerSpec::Optimal),
            "order" => {
                let p = required("order:XXXX with each of L, R, U, D once, e.g. order:LDRU")?;
                Ok(PlayerSpec::Order(OrderPlayer::parse_order(p)?))
            }
            "mc" => {
                let p = required("mc:N with N >= 1 playouts per move, e.g. mc:100")?;
                let playouts: u32 = p
                    .parse()
                    .map_err(|_| bad(p, "the number of playouts is not a whole number".into()))?;
                if playouts == 0 {
                    return Err(bad(p, "needs at least 1 playout per move".into()));
                }
                Ok(PlayerSpec::MonteCarlo { playouts })
            }
            "expectimax" => {
                let p = required("expectimax:D with a depth of 1 to 8 moves, e.g. expectimax:3")?;
                let depth: u8 = p
                    .parse()
                    .map_err(|_| bad(p, "the depth is not a whole number".into()))?;
                if !(1..=MAX_DEPTH).contains(&depth) {
                    return Err(bad(
                        p,
                        format!("the depth is a number of moves from 1 to {MAX_DEPTH}"),
                    ));
                }
                Ok(PlayerSpec::Expectimax { depth })
            }
            "ntuple" => {
                let p = required("ntuple:FILE naming a weights file")?;
                Ok(PlayerSpec::NTuple {
                    path: PathBuf::from(p),
                })
            }
            _ => Err(PlayerError::UnknownPlayer {
                spec: spec.to_string(),
                known: KNOWN.iter().map(|k| k.0).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Build the player for boards of `shape` and spawn rule `rule` (what
    /// the players that look ahead expect), its own random stream starting
    /// from `seed`. `optimal` is refused with [`PlayerError::NeedsStore`].
    pub fn build(
        &self,
        shape: Shape,
        rule: &SpawnRule,
        seed: u64,
    ) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer::new(shape, seed)?),
            PlayerSpec::Order(order) => Box::new(OrderPlayer::new(shape, *order)?),
            PlayerSpec::Greedy => Box::new(GreedyPlayer::new(shape)?),
            PlayerSpec::SChain => Box::new(SChainPlayer::new(shape)?),
            PlayerSpec::MonteCarlo { playouts } => {
                Box::new(MonteCarloPlayer::new(shape, *playouts, seed)?.with_rule(rule))
            }
            PlayerSpec::Expectimax { depth } => {
                Box::new(ExpectimaxPlayer::new(shape, *depth)?.with_rule(rule))
            }
            PlayerSpec::NTuple { path } => Box::new(NTuplePlayer::load(path, shape)?),
            PlayerSpec::Optimal => return Err(PlayerError::NeedsStore),
        })
    }

    /// Whether the player has an exact move distribution
    /// ([`Player::distribution`] answers), so that its win probability can be
    /// computed exactly. `optimal` has (it is deterministic).
    pub fn is_exact(&self) -> bool {
        !matches!(self, PlayerSpec::MonteCarlo { .. })
    }

    /// What an exact evaluation on boards of `shape` under `rule` plays:
    /// `None` for `optimal` (the caller plays the solved policy), else a
    /// factory of the player, built once here so that a player that cannot
    /// be built fails now. An n-tuple player is built from `weights` (its
    /// weights file's bytes as the caller holds them) or else from its file;
    /// a player that samples is refused ([`PlayerError::Samples`]).
    pub fn exact(
        &self,
        shape: Shape,
        rule: &SpawnRule,
        weights: Option<&[u8]>,
    ) -> Result<Option<PlayerFactory>, PlayerError> {
        match self {
            _ if !self.is_exact() => Err(PlayerError::Samples {
                player: self.to_string(),
            }),
            PlayerSpec::Optimal => Ok(None),
            PlayerSpec::NTuple { path } => {
                let net = match weights {
                    Some(bytes) => Network::from_bytes(bytes, path)?,
                    None => Network::load(path)?,
                };
                let n = square_side(shape, "ntuple")?;
                if net.n() != n {
                    return Err(PlayerError::WeightsForOtherBoard {
                        path: path.clone(),
                        file_n: net.n(),
                        n,
                    });
                }
                let (net, name) = (Arc::new(net), self.to_string());
                Ok(Some(Box::new(move || {
                    Box::new(NTuplePlayer::new(net.clone(), name.clone()))
                })))
            }
            other => {
                other.build(shape, rule, 0)?;
                let (other, rule) = (other.clone(), *rule);
                // Built once above with the same arguments.
                Ok(Some(Box::new(move || {
                    other.build(shape, &rule, 0).expect("it built")
                })))
            }
        }
    }
}

impl fmt::Display for PlayerSpec {
    /// The spec in its canonical spelling (`order:LDRU`, `mc:100`, ...).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => write!(f, "random"),
            PlayerSpec::Order(order) => write!(f, "order:{}", OrderPlayer::order_text(order)),
            PlayerSpec::Greedy => write!(f, "greedy"),
            PlayerSpec::SChain => write!(f, "schain"),
            PlayerSpec::MonteCarlo { playouts } => write!(f, "mc:{playouts}"),
            PlayerSpec::Expectimax { depth } => write!(f, "expectimax:{depth}"),
            PlayerSpec::NTuple { path } => write!(f, "ntuple:{}", path.display()),
            PlayerSpec::Optimal => write!(f, "optimal"),
        }
    }
}

impl FromStr for PlayerSpec {
    type Err = PlayerError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PlayerSpec::parse(s)
    }
}

/// What [`parse`] gives: a built player, or `optimal`, which the caller
/// builds from a solved store.
pub enum Parsed {
    /// A ready player.
    Player(Box<dyn Player>),
    /// `optimal`: needs a solved store.
    Optimal,
}

/// Parse `spec` and build its player for boards of `shape` and spawn rule
/// `rule`, its own random stream starting from `seed` (weights files are
/// read here).
pub fn parse(spec: &str, shape: Shape, rule: &SpawnRule, seed: u64) -> Result<Parsed, PlayerError> {
    match PlayerSpec::parse(spec)? {
        PlayerSpec::Optimal => Ok(Parsed::Optimal),
        other => other.build(shape, rule, seed).map(Parsed::Player),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_players_are_built_once_and_samplers_refused() {
        let (shape, rule) = (Shape::square(4), SpawnRule::standard());
        assert!(PlayerSpec::Optimal
            .exact(shape, &rule, None)
            .unwrap()
            .is_none());
        let mc = PlayerSpec::parse("mc:7").unwrap().exact(shape, &rule, None);
        assert!(matches!(mc, Err(PlayerError::Samples { .. })));
        let greedy = PlayerSpec::Greedy
            .exact(shape, &rule, None)
            .unwrap()
            .unwrap();
        let moves = greedy().distribution(0x11).unwrap();
        assert_eq!(moves.iter().map(|m| m.1).sum::<f64>(), 1.0, "{moves:?}");
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/networks/4x4-rows-squares.weights"
        );
        let ntuple = PlayerSpec::parse(&format!("ntuple:{file}")).unwrap();
        let bytes = std::fs::read(file).unwrap();
        let net = ntuple.exact(shape, &rule, Some(&bytes)).unwrap().unwrap();
        assert_eq!(net().distribution(0x11).unwrap().len(), 1);
        let other = ntuple.exact(Shape::square(3), &rule, Some(&bytes));
        assert!(matches!(
            other,
            Err(PlayerError::WeightsForOtherBoard {
                file_n: 4,
                n: 3,
                ..
            })
        ));
        let junk = ntuple.exact(shape, &rule, Some(b"junk"));
        assert!(matches!(junk, Err(PlayerError::WeightsDamaged { .. })));
    }

    #[test]
    fn specs_round_trip() {
        for s in [
            "random",
            "order:LDRU",
            "greedy",
            "schain",
            "mc:100",
            "expectimax:3",
            "ntuple:players/networks/x.weights",
            "optimal",
        ] {
            assert_eq!(PlayerSpec::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            PlayerSpec::parse(" Order:ldru ").unwrap().to_string(),
            "order:LDRU"
        );
        assert_eq!(
            PlayerSpec::parse("ntuple:C:\\w.bin").unwrap(),
            PlayerSpec::NTuple {
                path: "C:\\w.bin".into()
            }
        );
    }

    #[test]
    fn bad_specs_get_specific_errors() {
        let err = |s: &str| PlayerSpec::parse(s).unwrap_err();
        assert!(matches!(err("minimax"), PlayerError::UnknownPlayer { .. }));
        assert!(err("minimax").to_string().contains("expectimax:D"));
        for s in [
            "order:LLRU",
            "mc:0",
            "mc:x",
            "expectimax:x",
            "expectimax:0",
            "expectimax:9",
            "greedy:3",
            "optimal:1",
        ] {
            assert!(
                matches!(err(s), PlayerError::BadParameter { .. }),
                "{s}: {}",
                err(s)
            );
        }
        for s in ["mc", "mc:", "order", "expectimax", "ntuple", "ntuple: "] {
            assert!(
                matches!(err(s), PlayerError::MissingParameter { .. }),
                "{s}"
            );
        }
        assert!(err("mc:0").to_string().contains("at least 1 playout"));
    }

    #[test]
    fn build_and_parse() {
        assert!(matches!(
            parse("optimal", Shape::square(3), &SpawnRule::standard(), 0),
            Ok(Parsed::Optimal)
        ));
        assert!(matches!(
            PlayerSpec::Optimal.build(Shape::square(3), &SpawnRule::standard(), 0),
            Err(PlayerError::NeedsStore)
        ));
        assert!(matches!(
            parse(
                "ntuple:/nonexistent/w.weights",
                Shape::square(3),
                &SpawnRule::standard(),
                0
            ),
            Err(PlayerError::WeightsIo { .. })
        ));
        let Ok(Parsed::Player(p)) = parse("mc:7", Shape::square(4), &SpawnRule::standard(), 0)
        else {
            panic!("mc:7 builds")
        };
        assert_eq!(p.name(), "mc:7");
        assert!(!PlayerSpec::parse("mc:7").unwrap().is_exact());
        assert!(PlayerSpec::parse("random").unwrap().is_exact());
    }
}
