//! The kernels that tasks run: [`enumerate`](mod@enumerate) (a chunk's
//! distinct afterstates, filed by the group their spawns land in: runs and
//! requests), [`expand`](mod@expand) (a group's states from the
//! afterstates filed to it), [`merge`](mod@merge) (sorted runs into the
//! final sorted states of one group), [`gather`](mod@gather) (the spawn
//! sums one group answers to requests), and [`solve`](mod@solve)
//! (values and optimal actions of one chunk from its spawn sums); and
//! [`evaluate`], the same stages under a player's moves on boards as they
//! lie (an evaluation job).
//!
//! Each kernel is a pure function of its inputs and parallelises with rayon;
//! its result does not depend on the number of threads.
//!
//! Beside the kernels:
//! - [`sort_distinct`] and its sibling for keys that mostly repeat: keys
//!   sorted, each once.
//! - [`value_table`]: the in-memory value table a gather looks states up in.
//! - [`huge_pages`]: large buffers backed by huge pages, and
//!   [`allocator`], the binaries' allocator, which keeps freed ones.
//! - [`in_memory`]: a whole small game enumerated and solved in memory with
//!   the job's kernels (exact counts for `plan`, the kernels' test
//!   reference).

use std::ops::Range;

pub mod allocator;
mod batch;
mod distinct;
pub mod enumerate;
mod error;
pub mod evaluate;
pub mod expand;
pub mod gather;
pub mod huge_pages;
pub mod in_memory;
pub mod merge;
#[cfg(test)]
mod slow_layers;
pub mod solve;
pub mod value_table;

pub(crate) use batch::places;
pub use distinct::sort_distinct;
pub use enumerate::{afterstates, filed_afterstates, GroupedKeys, Union, UnplannedPart};
pub use error::SolveError;
pub use expand::{expand, spawns};
pub use gather::{gather, gather_pair, Spawned};
pub use merge::{merge, seek, splitters, Merged};
pub use solve::{
    action_value, action_values, afterstate_value, best_action, solve, Answer, SpawnSums,
};

/// Split `len` items into the fewest pieces of at most `max` items, with sizes
/// differing by at most one.
pub fn balanced_splits(len: usize, max: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return Vec::new();
    }
    let pieces = len.div_ceil(max.max(1));
    (0..pieces)
        .map(|i| (i * len / pieces)..((i + 1) * len / pieces))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_balanced() {
        assert_eq!(balanced_splits(10, 4), vec![0..3, 3..6, 6..10]);
        assert_eq!(balanced_splits(8, 4), vec![0..4, 4..8]);
        assert_eq!(balanced_splits(3, 100), vec![0..3]);
        assert!(balanced_splits(0, 5).is_empty());
    }
}
