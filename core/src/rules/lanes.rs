//! The AVX2 forms of the symmetry kernels on square boards of side 3 and 4
//! (`N`), a board or an image a 64-bit vector lane: `canonical4` (the
//! canonical forms of a state's four moves at once), `for_each_spawn` (the
//! canonical successors of an afterstate, the 8 images of each in two
//! vectors) and `for_each_spawn_of` (those of one tile). Callers check
//! [`take`] first: [`crate::rules::symmetry::Lanes`] runs them, and the
//! scalar forms are what the tests compare them with.
//!
//! The 8 images of a board are those of the board and of its transpose under
//! the flips (`T.H = V.T` on a square; a 3x3 board lies in the top-left block
//! of the 4x4 frame, which the transpose keeps). The vertical flip reverses a
//! lane's 16-bit rows (4 rows) or swaps rows 0 and 2 (3 rows), a byte
//! shuffle. The horizontal one reverses the nibbles of each row: of 4, the
//! row's bytes swapped and each byte's nibbles; of 3, nibbles 0 and 2 swap,
//! the low nibbles of the row's bytes swapped beside the high nibbles as
//! they were. AVX2 compares 64-bit lanes as signed: with the top bit
//! flipped, the signed order is the unsigned one.

use std::arch::x86_64::*;
use std::sync::OnceLock;

use crate::rules::board::{occupied_bits, LOW_BITS};
use crate::rules::shape::Shape;

/// Whether the lanes take boards of `shape` on this processor: a square of
/// side 3 or 4, and AVX2 (detected once, then cached by `std`).
#[inline]
pub fn take(shape: Shape) -> bool {
    (shape == Shape::square(4) || shape == Shape::square(3))
        && std::arch::is_x86_feature_detected!("avx2")
}

/// Swap the two nibbles of every byte.
#[inline]
#[target_feature(enable = "avx2")]
fn swap_nibbles(y: __m256i) -> __m256i {
    let low = _mm256_set1_epi8(0x0F);
    _mm256_or_si256(
        _mm256_and_si256(_mm256_srli_epi64::<4>(y), low),
        _mm256_slli_epi64::<4>(_mm256_and_si256(y, low)),
    )
}

/// Byte orders of a 64-bit lane (byte `i` of the result is byte `order[i]`
/// of the lane), as the control of a byte shuffle: the lane's bytes as
/// they are.
const SAME: [u8; 8] = [0, 1, 2, 3, 4, 5, 6, 7];
/// The 16-bit rows reversed: [`super::canonical::flip_v`] of 4 rows.
const ROWS_REVERSED: [u8; 8] = [6, 7, 4, 5, 2, 3, 0, 1];
/// Each row's two bytes swapped: with each byte's nibbles swapped,
/// [`super::canonical::flip_h`] of 4 columns.
const ROW_BYTES_SWAPPED: [u8; 8] = [1, 0, 3, 2, 5, 4, 7, 6];
/// All 8 bytes reversed: with each byte's nibbles swapped, both flips.
const BYTES_REVERSED: [u8; 8] = [7, 6, 5, 4, 3, 2, 1, 0];
/// Rows 0 and 2 swapped: [`super::canonical::flip_v`] of 3 rows.
const ROWS3_REVERSED: [u8; 8] = [4, 5, 2, 3, 0, 1, 6, 7];
/// Rows 0 and 2 swapped and each row's two bytes swapped: the low nibbles of
/// both flips of 3 rows and columns.
const ROWS3_REVERSED_BYTES_SWAPPED: [u8; 8] = [5, 4, 3, 2, 1, 0, 7, 6];

/// The low nibble of every byte of `low` beside the high nibble of `high`.
#[inline]
#[target_feature(enable = "avx2")]
fn nibbles_of(low: __m256i, high: __m256i) -> __m256i {
    let mask = _mm256_set1_epi8(0x0F);
    _mm256_or_si256(_mm256_and_si256(low, mask), _mm256_andnot_si256(mask, high))
}

/// A byte shuffle's control for lanes 0 to 3 of byte orders `orders`. The
/// shuffle indexes bytes within 128-bit halves: the upper lane of each half
/// counts from 8.
#[inline]
#[target_feature(enable = "avx2")]
fn shuffle_control(orders: [[u8; 8]; 4]) -> __m256i {
    let [a, b, c, d] = orders.map(|o| u64::from_le_bytes(o) as i64);
    let high = 0x0808_0808_0808_0808;
    _mm256_setr_epi64x(a, b + high, c, d + high)
}

/// Every lane's bytes in `order`.
#[inline]
#[target_feature(enable = "avx2")]
fn bytes(y: __m256i, order: [u8; 8]) -> __m256i {
    _mm256_shuffle_epi8(y, shuffle_control([order; 4]))
}

/// [`super::canonical::flip_v`] of `N` rows, lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_v<const N: usize>(y: __m256i) -> __m256i {
    match N {
        4 => bytes(y, ROWS_REVERSED),
        _ => bytes(y, ROWS3_REVERSED),
    }
}

