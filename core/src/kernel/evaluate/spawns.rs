//! The spawns of an afterstate as it lies, not canonical
//! ([`for_each_spawn_as_it_lies`]).

use crate::rules::spawn::empty_bits;
use crate::Shape;

/// Calls `f(board)` for each empty cell of afterstate `a`, in increasing
/// cell order, with the board made by a tile of exponent `tile` there, as it
/// lies (not canonical).
#[inline(always)]
pub fn for_each_spawn_as_it_lies(a: u64, shape: Shape, tile: u8, mut f: impl FnMut(u64)) {
    let mut empties = empty_bits(a, shape);
    while empties != 0 {
        let bit = empties & empties.wrapping_neg();
        f(a | (bit * tile as u64));
        empties &= empties - 1;
    }
}
