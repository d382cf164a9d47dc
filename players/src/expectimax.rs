//! `expectimax:D`: depth-limited expectimax over the player's moves and the
//! spawned tiles, valuing the leaves with classic hand-made heuristics, in the
//! design of nneonneo/2048-ai.
//!
//! - **Search.** A max node tries each legal move; a chance node averages
//!   over every empty cell and both tiles (a 2 with probability 0.9, a 4 with
//!   0.1). `D` is the number of moves searched: `expectimax:1` values each
//!   move by the heuristic of its afterstate, `expectimax:2` by the expected
//!   best heuristic one move later, and so on. A lost position is worth 1
//!   less than the lowest value the heuristic can take on the board size.
//!   (nneonneo values a lost position 0 and adds 200000 per line to live
//!   ones, which keeps them above 0 only while tiles are small: on 3x3 with
//!   a 512 and a 1024 the monotonicity term alone can exceed it.)
//! - **Pruning.** A chance node whose probability of being reached (the
//!   product of the spawn probabilities on the path, each cell's share
//!   included) is below the threshold (1e-4 by default, nneonneo's
//!   `CPROB_THRESH_BASE`) is valued by its heuristic, unexpanded.
//! - **Cache.** Afterstates already evaluated during this decision, with the
//!   depth they were reached at, are reused when reached again at the same
//!   depth or deeper (nneonneo's transposition table). The cache is emptied
//!   before each decision, so a move depends on the board alone.
//! - **Heuristic**, per line (each row and each column), summed over the
//!   board's `2n` lines, each from a table over all `16^n` lines built once
//!   (`e` is a tile's exponent):
//!   - plus a weight per empty cell;
//!   - plus a weight per tile in a run of adjacent equal tiles, gaps ignored
//!     (merges available);
//!   - minus the smaller of the two monotonicity violations, the sums of
//!     `e^4` differences against non-increasing and non-decreasing order;
//!   - minus the sum of `e^3.5` over tiles (large tiles cost);
//!   - minus the sum of `e^3.5` over tiles off the line's two ends (large
//!     tiles off the edge cost; a cell off two edges counts in its row and
//!     its column).
//!
//!   The weights are nneonneo's ([`Heuristic::default`]), with an edge
//!   weight equal to the sum weight: over 12 seeded 4x4 games at depth 3 it
//!   scored 76.5k on average against 70.3k with no edge term and 43.1k with
//!   an edge weight of 30.

use std::sync::{Arc, OnceLock};

use solve2048_core::rules::board::empty_bits;
use solve2048_core::rules::canonical::transpose;
use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::Direction;
use solve2048_core::Shape;

use crate::player::{certain, legal_moves, BoardMap, Player};
use crate::{NotExact, PlayerError};

/// The weights of the heuristic (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Heuristic {
    /// Per empty cell.
    pub empty_weight: f64,
    /// Per tile in a run of adjacent equal tiles (a pair counts 2).
    pub merges_weight: f64,
    /// On the smaller monotonicity violation.
    pub monotonicity_weight: f64,
    /// Power of the exponent in the monotonicity violation.
    pub monotonicity_power: f64,
    /// On the sum of `e^sum_power` over tiles.
    pub sum_weight: f64,
    /// Power of the exponent in the sum and edge terms.
    pub sum_power: f64,
    /// On the sum of `e^sum_power` over tiles off the line's two ends.
    pub edge_weight: f64,
}

impl Default for Heuristic {
    /// nneonneo/2048-ai's weights, and an edge weight equal to its sum weight.
    fn default() -> Heuristic {
        Heuristic {
            empty_weight: 270.0,
            merges_weight: 700.0,
            monotonicity_weight: 47.0,
            monotonicity_power: 4.0,
            sum_weight: 11.0,
            sum_power: 3.5,
            edge_weight: 11.0,
        }
    }
}