/// [`super::canonical::flip_h`] of `N` columns, lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_h<const N: usize>(y: __m256i) -> __m256i {
    match N {
        4 => swap_nibbles(bytes(y, ROW_BYTES_SWAPPED)),
        _ => nibbles_of(bytes(y, ROW_BYTES_SWAPPED), y),
    }
}

/// Both flips of an `N` x `N` board, lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_hv<const N: usize>(y: __m256i) -> __m256i {
    match N {
        4 => swap_nibbles(bytes(y, BYTES_REVERSED)),
        _ => nibbles_of(
            bytes(y, ROWS3_REVERSED_BYTES_SWAPPED),
            bytes(y, ROWS3_REVERSED),
        ),
    }
}

/// [`super::canonical::transpose`], lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(x: __m256i) -> __m256i {
    let mask = |m: u64| _mm256_set1_epi64x(m as i64);
    let a = _mm256_or_si256(
        _mm256_and_si256(x, mask(0xF0F0_0F0F_F0F0_0F0F)),
        _mm256_or_si256(
            _mm256_slli_epi64::<12>(_mm256_and_si256(x, mask(0x0000_F0F0_0000_F0F0))),
            _mm256_srli_epi64::<12>(_mm256_and_si256(x, mask(0x0F0F_0000_0F0F_0000))),
        ),
    );
    _mm256_or_si256(
        _mm256_and_si256(a, mask(0xFF00_FF00_00FF_00FF)),
        _mm256_or_si256(
            _mm256_srli_epi64::<24>(_mm256_and_si256(a, mask(0x00FF_00FF_0000_0000))),
            _mm256_slli_epi64::<24>(_mm256_and_si256(a, mask(0x0000_0000_FF00_FF00))),
        ),
    )
}

/// [`crate::rules::canonical::canonical4`] of four `N` x `N` boards, a
/// board a lane; they come in as four registers (four 8-byte stores read
/// back as one 32-byte load would stall the load: no store forwarding).
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn canonical4<const N: usize>(a: u64, b: u64, c: u64, d: u64) -> [u64; 4] {
    let x = _mm256_setr_epi64x(a as i64, b as i64, c as i64, d as i64);
    let t = transpose(x);
    // A tree of minima, three deep, not a chain of seven.
    let top = _mm256_set1_epi64x(i64::MIN);
    let [a, b, c, d, e, f, g, h] = [
        x,
        flip_v::<N>(x),
        flip_h::<N>(x),
        flip_hv::<N>(x),
        t,
        flip_v::<N>(t),
        flip_h::<N>(t),
        flip_hv::<N>(t),
    ]
    .map(|y| _mm256_xor_si256(y, top));
    let ab_cd = least(least(a, b), least(c, d));
    let m = _mm256_xor_si256(least(ab_cd, least(least(e, f), least(g, h))), top);
    [
        _mm256_extract_epi64::<0>(m) as u64,
        _mm256_extract_epi64::<1>(m) as u64,
        _mm256_extract_epi64::<2>(m) as u64,
        _mm256_extract_epi64::<3>(m) as u64,
    ]
}

/// The lanes' least, lane by lane, of biased lanes (top bits flipped).
#[inline]
#[target_feature(enable = "avx2")]
fn least(a: __m256i, b: __m256i) -> __m256i {
    _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b))
}

/// The 8 images of `N` x `N` board `x` in the order of
/// [`crate::rules::canonical::images`]: `[x, H x, V x, HV x]` (each lane's
/// bytes permuted, then the H lanes' nibbles mended) and the transposes of
/// those.
#[inline]
#[target_feature(enable = "avx2")]
fn images<const N: usize>(x: u64) -> (__m256i, __m256i) {
    let x = _mm256_set1_epi64x(x as i64);
    let low = match N {
        4 => {
            let order = shuffle_control([SAME, ROW_BYTES_SWAPPED, ROWS_REVERSED, BYTES_REVERSED]);
            let bytes = _mm256_shuffle_epi8(x, order);
            _mm256_blend_epi32::<0b1100_1100>(bytes, swap_nibbles(bytes))
        }
        _ => {
            let swapped = [
                SAME,
                ROW_BYTES_SWAPPED,
                ROWS3_REVERSED,
                ROWS3_REVERSED_BYTES_SWAPPED,
            ];
            let kept = [SAME, SAME, ROWS3_REVERSED, ROWS3_REVERSED];
            nibbles_of(
                _mm256_shuffle_epi8(x, shuffle_control(swapped)),
                _mm256_shuffle_epi8(x, shuffle_control(kept)),
            )
        }
    };
    (low, transpose(low))
}

