//! The AVX2 forms of the symmetry kernels on 4x4 boards, a board or an
//! image a 64-bit vector lane: `canonical4` (the canonical forms of a
//! state's four moves at once) and `for_each_spawn` (the canonical
//! successors of an afterstate, the 8 images of each in two vectors).
//! Callers check [`available`] first; [`crate::rules::canonical::canonical4`]
//! and [`crate::rules::spawn::for_each_spawn`] choose them, and the scalar
//! forms are what the tests compare them with.
//!
//! The 8 images of a board are those of the board and of its transpose under
//! the flips (`T.H = V.T` on a square); the vertical flip reverses a lane's
//! 16-bit rows and the horizontal one the nibbles of each row, both by byte
//! shuffles. AVX2 compares 64-bit lanes as signed: with the top bit flipped,
//! the signed order is the unsigned one.

use std::arch::x86_64::*;
use std::sync::OnceLock;

use crate::rules::board::{occupied_bits, LOW_BITS};

/// Whether this processor has AVX2 (detected once, then cached by `std`).
#[inline]
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
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

/// [`super::canonical::flip_v`] of 4 rows, lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_v(y: __m256i) -> __m256i {
    bytes(y, ROWS_REVERSED)
}

/// [`super::canonical::flip_h`] of 4 columns, lane by lane.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_h(y: __m256i) -> __m256i {
    swap_nibbles(bytes(y, ROW_BYTES_SWAPPED))
}

/// Both flips, lane by lane: the lane's 16 nibbles reversed.
#[inline]
#[target_feature(enable = "avx2")]
fn flip_hv(y: __m256i) -> __m256i {
    swap_nibbles(bytes(y, BYTES_REVERSED))
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

/// [`crate::rules::canonical::canonical4`] of four 4x4 boards, a board a
/// lane; they come in as four registers (four 8-byte stores read back as
/// one 32-byte load would stall the load: no store forwarding).
#[target_feature(enable = "avx2")]
pub(crate) fn canonical4(a: u64, b: u64, c: u64, d: u64) -> [u64; 4] {
    let x = _mm256_setr_epi64x(a as i64, b as i64, c as i64, d as i64);
    let t = transpose(x);
    // A tree of minima, three deep, not a chain of seven.
    let top = _mm256_set1_epi64x(i64::MIN);
    let [a, b, c, d, e, f, g, h] = [
        x,
        flip_v(x),
        flip_h(x),
        flip_hv(x),
        t,
        flip_v(t),
        flip_h(t),
        flip_hv(t),
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

/// The 8 images of 4x4 board `x` in the order of
/// [`crate::rules::canonical::images`]: `[x, H x, V x, HV x]` (each lane's
/// bytes permuted, then the nibbles of the H lanes swapped) and the
/// transposes of those.
#[inline]
#[target_feature(enable = "avx2")]
fn images(x: u64) -> (__m256i, __m256i) {
    let order = shuffle_control([SAME, ROW_BYTES_SWAPPED, ROWS_REVERSED, BYTES_REVERSED]);
    let bytes = _mm256_shuffle_epi8(_mm256_set1_epi64x(x as i64), order);
    let low = _mm256_blend_epi32::<0b1100_1100>(bytes, swap_nibbles(bytes));
    (low, transpose(low))
}

/// For each cell of the 4x4 board, the shift of the nibble it lands on
/// under each of the symmetries of [`images`], as vector lanes: where a
/// tile in that cell alone lands.
#[target_feature(enable = "avx2")]
fn cell_shifts() -> &'static [[u64; 8]; 16] {
    static SHIFTS: OnceLock<[[u64; 8]; 16]> = OnceLock::new();
    SHIFTS.get_or_init(|| {
        std::array::from_fn(|cell| {
            let (low, high) = images(1 << (4 * cell));
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

/// [`crate::rules::spawn::for_each_spawn`] on a 4x4 afterstate `t`: for
/// each empty cell, in increasing order, `f(two, four)` with the canonical
/// boards of a 2 and of a 4 placed there.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn for_each_spawn(t: u64, mut f: impl FnMut(u64, u64)) {
    let top = _mm256_set1_epi64x(i64::MIN);
    let (low, high) = images(t);
    let (low, high) = (_mm256_xor_si256(low, top), _mm256_xor_si256(high, top));
    let (two, four) = (_mm256_set1_epi64x(1), _mm256_set1_epi64x(2));
    let shifts = cell_shifts();
    let mut empties = LOW_BITS & !occupied_bits(t);
    while empties != 0 {
        let cell = (empties.trailing_zeros() / 4) as usize;
        let s = &shifts[cell];
        let s_low = _mm256_setr_epi64x(s[0] as i64, s[1] as i64, s[2] as i64, s[3] as i64);
        let s_high = _mm256_setr_epi64x(s[4] as i64, s[5] as i64, s[6] as i64, s[7] as i64);
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
