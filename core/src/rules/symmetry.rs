//! The symmetry kernels as a kernel's inner loop runs them: the canonical
//! forms of a state's four moves and the canonical spawns of an afterstate,
//! chosen once for a whole loop ([`with_symmetry!`]) rather than once a
//! board.
//!
//! On a 3x3 or 4x4 board of an x86-64 processor with AVX2 the loop's body
//! is compiled a second time with AVX2 enabled and runs on [`Lanes`], whose
//! vector forms then inline into it (called a board at a time from code
//! without AVX2, the canonical forms of a state's moves took twice as
//! long); elsewhere it runs on [`Scalar`]. Both give the same boards: the
//! tests compare them with the slow rules.

use crate::rules::board::empty_bits;
use crate::rules::canonical::{canonical, cell_images, images};
use crate::rules::shape::Shape;

/// The symmetry kernels of one board shape.
pub trait Symmetry: Copy {
    /// The canonical forms of the boards of `xs` that `wanted` marks (0 for
    /// the others): a state's four moves.
    fn canonical4(self, xs: [u64; 4], wanted: [bool; 4]) -> [u64; 4];

    /// Calls `f(two, four)` for each empty cell of afterstate `t`, in
    /// increasing cell order, with the canonical boards made by placing a 2
    /// and a 4 there.
    fn for_each_spawn(self, t: u64, f: impl FnMut(u64, u64));

    /// [`Symmetry::for_each_spawn`] of one tile, of exponent `tile` (1 for a
    /// 2, 2 for a 4): `f(board)` for each empty cell.
    fn for_each_spawn_of(self, t: u64, tile: u8, f: impl FnMut(u64));
}

/// The symmetry kernels of any shape, a board at a time: the 8 images of a
/// board (a rectangle's 4, twice) made once, and a spawned tile ORed into
/// each image where its cell lands.
#[derive(Clone, Copy)]
pub struct Scalar {
    shape: Shape,
    cells: &'static [[u8; 16]; 8],
}

impl Scalar {
    /// The kernels of boards of `shape`.
    pub fn new(shape: Shape) -> Scalar {
        Scalar {
            shape,
            cells: cell_images(shape),
        }
    }
}

impl Symmetry for Scalar {
    #[inline(always)]
    fn canonical4(self, xs: [u64; 4], wanted: [bool; 4]) -> [u64; 4] {
        std::array::from_fn(|i| match wanted[i] {
            true => canonical(xs[i], self.shape),
            false => 0,
        })
    }

    #[inline(always)]
    fn for_each_spawn(self, t: u64, mut f: impl FnMut(u64, u64)) {
        let im = images(t, self.shape);
        let mut empties = empty_bits(t, self.shape);
        while empties != 0 {
            let cell = (empties.trailing_zeros() / 4) as usize;
            let (mut two, mut four) = (u64::MAX, u64::MAX);
            for (g, &img) in im.iter().enumerate() {
                let shift = 4 * self.cells[g][cell] as u32;
                two = two.min(img | (1u64 << shift));
                four = four.min(img | (2u64 << shift));
            }
            f(two, four);
            empties &= empties - 1;
        }
    }

    #[inline(always)]
    fn for_each_spawn_of(self, t: u64, tile: u8, mut f: impl FnMut(u64)) {
        let im = images(t, self.shape);
        let mut empties = empty_bits(t, self.shape);
        while empties != 0 {
            let cell = (empties.trailing_zeros() / 4) as usize;
            let mut best = u64::MAX;
            for (g, &img) in im.iter().enumerate() {
                best = best.min(img | ((tile as u64) << (4 * self.cells[g][cell] as u32)));
            }
            f(best);
            empties &= empties - 1;
        }
    }
}

/// Boards as they lie, with no symmetry: the "canonical" form of a board is
/// the board, and a spawn is the afterstate with the tile added (an
/// evaluation: a player need not play alike on the images of a board).
#[derive(Clone, Copy)]
pub struct AsTheyLie {
    shape: Shape,
}

impl AsTheyLie {
    /// The kernels of boards of `shape`, as they lie.
    pub fn new(shape: Shape) -> AsTheyLie {
        AsTheyLie { shape }
    }
}

impl Symmetry for AsTheyLie {
    #[inline(always)]
    fn canonical4(self, xs: [u64; 4], wanted: [bool; 4]) -> [u64; 4] {
        std::array::from_fn(|i| if wanted[i] { xs[i] } else { 0 })
    }

    #[inline(always)]
    fn for_each_spawn(self, t: u64, mut f: impl FnMut(u64, u64)) {
        let mut empties = empty_bits(t, self.shape);
        while empties != 0 {
            let bit = empties & empties.wrapping_neg();
            f(t | bit, t | (bit << 1));
            empties &= empties - 1;
        }
    }

    #[inline(always)]
    fn for_each_spawn_of(self, t: u64, tile: u8, mut f: impl FnMut(u64)) {
        let mut empties = empty_bits(t, self.shape);
        while empties != 0 {
            let bit = empties & empties.wrapping_neg();
            f(t | (bit * tile as u64));
            empties &= empties - 1;
        }
    }
}

