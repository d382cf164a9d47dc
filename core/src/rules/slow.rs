//! A deliberately slow, obvious implementation of the rules: cells in arrays,
//! loops instead of tables and bit tricks. The fast code is built from it
//! (the row tables) and tested against it (moves, symmetries, successors,
//! whole-game counts and values on small games).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::rules::direction::Direction;
use crate::rules::shape::Shape;
use crate::{Game, Objective};

/// Slide one line toward index 0: tiles move as far as they go; two equal
/// tiles that meet merge once, resolving from the index-0 end.
pub fn slide_line(cells: &[u8]) -> Vec<u8> {
    let tiles: Vec<u8> = cells.iter().copied().filter(|&e| e != 0).collect();
    let mut out = Vec::with_capacity(cells.len());
    let mut i = 0;
    while i < tiles.len() {
        if i + 1 < tiles.len() && tiles[i] == tiles[i + 1] {
            out.push(tiles[i] + 1);
            i += 2;
        } else {
            out.push(tiles[i]);
            i += 1;
        }
    }
    out.resize(cells.len(), 0);
    out
}

/// [`slide_line`] and the score of the slide: the standard 2048 score, the
/// sum of the values `2^e` of the tiles that merges create.
pub fn slide_line_score(cells: &[u8]) -> (Vec<u8>, u32) {
    let tiles: Vec<u8> = cells.iter().copied().filter(|&e| e != 0).collect();
    let mut out = Vec::with_capacity(cells.len());
    let mut score = 0u32;
    let mut i = 0;
    while i < tiles.len() {
        if i + 1 < tiles.len() && tiles[i] == tiles[i + 1] {
            out.push(tiles[i] + 1);
            score += 1u32 << (tiles[i] + 1);
            i += 2;
        } else {
            out.push(tiles[i]);
            i += 1;
        }
    }
    out.resize(cells.len(), 0);
    (out, score)
}

/// The board as a grid of exponents, `rows` rows of `cols`.
pub fn to_grid(x: u64, shape: Shape) -> Vec<Vec<u8>> {
    (0..shape.rows())
        .map(|r| {
            (0..shape.cols())
                .map(|c| ((x >> (16 * r + 4 * c)) & 0xF) as u8)
                .collect()
        })
        .collect()
}

/// The grid back as a bitboard.
pub fn from_grid(g: &[Vec<u8>]) -> u64 {
    let mut x = 0u64;
    for (r, row) in g.iter().enumerate() {
        for (c, &e) in row.iter().enumerate() {
            x |= (e as u64) << (16 * r + 4 * c);
        }
    }
    x
}

/// The board after a move, computed line by line on the grid.
pub fn apply(x: u64, shape: Shape, dir: Direction) -> u64 {
    apply_score(x, shape, dir).0
}

/// The board after a move and the move's score (see [`slide_line_score`]),
/// line by line on the grid: rows of `cols` cells for left and right,
/// columns of `rows` cells for up and down.
pub fn apply_score(x: u64, shape: Shape, dir: Direction) -> (u64, u32) {
    let (rows, cols) = (shape.rows(), shape.cols());
    let g = to_grid(x, shape);
    let mut out = vec![vec![0u8; cols]; rows];
    let mut score = 0;
    let (lines, len) = match dir {
        Direction::Left | Direction::Right => (rows, cols),
        Direction::Up | Direction::Down => (cols, rows),
    };
    for i in 0..lines {
        // Read line i in the direction of travel, slide toward index 0, write back.
        let idx = |k: usize| -> (usize, usize) {
            match dir {
                Direction::Left => (i, k),
                Direction::Right => (i, len - 1 - k),
                Direction::Up => (k, i),
                Direction::Down => (len - 1 - k, i),
            }
        };
        let line: Vec<u8> = (0..len)
            .map(|k| {
                let (r, c) = idx(k);
                g[r][c]
            })
            .collect();
        let (slid, s) = slide_line_score(&line);
        score += s;
        for (k, e) in slid.into_iter().enumerate() {
            let (r, c) = idx(k);
            out[r][c] = e;
        }
    }
    (from_grid(&out), score)
}

/// Image under symmetry `g` (`g < shape.symmetries()`): optional row flip,
/// then column flip, then transpose (squares only).
pub fn image(x: u64, shape: Shape, g: usize) -> u64 {
    assert!(g < shape.symmetries(), "{shape} has no symmetry {g}");
    let n = shape.rows();
    let mut grid = to_grid(x, shape);
    if g & 2 != 0 {
        grid.reverse();
    }
    if g & 1 != 0 {
        for row in grid.iter_mut() {
            row.reverse();
        }
    }
    if g & 4 != 0 {
        let t: Vec<Vec<u8>> = (0..n)
            .map(|r| (0..n).map(|c| grid[c][r]).collect())
            .collect();
        grid = t;
    }
    from_grid(&grid)
}