/// For each cell of the 4x4 frame, the shift of the nibble it lands on
/// under each of the symmetries of [`images`] of an `N` x `N` board, as
/// vector lanes: where a tile in that cell alone lands (cells outside the
/// board are never asked for).
#[target_feature(enable = "avx2")]
fn cell_shifts<const N: usize>() -> &'static [[u64; 8]; 16] {
    static FOUR: OnceLock<[[u64; 8]; 16]> = OnceLock::new();
    static THREE: OnceLock<[[u64; 8]; 16]> = OnceLock::new();
    let shifts = if N == 4 { &FOUR } else { &THREE };
    shifts.get_or_init(|| {
        std::array::from_fn(|cell| {
            let (low, high) = images::<N>(1 << (4 * cell));
            let mut lanes = [0u64; 8];
            // SAFETY: two 32-byte stores into the 64 bytes of `lanes`.
            unsafe {
                _mm256_storeu_si256(lanes.as_mut_ptr().cast(), low);
                _mm256_storeu_si256(lanes.as_mut_ptr().add(4).cast(), high);
            }
            lanes.map(|y| 4 * (y.trailing_zeros() / 4) as u64)
        })
    })
}

/// [`crate::rules::spawn::for_each_spawn`] on an `N` x `N` afterstate `t`:
/// for each empty cell, in increasing order, `f(two, four)` with the
/// canonical boards of a 2 and of a 4 placed there.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn for_each_spawn<const N: usize>(t: u64, mut f: impl FnMut(u64, u64)) {
    let top = _mm256_set1_epi64x(i64::MIN);
    let (low, high) = images::<N>(t);
    let (low, high) = (_mm256_xor_si256(low, top), _mm256_xor_si256(high, top));
    let (two, four) = (_mm256_set1_epi64x(1), _mm256_set1_epi64x(2));
    let shifts = cell_shifts::<N>();
    let block = const { Shape::square(N as u8).block_mask() & LOW_BITS };
    let mut empties = block & !occupied_bits(t);
    while empties != 0 {
        let (s_low, s_high) = cell_shift_lanes(&shifts[(empties.trailing_zeros() / 4) as usize]);
        // A spawned tile never reaches a lane's top bit: OR it into the
        // biased images.
        let spawned = |tile| {
            least(
                _mm256_or_si256(low, _mm256_sllv_epi64(tile, s_low)),
                _mm256_or_si256(high, _mm256_sllv_epi64(tile, s_high)),
            )
        };
        let (twos, fours) = (spawned(two), spawned(four));
        // [twos 0, fours 0, twos 2, fours 2] against lanes 1 and 3, then the
        // halves against each other: the 2's least in lane 0, the 4's in 1.
        let m = least(
            _mm256_unpacklo_epi64(twos, fours),
            _mm256_unpackhi_epi64(twos, fours),
        );
        let m = _mm256_xor_si256(least(m, _mm256_permute4x64_epi64::<0b01_00_11_10>(m)), top);
        f(
            _mm256_extract_epi64::<0>(m) as u64,
            _mm256_extract_epi64::<1>(m) as u64,
        );
        empties &= empties - 1;
    }
}

/// A cell's shifts ([`cell_shifts`]) as two vectors: those of the images
/// `[x, H x, V x, HV x]` and of their transposes.
#[inline]
#[target_feature(enable = "avx2")]
fn cell_shift_lanes(s: &[u64; 8]) -> (__m256i, __m256i) {
    // SAFETY: two unaligned 32-byte loads from the 64 bytes of `s`.
    unsafe {
        (
            _mm256_loadu_si256(s.as_ptr().cast()),
            _mm256_loadu_si256(s.as_ptr().add(4).cast()),
        )
    }
}

/// [`crate::rules::spawn::for_each_spawn_of`] on an `N` x `N` afterstate
/// `t`: for each empty cell, in increasing order, `f(board)` with the
/// canonical board of a tile of exponent `tile` placed there.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn for_each_spawn_of<const N: usize>(t: u64, tile: u8, mut f: impl FnMut(u64)) {
    let top = _mm256_set1_epi64x(i64::MIN);
    let (low, high) = images::<N>(t);
    let (low, high) = (_mm256_xor_si256(low, top), _mm256_xor_si256(high, top));
    let tile = _mm256_set1_epi64x(tile as i64);
    let shifts = cell_shifts::<N>();
    let block = const { Shape::square(N as u8).block_mask() & LOW_BITS };
    let mut empties = block & !occupied_bits(t);
    while empties != 0 {
        let (s_low, s_high) = cell_shift_lanes(&shifts[(empties.trailing_zeros() / 4) as usize]);
        let m = least(
            _mm256_or_si256(low, _mm256_sllv_epi64(tile, s_low)),
            _mm256_or_si256(high, _mm256_sllv_epi64(tile, s_high)),
        );
        // Lanes 0 and 1 against 2 and 3, then lane 0 against lane 1.
        let m = least(m, _mm256_permute4x64_epi64::<0b01_00_11_10>(m));
        let m = least(m, _mm256_permute4x64_epi64::<0b10_11_00_01>(m));
        f((_mm256_extract_epi64::<0>(m) as u64) ^ (1 << 63));
        empties &= empties - 1;
    }
}
