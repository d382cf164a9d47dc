//! The board as a u64 of 4-bit cells ("nybbles"), one layout for every size.
//!
//! A cell holds the exponent `e` of its tile `2^e`, or 0 when empty. Cell
//! `(row r, column c)` lives at nybble `4 * r + c`, i.e. bits `16r + 4c ..
//! 16r + 4c + 4`; each row is one 16-bit lane. Boards smaller than 4x4 use the
//! top-left block of their shape ([`Shape`]: `R` rows of `C` cells) and keep
//! every other cell zero:
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

use crate::rules::shape::Shape;

/// A board position: the nybble encoding described in the module docs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Board(pub u64);

/// The lowest bit of every nybble.
pub const LOW_BITS: u64 = 0x1111_1111_1111_1111;

/// One bit (the lowest of its nybble) set for each cell whose nybble is nonzero.
#[inline(always)]
pub fn occupied_bits(x: u64) -> u64 {
    let t = x | (x >> 1);
    let t = t | (t >> 2);
    t & LOW_BITS
}

/// Bits (lowest of each nybble) of the empty cells of the block of `shape`.
#[inline(always)]
pub fn empty_bits(x: u64, shape: Shape) -> u64 {
    shape.block_mask() & LOW_BITS & !occupied_bits(x)
}

/// Errors from reading a board written by a person.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BoardParseError {
    /// Rows of unequal length, or fewer than 2 or more than 4 rows or cells
    /// a row.
    #[error("board has {cells} cells in {rows} rows; expected 2 to 4 rows of 2 to 4 cells each, such as \"2 4 / . 8\" (2x2) or \"2 . 4 / . . 8\" (2x3)")]
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

    /// Number of empty cells in the block of `shape`.
    #[inline]
    pub fn empty_cells(self, shape: Shape) -> u32 {
        let block_low = shape.block_mask() & LOW_BITS;
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

    /// Parse a board written as rows separated by `/` (or newlines), cells
    /// separated by spaces, `.` or `0` for empty: `"2 4 / . 8"` (its shape is
    /// its rows and cells); or the 16-digit nybble hex form
    /// (`0x0000000000310021`), whose shape is taken as the smallest square
    /// holding every tile (see [`Board::is_hex_form`]).
    pub fn parse(text: &str) -> Result<(Board, Shape), BoardParseError> {
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
        let first = rows.first().map_or(0, Vec::len);
        let shape = match Shape::new(rows.len() as u32, first as u32) {
            Ok(shape) if rows.iter().all(|r| r.len() == shape.cols()) => shape,
            _ => {
                return Err(BoardParseError::Shape {
                    rows: rows.len(),
                    cells,
                })
            }
        };
        let mut b = Board::EMPTY;
        for (r, row) in rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                b = b.with(r, c, parse_cell(cell)?);
            }
        }
        Ok((b, shape))
    }

    fn parse_hex(orig: &str, h: &str) -> Result<(Board, Shape), BoardParseError> {
        let err = || BoardParseError::Hex {
            text: orig.to_string(),
        };
        if h.is_empty() || h.len() > 16 {
            return Err(err());
        }
        let x = u64::from_str_radix(h, 16).map_err(|_| err())?;
        // The shape is the smallest square that holds every tile (at least 2).
        let shape = (2..=4)
            .map(Shape::square)
            .find(|&s| Board(x).fits(s))
            .unwrap_or(Shape::square(4));
        Ok((Board(x), shape))
    }

    /// Check that every tile lies inside the block of `shape`.
    pub fn fits(self, shape: Shape) -> bool {
        self.0 & !shape.block_mask() == 0
    }

    /// Render as rows of tile values, `.` for empty, rows separated by " / ".
    pub fn to_text(self, shape: Shape) -> String {
        let mut rows = Vec::with_capacity(shape.rows());
        for r in 0..shape.rows() {
            let cells: Vec<String> = (0..shape.cols())
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
    pub fn to_grid(self, shape: Shape) -> String {
        let mut out = String::new();
        for r in 0..shape.rows() {
            for c in 0..shape.cols() {
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
        let (b, shape) = Board::parse("2 4 / . 8").unwrap();
        assert_eq!(shape, Shape::square(2));
        assert_eq!(b.get(0, 0), 1);
        assert_eq!(b.get(0, 1), 2);
        assert_eq!(b.get(1, 0), 0);
        assert_eq!(b.get(1, 1), 3);
        assert_eq!(b.0, 0x0030_0021);
        assert_eq!(b.to_text(Shape::square(2)), "2 4 / . 8");
        let (h, hn) = Board::parse("0x0000000000300021").unwrap();
        assert_eq!((h, hn), (b, Shape::square(2)));
        assert_eq!(b.tile_sum(), 14);
        assert_eq!(b.max_exponent(), 3);
        assert_eq!(b.empty_cells(Shape::square(2)), 1);
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
    fn rectangles() {
        let (b, shape) = Board::parse("2 . 4 / . . 8").unwrap();
        assert_eq!(shape, Shape::new(2, 3).unwrap());
        assert_eq!(b.to_text(shape), "2 . 4 / . . 8");
        assert_eq!(b.empty_cells(shape), 3);
        let (b, shape) = Board::parse("2 . / . 4 / 8 .").unwrap();
        assert_eq!(shape, Shape::new(3, 2).unwrap());
        assert_eq!(
            b.to_grid(shape),
            "     2     .\n     .     4\n     8     .\n"
        );
        assert!(!b.fits(Shape::new(2, 3).unwrap()));
        assert!(matches!(
            Board::parse("2 2 / 2 2 / 2 2 / 2 2 / 2 2"),
            Err(BoardParseError::Shape { rows: 5, .. })
        ));
        assert!(matches!(
            Board::parse("2 / 2"),
            Err(BoardParseError::Shape { rows: 2, cells: 2 })
        ));
        assert_eq!(
            Board::parse(" / "),
            Err(BoardParseError::Shape { rows: 0, cells: 0 })
        );
    }
}
