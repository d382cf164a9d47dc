//! The expand kernel: the states of one group from the afterstates filed to
//! it ([`super::filed_afterstates`]). Every spawn of one tile of such an
//! afterstate lies in the group, so the group's states are the spawns of
//! its distinct afterstates on every empty cell (lost ones left out) and
//! the states its state runs hold, sorted and distinct.
//!
//! A chunk sends its afterstates, not its successors: successors would be
//! about five a state on 4x4 to 32 (a successor has many predecessors in
//! other chunks), to be merged in the layer above. Afterstates are fewer,
//! shared by many states, and their runs sorted already: a chunk sends
//! about two a state (once a tile), and each distinct afterstate is
//! spawned once, where its spawns are stored.

use rayon::prelude::*;

use super::batch::{append, concat, BATCH};
use super::distinct::sort_distinct;
use super::enumerate::RecentFilter;
use crate::rules::board::empty_bits;
use crate::rules::canonical::Orientation;
use crate::rules::moves::Mover;
use crate::rules::symmetry::Symmetry;
use crate::Game;

/// The boards a tile of exponent `tile` makes on each empty cell of each of
/// `afterstates` (not won), keyed by `orientation`, lost ones left out (a
/// spawn that fills the board and leaves no move: absorbing, not stored),
/// appended to `out`: unsorted, with repeats (those of nearby afterstates
/// dropped). On all threads.
pub fn spawns(
    game: &Game,
    orientation: Orientation,
    tile: u8,
    afterstates: &[u64],
    out: &mut Vec<u64>,
) {
    append(out, spawn_pieces(game, orientation, tile, afterstates));
}

/// [`spawns`] in pieces, as the threads made them.
fn spawn_pieces(
    game: &Game,
    orientation: Orientation,
    tile: u8,
    afterstates: &[u64],
) -> Vec<Vec<u64>> {
    let (shape, mover) = (game.shape, Mover::new(game.shape));
    afterstates
        .par_chunks(BATCH)
        .map_init(RecentFilter::new, |recent, batch| {
            let mut out = Vec::with_capacity(4 * batch.len());
            crate::with_symmetry!(orientation, shape, |sym| {
                for &a in batch {
                    let full_after = empty_bits(a, shape).count_ones() == 1;
                    sym.for_each_spawn_of(a, tile, |s| {
                        if recent.fresh(s) && !(full_after && mover.is_lost(s)) {
                            out.push(s);
                        }
                    });
                }
            });
            out
        })
        .collect()
}

/// The states of a group from its runs' keys: the spawns of a 2 on
/// `afterstates[0]` and of a 4 on `afterstates[1]` ([`spawns`]), and
/// `states`, sorted and distinct.
pub fn expand(
    game: &Game,
    orientation: Orientation,
    afterstates: [&[u64]; 2],
    states: &[u64],
) -> Vec<u64> {
    let mut pieces = spawn_pieces(game, orientation, 1, afterstates[0]);
    pieces.extend(spawn_pieces(game, orientation, 2, afterstates[1]));
    pieces.push(states.to_vec());
    let mut keys = concat(pieces);
    sort_distinct(&mut keys);
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{afterstates, filed_afterstates};
    use crate::rules::spawn::for_each_spawn;
    use crate::space::ids::PartId;
    use crate::space::parts::part_of;

    /// A part's filed afterstates, expanded in the groups they are filed
    /// to, make exactly the canonical non-terminal successors of the part's
    /// states, each in its group: against the successors made one state at
    /// a time from the slow rules.
    #[test]
    fn expanded_afterstates_are_the_successors() {
        let game = Game::new(3, 256, 1.0).unwrap();
        let mover = Mover::new(game.shape);
        let mut checked = 0;
        crate::kernel::in_memory::enumerate(&game, |part, states| {
            if states.len() < 2_000 || checked > 3 {
                return;
            }
            checked += 1;
            let groups = |p: PartId| Some(p.sum % 3 + 2);
            let filed = filed_afterstates(&game, part, &states, groups).unwrap();
            // The successors, one state and one move at a time.
            let mut want: std::collections::BTreeSet<u64> = Default::default();
            for a in afterstates(&game, &mover, &states) {
                for_each_spawn(a, game.shape, |two, four| {
                    for s in [two, four] {
                        if !mover.is_lost(s) {
                            want.insert(s);
                        }
                    }
                });
            }
            let mut got: std::collections::BTreeSet<u64> = Default::default();
            for (p, gs) in &filed {
                let tile = if p.sum == part.sum + 2 { 1 } else { 2 };
                for (g, after) in gs.iter().enumerate() {
                    let mut by_tile: [&[u64]; 2] = [&[], &[]];
                    by_tile[tile - 1] = after;
                    let made = expand(&game, Orientation::Canonical, by_tile, &[]);
                    assert!(made.windows(2).all(|w| w[0] < w[1]));
                    for &s in &made {
                        assert_eq!(part_of(s), *p);
                        let want_group = crate::space::ids::group_of(s, gs.len() as u32);
                        assert_eq!(want_group, g as u32, "{s:#x}");
                        assert_eq!(s, crate::rules::slow::canonical(s, game.shape));
                        assert!(got.insert(s), "{s:#x} made twice");
                    }
                }
            }
            assert_eq!(got, want, "{part}");
        });
        assert!(checked > 2, "{checked} parts checked");
    }

    /// States pass through an expand as they are, merged with the spawns.
    #[test]
    fn states_pass_through() {
        let game = Game::new(3, 256, 1.0).unwrap();
        let states = [0x12u64, 0x21, 0x1001];
        let out = expand(&game, Orientation::Canonical, [&[], &[]], &states);
        assert_eq!(out, states);
        let after = [0x11u64];
        let out = expand(&game, Orientation::Canonical, [&after, &[]], &states);
        let mut want = states.to_vec();
        spawns(&game, Orientation::Canonical, 1, &after, &mut want);
        want.sort_unstable();
        want.dedup();
        assert_eq!(out, want);
        assert!(want.len() > states.len());
    }
}
