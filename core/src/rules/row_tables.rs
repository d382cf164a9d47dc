//! Precomputed per-row tables, one set per board size, built once on first use
//! from the slow reference rules in [`crate::rules::slow`].
//!
//! A row of an `n x n` board is an `n`-nybble value below `16^n`; the table
//! entry is the row after sliding it left (or right). Moving a whole board is
//! one lookup per row, and up/down are left/right on the transposed board.
//! The score of a move (the values of the tiles its merges create) is one
//! more lookup per row, kept apart so that plain moves do not load it.

use std::sync::OnceLock;

use crate::rules::canonical;
use crate::rules::slow;

/// Tables for one board size.
pub struct Tables {
    /// Board side.
    pub n: usize,
    /// `left[row]`: the row after a move toward column 0.
    pub left: Vec<u16>,
    /// `right[row]`: the row after a move toward column `n - 1`.
    pub right: Vec<u16>,
    /// `score[row]`: the score of sliding the row, the sum of the values of
    /// the tiles its merges create. One table serves both directions: the
    /// tiles of a row, read without gaps, form runs of equal exponents, and a
    /// run of `k` tiles makes `k / 2` merges of the same value whichever end
    /// it resolves from (checked exhaustively against the slow rules for
    /// both directions).
    pub score: Vec<u32>,
    /// `pos[g][cell]`: the nybble index that cell `cell` lands on under
    /// symmetry `g` (see [`canonical::image`]). Cells outside the block map to
    /// themselves and are never used.
    pub pos: [[u8; 16]; 8],
}

impl Tables {
    /// The tables for side `n` (2, 3 or 4); built on first call.
    pub fn get(n: usize) -> &'static Tables {
        static TABLES: [OnceLock<Tables>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        assert!((2..=4).contains(&n), "board side {n} out of range");
        TABLES[n - 2].get_or_init(|| Tables::build(n))
    }

    fn build(n: usize) -> Tables {
        let rows = 1usize << (4 * n);
        let mut left = vec![0u16; rows];
        let mut right = vec![0u16; rows];
        let mut score = vec![0u32; rows];
        for row in 0..rows {
            let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
            let pack = |cells: &[u8]| {
                cells
                    .iter()
                    .enumerate()
                    .fold(0u16, |acc, (c, &e)| acc | ((e as u16) << (4 * c)))
            };
            left[row] = pack(&slow::slide_line(&cells));
            score[row] = slow::slide_line_score(&cells).1;
            let mut rev: Vec<u8> = cells.iter().rev().copied().collect();
            rev = slow::slide_line(&rev);
            rev.reverse();
            right[row] = pack(&rev);
        }
        let mut pos = [[0u8; 16]; 8];
        for (g, map) in pos.iter_mut().enumerate() {
            for (cell, p) in map.iter_mut().enumerate() {
                let marker = 1u64 << (4 * cell);
                let img = if cell % 4 < n && cell / 4 < n {
                    canonical::image(marker, n, g)
                } else {
                    marker
                };
                *p = (img.trailing_zeros() / 4) as u8;
            }
        }
        Tables {
            n,
            left,
            right,
            score,
            pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of every size, both directions: the score table against the
    /// slow rules (a right move is a left move of the reversed row).
    #[test]
    fn score_table_matches_slow_in_both_directions() {
        for n in 2..=4 {
            let t = Tables::get(n);
            assert_eq!(t.score.len(), 1 << (4 * n));
            for row in 0..(1usize << (4 * n)) {
                let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
                let (slid, left) = slow::slide_line_score(&cells);
                assert_eq!(slid, slow::slide_line(&cells), "n={n} row={row:#x}");
                let rev: Vec<u8> = cells.iter().rev().copied().collect();
                let (_, right) = slow::slide_line_score(&rev);
                assert_eq!(t.score[row], left, "left n={n} row={row:#x}");
                assert_eq!(t.score[row], right, "right n={n} row={row:#x}");
            }
        }
    }
}
