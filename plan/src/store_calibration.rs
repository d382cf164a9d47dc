//! The measured figures the store model ([`crate::store_size`]) rests on:
//! bytes a state of each object kind, measured on the games this machine
//! solves (`scripts/store-calibrate.sh` reruns them), and the share of
//! states whose value is exactly 0 or 1 in each solved game.
//!
//! Every figure is bytes of stored objects (files of a local store, as an
//! object store bills them; no folder entries) at zstd level 3, read from
//! the stores and their commit records of these runs (`solve --threads 2`,
//! default chunk size 4,194,304, discount 1):
//! - 4x4 to 32: 1,566,798,892 states, 1000 chunks;
//! - 4x4 to 16: 23,482,821 states, 71 chunks;
//! - 3x3 to 1024: 25,179,012 states, 1347 chunks.
//!
//! Each layer's states, runs, requests and responses come from its own
//! objects and commit records (`len` of each run, request and response a
//! task wrote), bytes a state of the layer that wrote them (responses: of
//! the layer that asked). A layer's bytes a state depend on how many chunks
//! it fills: a layer of one chunk asks each afterstate once, a layer of
//! fifteen asks most of them from several chunks, and its states' keys lie
//! closer together. So they are tabled by chunks a layer (states over chunk
//! size), each measured game's layers pooled into ranges.

use std::sync::LazyLock;

use serde::Serialize;
use solve2048_core::{Game, Objective};

use crate::data;

/// Bytes a state of one layer's objects, at a number of chunks a layer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerBytes {
    /// The layer's states over the chunk size (the range's mean).
    pub chunks: f64,
    /// `states/` objects (kept).
    pub states: f64,
    /// `runs/` objects its enumerate tasks write (forward pass; deleted once
    /// the layer four above is merged).
    pub runs: f64,
    /// `requests/` objects its ask tasks write (backward pass; deleted once
    /// the layer is solved).
    pub requests: f64,
    /// `responses/` objects that answer its requests: the sums only
    /// (written by the gathers of the two layers above, half each; deleted
    /// once both layers they answer are solved).
    pub responses: f64,
}

/// The per-layer table of one measured game.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredGame {
    /// Board side.
    pub board: u8,
    /// Target tile.
    pub target: u64,
    /// Its states.
    pub states: u64,
    /// Its layers pooled into ranges of chunks a layer (under 0.003, 0.01,
    /// 0.03, 0.1, 0.3, 1, 3, 10, and more): the states-weighted means.
    pub rows: Vec<LayerBytes>,
}

/// The measured games. A game is modelled with the table of the measured
/// game of its board nearest in states (2x2 with 3x3's): the layers of
/// games of one board but of different sizes compress differently at the
/// same chunks a layer (4x4 to 32's layers of a third of a chunk, early
/// and late in the game, take 0.61 bytes a state; 4x4 to 16's, its largest,
/// 0.46), so they are not pooled. Read from
/// `plan/data/store-layer-bytes.csv`, a row for each range of each game.
pub static MEASURED: LazyLock<Vec<MeasuredGame>> = LazyLock::new(|| {
    let (table, text) = (
        "store-layer-bytes.csv",
        include_str!("../data/store-layer-bytes.csv"),
    );
    let columns = "board,target,game_states,chunks,states,runs,requests,responses";
    let mut games: Vec<MeasuredGame> = Vec::new();
    for r in data::rows(table, text, columns) {
        let (board, target, states) = (r.get(0), r.get(1), r.get(2));
        let bytes = LayerBytes {
            chunks: r.get(3),
            states: r.get(4),
            runs: r.get(5),
            requests: r.get(6),
            responses: r.get(7),
        };
        match games.last_mut() {
            Some(g) if (g.board, g.target, g.states) == (board, target, states) => {
                g.rows.push(bytes)
            }
            _ => games.push(MeasuredGame {
                board,
                target,
                states,
                rows: vec![bytes],
            }),
        }
    }
    games
});

/// Bytes a value (or a policy code) of a state whose value is exactly 0 or
/// 1, and of one whose value is not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitBytes {
    /// A state whose value is exactly 0 or 1.
    pub exact: f64,
    /// Any other state.
    pub varied: f64,
}

