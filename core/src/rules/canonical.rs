//! The symmetries of the board on the bitboard, and canonical forms: the 8 of
//! the square (the dihedral group D4), the 4 of a rectangle.
//!
//! Symmetry `g` (0..8) is `T^(g>>2) . H^(g&1) . V^((g>>1)&1)`: first an
//! optional vertical flip `V` (rows reversed), then an optional horizontal flip
//! `H` (columns reversed), then an optional transpose `T`. A rectangle has no
//! transpose: its symmetries are 0..4, and symmetry `g + 4` is taken as `g`
//! wherever a table runs over all 8. The canonical form of a board is the
//! numerically smallest of its images.

use std::sync::OnceLock;

use crate::rules::shape::Shape;

/// Transpose the 4x4 frame: cell `(r, c)` goes to `(c, r)`. An `n x n` block
/// in the top-left corner stays in the top-left corner.
#[inline(always)]
pub fn transpose(x: u64) -> u64 {
    let a1 = x & 0xF0F0_0F0F_F0F0_0F0F;
    let a2 = x & 0x0000_F0F0_0000_F0F0;
    let a3 = x & 0x0F0F_0000_0F0F_0000;
    let a = a1 | (a2 << 12) | (a3 >> 12);
    let b1 = a & 0xFF00_FF00_00FF_00FF;
    let b2 = a & 0x00FF_00FF_0000_0000;
    let b3 = a & 0x0000_0000_FF00_FF00;
    b1 | (b2 >> 24) | (b3 << 24)
}

const C0: u64 = 0x000F_000F_000F_000F;
const C1: u64 = C0 << 4;
const C2: u64 = C0 << 8;
const C3: u64 = C0 << 12;

/// Reverse the columns of a block of `cols` columns (of any rows).
#[inline(always)]
pub fn flip_h(x: u64, cols: usize) -> u64 {
    match cols {
        4 => ((x & C0) << 12) | ((x & C1) << 4) | ((x & C2) >> 4) | ((x & C3) >> 12),
        3 => ((x & C0) << 8) | (x & C1) | ((x & C2) >> 8),
        _ => ((x & C0) << 4) | ((x & C1) >> 4),
    }
}

/// Reverse the rows of a block of `rows` rows.
#[inline(always)]
pub fn flip_v(x: u64, rows: usize) -> u64 {
    const R0: u64 = 0xFFFF;
    match rows {
        4 => ((x & R0) << 48) | ((x & (R0 << 16)) << 16) | ((x >> 16) & (R0 << 16)) | (x >> 48),
        3 => ((x & R0) << 32) | (x & (R0 << 16)) | ((x >> 32) & R0),
        _ => ((x & R0) << 16) | ((x >> 16) & R0),
    }
}

/// Image of `x` under symmetry `g` (see the module docs; a rectangle
/// takes `g + 4` as `g`).
#[inline(always)]
pub fn image(x: u64, shape: Shape, g: usize) -> u64 {
    let mut y = x;
    if g & 2 != 0 {
        y = flip_v(y, shape.rows());
    }
    if g & 1 != 0 {
        y = flip_h(y, shape.cols());
    }
    if g & 4 != 0 && shape.is_square() {
        y = transpose(y);
    }
    y
}

/// All 8 images of `x`, indexed by symmetry (a rectangle's 4 twice).
#[inline(always)]
pub fn images(x: u64, shape: Shape) -> [u64; 8] {
    let v = flip_v(x, shape.rows());
    let h = flip_h(x, shape.cols());
    let hv = flip_h(v, shape.cols());
    if shape.is_square() {
        [
            x,
            h,
            v,
            hv,
            transpose(x),
            transpose(h),
            transpose(v),
            transpose(hv),
        ]
    } else {
        [x, h, v, hv, x, h, v, hv]
    }
}

/// The canonical form: the smallest of the images.
#[inline(always)]
pub fn canonical(x: u64, shape: Shape) -> u64 {
    let im = images(x, shape);
    let a = im[0].min(im[1]).min(im[2].min(im[3]));
    let b = im[4].min(im[5]).min(im[6].min(im[7]));
    a.min(b)
}

