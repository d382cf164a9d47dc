//! The board as a u64 of 4-bit cells ("nybbles"), one layout for every size.
//!
//! A cell holds the exponent `e` of its tile `2^e`, or 0 when empty. Cell
//! `(row r, column c)` lives at nybble `4 * r + c`, i.e. bits `16r + 4c ..
//! 16r + 4c + 4`; each row is one 16-bit lane. Boards smaller than 4x4 use the
//! top-left `n x n` block and keep every other cell zero:
//!
//! ```text
//!   bit 0 ->  c0  c1  c2  c3     row 0 = bits  0..16
//!             c4  c5  c6  c7     row 1 = bits 16..32
//!             c8  c9 c10 c11     row 2 = bits 32..48
//!            c12 c13 c14 c15     row 3 = bits 48..64
//! ```
//!
//! Exponents go up to 15 (tile 32768), so every target up to 2^15 fits.

use std::fmt;
use std::str::FromStr;

/// A board position: the nybble encoding described in the module docs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Board(pub u64);

/// The lowest bit of every nybble.
pub const LOW_BITS: u64 = 0x1111_1111_1111_1111;

/// Mask with all four bits set in each cell of the `n x n` block.
pub const fn block_mask(n: usize) -> u64 {
    let row: u64 = (1u64 << (4 * n)) - 1;
    let mut m = 0u64;
    let mut r = 0;
    while r < n {
        m |= row << (16 * r);
        r += 1;
    }
    m
}

/// One bit (the lowest of its nybble) set for each cell whose nybble is nonzero.
#[inline(always)]
pub fn occupied_bits(x: u64) -> u64 {
    let t = x | (x >> 1);
    let t = t | (t >> 2);
    t & LOW_BITS
}

/// Errors from reading a board written by a person.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoardParseError {
    /// The number of rows or cells does not make a square of side 2, 3 or 4.
    #[error("board has {cells} cells in {rows} rows; expected a 2x2, 3x3 or 4x4 board such as \"2 4 / . 8\"")]
    Shape {
        /// Rows found.
        rows: usize,
        /// Cells found.
        cells: usize,
    },
    /// A cell that is neither `.`/`0` nor a power of two from 2 to 32768.
    #[error(
        "cell {text:?} is not a tile: use . or 0 for empty, or a power of two from 2 to 32768"
    )]
    Cell {
        /// The offending text.
        text: String,
    },
    /// A hex form with non-hex digits or the wrong length.
    #[error("hex board {text:?} is not 16 hex digits (optionally prefixed 0x)")]
    Hex {
        /// The offending text.
        text: String,
    },
    /// A hex board with tiles outside the `n x n` block.
    #[error("hex board {text:?} has tiles outside the top-left {n}x{n} block")]
    OutsideBlock {
        /// The offending text.
        text: String,
        /// The board size it was read for.
        n: usize,
    },
}

impl Board {
    /// The empty board.
    pub const EMPTY: Board = Board(0);

    /// Exponent in cell `(r, c)` (0 = empty).
    #[inline]
    pub fn get(self, r: usize, c: usize) -> u8 {
        ((self.0 >> (16 * r + 4 * c)) & 0xF) as u8
    }

    /// The board with cell `(r, c)` set to exponent `e`.
    #[inline]
    pub fn with(self, r: usize, c: usize, e: u8) -> Board {
        let shift = 16 * r + 4 * c;
        Board((self.0 & !(0xF << shift)) | ((e as u64 & 0xF) << shift))
    }

    /// Sum of tile values (each tile `2^e` counts `2^e`).
    pub fn tile_sum(self) -> u32 {
        let mut x = self.0;
        let mut s = 0u32;
        while x != 0 {
            let e = (x & 0xF) as u32;
            if e != 0 {
                s += 1 << e;
            }
            x >>= 4;
        }
        s
    }

    /// The score a board's tiles stand for if merges made them all: a tile
    /// `2^e` counts `(e - 1) 2^e`, the values of the merges that make it
    /// from 2s. A merge of two `2^e` into `2^(e+1)` raises it by exactly
    /// `2^(e+1)`, the merge's score.
    pub fn merge_potential(self) -> u64 {
        let mut x = self.0;
        let mut p = 0u64;
        while x != 0 {
            let e = x & 0xF;
            if e != 0 {
                p += (e - 1) << e;
            }
            x >>= 4;
        }
        p
    }

    /// The score of a move from `before` to `after` (its board before the
    /// spawn): the values of the tiles its merges make, the 2048 score
    /// ([`crate::rules::moves::Mover::apply_scored`] reads it from tables).
    #[inline]
    pub fn merge_score(before: u64, after: u64) -> u64 {
        Board(after).merge_potential() - Board(before).merge_potential()
    }

    /// Largest exponent on the board (0 for the empty board).
    pub fn max_exponent(self) -> u8 {
        let mut x = self.0;
        let mut m = 0u8;
        while x != 0 {
            m = m.max((x & 0xF) as u8);
            x >>= 4;
        }
        m
    }

    /// Number of empty cells in the `n x n` block.
    #[inline]
    pub fn empty_cells(self, n: usize) -> u32 {
        let block_low = block_mask(n) & LOW_BITS;
        (block_low & !occupied_bits(self.0)).count_ones()
    }