impl Heuristic {
    /// The heuristic of one line of exponents (cells in order along the line).
    pub fn line(&self, line: &[u8]) -> f64 {
        let mut sum = 0.0;
        let mut edge = 0.0;
        let mut empty = 0u32;
        let mut merges = 0u32;
        let mut prev = 0u8;
        let mut counter = 0u32;
        for (i, &rank) in line.iter().enumerate() {
            let weight = f64::from(rank).powf(self.sum_power);
            sum += weight;
            if i > 0 && i + 1 < line.len() {
                edge += weight;
            }
            if rank == 0 {
                empty += 1;
            } else {
                if prev == rank {
                    counter += 1;
                } else if counter > 0 {
                    merges += 1 + counter;
                    counter = 0;
                }
                prev = rank;
            }
        }
        if counter > 0 {
            merges += 1 + counter;
        }
        let mut mono_left = 0.0;
        let mut mono_right = 0.0;
        let p = |e: u8| f64::from(e).powf(self.monotonicity_power);
        for w in line.windows(2) {
            if w[0] > w[1] {
                mono_left += p(w[0]) - p(w[1]);
            } else {
                mono_right += p(w[1]) - p(w[0]);
            }
        }
        self.empty_weight * f64::from(empty) + self.merges_weight * f64::from(merges)
            - self.monotonicity_weight * mono_left.min(mono_right)
            - self.sum_weight * sum
            - self.edge_weight * edge
    }
}

/// The heuristic of every line of one board shape.
pub struct HeuristicTables {
    shape: Shape,
    /// `row_line[row]`: the heuristic of the row whose cells are the nybbles
    /// of `row`, cell 0 lowest.
    pub row_line: Arc<[f32]>,
    /// `column_line[column]`: the same for a column (top cell lowest); on a
    /// square, the rows' table itself (shared, not copied: the search reads
    /// it for every leaf).
    pub column_line: Arc<[f32]>,
    /// The value of a lost position: 1 below the sum of the lowest line of
    /// every row and column.
    pub lost: f64,
}

impl HeuristicTables {
    /// Tables of `heuristic` for boards of `shape`.
    pub fn new(shape: Shape, heuristic: &Heuristic) -> HeuristicTables {
        let table = |n: usize| -> Arc<[f32]> {
            (0..1usize << (4 * n))
                .map(|row| {
                    let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
                    heuristic.line(&cells) as f32
                })
                .collect()
        };
        let row_line = table(shape.cols());
        let column_line = if shape.is_square() {
            Arc::clone(&row_line)
        } else {
            table(shape.rows())
        };
        let lowest = |t: &[f32]| f64::from(t.iter().copied().fold(f32::INFINITY, f32::min));
        HeuristicTables {
            shape,
            lost: shape.rows() as f64 * lowest(&row_line)
                + shape.cols() as f64 * lowest(&column_line)
                - 1.0,
            row_line,
            column_line,
        }
    }

    /// The default heuristic's tables for boards of `shape`, built on first
    /// use.
    pub fn default_for(shape: Shape) -> Arc<HeuristicTables> {
        static TABLES: [OnceLock<Arc<HeuristicTables>>; 9] = [const { OnceLock::new() }; 9];
        TABLES[shape.index()]
            .get_or_init(|| Arc::new(HeuristicTables::new(shape, &Heuristic::default())))
            .clone()
    }

    /// The heuristic of board `x`: its rows' and columns' table entries.
    #[inline]
    pub fn board(&self, x: u64) -> f64 {
        let t = transpose(x);
        let mut total = 0.0f64;
        let (rows, cols) = (self.shape.rows(), self.shape.cols());
        // Row i, then column i: on a square, the order the sum always had.
        for i in 0..rows.max(cols) {
            if i < rows {
                total += f64::from(self.row_line[((x >> (16 * i)) & 0xFFFF) as usize]);
            }
            if i < cols {
                total += f64::from(self.column_line[((t >> (16 * i)) & 0xFFFF) as usize]);
            }
        }
        total
    }
}

/// The `expectimax:D` player (see the module docs).
pub struct ExpectimaxPlayer {
    shape: Shape,
    rule: SpawnRule,
    depth: u8,
    threshold: f64,
    mover: Mover,
    tables: Arc<HeuristicTables>,
    /// Afterstate -> (depth it was reached at, value), for one decision.
    cache: BoardMap<(u8, f64)>,
}