/// Smallest image over the board's symmetries (8 for a square, 4 for a
/// rectangle).
pub fn canonical(x: u64, shape: Shape) -> u64 {
    (0..shape.symmetries())
        .map(|g| image(x, shape, g))
        .min()
        .unwrap()
}

/// No move changes the board.
pub fn is_lost(x: u64, shape: Shape) -> bool {
    Direction::ALL.iter().all(|&d| apply(x, shape, d) == x)
}

/// Some cell holds the target exponent.
pub fn is_won(x: u64, shape: Shape, target_exp: u8) -> bool {
    to_grid(x, shape).iter().flatten().any(|&e| e == target_exp)
}

/// Every placement of a 2 (probability `1 - four`) or a 4 (probability
/// `four`) in an empty cell, each with its probability, empty cells in
/// row-major order; placements of probability 0 are left out.
pub fn spawns(x: u64, shape: Shape, four: f64) -> Vec<(u64, f64)> {
    let grid = to_grid(x, shape);
    let empty: Vec<(usize, usize)> = (0..shape.rows())
        .flat_map(|r| (0..shape.cols()).map(move |c| (r, c)))
        .filter(|&(r, c)| grid[r][c] == 0)
        .collect();
    let k = empty.len() as f64;
    let mut out = Vec::new();
    for &(r, c) in &empty {
        for (e, p) in [(1u8, 1.0 - four), (2u8, four)] {
            if p == 0.0 {
                continue;
            }
            let mut g = grid.clone();
            g[r][c] = e;
            out.push((from_grid(&g), p / k));
        }
    }
    out
}

/// The start distribution: two tiles placed on the empty board, as canonical
/// boards with their probabilities (a 4 with probability `four`).
pub fn starts(shape: Shape, four: f64) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    for (one, p1) in spawns(0, shape, four) {
        for (two, p2) in spawns(one, shape, four) {
            *out.entry(canonical(two, shape)).or_insert(0.0) += p1 * p2;
        }
    }
    out
}

/// Tile sum of a board.
pub fn tile_sum(x: u64, shape: Shape) -> u32 {
    to_grid(x, shape)
        .iter()
        .flatten()
        .filter(|&&e| e != 0)
        .map(|&e| 1u32 << e)
        .sum()
}

/// Largest exponent on a board.
pub fn max_exp(x: u64, shape: Shape) -> u8 {
    to_grid(x, shape)
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(0)
}

/// Every non-terminal canonical state reachable in `game` (by spawns of
/// probability above 0), grouped by
/// `(tile sum, max exponent)`, by plain breadth-first search. Small games only.
pub fn enumerate(game: &Game) -> BTreeMap<(u32, u8), BTreeSet<u64>> {
    let shape = game.shape;
    let four = game.four_probability();
    let mut seen: BTreeSet<u64> = starts(shape, four).keys().copied().collect();
    let mut frontier: Vec<u64> = seen.iter().copied().collect();
    while let Some(s) = frontier.pop() {
        for d in Direction::ALL {
            let t = apply(s, shape, d);
            if t == s || is_won(t, shape, game.target_exp) {
                continue;
            }
            for (next, _) in spawns(t, shape, four) {
                if is_lost(next, shape) {
                    continue;
                }
                let c = canonical(next, shape);
                if seen.insert(c) {
                    frontier.push(c);
                }
            }
        }
    }
    let mut parts: BTreeMap<(u32, u8), BTreeSet<u64>> = BTreeMap::new();
    for s in seen {
        parts
            .entry((tile_sum(s, shape), max_exp(s, shape)))
            .or_default()
            .insert(s);
    }
    parts
}

/// Optimal values of every state of [`enumerate`] under the game's
/// objective, by memoised recursion in decreasing tile sum. Small games
/// only.
pub fn solve(game: &Game) -> HashMap<u64, f64> {
    let shape = game.shape;
    let parts = enumerate(game);
    let mut states: Vec<u64> = parts.values().flatten().copied().collect();
    states.sort_by_key(|&s| std::cmp::Reverse(tile_sum(s, shape)));
    let mut value: HashMap<u64, f64> = HashMap::new();
    for s in states {
        let mut best = 0.0f64;
        for d in Direction::ALL {
            let (t, points) = apply_score(s, shape, d);
            if t == s {
                continue;
            }
            // Reaching the target is worth 1 to a player who wants to win
            // and ends the game for one who wants to score; each merge is
            // worth its tile to the second.
            let (earned, end) = match game.objective {
                Objective::Win => (0.0, 1.0),
                Objective::Score => (f64::from(points), 0.0),
            };
            let q = if is_won(t, shape, game.target_exp) {
                end
            } else {
                spawns(t, shape, game.four_probability())
                    .into_iter()
                    .map(|(next, p)| {
                        if is_lost(next, shape) {
                            0.0
                        } else {
                            p * value[&canonical(next, shape)]
                        }
                    })
                    .sum()
            };
            best = best.max(earned + game.discount * q);
        }
        value.insert(s, best);
    }
    value
}