    /// True when `text` is in the hex form, which does not fix the board size
    /// (a 4x4 hex board with tiles only in the top-left 3x3 is also a 3x3
    /// board).
    pub fn is_hex_form(text: &str) -> bool {
        let t = text.trim();
        let h = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"));
        h.is_some() || (t.len() == 16 && t.chars().all(|c| c.is_ascii_hexdigit()))
    }

    /// Parse a board of side `n` written as rows separated by `/` (or newlines),
    /// cells separated by spaces, `.` or `0` for empty: `"2 4 / . 8"`; or the
    /// 16-digit nybble hex form (`0x0000000000310021`), whose size is taken as
    /// the smallest block holding every tile (see [`Board::is_hex_form`]).
    pub fn parse(text: &str) -> Result<(Board, usize), BoardParseError> {
        let t = text.trim();
        if Self::is_hex_form(t) {
            let h = t
                .strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t);
            return Self::parse_hex(text, h);
        }
        let rows: Vec<Vec<&str>> = t
            .split(['/', '\n', ';'])
            .map(|r| r.split_whitespace().collect::<Vec<_>>())
            .filter(|r| !r.is_empty())
            .collect();
        let cells: usize = rows.iter().map(Vec::len).sum();
        let n = rows.len();
        if !(2..=4).contains(&n) || rows.iter().any(|r| r.len() != n) {
            return Err(BoardParseError::Shape { rows: n, cells });
        }
        let mut b = Board::EMPTY;
        for (r, row) in rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                b = b.with(r, c, parse_cell(cell)?);
            }
        }
        Ok((b, n))
    }

    fn parse_hex(orig: &str, h: &str) -> Result<(Board, usize), BoardParseError> {
        let err = || BoardParseError::Hex {
            text: orig.to_string(),
        };
        if h.is_empty() || h.len() > 16 {
            return Err(err());
        }
        let x = u64::from_str_radix(h, 16).map_err(|_| err())?;
        // The size is the smallest block that holds every tile (at least 2).
        let n = (2..=4).find(|&n| x & !block_mask(n) == 0).unwrap_or(4);
        Ok((Board(x), n))
    }

    /// Check that every tile lies inside the `n x n` block.
    pub fn fits(self, n: usize) -> bool {
        self.0 & !block_mask(n) == 0
    }

    /// Render as rows of tile values, `.` for empty, rows separated by " / ".
    pub fn to_text(self, n: usize) -> String {
        let mut rows = Vec::with_capacity(n);
        for r in 0..n {
            let cells: Vec<String> = (0..n)
                .map(|c| match self.get(r, c) {
                    0 => ".".to_string(),
                    e => (1u32 << e).to_string(),
                })
                .collect();
            rows.push(cells.join(" "));
        }
        rows.join(" / ")
    }

    /// Render as an aligned grid, one row per line.
    pub fn to_grid(self, n: usize) -> String {
        let mut out = String::new();
        for r in 0..n {
            for c in 0..n {
                let cell = match self.get(r, c) {
                    0 => ".".to_string(),
                    e => (1u32 << e).to_string(),
                };
                out.push_str(&format!("{cell:>6}"));
            }
            out.push('\n');
        }
        out
    }
}

fn parse_cell(cell: &str) -> Result<u8, BoardParseError> {
    if cell == "." || cell == "0" || cell == "_" {
        return Ok(0);
    }
    let bad = || BoardParseError::Cell {
        text: cell.to_string(),
    };
    let v: u32 = cell.parse().map_err(|_| bad())?;
    if v < 2 || !v.is_power_of_two() || v > 32768 {
        return Err(bad());
    }
    Ok(v.trailing_zeros() as u8)
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Board({:#018x})", self.0)
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#018x}", self.0)
    }
}

impl FromStr for Board {
    type Err = BoardParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Board::parse(s).map(|(b, _)| b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rows_and_hex() {
        let (b, n) = Board::parse("2 4 / . 8").unwrap();
        assert_eq!(n, 2);
        assert_eq!(b.get(0, 0), 1);
        assert_eq!(b.get(0, 1), 2);
        assert_eq!(b.get(1, 0), 0);
        assert_eq!(b.get(1, 1), 3);
        assert_eq!(b.0, 0x0030_0021);
        assert_eq!(b.to_text(2), "2 4 / . 8");
        let (h, hn) = Board::parse("0x0000000000300021").unwrap();
        assert_eq!((h, hn), (b, 2));
        assert_eq!(b.tile_sum(), 14);
        assert_eq!(b.max_exponent(), 3);
        assert_eq!(b.empty_cells(2), 1);
    }

    #[test]
    fn parse_errors_are_specific() {
        assert_eq!(
            Board::parse("2 4 / 8"),
            Err(BoardParseError::Shape { rows: 2, cells: 3 })
        );
        assert_eq!(
            Board::parse("2 3 / . 8"),
            Err(BoardParseError::Cell { text: "3".into() })
        );
        assert!(matches!(
            Board::parse("0xZZ"),
            Err(BoardParseError::Hex { .. })
        ));
        assert_eq!(
            Board::parse("2 2 2 2 2 / . . . . ."),
            Err(BoardParseError::Shape { rows: 2, cells: 10 })
        );
    }

    #[test]
    fn block_masks() {
        assert_eq!(block_mask(2), 0x0000_0000_00FF_00FF);
        assert_eq!(block_mask(3), 0x0000_0FFF_0FFF_0FFF);
        assert_eq!(block_mask(4), u64::MAX);
    }
}
