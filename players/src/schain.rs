//! `schain`: a zero-depth snake-chain player. It keeps the tiles decreasing
//! along a snake path from the top-left corner, the way people play 2048.
//!
//! The snake path starts in the top-left corner and runs along row 0 from
//! left to right, back along row 1 from right to left, and so on:
//!
//! ```text
//!   4x4:  0  1  2  3       3x3:  0 1 2      2x2:  0 1
//!         7  6  5  4             5 4 3            3 2
//!         8  9 10 11             6 7 8
//!        15 14 13 12
//! ```
//!
//! The *chain* of a board is the longest prefix of the path whose cells are
//! all occupied with non-increasing tiles. The rule, on each legal move's
//! afterstate, takes the move that is best by these keys in turn:
//!
//! 1. *corner*: the afterstate's largest tile is in the top-left corner;
//! 2. *merge first*: the move merges at least one pair of tiles;
//! 3. *repair the chain*: the afterstate's chain is longer (the move closes
//!    the first break in the chain, or at least does not open one earlier);
//! 4. the move's score (the value its merges make) is larger;
//! 5. the afterstate has more empty cells;
//! 6. the fixed order up, left, right, down (up and left push toward the
//!    corner).
//!
//! It looks at no spawn, so it is deterministic and cheap: one afterstate per
//! legal move.

use solve2048_core::rules::moves::Mover;
use solve2048_core::{Board, Direction, Shape};

use crate::player::{certain, Player};
use crate::{NotExact, PlayerError};

/// The fixed preference order of the last key (see the module docs).
const PREFERENCE: [Direction; 4] = [
    Direction::Up,
    Direction::Left,
    Direction::Right,
    Direction::Down,
];

/// The `schain` player.
#[derive(Clone)]
pub struct SChainPlayer {
    shape: Shape,
    mover: Mover,
    /// Nybble shift of each cell of the snake path, in path order.
    path: Vec<u32>,
}

impl SChainPlayer {
    /// The snake-chain player for boards of `shape`.
    pub fn new(shape: Shape) -> Result<SChainPlayer, PlayerError> {
        Ok(SChainPlayer {
            shape,
            mover: Mover::new(shape),
            path: snake_path(shape),
        })
    }

    /// The length of the chain of `x`: the longest prefix of the snake path
    /// with every cell occupied and tiles non-increasing.
    pub fn chain_len(&self, x: u64) -> usize {
        let mut prev = u8::MAX;
        let mut len = 0;
        for &shift in &self.path {
            let e = ((x >> shift) & 0xF) as u8;
            if e == 0 || e > prev {
                break;
            }
            prev = e;
            len += 1;
        }
        len
    }

    /// The comparison key of a legal move (larger is better; see the module
    /// docs). `rank` is the move's position in the preference order.
    fn key(&self, after: u64, score: u32, rank: usize) -> (bool, bool, usize, u32, u32, usize) {
        let corner = (after & 0xF) as u8 == Board(after).max_exponent();
        (
            corner,
            score > 0,
            self.chain_len(after),
            score,
            Board(after).empty_cells(self.shape),
            3 - rank,
        )
    }
}

/// Nybble shifts of the cells of the snake path of boards of `shape`: row
/// 0 left to right, row 1 right to left, and so on.
pub fn snake_path(shape: Shape) -> Vec<u32> {
    let cols = shape.cols();
    (0..shape.rows())
        .flat_map(|r| {
            (0..cols).map(move |k| {
                let c = if r % 2 == 0 { k } else { cols - 1 - k };
                (16 * r + 4 * c) as u32
            })
        })
        .collect()
}

impl Player for SChainPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        PREFERENCE
            .iter()
            .enumerate()
            .filter_map(|(rank, &d)| {
                let (after, score) = self.mover.apply_scored(board, d);
                (after != board).then(|| (self.key(after, score, rank), d))
            })
            .max_by_key(|&(key, _)| key)
            .map(|(_, d)| d)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(certain(self.choose(board)))
    }

    fn name(&self) -> String {
        "schain".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> u64 {
        Board::parse(s).unwrap().0 .0
    }

    #[test]
    fn snake_paths_turn_at_each_row() {
        assert_eq!(snake_path(Shape::square(2)), vec![0, 4, 20, 16]);
        assert_eq!(
            snake_path(Shape::square(3)),
            vec![0, 4, 8, 24, 20, 16, 32, 36, 40]
        );
        let p = SChainPlayer::new(Shape::square(3)).unwrap();
        assert_eq!(p.chain_len(b("16 8 4 / . . 4 / . . .")), 4);
        assert_eq!(p.chain_len(b("16 8 4 / . 2 8 / . . .")), 3);
        assert_eq!(p.chain_len(b(". 8 4 / . . . / . . .")), 0);
    }

    #[test]
    fn keeps_the_corner_then_merges_then_repairs() {
        let mut p = SChainPlayer::new(Shape::square(3)).unwrap();
        // Up merges the 2s under the corner 8 and keeps the 8 in the corner.
        assert_eq!(p.choose(b("8 . . / 2 . . / 2 . .")), Some(Direction::Up));
        // Nothing merges; right and down would take the 8 from the corner;
        // left repairs the chain (8 4 along the path).
        assert_eq!(p.choose(b("8 . 4 / . . . / . . .")), Some(Direction::Left));
        // Up merges the 2s (chain 8: length 1); left merges nothing but makes
        // the chain 8 2 (length 2): merging comes first.
        let x = b("8 . 2 / . . 2 / . . .");
        assert_eq!(
            p.chain_len(Mover::new(solve2048_core::Shape::square(3)).apply(x, Direction::Up)),
            1
        );
        assert_eq!(
            p.chain_len(Mover::new(solve2048_core::Shape::square(3)).apply(x, Direction::Left)),
            2
        );
        assert_eq!(p.choose(x), Some(Direction::Up));
        // Left merges the 4s and keeps the 16 in the corner; right merges
        // them too but moves the 16.
        assert_eq!(p.choose(b("16 4 4 / 2 . . / . . .")), Some(Direction::Left));
    }
}
