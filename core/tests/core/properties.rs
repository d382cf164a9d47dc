//! Fast moves and symmetries against the slow reference, and symmetry laws.

use proptest::prelude::*;
use solve2048_core::rules::canonical::{canonical, direction_image, image, images};
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::{rules::slow, Direction, Shape};

/// A random board of `shape` with exponents up to 14 (any cell may be
/// empty); 15 is the largest target, so no stored state holds two tiles
/// that merge past it.
fn board(shape: Shape) -> impl Strategy<Value = u64> {
    let cols = shape.cols();
    proptest::collection::vec(
        prop_oneof![3 => Just(0u8), 5 => 1u8..6, 1 => 6u8..15],
        shape.cells(),
    )
    .prop_map(move |cells| {
        let mut x = 0u64;
        for (i, e) in cells.into_iter().enumerate() {
            x |= (e as u64) << (16 * (i / cols) + 4 * (i % cols));
        }
        x
    })
}

/// A board of any shape, squares and rectangles.
fn any_board() -> impl Strategy<Value = (Shape, u64)> {
    let shapes: Vec<Shape> = Shape::all().collect();
    proptest::sample::select(shapes).prop_flat_map(|s| board(s).prop_map(move |x| (s, x)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn moves_match_slow((n, x) in any_board()) {
        let m = Mover::new(n);
        for d in Direction::ALL {
            prop_assert_eq!(m.apply(x, d), slow::apply(x, n, d), "n={} x={:#x} {:?}", n, x, d);
        }
        // The empty board (no tile, so no move changes it) is never a state.
        if x != 0 {
            prop_assert_eq!(m.is_lost(x), slow::is_lost(x, n));
        }
    }

    #[test]
    fn canonical_is_shared_by_all_images_and_idempotent((n, x) in any_board()) {
        let c = canonical(x, n);
        prop_assert_eq!(c, slow::canonical(x, n));
        for g in 0..n.symmetries() {
            prop_assert_eq!(canonical(image(x, n, g), n), c);
        }
        prop_assert_eq!(canonical(c, n), c);
        prop_assert!(images(x, n).contains(&c));
        prop_assert_eq!(c & !n.block_mask(), 0);
    }

    #[test]
    fn moves_commute_with_symmetries((n, x) in any_board(), g in 0usize..8) {
        let g = g % n.symmetries();
        let m = Mover::new(n);
        for d in Direction::ALL {
            prop_assert_eq!(image(m.apply(x, d), n, g), m.apply(image(x, n, g), direction_image(d, g)));
        }
    }

    #[test]
    fn tile_sum_grows_by_spawn_only((n, x) in any_board()) {
        let m = Mover::new(n);
        for d in Direction::ALL {
            // A move never changes the tile sum; the max tile stays or doubles.
            let t = m.apply(x, d);
            prop_assert_eq!(slow::tile_sum(t, n), slow::tile_sum(x, n));
            let (a, b) = (slow::max_exp(x, n), slow::max_exp(t, n));
            prop_assert!(b == a || (b == a + 1 && has_exponent(t, b)));
        }
    }
}

#[test]
fn every_row_of_every_size_matches_slow() {
    for n in 2..=4usize {
        let m = Mover::new(Shape::new(2, n as u32).unwrap());
        for row in 0..(1u64 << (4 * n)) {
            let cells: Vec<u8> = (0..n).map(|c| ((row >> (4 * c)) & 0xF) as u8).collect();
            let want = slow::slide_line(&cells)
                .iter()
                .enumerate()
                .fold(0u64, |acc, (c, &e)| acc | ((e as u64) << (4 * c)));
            assert_eq!(m.apply(row, Direction::Left), want, "n={n} row={row:#x}");
        }
    }
}