impl SplitBytes {
    /// Bytes a state when `share` of the states are exact.
    pub fn at(&self, share: f64) -> f64 {
        share * self.exact + (1.0 - share) * self.varied
    }
}

/// `values/` on 3x3 (chunk format 5, values coded by afterstate): a
/// least-squares fit over the layers of 3x3 to 1024 (values bytes = exact
/// states x 0.139 + other states x 2.430; the format-4 fit was 0.272 and
/// 3.853). An exact value among varied ones still costs a token.
pub const VALUES_3X3: SplitBytes = SplitBytes {
    exact: 0.139,
    varied: 2.430,
};

/// `values/` on 4x4: exact from 4x4 to 32 (nearly every value exactly 1,
/// each chunk's tokens compressing to almost nothing: VALUES_4X4_EXACT);
/// varied taken from 3x3 to 1024, no 4x4 game with varied values being
/// solved here.
pub const VALUES_4X4: SplitBytes = SplitBytes {
    exact: VALUES_4X4_EXACT,
    varied: 2.430,
};

/// 4x4 to 32's `values/` bytes a state (format 5: 659,656 bytes; format 4
/// took 2,310,414).
const VALUES_4X4_EXACT: f64 = 0.00042;

/// `policy/` on 3x3 (codes packed four to a byte): the same fit over 3x3 to
/// 1024's layers.
pub const POLICY_3X3: SplitBytes = SplitBytes {
    exact: 0.095,
    varied: 0.237,
};

/// `policy/` on 4x4: exact from 4x4 to 32; varied from 3x3 to 1024.
pub const POLICY_4X4: SplitBytes = SplitBytes {
    exact: POLICY_4X4_EXACT,
    varied: 0.237,
};

/// 4x4 to 32's `policy/` bytes a state (format 5: 28,128,379 bytes; format
/// 4 took 45,469,744).
const POLICY_4X4_EXACT: f64 = 0.018;

/// A state's value new to its chunk in a game whose values never repeat
/// (the upper figure of a score game): its bits in byte planes (3x3 to 512
/// for the score: 6.8 bytes each, compressed) and its token.
pub const NEW_VALUE_BYTES: f64 = 7.0;

/// `values/` and `policy/` bytes a state of a solved store (chunk format
/// 5), measured on each game solved here: the figures a game that was
/// measured is planned with. Read from `plan/data/value-bytes.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredValues {
    /// Board side.
    pub board: u8,
    /// Target tile.
    pub target: u64,
    /// The objective.
    pub objective: Objective,
    /// Its states.
    pub states: u64,
    /// The share of its states whose value is exactly 0 or 1.
    pub exact_share: f64,
    /// `values/` bytes a state.
    pub values: f64,
    /// `policy/` bytes a state.
    pub policy: f64,
}

/// The measured value and policy bytes of each game solved here.
pub static MEASURED_VALUES: LazyLock<Vec<MeasuredValues>> = LazyLock::new(|| {
    let (table, text) = ("value-bytes.csv", include_str!("../data/value-bytes.csv"));
    let columns = "board,target,objective,states,exact_share,values,policy";
    data::rows(table, text, columns)
        .iter()
        .map(|r| MeasuredValues {
            board: r.get(0),
            target: r.get(1),
            objective: match r.get::<String>(2).as_str() {
                "score" => Objective::Score,
                _ => Objective::Win,
            },
            states: r.get(3),
            exact_share: r.get(4),
            values: r.get(5),
            policy: r.get(6),
        })
        .collect()
});

/// What a game's values and policy take a state, under one assumption.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueCase {
    /// `values/` bytes a state.
    pub values_per_state: f64,
    /// `policy/` bytes a state.
    pub policy_per_state: f64,
    /// The share of values exactly 0 or 1 it rests on.
    pub exact_share: f64,
    /// What it assumes, in words.
    pub assumes: String,
}

/// A game's values and policy bytes: the same low and high figure where
/// they were measured (on this game, or its share of exact values), a range
/// where they are assumed.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueModel {
    /// The smaller figure, and the one the plan's store takes.
    pub low: ValueCase,
    /// The larger figure.
    pub high: ValueCase,
    /// Whether the share of exact values was measured on this game.
    pub share_measured: bool,
}