/// How boards are keyed: by canonical form (a solve: one key for a board's
/// images) or as they lie (an evaluation: a player need not play alike on
/// the images of a board).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// Canonical forms ([`canonical`]).
    Canonical,
    /// Boards as they lie.
    AsTheyLie,
}

/// The canonical form together with the first symmetry `g` that produces it
/// (`image(x, shape, g) == canonical(x, shape)`; `g < shape.symmetries()`).
pub fn canonical_with_symmetry(x: u64, shape: Shape) -> (u64, usize) {
    let im = images(x, shape);
    let mut best = (im[0], 0);
    for (g, &y) in im.iter().enumerate().take(shape.symmetries()).skip(1) {
        if y < best.0 {
            best = (y, g);
        }
    }
    best
}

/// `cell_images(shape)[g][cell]`: the nybble index that cell `cell` lands on
/// under symmetry `g` ([`image`]). Cells outside the block map to themselves
/// and are never used. Built once a shape, on first call.
pub fn cell_images(shape: Shape) -> &'static [[u8; 16]; 8] {
    static TABLES: [OnceLock<[[u8; 16]; 8]>; 9] = [const { OnceLock::new() }; 9];
    TABLES[shape.index()].get_or_init(|| {
        let mut pos = [[0u8; 16]; 8];
        for (g, map) in pos.iter_mut().enumerate() {
            for (cell, p) in map.iter_mut().enumerate() {
                let marker = 1u64 << (4 * cell);
                let img = if marker & shape.block_mask() != 0 {
                    image(marker, shape, g)
                } else {
                    marker
                };
                *p = (img.trailing_zeros() / 4) as u8;
            }
        }
        pos
    })
}

/// The symmetry that undoes `g` (`image(image(x, g), inverse(g)) == x`;
/// `g` of the board's symmetries, `0..shape.symmetries()`).
pub fn inverse(g: usize) -> usize {
    // H and V commute and are involutions; T.H = V.T and T.V = H.T, so the
    // inverse of T.H^a.V^b is H^a.V^b.T = T.V^a.H^b.
    if g & 4 == 0 {
        g
    } else {
        4 | ((g & 1) << 1) | ((g >> 1) & 1)
    }
}

/// The direction that plays the role of `dir` on the image under symmetry `g`:
/// `image(apply(x, dir), g) == apply(image(x, g), direction_image(dir, g))`
/// (`g` of the board's symmetries, `0..shape.symmetries()`).
pub fn direction_image(dir: crate::Direction, g: usize) -> crate::Direction {
    use crate::Direction::*;
    let mut d = dir;
    if g & 2 != 0 {
        d = match d {
            Up => Down,
            Down => Up,
            other => other,
        };
    }
    if g & 1 != 0 {
        d = match d {
            Left => Right,
            Right => Left,
            other => other,
        };
    }
    if g & 4 != 0 {
        d = match d {
            Left => Up,
            Up => Left,
            Right => Down,
            Down => Right,
        };
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::slow;

    #[test]
    fn images_match_slow_permutations() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for shape in Shape::all() {
            for _ in 0..2000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = seed & shape.block_mask();
                for g in 0..shape.symmetries() {
                    assert_eq!(
                        image(x, shape, g),
                        slow::image(x, shape, g),
                        "{shape} g={g} x={x:#x}"
                    );
                    assert_eq!(
                        image(image(x, shape, g), shape, inverse(g)),
                        x,
                        "inverse {shape} g={g}"
                    );
                }
                assert_eq!(
                    images(x, shape).to_vec(),
                    (0..8).map(|g| image(x, shape, g)).collect::<Vec<_>>()
                );
                let (c, g) = canonical_with_symmetry(x, shape);
                assert_eq!((c, image(x, shape, g)), (canonical(x, shape), c));
                assert_eq!(c, slow::canonical(x, shape), "{shape} x={x:#x}");
            }
        }
    }
}
