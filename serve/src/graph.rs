//! The whole MDP of a 2x2 game as a graph, as the seed article draws it with
//! graphviz: every canonical state by layer (tile sum), its optimal action,
//! and where that action leads once a tile spawns, to another state or to
//! the win and lose states.

use std::collections::BTreeMap;

use serde::Serialize;
use solve2048_core::rules::board::empty_bits;
use solve2048_core::rules::canonical::canonical;
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::rules::spawn::{for_each_spawn, Starts};
use solve2048_core::{Board, Direction, Shape};
use solve2048_solution::Solution;

use crate::ApiError;

/// The id of the win state.
pub const WIN: &str = "win";
/// The id of the lose state.
pub const LOSE: &str = "lose";

/// A state of the graph (canonical orientation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Node {
    /// Its id: the hex form.
    pub id: String,
    /// The board as text.
    pub board: String,
    /// Its cells' tiles, row by row (0 for empty).
    pub cells: Vec<u32>,
    /// Its tile sum (its layer).
    pub sum: u32,
    /// Its win probability under optimal play.
    pub value: f64,
    /// Its optimal action.
    pub best: Direction,
    /// The probability that the game starts here (0 for most states).
    pub start: f64,
}

/// Where a state's optimal action leads, with the probability of the tile
/// that spawns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Edge {
    /// The state moved from.
    pub from: String,
    /// The state reached: a node's id, [`WIN`] or [`LOSE`].
    pub to: String,
    /// The probability of reaching it by the optimal action.
    pub probability: f64,
}

/// The graph of a 2x2 game, as `GET /api/graph` answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graph {
    /// The game.
    pub game: String,
    /// Tile sums of the layers, ascending.
    pub layers: Vec<u32>,
    /// Every non-terminal state, by layer then state.
    pub nodes: Vec<Node>,
    /// The optimal action's outcomes of every state.
    pub edges: Vec<Edge>,
}

/// The graph of a solved 2x2 game; any other game is refused (its graph has
/// thousands of states or more).
pub async fn graph(solution: &Solution) -> Result<Graph, ApiError> {
    let game = *solution.game();
    let n = game.shape;
    if n != Shape::square(2) {
        return Err(ApiError::BadRequest {
            field: None,
            message: format!(
                "the MDP graph is drawn for 2x2 games only; this store solves {}",
                game.name()
            ),
        });
    }
    let mover = Mover::new(n);
    let rule = game.spawn_rule();
    let starts = Starts::new(n, &rule);
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    let layers = solution.summary().layers.clone();
    for &sum in &layers {
        let mut states = solution.layer_states(sum).await?;
        states.sort_by_key(|s| s.state);
        for s in states {
            let id = format!("{:#018x}", s.state);
            let board = Board(s.state);
            nodes.push(Node {
                id: id.clone(),
                board: board.to_text(n),
                cells: (0..4)
                    .map(|i| match board.get(i / 2, i % 2) {
                        0 => 0,
                        e => 1 << e,
                    })
                    .collect(),
                sum,
                value: s.value,
                best: s.action,
                start: starts.probability(s.state),
            });
            let mut to: BTreeMap<String, f64> = BTreeMap::new();
            let t = mover.apply(s.state, s.action);
            if has_exponent(t, game.target_exp) {
                to.insert(WIN.into(), 1.0);
            } else {
                let k = f64::from(empty_bits(t, n).count_ones());
                for_each_spawn(t, n, |two, four| {
                    for (x, p) in [(two, rule.two), (four, rule.four)] {
                        if p == 0.0 {
                            continue;
                        }
                        let key = if mover.is_lost(x) {
                            LOSE.to_string()
                        } else {
                            format!("{:#018x}", canonical(x, n))
                        };
                        *to.entry(key).or_default() += p / k;
                    }
                });
            }
            edges.extend(to.into_iter().map(|(to, probability)| Edge {
                from: id.clone(),
                to,
                probability,
            }));
        }
    }
    Ok(Graph {
        game: game.name(),
        layers,
        nodes,
        edges,
    })
}