/// What `game`'s values and policy take: measured on this game (a row of
/// [`MEASURED_VALUES`]); else, for a win game, from its share of exact
/// values ([`exact_share`]) and the bytes of an exact and a varied state
/// ([`split_bytes`]), a range when that share is assumed: low, the share of
/// the largest solved game of its board; high, 3x3 to 1024's, the most
/// varied measured; for a score game not measured, low as the measured
/// score game of its board (values that repeat as much), high every value
/// new to its chunk ([`NEW_VALUE_BYTES`]).
pub fn value_model(game: &Game) -> ValueModel {
    let board = model_board(game.shape);
    let of_game = |m: &&MeasuredValues| {
        game.shape.is_square()
            && m.board == board
            && m.target == game.target()
            && m.objective == game.objective
    };
    if let Some(m) = MEASURED_VALUES.iter().find(of_game) {
        return ValueModel::measured(m.case("measured on this game".into()));
    }
    if game.objective == Objective::Score {
        return score_model(board);
    }
    let (values, policy) = split_bytes(board);
    let split = |share: f64, assumes: String| ValueCase {
        values_per_state: values.at(share),
        policy_per_state: policy.at(share),
        exact_share: share,
        assumes,
    };
    let (share, source) = exact_share(game);
    let ShareSource::Assumed { from_target } = source else {
        let assumes = format!(
            "{:.2}% of values exactly 0 or 1 (measured on this game)",
            100.0 * share
        );
        return ValueModel::measured(split(share, assumes));
    };
    let (vary, _) = exact_share(&Game::new(3, 1024, 1.0).expect("a game"));
    let low = split(
        share,
        format!(
            "{:.2}% of values exactly 0 or 1, as in {board}x{board} to {from_target}, the \
             largest such game solved here",
            100.0 * share
        ),
    );
    let high = split(
        share.min(vary),
        format!(
            "values as varied as 3x3 to 1024's ({:.2}% exactly 0 or 1)",
            100.0 * vary
        ),
    );
    ValueModel {
        low,
        high,
        share_measured: false,
    }
}

/// A score game of `board` not measured: low, values that repeat as much as
/// the measured score game of the nearest board; high, every value new to
/// its chunk ([`NEW_VALUE_BYTES`]).
fn score_model(board: u8) -> ValueModel {
    let score = MEASURED_VALUES
        .iter()
        .filter(|m| m.objective == Objective::Score)
        .min_by_key(|m| m.board.abs_diff(board))
        .expect("a measured score game");
    ValueModel {
        low: score.case(format!(
            "values that repeat as much as {n}x{n} to {t} for the score's (measured)",
            n = score.board,
            t = score.target
        )),
        high: ValueCase {
            values_per_state: NEW_VALUE_BYTES,
            policy_per_state: score.policy,
            exact_share: 0.0,
            assumes: "every value new to its chunk (none repeats)".into(),
        },
        share_measured: false,
    }
}

impl ValueModel {
    /// One measured figure, both ends.
    fn measured(case: ValueCase) -> ValueModel {
        ValueModel {
            low: case.clone(),
            high: case,
            share_measured: true,
        }
    }
}

impl MeasuredValues {
    /// This game's measured bytes, as a case that `assumes`.
    fn case(&self, assumes: String) -> ValueCase {
        ValueCase {
            values_per_state: self.values,
            policy_per_state: self.policy,
            exact_share: self.exact_share,
            assumes,
        }
    }
}

/// The share of an enumerate's runs bytes that feed the next layer (sum
/// S+2; the rest feed S+4), from the run references of the commit records
/// (4x4 to 32: 0.493, its large layers 0.487 to 0.505; 4x4 to 16: 0.497;
/// 3x3 to 1024: 0.476). A move spawns a 2 or a 4 on each empty cell alike,
/// so the two halves are near equal whatever the spawn chances.
pub const NEXT_LAYER_RUNS_SHARE: f64 = 0.49;

/// Records (`commits/`, `layers/`): bytes a chunk (3x3 to 1024: 6,114,326
/// over 1347 chunks; 4x4 to 16: 408,020 over 71), measured with run frames
/// written as arrays.
pub const RECORD_BYTES_PER_CHUNK: f64 = 4540.0;

