//! The four moves on the bitboard, and the win / loss tests.

use crate::rules::board::{occupied_bits, LOW_BITS};
use crate::rules::canonical::{cell_images, transpose};
use crate::rules::direction::Direction;
use crate::rules::row_tables::Tables;
use crate::rules::shape::Shape;

/// Applies moves for one board shape.
#[derive(Clone, Copy)]
pub struct Mover {
    shape: Shape,
    /// Tables for the rows (lines of `cols` cells).
    rows: &'static Tables,
    /// Tables for the columns (lines of `rows` cells).
    columns: &'static Tables,
    cell_images: &'static [[u8; 16]; 8],
}

impl Mover {
    /// The mover for boards of `shape`.
    pub fn new(shape: Shape) -> Mover {
        Mover {
            shape,
            rows: Tables::get(shape.cols()),
            columns: Tables::get(shape.rows()),
            cell_images: cell_images(shape),
        }
    }

    /// Slides the first `lines` rows of `x` toward column 0 and toward the
    /// last column, by `table` ([`Tables::slid`]): one load a row for both.
    #[inline(always)]
    fn lines(x: u64, lines: usize, table: &[u32; 1 << 16]) -> (u64, u64) {
        match lines {
            2 => Self::slide::<2>(x, table),
            3 => Self::slide::<3>(x, table),
            _ => Self::slide::<4>(x, table),
        }
    }

    /// [`Self::lines`] of `LINES` rows, unrolled.
    #[inline(always)]
    fn slide<const LINES: usize>(x: u64, table: &[u32; 1 << 16]) -> (u64, u64) {
        let (mut low, mut high) = (0u64, 0u64);
        for r in 0..LINES {
            // Any 16-bit row indexes the table: no bounds check.
            let slid = table[((x >> (16 * r)) & 0xFFFF) as usize];
            low |= ((slid & 0xFFFF) as u64) << (16 * r);
            high |= ((slid >> 16) as u64) << (16 * r);
        }
        (low, high)
    }

    /// The board after moving `dir` (equal to `x` when the move is illegal).
    #[inline]
    pub fn apply(&self, x: u64, dir: Direction) -> u64 {
        let (r, c) = (self.shape.rows(), self.shape.cols());
        match dir {
            Direction::Left => Self::lines(x, r, &self.rows.slid).0,
            Direction::Right => Self::lines(x, r, &self.rows.slid).1,
            Direction::Up => transpose(Self::lines(transpose(x), c, &self.columns.slid).0),
            Direction::Down => transpose(Self::lines(transpose(x), c, &self.columns.slid).1),
        }
    }

    /// The boards after each move, in [`Direction::ALL`] order (each equal to
    /// `x` where the move is illegal): [`Self::apply`] of all four, a table
    /// load a line for both directions and one transpose for both vertical
    /// moves.
    #[inline(always)]
    pub fn apply_all(&self, x: u64) -> [u64; 4] {
        let (r, c) = (self.shape.rows(), self.shape.cols());
        let (left, right) = Self::lines(x, r, &self.rows.slid);
        let (up, down) = Self::lines(transpose(x), c, &self.columns.slid);
        [left, right, transpose(up), transpose(down)]
    }

    /// The board after moving `dir` and the move's score: the standard 2048
    /// score, the sum of the values of the tiles that merges create (`(x, 0)`
    /// when the move is illegal).
    #[inline]
    pub fn apply_scored(&self, x: u64, dir: Direction) -> (u64, u32) {
        // One score table serves both directions of a line.
        let (lines, count, tables) = match dir {
            Direction::Left | Direction::Right => (x, self.shape.rows(), self.rows),
            Direction::Up | Direction::Down => (transpose(x), self.shape.cols(), self.columns),
        };
        let line = |r: usize| ((lines >> (16 * r)) & 0xFFFF) as usize;
        let score = (0..count)
            .map(|r| tables.score.get(line(r)).copied().unwrap_or(0))
            .sum();
        (self.apply(x, dir), score)
    }