/// The largest depth `expectimax:D` accepts (each step multiplies the work by
/// about 8 times the number of empty cells).
pub const MAX_DEPTH: u8 = 8;

/// The default probability threshold below which a chance node is not
/// expanded.
pub const DEFAULT_THRESHOLD: f64 = 1e-4;

impl ExpectimaxPlayer {
    /// An expectimax player for boards of `shape` searching `depth` moves
    /// (1 to [`MAX_DEPTH`]), with the default heuristic and threshold.
    pub fn new(shape: Shape, depth: u8) -> Result<ExpectimaxPlayer, PlayerError> {
        if !(1..=MAX_DEPTH).contains(&depth) {
            return Err(PlayerError::BadParameter {
                player: "expectimax".to_string(),
                param: depth.to_string(),
                reason: format!("the depth is a number of moves from 1 to {MAX_DEPTH}"),
            });
        }
        Ok(ExpectimaxPlayer {
            shape,
            rule: SpawnRule::standard(),
            depth,
            threshold: DEFAULT_THRESHOLD,
            mover: Mover::new(shape),
            tables: HeuristicTables::default_for(shape),
            cache: BoardMap::default(),
        })
    }

    /// The same player expecting tiles by `rule` (the standard rule unless
    /// given).
    pub fn with_rule(mut self, rule: &SpawnRule) -> ExpectimaxPlayer {
        self.rule = *rule;
        self
    }

    /// The same player with another heuristic.
    pub fn with_heuristic(mut self, heuristic: &Heuristic) -> ExpectimaxPlayer {
        self.tables = Arc::new(HeuristicTables::new(self.shape, heuristic));
        self
    }

    /// The same player with another pruning threshold (0 expands every
    /// chance node to the full depth).
    pub fn with_threshold(mut self, threshold: f64) -> ExpectimaxPlayer {
        self.threshold = threshold;
        self
    }

    /// The value of each legal move of `board` (in left, right, up, down
    /// order), as the search sees it.
    pub fn move_values(&mut self, board: u64) -> Vec<(Direction, f64)> {
        self.cache.clear();
        let moves: Vec<(Direction, u64)> = legal_moves(&self.mover, board).collect();
        moves
            .into_iter()
            .map(|(d, after)| (d, self.chance(after, 1, 1.0)))
            .collect()
    }

    /// The value of afterstate `a`, reached after `depth` moves with
    /// probability `prob`.
    fn chance(&mut self, a: u64, depth: u8, prob: f64) -> f64 {
        if depth >= self.depth || prob < self.threshold {
            return self.tables.board(a);
        }
        if let Some(&(d, v)) = self.cache.get(&a) {
            if d <= depth {
                return v;
            }
        }
        let mut empties = empty_bits(a, self.shape);
        let k = empties.count_ones();
        let cell_prob = prob / f64::from(k);
        let mut total = 0.0;
        let (two, four) = (self.rule.two, self.rule.four);
        while empties != 0 {
            let bit = empties & empties.wrapping_neg();
            if two > 0.0 {
                total += two * self.max_node(a | bit, depth, cell_prob * two);
            }
            if four > 0.0 {
                total += four * self.max_node(a | (bit << 1), depth, cell_prob * four);
            }
            empties &= empties - 1;
        }
        let v = total / f64::from(k);
        self.cache.insert(a, (depth, v));
        v
    }

    /// The best move value of board `x` (the lost value when no move is
    /// legal).
    fn max_node(&mut self, x: u64, depth: u8, prob: f64) -> f64 {
        let mut best = self.tables.lost;
        for d in Direction::ALL {
            let after = self.mover.apply(x, d);
            if after != x {
                best = best.max(self.chance(after, depth + 1, prob));
            }
        }
        best
    }
}

