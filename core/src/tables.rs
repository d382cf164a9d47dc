//! Precomputed per-row tables, one set per board size, built once on first use
//! from the slow reference rules in [`crate::slow`].
//!
//! A row of an `n x n` board is an `n`-nybble value below `16^n`; the table
//! entry is the row after sliding it left (or right). Moving a whole board is
//! one lookup per row, and up/down are left/right on the transposed board.

use std::sync::OnceLock;

use crate::canonical;
use crate::slow;

/// Tables for one board size.
pub struct Tables {
    /// Board side.
    pub n: usize,
    /// `left[row]`: the row after a move toward column 0.
    pub left: Vec<u16>,
    /// `right[row]`: the row after a move toward column `n - 1`.
    pub right: Vec<u16>,
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
        for row in 0..rows {
            let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
            let pack = |cells: &[u8]| {
                cells
                    .iter()
                    .enumerate()
                    .fold(0u16, |acc, (c, &e)| acc | ((e as u16) << (4 * c)))
            };
            left[row] = pack(&slow::slide_line(&cells));
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
            pos,
        }
    }
}