    /// The board's shape.
    #[inline]
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// `cell_images()[g][cell]`: where cell `cell` lands under symmetry `g`
    /// ([`crate::rules::canonical::cell_images`]), for the spawn kernels.
    #[inline]
    pub fn cell_images(&self) -> &'static [[u8; 16]; 8] {
        self.cell_images
    }

    /// True when no move changes the board.
    #[inline]
    pub fn is_lost(&self, x: u64) -> bool {
        let block_low = self.shape.block_mask() & LOW_BITS;
        if block_low & !occupied_bits(x) != 0 {
            return false;
        }
        // A full board is stuck iff neither a horizontal nor a vertical move
        // changes it; left and right are both no-ops exactly when no two
        // horizontal neighbours are equal (likewise up and down).
        self.apply(x, Direction::Left) == x && self.apply(x, Direction::Up) == x
    }
}

/// True when some cell holds exponent `e` (e != 0).
#[inline(always)]
pub fn has_exponent(x: u64, e: u8) -> bool {
    let v = x ^ (LOW_BITS * e as u64);
    // Classic "has a zero nybble" test: exact for existence.
    (v.wrapping_sub(LOW_BITS) & !v & (LOW_BITS << 3)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Board;

    fn b(s: &str) -> u64 {
        Board::parse(s).unwrap().0 .0
    }

    #[test]
    fn documented_merge_order() {
        let m = Mover::new(Shape::square(4));
        let x = b("2 2 2 . / . . . . / . . . . / . . . .");
        assert_eq!(
            m.apply(x, Direction::Left),
            b("4 2 . . / . . . . / . . . . / . . . .")
        );
        let x = b("2 2 2 2 / . . . . / . . . . / . . . .");
        assert_eq!(
            m.apply(x, Direction::Left),
            b("4 4 . . / . . . . / . . . . / . . . .")
        );
        assert_eq!(
            m.apply(x, Direction::Right),
            b(". . 4 4 / . . . . / . . . . / . . . .")
        );
        let x = b("2 2 2 . / . . . . / . . . . / . . . .");
        assert_eq!(
            m.apply(x, Direction::Right),
            b(". . 2 4 / . . . . / . . . . / . . . .")
        );
        let x = b("4 4 8 . / . . . . / . . . . / . . . .");
        assert_eq!(
            m.apply(x, Direction::Left),
            b("8 8 . . / . . . . / . . . . / . . . .")
        );
        let x = b("2 . . / 2 . . / 4 . .");
        let m3 = Mover::new(Shape::square(3));
        assert_eq!(m3.apply(x, Direction::Up), b("4 . . / 4 . . / . . ."));
        assert_eq!(m3.apply(x, Direction::Down), b(". . . / 4 . . / 4 . ."));
    }

    #[test]
    fn scored_moves_match_slow_on_random_boards() {
        let mut seed = 0x5eed_u64;
        for shape in Shape::all() {
            let m = Mover::new(shape);
            for _ in 0..20_000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Small exponents (0..4) so that merges are common.
                let mut x = 0u64;
                for r in 0..shape.rows() {
                    for c in 0..shape.cols() {
                        let e = (seed >> (2 * (4 * r + c))) & 3;
                        x |= e << (16 * r + 4 * c);
                    }
                }
                for d in Direction::ALL {
                    let (y, s) = m.apply_scored(x, d);
                    assert_eq!(y, m.apply(x, d));
                    assert_eq!(y, m.apply_all(x)[d as usize]);
                    assert_eq!(Board::merge_score(x, y), u64::from(s), "{x:#x} {d:?}");
                    assert_eq!(
                        (y, s),
                        crate::rules::slow::apply_score(x, shape, d),
                        "{shape} {x:#x} {d:?}"
                    );
                }
            }
        }
        let m = Mover::new(Shape::square(4));
        let x = b("2 2 2 2 / 4 4 8 . / . . . . / . . . .");
        assert_eq!(m.apply_scored(x, Direction::Left).1, 8 + 8);
        assert_eq!(m.apply_scored(x, Direction::Up).1, 0);
    }

    #[test]
    fn lost_and_win_tests() {
        let m = Mover::new(Shape::square(2));
        assert!(m.is_lost(b("2 4 / 4 2")));
        assert!(!m.is_lost(b("2 2 / 4 8")));
        assert!(!m.is_lost(b("2 4 / 2 8")));
        assert!(!m.is_lost(b("2 . / 4 8")));
        assert!(has_exponent(b("2 4 / 4 2"), 2));
        assert!(!has_exponent(b("2 4 / 4 2"), 3));
        assert!(has_exponent(b("2 4 / 4 16"), 4));
    }
}
