//! A small game by the slow rules, for the kernels' tests: its layers and
//! tables of the slow solver's values ([`SlowLayers`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::kernel::value_table::ValueTable;
use crate::rules::slow;
use crate::Game;

/// A small game enumerated and solved by [`crate::rules::slow`].
pub(crate) struct SlowLayers {
    parts: BTreeMap<(u32, u8), BTreeSet<u64>>,
    /// Each state's value by the slow solver.
    pub(crate) values: HashMap<u64, f64>,
}

impl SlowLayers {
    /// `game` enumerated and solved.
    pub(crate) fn new(game: &Game) -> SlowLayers {
        SlowLayers {
            parts: slow::enumerate(game),
            values: slow::solve(game),
        }
    }

    /// The states of tile sum `sum`, sorted.
    pub(crate) fn layer(&self, sum: u32) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .parts
            .iter()
            .filter(|((s, _), _)| *s == sum)
            .flat_map(|(_, states)| states.iter().copied())
            .collect();
        v.sort_unstable();
        v
    }

    /// The slow values of layer `sum`, in a table.
    pub(crate) fn table(&self, sum: u32) -> ValueTable {
        let states = self.layer(sum);
        let t = ValueTable::with_capacity(states.len());
        for s in states {
            t.insert(s, self.values[&s]);
        }
        t
    }
}
