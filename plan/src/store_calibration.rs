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

use solve2048_core::Game;

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

const fn row(chunks: f64, states: f64, runs: f64, requests: f64, responses: f64) -> LayerBytes {
    LayerBytes {
        chunks,
        states,
        runs,
        requests,
        responses,
    }
}

/// The per-layer table of one measured game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeasuredGame {
    /// Board side.
    pub board: u8,
    /// Target tile.
    pub target: u64,
    /// Its states.
    pub states: u64,
    /// Its layers pooled into ranges of chunks a layer (under 0.003, 0.01,
    /// 0.03, 0.1, 0.3, 1, 3, 10, and more): the states-weighted means.
    pub rows: &'static [LayerBytes],
}

/// The measured games. A game is modelled with the table of the measured
/// game of its board nearest in states (2x2 with 3x3's): the layers of
/// games of one board but of different sizes compress differently at the
/// same chunks a layer (4x4 to 32's layers of a third of a chunk, early
/// and late in the game, take 0.61 bytes a state; 4x4 to 16's, its largest,
/// 0.46), so they are not pooled.
pub const MEASURED: [MeasuredGame; 3] = [
    MeasuredGame {
        board: 3,
        target: 1024,
        states: 25_179_012,
        // All under 0.02 chunks. Its responses carry sums of values that
        // vary (a fifth of its values are exact), so they take more than
        // 4x4's.
        rows: &[
            row(0.00187, 1.146, 1.806, 2.313, 2.603),
            row(0.00741, 0.735, 1.270, 1.346, 4.298),
            row(0.01334, 0.693, 1.317, 1.295, 6.374),
        ],
    },
    MeasuredGame {
        board: 4,
        target: 16,
        states: 23_482_821,
        // Its largest layer is 0.4 chunks.
        rows: &[
            row(0.00142, 1.158, 2.962, 0.695, 0.315),
            row(0.00586, 0.960, 1.520, 0.476, 0.088),
            row(0.02078, 0.768, 1.335, 0.407, 0.074),
            row(0.06424, 0.600, 1.170, 0.308, 0.071),
            row(0.21931, 0.508, 0.895, 0.249, 0.061),
            row(0.36841, 0.460, 0.844, 0.226, 0.054),
        ],
    },
    MeasuredGame {
        board: 4,
        target: 32,
        states: 1_566_798_892,
        // The last range holds its layers of 10 to 15 chunks, the largest.
        rows: &[
            row(0.00175, 1.241, 2.318, 0.740, 0.254),
            row(0.00722, 0.974, 1.548, 0.559, 0.102),
            row(0.02243, 0.788, 1.529, 0.485, 0.082),
            row(0.06579, 0.656, 1.394, 0.412, 0.078),
            row(0.19572, 0.611, 1.221, 0.449, 0.073),
            row(0.68462, 0.536, 1.441, 0.498, 0.071),
            row(2.00632, 0.482, 2.109, 0.650, 0.071),
            row(6.92590, 0.411, 3.127, 0.970, 0.055),
            row(13.39615, 0.361, 4.289, 1.290, 0.050),
        ],
    },
];

/// Bytes a value (or a policy code) of a state whose value is exactly 0 or
/// 1, and of one whose value is not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SplitBytes {
    /// A state whose value is exactly 0 or 1.
    pub exact: f64,
    /// Any other state.
    pub varied: f64,
}

/// `values/` on 3x3: a least-squares fit over the layers of 3x3 to 1024
/// (values bytes = exact states x 0.272 + other states x 3.853). An exact
/// value among varied ones still costs a zstd sequence.
pub const VALUES_3X3: SplitBytes = SplitBytes {
    exact: 0.272,
    varied: 3.853,
};

/// `values/` on 4x4: exact from 4x4 to 32 (2,310,414 bytes, nearly every
/// value exactly 1: a chunk of ones is its header and a few zstd blocks);
/// varied taken from 3x3 to 1024, no 4x4 game with varied values being
/// solved here.
pub const VALUES_4X4: SplitBytes = SplitBytes {
    exact: 0.0015,
    varied: 3.853,
};

/// `policy/` on 3x3: the same fit over 3x3 to 1024's layers.
pub const POLICY_3X3: SplitBytes = SplitBytes {
    exact: 0.091,
    varied: 0.288,
};

/// `policy/` on 4x4: exact from 4x4 to 32 (45,469,744 bytes); varied from
/// 3x3 to 1024.
pub const POLICY_4X4: SplitBytes = SplitBytes {
    exact: 0.029,
    varied: 0.288,
};

/// The share of an enumerate's runs bytes that feed the next layer (sum
/// S+2; the rest feed S+4), from the run references of the commit records
/// (4x4 to 32: 0.493, its large layers 0.487 to 0.505; 4x4 to 16: 0.497;
/// 3x3 to 1024: 0.476). A move spawns a 2 or a 4 on each empty cell alike,
/// so the two halves are near equal whatever the spawn chances.
pub const NEXT_LAYER_RUNS_SHARE: f64 = 0.49;

/// Records (`commits/`, `layers/`): bytes a chunk (3x3 to 1024: 6,114,326
/// over 1347 chunks; 4x4 to 16: 408,020 over 71), measured on 2026-11-27
/// with run frames written as arrays (docs/measured.md, "Commit records").
pub const RECORD_BYTES_PER_CHUNK: f64 = 4540.0;

/// Records beyond those a chunk, a state of each layer of more than one
/// chunk: such a layer's parts are cut into many groups, and each chunk
/// records runs (with their frames), requests and responses for every group
/// (4x4 to 32: 50,228,738 bytes, less 4540 for each of the 869 chunks the
/// plan counts, over the 1,541,226,934 states of its layers of more than a
/// chunk; no layer of 4x4 to 16 or 3x3 to 1024 fills a chunk). The 4x4-to-32
/// figure is its measured records of 2026-11-27 (67,355,656 bytes, frames
/// written as objects) with each frame rewritten as an array, as a run now
/// writes it.
pub const RECORD_BYTES_PER_LARGE_LAYER_STATE: f64 = 0.03003;

/// The share of states whose value is exactly 0 or 1, measured on every
/// game solved here at discount 1: (board, target, share). Counted from the
/// decoded `values/` objects of each solved store (`solve --threads 1`,
/// default chunk size): e.g. 3x3 to 1024, 5,677,971 of 25,179,012 (4,445,240
/// zeros); 4x4 to 16, all but one of 23,482,821; 4x4 to 32, 1,566,564,768
/// of 1,566,798,892 (5,097 zeros). A test solves 3x3 to 64 in memory and
/// checks its row.
#[rustfmt::skip]
pub const EXACT_SHARES: [(u8, u64, f64); 15] = [
    (2, 8, 1.0), (2, 16, 0.4), (2, 32, 0.10526), (2, 64, 1.0),
    (3, 8, 1.0), (3, 16, 0.99958), (3, 32, 0.98960), (3, 64, 0.80217),
    (3, 128, 0.37482), (3, 256, 0.23929), (3, 512, 0.20372), (3, 1024, 0.22550),
    (4, 8, 1.0), (4, 16, 0.99999996), (4, 32, 0.99985),
];

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
    let t = game.rows;
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

/// Values and policy bytes of a board.
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
        for g in MEASURED {
            assert!(g.rows.windows(2).all(|w| w[0].chunks < w[1].chunks));
        }
    }
}
