//! The board's shape: rows and columns, each from 2 to 4.
//!
//! A board of `R` rows and `C` columns is the top-left `R x C` block of the
//! 4x4 nybble layout ([`crate::rules::board`]). Moves slide along rows of `C`
//! cells and columns of `R` cells. A square has the 8 symmetries of the
//! dihedral group; a rectangle has 4 (identity, the two flips and the half
//! turn): see [`crate::rules::canonical`].

use std::fmt;
use std::str::FromStr;

/// A board of `rows` x `cols` cells, each from 2 to 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    rows: u8,
    cols: u8,
}

/// A board shape that is not 2 to 4 rows of 2 to 4 cells.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[error(
    "board {0:?} is not supported: use 2, 3 or 4 for a square, or RxC with R rows and C columns \
     from 2 to 4 (3x4 is 3 rows of 4)"
)]
pub struct ShapeError(pub String);

impl Shape {
    /// The `n x n` square, for a side written in code: panics unless `n` is
    /// 2, 3 or 4 (a side a person gives goes through [`Shape::new`] or
    /// parsing).
    pub const fn square(n: u8) -> Shape {
        assert!(n >= 2 && n <= 4, "a square board has side 2, 3 or 4");
        Shape { rows: n, cols: n }
    }

    /// `rows` rows of `cols` cells, each from 2 to 4.
    pub fn new(rows: u32, cols: u32) -> Result<Shape, ShapeError> {
        if !(2..=4).contains(&rows) || !(2..=4).contains(&cols) {
            return Err(ShapeError(if rows == cols {
                rows.to_string()
            } else {
                format!("{rows}x{cols}")
            }));
        }
        Ok(Shape {
            rows: rows as u8,
            cols: cols as u8,
        })
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(self) -> usize {
        self.rows as usize
    }

    /// Columns: the cells of a row.
    #[inline(always)]
    pub fn cols(self) -> usize {
        self.cols as usize
    }

    /// Cells.
    pub fn cells(self) -> usize {
        self.rows() * self.cols()
    }

    /// Whether rows and columns are equal (8 symmetries rather than 4).
    #[inline(always)]
    pub fn is_square(self) -> bool {
        self.rows == self.cols
    }

    /// The number of symmetries: 8 for a square, 4 for a rectangle. The
    /// symmetries of a rectangle are the first 4 of the square's
    /// ([`crate::rules::canonical::image`]).
    pub fn symmetries(self) -> usize {
        if self.is_square() {
            8
        } else {
            4
        }
    }

    /// The shape with rows and columns exchanged.
    pub fn transposed(self) -> Shape {
        Shape {
            rows: self.cols,
            cols: self.rows,
        }
    }

    /// Mask with all four bits set in each cell of the block.
    #[inline(always)]
    pub const fn block_mask(self) -> u64 {
        let row: u64 = (1u64 << (4 * self.cols)) - 1;
        let mut m = 0u64;
        let mut r = 0;
        while r < self.rows {
            m |= row << (16 * r);
            r += 1;
        }
        m
    }

    /// The exponent of the largest tile the board can make: 2^(cells + 2),
    /// cells holding 2^(cells+1), ..., 4 and a spawned 4 merging all the way
    /// up.
    pub fn largest_exp(self) -> u32 {
        self.cells() as u32 + 2
    }

    /// One byte for records (chunk headers, policy files): the side for a
    /// square (2, 3, 4); `rows + 16 * cols` for a rectangle.
    pub fn code(self) -> u8 {
        if self.is_square() {
            self.rows
        } else {
            self.rows | (self.cols << 4)
        }
    }

    /// The shape of [`Shape::code`]'s byte.
    pub fn from_code(code: u8) -> Result<Shape, ShapeError> {
        if code < 16 {
            Shape::new(code.into(), code.into())
        } else {
            Shape::new((code & 0xF).into(), (code >> 4).into())
        }
    }

    /// Every shape, squares first (2x2, 3x3, 4x4), then the rectangles.
    pub fn all() -> impl Iterator<Item = Shape> {
        (2..=4u8)
            .map(|n| (n, n))
            .chain((2..=4u8).flat_map(|r| (2..=4u8).filter(move |&c| c != r).map(move |c| (r, c))))
            .map(|(rows, cols)| Shape { rows, cols })
    }

    /// A dense index of the 9 shapes (0..9), for per-shape tables.
    pub fn index(self) -> usize {
        3 * (self.rows() - 2) + self.cols() - 2
    }
}

impl fmt::Display for Shape {
    /// `3x4`: rows x columns.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

impl serde::Serialize for Shape {
    /// As its name, `3x4`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for Shape {
    type Err = ShapeError;

    /// `3` (a square) or `3x4` (3 rows of 4).
    fn from_str(s: &str) -> Result<Shape, ShapeError> {
        let bad = || ShapeError(s.to_string());
        let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
        match s.split_once(['x', 'X']) {
            None => {
                let n = num(s)?;
                Shape::new(n, n)
            }
            Some((r, c)) => Shape::new(num(r)?, num(c)?),
        }
        .map_err(|_| bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_name_and_codes() {
        let s: Shape = "3x4".parse().unwrap();
        assert_eq!((s.rows(), s.cols(), s.cells()), (3, 4, 12));
        assert_eq!(s.to_string(), "3x4");
        assert_eq!(s.transposed().to_string(), "4x3");
        assert_eq!("3".parse::<Shape>(), Ok(Shape::square(3)));
        assert_eq!("3X3".parse::<Shape>(), Ok(Shape::square(3)));
        for bad in ["5x2", "1x4", "5", "x", "3x", "3x4x2", "", "-3"] {
            assert_eq!(bad.parse::<Shape>(), Err(ShapeError(bad.into())), "{bad}");
        }
        let mut codes = std::collections::BTreeSet::new();
        for r in 2..=4 {
            for c in 2..=4 {
                let s = Shape::new(r, c).unwrap();
                assert_eq!(Shape::from_code(s.code()), Ok(s));
                assert!(codes.insert(s.code()));
                assert_eq!(s.symmetries(), if r == c { 8 } else { 4 });
            }
        }
        assert_eq!(Shape::square(4).code(), 4, "squares as before");
        assert!(Shape::from_code(5).is_err());
        assert!(Shape::from_code(0x52).is_err());
    }

    #[test]
    fn block_masks() {
        let m = |r, c| Shape::new(r, c).unwrap().block_mask();
        assert_eq!(m(2, 2), 0x0000_0000_00FF_00FF);
        assert_eq!(m(3, 3), 0x0000_0FFF_0FFF_0FFF);
        assert_eq!(m(4, 4), u64::MAX);
        assert_eq!(m(2, 3), 0x0000_0000_0FFF_0FFF);
        assert_eq!(m(3, 2), 0x0000_00FF_00FF_00FF);
        assert_eq!(m(2, 4), 0x0000_0000_FFFF_FFFF);
    }
}
