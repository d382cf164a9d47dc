//! The structure of a game's state space that every side relies on: the part
//! a state is in, the parts a part's successors fall in, the parts the start
//! states fall in, and how many hash groups each part is split into.
//!
//! The coordinator plans tasks with these, the kernels produce exactly what
//! they predict (a successor in a part the plan did not name is an error),
//! and the capacity model counts with them.

use std::collections::BTreeMap;

use crate::rules::board::Board;
use crate::rules::spawn::Starts;
use crate::space::ids::PartId;
use crate::Game;

/// The part a state is in: its tile sum and largest exponent.
pub fn part_of(state: u64) -> PartId {
    let b = Board(state);
    PartId {
        sum: b.tile_sum(),
        max_exp: b.max_exponent(),
    }
}

/// The part of the successors of a state of `part` made by spawning a tile of
/// exponent `tile` (1 for a 2, 2 for a 4) after a move that made a new largest
/// tile (`grew`) or not.
pub fn successor_part(part: PartId, tile: u8, grew: bool) -> PartId {
    PartId {
        sum: part.sum + (1u32 << tile),
        max_exp: (part.max_exp + grew as u8).max(tile),
    }
}

/// Every part a successor of a state in `part` can fall in, without repeats:
/// a 2 or a 4 spawns, and the move may have made a new largest tile.
pub fn successor_parts(part: PartId) -> Vec<PartId> {
    let mut out = Vec::new();
    for tile in 1..=2u8 {
        for grew in [false, true] {
            let p = successor_part(part, tile, grew);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The canonical start states of `game` by part, each sorted.
pub fn start_parts(game: &Game) -> BTreeMap<PartId, Vec<u64>> {
    let mut out: BTreeMap<PartId, Vec<u64>> = BTreeMap::new();
    // The weights are keyed in increasing state order, so each part's list
    // is sorted.
    for &s in Starts::new(game.shape, &game.spawn_rule()).weights.keys() {
        out.entry(part_of(s)).or_default().push(s);
    }
    out
}

/// Most hash groups a part is split into.
pub const MAX_GROUPS: u64 = 4096;

/// The number of hash groups of `part`, sized from the parts of layer
/// `sum - 4` that feed it (`sizes`: states of every part already merged).
/// Those parts are final before any task writes a successor into `part`, so
/// the count is the same on every run of a job. Start parts (sum 8 or less)
/// have one group.
pub fn group_count(part: PartId, sizes: &BTreeMap<PartId, u64>, chunk_size: u64) -> u32 {
    if part.sum <= 8 {
        return 1;
    }
    let size = |max_exp: u8| {
        sizes
            .get(&PartId {
                sum: part.sum - 4,
                max_exp,
            })
            .copied()
            .unwrap_or(0)
    };
    let estimate = 2 * (size(part.max_exp) + size(part.max_exp.saturating_sub(1)));
    estimate.div_ceil(chunk_size.max(1)).clamp(1, MAX_GROUPS) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(sum: u32, max_exp: u8) -> PartId {
        PartId { sum, max_exp }
    }

    #[test]
    fn successor_parts_cover_growth_and_small_tiles() {
        assert_eq!(
            successor_parts(p(20, 3)),
            vec![p(22, 3), p(22, 4), p(24, 3), p(24, 4)]
        );
        // Two 2s: a spawned 4 becomes the max tile.
        let parts = successor_parts(p(4, 1));
        assert!(parts.contains(&p(8, 2)));
        assert!(parts.contains(&p(6, 1)));
        // A 4 beside a largest 2 gives (8, 2) with or without a new max tile.
        assert_eq!(parts.len(), 3, "{parts:?}");
    }

    /// Every successor of every state of a small game lies in a part that
    /// `successor_parts` names, and the start parts are those of the start
    /// states.
    #[test]
    fn successors_fall_in_the_named_parts() {
        let game = crate::Game::new(3, 64, 1.0).unwrap();
        let parts = crate::rules::slow::enumerate(&game);
        let mover = crate::rules::moves::Mover::new(crate::Shape::square(3));
        let mut checked = 0;
        for ((sum, max_exp), states) in &parts {
            let named = successor_parts(p(*sum, *max_exp));
            for &s in states {
                assert_eq!(part_of(s), p(*sum, *max_exp));
                for dir in crate::Direction::ALL {
                    let t = mover.apply(s, dir);
                    if t == s {
                        continue;
                    }
                    for (succ, _) in crate::rules::slow::spawns(t, crate::Shape::square(3), 0.1) {
                        assert!(named.contains(&part_of(succ)), "{s:#x} -> {succ:#x}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100_000, "{checked}");
        let starts = start_parts(&crate::Game::new(3, 64, 1.0).unwrap());
        assert_eq!(
            starts.keys().copied().collect::<Vec<_>>(),
            [p(4, 1), p(6, 2), p(8, 2)]
        );
        for (part, states) in starts {
            assert!(states.windows(2).all(|w| w[0] < w[1]));
            assert!(states.iter().all(|&s| part_of(s) == part));
        }
    }

    #[test]
    fn group_counts_follow_feeding_parts() {
        let sizes = BTreeMap::from([(p(36, 5), 1000), (p(36, 4), 500)]);
        assert_eq!(group_count(p(40, 5), &sizes, 100), 30);
        assert_eq!(group_count(p(40, 6), &sizes, 100), 20);
        assert_eq!(group_count(p(8, 2), &sizes, 1), 1);
        assert_eq!(group_count(p(40, 9), &sizes, 100), 1);
        let huge = BTreeMap::from([(p(36, 5), u64::MAX / 4)]);
        assert_eq!(group_count(p(40, 5), &huge, 1) as u64, MAX_GROUPS);
    }
}
