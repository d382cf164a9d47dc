//! Precomputed per-line tables, one set per line length (2, 3 or 4 cells),
//! built once on first use from the slow reference rules in
//! [`crate::rules::slow`].
//!
//! A line of `n` cells is an `n`-nybble value below `16^n`; the table
//! entry is the line after sliding it left (or right). Moving a whole board is
//! one lookup per row, and up/down are left/right on the transposed board
//! (whose rows are the board's columns: a rectangle's columns take the tables
//! of the other length).
//! The score of a move (the values of the tiles its merges create) is one
//! more lookup per row, kept apart so that plain moves do not load it.

use std::sync::OnceLock;

use crate::rules::slow;

/// Tables for one line length.
pub struct Tables {
    /// Cells in a line.
    pub n: usize,
    /// `slid[row]`: the row after a move toward column 0 (the low 16 bits)
    /// and after one toward column `n - 1` (the high 16): one load gives
    /// both. Indexed by any 16-bit row, so that a lookup needs no bounds
    /// check: a row with a tile beyond the line's `n` cells (no board's)
    /// stays as it is.
    pub slid: Box<[u32; 1 << 16]>,
    /// `score[row]`: the score of sliding the row, the sum of the values of
    /// the tiles its merges create. One table serves both directions: the
    /// tiles of a row, read without gaps, form runs of equal exponents, and a
    /// run of `k` tiles makes `k / 2` merges of the same value whichever end
    /// it resolves from (checked exhaustively against the slow rules for
    /// both directions).
    pub score: Vec<u32>,
}

impl Tables {
    /// The tables for lines of `n` cells (2, 3 or 4); built on first call.
    pub fn get(n: usize) -> &'static Tables {
        static TABLES: [OnceLock<Tables>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        assert!((2..=4).contains(&n), "line length {n} out of range");
        TABLES[n - 2].get_or_init(|| Tables::build(n))
    }

    fn build(n: usize) -> Tables {
        let rows = 1usize << (4 * n);
        let mut slid: Box<[u32; 1 << 16]> = (0..1u32 << 16)
            .map(|row| row * 0x1_0001)
            .collect::<Vec<u32>>()
            .try_into()
            .expect("one entry a 16-bit row");
        let mut score = vec![0u32; rows];
        for row in 0..rows {
            let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
            let pack = |cells: &[u8]| {
                cells
                    .iter()
                    .enumerate()
                    .fold(0u16, |acc, (c, &e)| acc | ((e as u16) << (4 * c)))
            };
            score[row] = slow::slide_line_score(&cells).1;
            let mut rev: Vec<u8> = cells.iter().rev().copied().collect();
            rev = slow::slide_line(&rev);
            rev.reverse();
            slid[row] = pack(&slow::slide_line(&cells)) as u32 | (pack(&rev) as u32) << 16;
        }
        Tables { n, slid, score }
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
