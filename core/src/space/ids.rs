//! Identifiers of the pieces of the state space.
//!
//! A *layer* holds the states of one tile sum; a *part* the states of a layer
//! with one max tile. A part is split by a hash of its states' tiles (as a
//! multiset, [`group_of`]) into *groups*, so that merges of one part run in
//! parallel, and each group into sorted *chunks* of bounded size.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Shape;

/// A part: tile sum and max-tile exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PartId {
    /// Tile sum of every state in the part.
    pub sum: u32,
    /// Exponent of the largest tile of every state in the part.
    pub max_exp: u8,
}

impl fmt::Display for PartId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sum {} max {}", self.sum, 1u32 << self.max_exp)
    }
}

/// A chunk: one sorted piece of one group of a part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChunkId {
    /// The part it belongs to.
    pub part: PartId,
    /// The hash group within the part.
    pub group: u32,
    /// Index within the group (chunks of a group are in key order).
    pub index: u32,
}

impl ChunkId {
    /// The chunk as one name, `sSSSSS-mMM-gGGGG-cCCCC`, in its task keys and
    /// object names.
    pub fn name(&self) -> String {
        let (p, g, i) = (self.part, self.group, self.index);
        format!("s{:05}-m{:02}-g{:04}-c{:04}", p.sum, p.max_exp, g, i)
    }
}

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} group {} chunk {}", self.part, self.group, self.index)
    }
}

/// A well-mixed 64-bit hash of a state (the splitmix64 finaliser).
#[inline(always)]
pub const fn mix(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The group (of `groups`) that a state belongs to: a hash of its tiles as
/// a multiset ([`tiles_hash`]), not of where they lie.
///
/// A move that merges nothing keeps a board's tiles and only moves them, so
/// most states that share an afterstate, and most afterstates that share a
/// successor, fall in the same group and so in the same chunk, where the
/// enumerate and solve kernels make each shared afterstate and successor
/// once. On the largest part of layer 84 of 4x4 to 32 (46.9 M states, chunks
/// as the coordinator plans them) a chunk's states make 0.83 distinct
/// afterstates and 5.3 distinct successors a state, against 1.76 and 11.7
/// when the group is a hash of the whole key. The group is also the same for
/// all 8 images of a board, so a board need not be canonical to find it.
#[inline(always)]
pub fn group_of(key: u64, groups: u32) -> u32 {
    group_of_tiles(tiles_hash(key), groups)
}

/// The group (of `groups`) of every board made by spawning a tile of
/// exponent `tile` on afterstate `a`: they all hold the same tiles (those of
/// `a` and the new one), so they all fall in one group, whichever empty cell
/// the tile lands in.
#[inline(always)]
pub fn spawn_group(a: u64, tile: u8, groups: u32) -> u32 {
    group_of_tiles(tiles_hash(a).wrapping_add(tile_word(tile as u64)), groups)
}

/// The group (of `groups`) of a board whose [`tiles_hash`] is `tiles`.
#[inline(always)]
fn group_of_tiles(tiles: u64, groups: u32) -> u32 {
    ((mix(tiles) as u128 * groups as u128) >> 64) as u32
}

/// The board with only its tiles of 8 and more (exponent 3 and up) kept,
/// in canonical form: where its large tiles lie, up to symmetry.
///
/// Spawning a 2 or a 4 keeps it, and so does any symmetry: all spawns of
/// one tile of an afterstate, canonical or not, share it. So do the states
/// a gather looks up for that afterstate, which lets a gather of a large
/// group take one slice of it at a time ([`slice_of`]) and still find every
/// spawn of the afterstates it answers in that slice.
#[inline]
pub fn large_tiles_layout(key: u64, shape: Shape) -> u64 {
    crate::rules::canonical::canonical(large_tiles(key), shape)
}

/// The board with only its tiles of 8 and more kept, where they lie.
#[inline(always)]
fn large_tiles(key: u64) -> u64 {
    const ONES: u64 = 0x1111_1111_1111_1111;
    let bit = |i: u32| (key >> i) & ONES;
    // A nybble is 3 or more when bit 2 or bit 3 is set, or bits 0 and 1.
    let large = bit(2) | bit(3) | (bit(0) & bit(1));
    key & (large * 0xF)
}

/// The slice (of `slices`) of a board or afterstate when a gather takes a
/// group in slices: a hash of [`large_tiles_layout`]. A board's slice is
/// that of every afterstate whose spawns it is one of.
#[inline]
pub fn slice_of(key: u64, shape: Shape, slices: u32) -> u32 {
    if slices <= 1 {
        return 0;
    }
    slice_of_layout(large_tiles_layout(key, shape), slices)
}

/// The slice (of `slices`) of boards whose [`large_tiles_layout`] is `layout`.
#[inline]
fn slice_of_layout(layout: u64, slices: u32) -> u32 {
    ((mix(layout ^ 0x5EED_51CE_0F1A_7E55) as u128 * slices as u128) >> 64) as u32
}

/// [`slice_of`] for many boards of one game and slice count, with a memo of
/// the slices of recent large-tile layouts (as they lie, before the
/// canonical form). The boards of a group share few layouts, so nearly every
/// board skips the canonical form (`slice_of` took 14% of a profile of the
/// largest layers of the backward pass of 4x4 to 32 when each board paid
/// it). The same answers as [`slice_of`].
pub struct SliceMemo {
    shape: Shape,
    slices: u32,
    /// (layout as it lies, its slice), direct-mapped by a hash of the layout.
    memo: Box<[(u64, u32)]>,
}

/// Entries of a [`SliceMemo`]: 256 KiB, so it stays in a core's L2.
const SLICE_MEMO_ENTRIES: usize = 1 << 14;

impl SliceMemo {
    /// A memo for boards of an `n` x `n` game cut into `slices` slices.
    pub fn new(shape: Shape, slices: u32) -> SliceMemo {
        // The empty layout's entry is true from the start: a free slot.
        let empty = (0, slice_of_layout(large_tiles_layout(0, shape), slices));
        SliceMemo {
            shape,
            slices,
            memo: vec![empty; SLICE_MEMO_ENTRIES].into_boxed_slice(),
        }
    }

    /// [`slice_of`] of `key`.
    #[inline]
    pub fn slice_of(&mut self, key: u64) -> u32 {
        if self.slices <= 1 {
            return 0;
        }
        let layout = large_tiles(key);
        let i = (layout.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - SLICE_MEMO_ENTRIES.trailing_zeros())) as usize;
        let entry = &mut self.memo[i];
        if entry.0 != layout {
            *entry = (
                layout,
                slice_of_layout(
                    crate::rules::canonical::canonical(layout, self.shape),
                    self.slices,
                ),
            );
        }
        entry.1
    }
}

