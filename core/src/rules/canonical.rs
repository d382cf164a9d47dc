//! The 8 symmetries of the square (the dihedral group D4) on the bitboard, and
//! canonical forms.
//!
//! Symmetry `g` (0..8) is `T^(g>>2) . H^(g&1) . V^((g>>1)&1)`: first an
//! optional vertical flip `V` (rows reversed), then an optional horizontal flip
//! `H` (columns reversed), then an optional transpose `T`. The canonical form
//! of a board is the numerically smallest of its 8 images.

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

/// Reverse the columns of the `n x n` block.
#[inline(always)]
pub fn flip_h(x: u64, n: usize) -> u64 {
    match n {
        4 => ((x & C0) << 12) | ((x & C1) << 4) | ((x & C2) >> 4) | ((x & C3) >> 12),
        3 => ((x & C0) << 8) | (x & C1) | ((x & C2) >> 8),
        _ => ((x & C0) << 4) | ((x & C1) >> 4),
    }
}

/// Reverse the rows of the `n x n` block.
#[inline(always)]
pub fn flip_v(x: u64, n: usize) -> u64 {
    const R0: u64 = 0xFFFF;
    match n {
        4 => ((x & R0) << 48) | ((x & (R0 << 16)) << 16) | ((x >> 16) & (R0 << 16)) | (x >> 48),
        3 => ((x & R0) << 32) | (x & (R0 << 16)) | ((x >> 32) & R0),
        _ => ((x & R0) << 16) | ((x >> 16) & R0),
    }
}

/// Image of `x` under symmetry `g` (see the module docs).
#[inline(always)]
pub fn image(x: u64, n: usize, g: usize) -> u64 {
    let mut y = x;
    if g & 2 != 0 {
        y = flip_v(y, n);
    }
    if g & 1 != 0 {
        y = flip_h(y, n);
    }
    if g & 4 != 0 {
        y = transpose(y);
    }
    y
}

/// All 8 images of `x`, indexed by symmetry.
#[inline(always)]
pub fn images(x: u64, n: usize) -> [u64; 8] {
    let v = flip_v(x, n);
    let h = flip_h(x, n);
    let hv = flip_h(v, n);
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
}

/// The canonical form: the smallest of the 8 images.
#[inline(always)]
pub fn canonical(x: u64, n: usize) -> u64 {
    let im = images(x, n);
    let a = im[0].min(im[1]).min(im[2].min(im[3]));
    let b = im[4].min(im[5]).min(im[6].min(im[7]));
    a.min(b)
}

/// The canonical form together with the first symmetry `g` that produces it
/// (`image(x, n, g) == canonical(x, n)`).
pub fn canonical_with_symmetry(x: u64, n: usize) -> (u64, usize) {
    let im = images(x, n);
    let mut best = (im[0], 0);
    for (g, &y) in im.iter().enumerate().skip(1) {
        if y < best.0 {
            best = (y, g);
        }
    }
    best
}

/// The symmetry that undoes `g` (`image(image(x, g), inverse(g)) == x`).
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
/// `image(apply(x, dir), g) == apply(image(x, g), direction_image(dir, g))`.
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
        for n in 2..=4 {
            for _ in 0..2000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let x = seed & crate::rules::board::block_mask(n);
                for g in 0..8 {
                    assert_eq!(image(x, n, g), slow::image(x, n, g), "n={n} g={g} x={x:#x}");
                    assert_eq!(
                        image(image(x, n, g), n, inverse(g)),
                        x,
                        "inverse n={n} g={g}"
                    );
                }
                assert_eq!(
                    images(x, n).to_vec(),
                    (0..8).map(|g| image(x, n, g)).collect::<Vec<_>>()
                );
            }
        }
    }
}