/// The symmetry kernels of an `N` x `N` board (3 or 4) in AVX2 vector
/// lanes ([`crate::rules::lanes`]). Made only where the processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub struct Lanes<const N: usize> {
    _avx2: (),
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize> Lanes<N> {
    /// The lanes' kernels.
    ///
    /// # Safety
    /// The processor has AVX2 ([`crate::rules::lanes::take`]).
    #[inline(always)]
    pub unsafe fn new() -> Lanes<N> {
        Lanes { _avx2: () }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const N: usize> Symmetry for Lanes<N> {
    #[inline(always)]
    fn canonical4(self, xs: [u64; 4], wanted: [bool; 4]) -> [u64; 4] {
        let [a, b, c, d] = xs;
        // SAFETY: a `Lanes` is made only where the processor has AVX2.
        let keys = unsafe { crate::rules::lanes::canonical4::<N>(a, b, c, d) };
        std::array::from_fn(|i| if wanted[i] { keys[i] } else { 0 })
    }

    #[inline(always)]
    fn for_each_spawn(self, t: u64, f: impl FnMut(u64, u64)) {
        // SAFETY: as above.
        unsafe { crate::rules::lanes::for_each_spawn::<N>(t, f) }
    }

    #[inline(always)]
    fn for_each_spawn_of(self, t: u64, tile: u8, f: impl FnMut(u64)) {
        // SAFETY: as above.
        unsafe { crate::rules::lanes::for_each_spawn_of::<N>(t, tile, f) }
    }
}

/// Runs `f` with AVX2 enabled: the closure, called once, inlines here and
/// is compiled with it.
///
/// # Safety
/// The processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[doc(hidden)]
#[target_feature(enable = "avx2")]
pub unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The canonical forms of the boards of `xs` that `wanted` marks
/// ([`canonical`](crate::rules::canonical::canonical) of each; 0 for the others): a state's four moves. On a
/// 3x3 or 4x4 board of an x86-64 processor with AVX2 (checked at run time),
/// the four are computed at once, a board a vector lane. A kernel's loop
/// chooses its [`Symmetry`] once instead.
#[inline]
pub fn canonical4(xs: [u64; 4], wanted: [bool; 4], shape: Shape) -> [u64; 4] {
    crate::with_symmetry!(shape, |sym| sym.canonical4(xs, wanted))
}

/// `with_symmetry!(shape, |sym| body)`: `body` with `sym` bound to the
/// fastest [`Symmetry`] of canonical boards of `shape`, chosen once: on a
/// 3x3 or 4x4 board of a processor with AVX2, [`Lanes`] with `body`
/// compiled with AVX2; elsewhere [`Scalar`]. `body` is written once and
/// compiled for each, and must not `return` or use `?` (it runs in a
/// closure).
///
/// `with_symmetry!(orientation, shape, |sym| body)`: the same for boards
/// keyed by `orientation` ([`crate::rules::canonical::Orientation`]): as
/// they lie, [`AsTheyLie`].
#[macro_export]
macro_rules! with_symmetry {
    ($shape:expr, |$sym:ident| $body:expr) => {{
        let shape: $crate::Shape = $shape;
        $crate::with_symmetry!(@lanes shape, $sym, $body)
    }};
    ($orientation:expr, $shape:expr, |$sym:ident| $body:expr) => {{
        let shape: $crate::Shape = $shape;
        match $orientation {
            $crate::rules::canonical::Orientation::AsTheyLie => {
                let $sym = $crate::rules::symmetry::AsTheyLie::new(shape);
                $body
            }
            $crate::rules::canonical::Orientation::Canonical => {
                $crate::with_symmetry!(@lanes shape, $sym, $body)
            }
        }
    }};
    (@lanes $shape:ident, $sym:ident, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            use $crate::rules::symmetry::{avx2, Lanes};
            if $crate::rules::lanes::take($shape) {
                if $shape.rows() == 4 {
                    // SAFETY: `take` found AVX2.
                    unsafe {
                        avx2(|| {
                            let $sym = Lanes::<4>::new();
                            $body
                        })
                    }
                } else {
                    // SAFETY: as above.
                    unsafe {
                        avx2(|| {
                            let $sym = Lanes::<3>::new();
                            $body
                        })
                    }
                }
            } else {
                let $sym = $crate::rules::symmetry::Scalar::new($shape);
                $body
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let $sym = $crate::rules::symmetry::Scalar::new($shape);
            $body
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::canonical::image;
    use crate::rules::slow;

    /// Four boards at once, as one at a time, on every shape: random boards
    /// (every nibble up to 15, so every lane's top bit is set in some), their
    /// images, and boards whose images tie; 0 for a board not wanted.
    #[test]
    fn canonical4_is_canonical_of_each() {
        let mut seed = 0x0bad_cafe_dead_beefu64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed ^ (seed >> 29)
        };
        for shape in Shape::all() {
            let m = shape.block_mask();
            for _ in 0..5000 {
                let x = next() & m;
                let g = (next() % 8) as usize;
                let xs = [x, image(x, shape, g), next() & m & 0x1111_1111_1111_1111, 0];
                let wanted = [true, true, next() % 2 == 0, true];
                let want = std::array::from_fn(|i| match wanted[i] {
                    true => slow::canonical(xs[i], shape),
                    false => 0,
                });
                assert_eq!(canonical4(xs, wanted, shape), want, "{shape} {xs:x?}");
            }
        }
        let xs = [
            u64::MAX,
            1 << 63,
            0xF000_0000_0000_000F,
            0x0123_4567_89AB_CDEF,
        ];
        let want = xs.map(|x| slow::canonical(x, Shape::square(4)));
        assert_eq!(canonical4(xs, [true; 4], Shape::square(4)), want);
    }
}