/// A hash of a board's tiles as a multiset: the wrapping sum over its cells
/// of a fixed random word per tile exponent (0 for an empty cell), so any
/// permutation of the cells gives the same hash. One lookup per byte (two
/// cells) in a 2 KiB table.
#[inline(always)]
pub fn tiles_hash(key: u64) -> u64 {
    key.to_le_bytes()
        .iter()
        .fold(0u64, |h, &b| h.wrapping_add(BYTE_TILES[b as usize]))
}

/// The word of a tile exponent in [`tiles_hash`] (0 for an empty cell).
const fn tile_word(e: u64) -> u64 {
    if e == 0 {
        0
    } else {
        mix(e.wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }
}

/// [`tile_word`] of a byte's two cells, added.
const BYTE_TILES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = tile_word(b as u64 & 15).wrapping_add(tile_word(b as u64 >> 4));
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A slow, obvious multiset hash: the exponents sorted, then hashed.
    fn sorted_tiles(key: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..16)
            .map(|c| (key >> (4 * c)) & 15)
            .filter(|&e| e != 0)
            .collect();
        v.sort_unstable();
        v
    }

    /// Boards with 1 to 16 tiles of exponents 1 to 15.
    fn boards() -> impl Iterator<Item = u64> {
        (0..20_000u64).map(|i| {
            let x = mix(i);
            let tiles = 1 + mix(x) % 16;
            (0..16).fold(0u64, |b, c| {
                let e = if c < tiles { 1 + (mix(x ^ c) % 15) } else { 0 };
                b | (e << (4 * c))
            })
        })
    }

    #[test]
    fn tiles_hash_depends_on_the_tiles_only() {
        let mut seen = std::collections::HashMap::new();
        for b in boards() {
            // Any permutation of the cells (here: a rotation of the nybbles
            // and the 8 symmetries of the square) keeps the hash.
            let h = tiles_hash(b);
            assert_eq!(h, tiles_hash(b.rotate_left(4 * (1 + (b % 15) as u32))));
            for g in 0..8 {
                assert_eq!(
                    h,
                    tiles_hash(crate::rules::canonical::image(
                        b,
                        crate::Shape::square(4),
                        g
                    ))
                );
            }
            // Different multisets, different hashes (over these boards).
            let tiles = sorted_tiles(b);
            assert_eq!(
                *seen.entry(h).or_insert_with(|| tiles.clone()),
                tiles,
                "{b:#x}"
            );
        }
        assert_eq!(tiles_hash(0), 0);
        assert_ne!(tiles_hash(0x1), tiles_hash(0x2));
        assert_ne!(tiles_hash(0x11), tiles_hash(0x2));
    }

    #[test]
    fn every_spawn_of_an_afterstate_is_in_its_spawn_group() {
        for (i, b) in boards().enumerate().take(5000) {
            let a = b & !(0xF << (4 * (i % 16))); // at least one empty cell
            for tile in 1..=2u8 {
                let groups = 1 + (i as u32 % 37);
                for cell in (0..16).filter(|c| (a >> (4 * c)) & 15 == 0) {
                    let spawned = a | ((tile as u64) << (4 * cell));
                    assert_eq!(group_of(spawned, groups), spawn_group(a, tile, groups));
                }
            }
        }
    }

    /// Every spawn of a 2 or a 4, canonical or not, and every symmetric
    /// image, lies in the slice of its afterstate; and slices split a
    /// group's boards roughly evenly.
    #[test]
    fn spawns_stay_in_their_afterstates_slice() {
        let four = crate::Shape::square(4);
        let mut counts = [0u32; 5];
        for (i, b) in boards().enumerate().take(5000) {
            let a = b & !(0xF << (4 * (i % 16)));
            for slices in [2u32, 5, 13] {
                let want = slice_of(a, four, slices);
                assert!(want < slices);
                for tile in 1..=2u64 {
                    for cell in (0..16).filter(|c| (a >> (4 * c)) & 15 == 0) {
                        let spawned = a | (tile << (4 * cell));
                        assert_eq!(slice_of(spawned, four, slices), want);
                        let canon = crate::rules::canonical::canonical(spawned, four);
                        assert_eq!(slice_of(canon, four, slices), want);
                    }
                }
                crate::rules::spawn::for_each_spawn(a, four, |two, four| {
                    assert_eq!(slice_of(two, crate::Shape::square(4), slices), want);
                    assert_eq!(slice_of(four, crate::Shape::square(4), slices), want);
                });
            }
            counts[slice_of(b, four, 5) as usize] += 1;
        }
        for c in counts {
            assert!((700..1300).contains(&c), "{counts:?}");
        }
        // The layout keeps exactly the tiles of 8 and more.
        assert_eq!(
            large_tiles_layout(0x0000_0000_0012_3456, crate::Shape::square(4)),
            crate::rules::canonical::canonical(0x0000_0000_0000_3456, crate::Shape::square(4))
        );
        assert_eq!(slice_of(0x21, crate::Shape::square(4), 1), 0);
    }

    /// The memo gives [`slice_of`]'s answers, for boards whose layouts
    /// collide in it and for the empty layout.
    #[test]
    fn the_memo_gives_slice_of() {
        for n in ["3", "4", "2x3"].map(|s| s.parse::<crate::Shape>().unwrap()) {
            for slices in [1u32, 2, 7] {
                let mut memo = SliceMemo::new(n, slices);
                let mask = n.block_mask();
                for (i, b) in boards().enumerate().take(20_000) {
                    let b = b & mask;
                    assert_eq!(memo.slice_of(b), slice_of(b, n, slices), "{b:#x}");
                    // A board with no large tile: the empty layout.
                    if i % 3 == 0 {
                        let small = b & 0x2121_2121_2121_2121 & mask;
                        assert_eq!(memo.slice_of(small), slice_of(small, n, slices));
                    }
                }
                // Again, from the memo or after others took their slots.
                for b in boards().take(2_000) {
                    let b = b & mask;
                    assert_eq!(memo.slice_of(b), slice_of(b, n, slices), "{b:#x}");
                }
            }
        }
    }

    #[test]
    fn groups_are_balanced_and_in_range() {
        let mut counts = [0u32; 7];
        for b in boards() {
            counts[group_of(b, 7) as usize] += 1;
        }
        for c in counts {
            assert!((2_500..3_200).contains(&c), "{counts:?}");
        }
        assert_eq!(group_of(12345, 1), 0);
    }
}