/// Records beyond those a chunk, a state of each layer of more than one
/// chunk: such a layer's parts are cut into many groups, and each chunk
/// records runs (with their frames), requests and responses for every group
/// (4x4 to 32: 50,228,738 bytes, less 4540 for each of the 869 chunks the
/// plan counts, over the 1,541,226,934 states of its layers of more than a
/// chunk; no layer of 4x4 to 16 or 3x3 to 1024 fills a chunk). The 4x4-to-32
/// figure is its measured records (67,355,656 bytes with frames written as
/// objects) with each frame rewritten as an array, as a run writes it.
pub const RECORD_BYTES_PER_LARGE_LAYER_STATE: f64 = 0.03003;

/// The share of states whose value is exactly 0 or 1, measured on every
/// game solved here at discount 1: (board, target, share). Counted from the
/// decoded `values/` objects of each solved store (`solve --threads 1`,
/// default chunk size): e.g. 3x3 to 1024, 5,677,971 of 25,179,012 (4,445,240
/// zeros); 4x4 to 16, all but one of 23,482,821; 4x4 to 32, 1,566,564,768
/// of 1,566,798,892 (5,097 zeros). A test solves 3x3 to 64 in memory and
/// checks its row. Read from `plan/data/exact-shares.csv`.
pub static EXACT_SHARES: LazyLock<Vec<(u8, u64, f64)>> = LazyLock::new(|| {
    let (table, text) = ("exact-shares.csv", include_str!("../data/exact-shares.csv"));
    data::rows(table, text, "board,target,share")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
});

/// Where a game's exact share comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShareSource {
    /// Measured on this game.
    Measured,
    /// Assumed from the largest solved game of the same board.
    Assumed {
        /// That game's target.
        from_target: u64,
    },
}

/// The side of the square whose measurements model a board of `shape`: its
/// own side for a square, the nearest in cells for a rectangle (2x3 and
/// 3x2: 2; 2x4, 4x2, 3x4 and 4x3: 3).
pub fn model_board(shape: solve2048_core::Shape) -> u8 {
    (shape.cells() as f64).sqrt().round() as u8
}

/// The share of `game`'s states whose value is exactly 0 or 1: measured
/// where the game is solved here, else that of the largest solved game of
/// its board (2x2 games are all solved).
pub fn exact_share(game: &Game) -> (f64, ShareSource) {
    let board = model_board(game.shape);
    if let Some(&(_, _, s)) = EXACT_SHARES
        .iter()
        .find(|r| game.shape.is_square() && r.0 == board && r.1 == game.target())
    {
        return (s, ShareSource::Measured);
    }
    let (_, from_target, s) = EXACT_SHARES
        .iter()
        .copied()
        .filter(|r| r.0 == board)
        .max_by_key(|r| r.1)
        .unwrap_or(EXACT_SHARES[EXACT_SHARES.len() - 1]);
    (s, ShareSource::Assumed { from_target })
}

/// The measured game whose table models a game of `board` with `states`
/// states: of the same board (2x2: 3x3), the nearest in states (by ratio).
pub fn nearest(board: u8, states: u64) -> &'static MeasuredGame {
    let board = board.max(3);
    let off = |g: &MeasuredGame| (g.states as f64 / states.max(1) as f64).ln().abs();
    MEASURED
        .iter()
        .filter(|g| g.board == board)
        .min_by(|a, b| off(a).total_cmp(&off(b)))
        .unwrap_or(&MEASURED[MEASURED.len() - 1])
}

/// Bytes a state of a layer of `chunks` chunks in `game`'s table: linear
/// in ln(chunks) between its ranges, and the nearest range's outside them
/// (a layer larger than any measured takes the largest measured layer's).
pub fn layer_bytes(game: &MeasuredGame, chunks: f64) -> LayerBytes {
    let t = &game.rows;
    let (first, last) = (t[0], t[t.len() - 1]);
    if chunks <= first.chunks {
        return first;
    }
    if chunks >= last.chunks {
        return last;
    }
    let w = t
        .windows(2)
        .find(|w| chunks <= w[1].chunks)
        .expect("between the first and last rows");
    let f = (chunks.ln() - w[0].chunks.ln()) / (w[1].chunks.ln() - w[0].chunks.ln());
    let mix = |a: f64, b: f64| a + f * (b - a);
    LayerBytes {
        chunks,
        states: mix(w[0].states, w[1].states),
        runs: mix(w[0].runs, w[1].runs),
        requests: mix(w[0].requests, w[1].requests),
        responses: mix(w[0].responses, w[1].responses),
    }
}

