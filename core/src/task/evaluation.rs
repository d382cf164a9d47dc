//! Evaluating a player exactly: what an evaluation job values states by (a
//! player, beside a solved store's optimal values), what it passes forward
//! between layers, and what it reports.
//!
//! An evaluation is a mode of the solve's own job ([`crate::task::JobSpec`]
//! with an [`Evaluation`]), not a second engine:
//!
//! - Forward, the boards are the ones the player actually reaches from the
//!   random start, as they lie (never canonical: a player that is not
//!   symmetric plays differently on the 8 images of a board). Each enumerate
//!   task also passes forward the discounted probability of reaching each of
//!   its afterstates (a [`crate::task::PushRef`]), so each chunk knows how likely the player
//!   is to reach each of its boards.
//! - Backward, a board's value is the expectation over the player's moves,
//!   not the best move; beside it the optimal value of each of the player's
//!   moves comes from the solved store. So each board knows what the
//!   player's move gives up there (its *loss*), and the losses weighted by
//!   reach add up to the gap between the optimal value and the player's
//!   (the performance-difference identity): [`WorstState`] names where.

use serde::{Deserialize, Serialize};

use crate::rules::direction::Direction;

/// Where an evaluation store keeps its copy of the player's weights file
/// (players with one): workers build the player from it, wherever they run.
pub const WEIGHTS: &str = "player.weights";

/// How many of the states where the player loses the most a job reports.
pub const WORST_STATES: usize = 10;

/// The checksum [`Evaluation::weights`] records of a weights file's bytes.
pub fn weights_checksum(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// What an evaluation job evaluates, and against what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The player's spec in its canonical spelling (`random`, `order:LDRU`,
    /// `ntuple:FILE`, `optimal`, ...).
    pub player: String,
    /// The solved store of the same game that the player is compared with
    /// (and that `optimal` plays), as workers open it.
    pub reference: String,
    /// That store's result digest: the values this evaluation compares with.
    pub reference_digest: String,
    /// The xxh3-64 (hex) of the player's weights file, for players that have
    /// one; the store holds a copy at [`WEIGHTS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
}

/// A board where the evaluated player gives up optimal value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorstState {
    /// The board as the player sees it.
    pub board: u64,
    /// The discounted probability that the player reaches it from the random
    /// start (the plain probability when the discount is 1).
    pub reach: f64,
    /// Its optimal value.
    pub optimal: f64,
    /// Its value under the player.
    pub value: f64,
    /// The optimal value less that of the player's move there (in
    /// expectation over its moves), both followed by optimal play.
    pub loss: f64,
    /// The player's move probabilities, by action code (left, right, up,
    /// down).
    pub moves: [f64; 4],
    /// The optimal move (the solved policy, in this orientation).
    pub best: Direction,
}

impl WorstState {
    /// What it costs the player from the random start: reach times loss.
    /// These add up over every reached board to the gap between the optimal
    /// value of the game and the player's.
    pub fn cost(&self) -> f64 {
        self.reach * self.loss
    }
}

/// What solving one chunk of an evaluation adds up to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkEvaluation {
    /// The sum over its boards of reach times loss, in board order.
    pub cost: f64,
    /// Its boards of largest cost (at most [`WORST_STATES`]), largest first.
    pub worst: Vec<WorstState>,
}

/// What an evaluation job found: `summary.json`'s evaluation part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvaluationSummary {
    /// The player.
    pub player: String,
    /// The optimal value of the game (the solved store's start value).
    pub optimal: f64,
    /// The sum over every reached board of reach times loss, chunk by chunk
    /// in layer order: equals `optimal` less the player's value, up to
    /// rounding.
    pub cost: f64,
    /// The boards of largest cost, largest first.
    pub worst: Vec<WorstState>,
}

/// Keep the `WORST_STATES` boards of largest cost among `into` and `more`,
/// largest first (ties: the smaller board first), so the same boards come
/// out whatever order chunks are added in. Boards that cost nothing are
/// left out.
pub fn keep_worst(into: &mut Vec<WorstState>, more: impl IntoIterator<Item = WorstState>) {
    into.extend(more.into_iter().filter(|w| w.cost() > 0.0));
    into.sort_by(|a, b| b.cost().total_cmp(&a.cost()).then(a.board.cmp(&b.board)));
    into.truncate(WORST_STATES);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worst(board: u64, reach: f64, loss: f64) -> WorstState {
        WorstState {
            board,
            reach,
            optimal: 0.5,
            value: 0.25,
            loss,
            moves: [1.0, 0.0, 0.0, 0.0],
            best: Direction::Up,
        }
    }

    #[test]
    fn the_worst_are_kept_in_one_order_whatever_the_input_order() {
        let all: Vec<WorstState> = (1..=25u64)
            .map(|b| worst(b, 1.0 / b as f64, (b % 7) as f64 / 10.0))
            .chain([worst(99, 0.5, 0.2), worst(98, 0.5, 0.2)])
            .collect();
        let mut forward = Vec::new();
        keep_worst(&mut forward, all.clone());
        let mut backward = Vec::new();
        for w in all.iter().rev() {
            keep_worst(&mut backward, [w.clone()]);
        }
        assert_eq!(forward, backward);
        assert_eq!(forward.len(), WORST_STATES);
        assert!(forward.windows(2).all(|w| w[0].cost() >= w[1].cost()));
        // Equal costs: the smaller board first; no board that costs nothing.
        let tied: Vec<u64> = forward
            .iter()
            .filter(|w| w.cost() == 0.1)
            .map(|w| w.board)
            .collect();
        assert!(tied.windows(2).all(|w| w[0] < w[1]), "{tied:?}");
        let mut none = Vec::new();
        keep_worst(&mut none, [worst(5, 0.3, 0.0)]);
        assert!(none.is_empty());
    }

    #[test]
    fn specs_without_weights_serialize_without_them() {
        let e = Evaluation {
            player: "random".into(),
            reference: "/s".into(),
            reference_digest: "00ff".into(),
            weights: None,
        };
        let json = serde_json::to_string(&e).unwrap();
        assert!(!json.contains("weights"), "{json}");
        assert_eq!(serde_json::from_str::<Evaluation>(&json).unwrap(), e);
    }
}