impl Player for ExpectimaxPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let mut best: Option<(Direction, f64)> = None;
        for (d, v) in self.move_values(board) {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((d, v));
            }
        }
        best.map(|(d, _)| d)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(certain(self.choose(board)))
    }

    fn name(&self) -> String {
        format!("expectimax:{}", self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::rules::rng::SeededRng;
    use solve2048_core::rules::slow;

    /// The heuristic of a board computed from its grid, line by line, with
    /// nothing precomputed; and the sum of the lines' magnitudes (the f32
    /// tables round each line to about 1e-7 of it).
    fn slow_board(x: u64, shape: Shape, h: &Heuristic) -> (f64, f64) {
        let g = slow::to_grid(x, shape);
        let mut lines: Vec<Vec<u8>> = g.clone();
        lines.extend((0..shape.cols()).map(|c| g.iter().map(|r| r[c]).collect()));
        let total = lines.iter().map(|l| h.line(l)).sum();
        let size = lines.iter().map(|l| h.line(l).abs()).sum();
        (total, size)
    }

    #[test]
    fn line_terms_by_hand() {
        let h = Heuristic::default();
        let only = |f: &dyn Fn(&mut Heuristic)| {
            let mut z = Heuristic {
                empty_weight: 0.0,
                merges_weight: 0.0,
                monotonicity_weight: 0.0,
                sum_weight: 0.0,
                edge_weight: 0.0,
                ..h.clone()
            };
            f(&mut z);
            z
        };
        let empty = only(&|z| z.empty_weight = 1.0);
        assert_eq!(empty.line(&[0, 1, 0, 3]), 2.0);
        let merges = only(&|z| z.merges_weight = 1.0);
        // 2 _ 2 4: the two 2s meet across the gap (2 tiles); 4 4 4: 3 tiles.
        assert_eq!(merges.line(&[1, 0, 1, 2]), 2.0);
        assert_eq!(merges.line(&[2, 2, 2, 1]), 3.0);
        let mono = only(&|z| z.monotonicity_weight = 1.0);
        assert_eq!(mono.line(&[3, 2, 1, 0]), 0.0);
        // 1 3 2: up by 3^4 - 1 = 80, down by 3^4 - 2^4 = 65: min is 65.
        assert_eq!(mono.line(&[1, 3, 2]), -65.0);
        let edge = only(&|z| {
            z.edge_weight = 1.0;
            z.sum_power = 1.0
        });
        assert_eq!(edge.line(&[5, 3, 2, 7]), -5.0);
        assert_eq!(edge.line(&[5, 7]), 0.0);
    }

    #[test]
    fn tables_match_a_slow_per_board_computation() {
        let mut rng = SeededRng::new(11);
        let h = Heuristic::default();
        for n in Shape::all() {
            let tables = HeuristicTables::new(n, &h);
            for _ in 0..2000 {
                let mut x = 0u64;
                for r in 0..n.rows() {
                    for c in 0..n.cols() {
                        x |= rng.below(12) << (16 * r + 4 * c);
                    }
                }
                let fast = tables.board(x);
                let (slow, size) = slow_board(x, n, &h);
                assert!(
                    (fast - slow).abs() <= 1e-6 * size.max(1.0),
                    "{n} x={x:#x}: {fast} vs {slow}"
                );
                assert!(tables.lost < fast, "a lost position is worth less");
            }
        }
    }

    #[test]
    fn depth_one_takes_the_best_afterstate_heuristic() {
        let mut rng = SeededRng::new(3);
        for n in Shape::all() {
            let mover = Mover::new(n);
            let mut p = ExpectimaxPlayer::new(n, 1).unwrap();
            let tables = HeuristicTables::default_for(n);
            for _ in 0..500 {
                let x = rng.start(n);
                let x = rng.spawn(x, n);
                let best = legal_moves(&mover, x)
                    .map(|(d, a)| (d, tables.board(a)))
                    .fold(None, |acc: Option<(Direction, f64)>, (d, v)| match acc {
                        Some((_, b)) if b >= v => acc,
                        _ => Some((d, v)),
                    });
                assert_eq!(p.choose(x), best.map(|(d, _)| d));
            }
        }
    }

    #[test]
    fn depth_is_checked() {
        assert!(ExpectimaxPlayer::new(Shape::square(4), 0).is_err());
        assert!(ExpectimaxPlayer::new(Shape::square(4), MAX_DEPTH + 1).is_err());
    }
}