/// Values and policy bytes of an exact and a varied state on a board.
pub fn split_bytes(board: u8) -> (SplitBytes, SplitBytes) {
    if board >= 4 {
        (VALUES_4X4, POLICY_4X4)
    } else {
        (VALUES_3X3, POLICY_3X3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::fingerprint;

    /// The tables hold exactly the numbers they held as Rust literals (the
    /// fingerprints were taken of those literals).
    #[test]
    fn tables_hold_the_numbers_they_held() {
        let shares = EXACT_SHARES
            .iter()
            .flat_map(|&(b, t, s)| [u64::from(b), t, s.to_bits()]);
        assert_eq!(
            (EXACT_SHARES.len(), fingerprint(shares)),
            (15, 0x4624_5cdf_dfd9_4770)
        );
        let measured = MEASURED.iter().flat_map(|g| {
            let head = [u64::from(g.board), g.target, g.states, g.rows.len() as u64];
            let rows = g.rows.iter().flat_map(|r| {
                [r.chunks, r.states, r.runs, r.requests, r.responses].map(f64::to_bits)
            });
            head.into_iter().chain(rows)
        });
        assert_eq!(
            (MEASURED.len(), fingerprint(measured)),
            (3, 0x414f_c521_8acb_6060)
        );
    }

    /// The table's row for 3x3 to 64 is what solving it gives.
    #[test]
    fn exact_share_of_3x3_to_64_is_measured() {
        let game = Game::new(3, 64, 1.0).unwrap();
        let solved = solve2048_core::kernel::in_memory::solve(&game);
        let exact = solved
            .values
            .values()
            .filter(|&&v| v == 0.0 || v == 1.0)
            .count();
        let measured = exact as f64 / solved.values.len() as f64;
        let (share, source) = exact_share(&game);
        assert_eq!(source, ShareSource::Measured);
        assert!((share - measured).abs() < 1e-5, "{share} vs {measured}");
    }

    /// A measured game is planned with its own value and policy bytes (the
    /// score game with its own, not the win game's); a game whose share of
    /// exact values is measured, with that share.
    #[test]
    fn measured_games_take_their_own_value_bytes() {
        assert_eq!(MEASURED_VALUES.len(), 5);
        let win = value_model(&Game::new(3, 1024, 1.0).unwrap());
        assert_eq!(win.low, win.high);
        assert_eq!(
            (win.low.values_per_state, win.low.policy_per_state),
            (1.89294, 0.20814)
        );
        let score = Game::new(3, 512, 1.0)
            .unwrap()
            .with_objective(Objective::Score)
            .unwrap();
        let score = value_model(&score);
        assert_eq!(score.low.values_per_state, 3.94825);
        assert!(score.share_measured && score.low == score.high);
        let shared = value_model(&Game::new(3, 128, 1.0).unwrap());
        assert!(shared.share_measured && shared.low == shared.high);
        assert_eq!(
            shared.low.values_per_state,
            VALUES_3X3.at(shared.low.exact_share)
        );
    }

    /// A game not solved here takes the share of its board's largest.
    #[test]
    fn unsolved_games_take_the_largest_solved_share() {
        let (share, source) = exact_share(&Game::new(4, 128, 1.0).unwrap());
        assert_eq!(source, ShareSource::Assumed { from_target: 32 });
        assert_eq!(share, 0.99985);
    }

    /// The nearest measured game of the board; rows interpolated between
    /// ranges and held outside them.
    #[test]
    fn tables_are_chosen_by_board_and_size() {
        assert_eq!(nearest(4, 40_000_000_000).target, 32);
        assert_eq!(nearest(4, 84_659).target, 16);
        assert_eq!(nearest(2, 74).target, 1024);
        let big = nearest(4, u64::MAX);
        let last = big.rows[big.rows.len() - 1];
        assert_eq!(layer_bytes(big, 200.0).states, last.states);
        assert_eq!(layer_bytes(big, 0.0).runs, big.rows[0].runs);
        let mid = layer_bytes(big, 4.0);
        assert!(mid.requests > 0.650 && mid.requests < 0.970, "{mid:?}");
        for g in MEASURED.iter() {
            assert!(g.rows.windows(2).all(|w| w[0].chunks < w[1].chunks));
        }
    }
}
