//! Identifiers of the pieces of the state space.
//!
//! A *layer* holds the states of one tile sum; a *part* the states of a layer
//! with one max tile. A part is split by a hash of the state into *groups*
//! (so that merges of one part run in parallel and need bounded memory), and
//! each group into sorted *chunks* of bounded size.

use std::fmt;

use serde::{Deserialize, Serialize};

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

impl fmt::Display for ChunkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} group {} chunk {}", self.part, self.group, self.index)
    }
}

/// A well-mixed 64-bit hash of a state (the splitmix64 finaliser).
#[inline(always)]
pub fn mix(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The group (of `groups`) that a state belongs to.
#[inline(always)]
pub fn group_of(key: u64, groups: u32) -> u32 {
    ((mix(key) as u128 * groups as u128) >> 64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_balanced_and_in_range() {
        let mut counts = [0u32; 7];
        for k in 0..70_000u64 {
            counts[group_of(k * 0x10001, 7) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        assert_eq!(group_of(12345, 1), 0);
    }
}
