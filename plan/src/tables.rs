//! The exact and published state counts the capacity model starts from,
//! each with where it comes from. The large tables are data files under
//! `plan/data/` (CSV, their sources in their comments), embedded in the
//! build and read once, when first used.

use std::sync::LazyLock;

use crate::data;

/// Exact part counts of 3x4 games (3 rows of 4) for max tiles up to 32:
/// (tile sum, max-tile exponent, states). Every part of 3x4 to 64, so also
/// every part with a max tile of at most 32 of any 3x4 game; 4x3 (its
/// transpose) has the same counts. From a real run of this program,
/// `solve2048 solve --board 3x4 --target 64 --json` (157,427,345 states,
/// start value 1; 3x4 to 32, its parts up to max tile 16, has 16,318,520). Read from `plan/data/3x4-to-64-parts.csv`.
pub static THREE_BY_FOUR_TO_64: LazyLock<Vec<(u32, u8, u64)>> = LazyLock::new(|| {
    parts(
        "3x4-to-64-parts.csv",
        include_str!("../data/3x4-to-64-parts.csv"),
    )
});

/// Exact part counts of 4x4 games for max tiles up to 16: (tile sum,
/// max-tile exponent, states). Every part of 4x4 to 32, so also every part
/// with a max tile of at most 16 of any 4x4 game (no state on the way to
/// such a part holds a larger tile, so the target does not change them).
/// From a real run of this program, `solve2048 solve --board 4 --target 32
/// --json` (`parts`; result digest `43ec1fc5e0748179`):
/// 1,566,798,892 states in all, as published, and its largest part
/// (100, 16) is the published 62,812,882. The parts with max tile at most 8
/// are those of 4x4 to 16 (23,482,821 states, as published). Read from
/// `plan/data/4x4-to-32-parts.csv`.
pub static FOUR_BY_FOUR_TO_32: LazyLock<Vec<(u32, u8, u64)>> = LazyLock::new(|| {
    parts(
        "4x4-to-32-parts.csv",
        include_str!("../data/4x4-to-32-parts.csv"),
    )
});

/// Published totals of non-terminal 4x4 states by target (The Mathematics of
/// 2048; `tests/data/published.csv`), as (target exponent, states). The
/// states with max tile at most 2^(k-1) of any 4x4 game are exactly those of
/// the game to 2^k, so consecutive totals give the states of each max tile.
pub const FOUR_BY_FOUR_TOTALS: [(u8, u64); 3] =
    [(4, 23_482_821), (5, 1_566_798_892), (6, 40_652_843_433)];

/// The published largest part of 4x4 to 64, (164, 32): (max-tile exponent,
/// tile sum, states). The largest part with max tile 32, as no other 4x4
/// to 64 part holds more.
pub const FOUR_BY_FOUR_PEAK_32: (u8, u32, u64) = (5, 164, 856_386_976);

/// Exact 3x3 states by max tile: (max-tile exponent, states, tile sum of
/// the largest part, its states). Every max tile of 3x3 to 1024, from
/// `solve2048 solve --board 3 --target 1024 --json` (`parts`, 25,179,012
/// states, as published); checked against the in-memory enumeration by a
/// test. Read from `plan/data/3x3-max-tiles.csv`.
pub static THREE_BY_THREE_MAX_TILES: LazyLock<Vec<(u8, u64, u32, u64)>> = LazyLock::new(|| {
    let (table, text) = (
        "3x3-max-tiles.csv",
        include_str!("../data/3x3-max-tiles.csv"),
    );
    data::rows(table, text, "max_exp,states,peak_sum,peak_states")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
});

/// The rows of a table of parts (`table`, its `text`): (tile sum, max-tile
/// exponent, states).
fn parts(table: &str, text: &str) -> Vec<(u32, u8, u64)> {
    data::rows(table, text, "sum,max_exp,states")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::fingerprint;

    /// The numbers of a table of (tile sum, max-tile exponent, states).
    fn part_numbers(t: &[(u32, u8, u64)]) -> impl Iterator<Item = u64> + '_ {
        t.iter()
            .flat_map(|&(s, k, n)| [u64::from(s), u64::from(k), n])
    }

    /// The tables hold exactly the numbers they held as Rust literals (the
    /// fingerprints were taken of those literals).
    #[test]
    fn tables_hold_the_numbers_they_held() {
        let of = |t: &[(u32, u8, u64)]| (t.len(), fingerprint(part_numbers(t)));
        assert_eq!(of(&THREE_BY_FOUR_TO_64), (228, 0xc638_0ff5_470f_30a7));
        assert_eq!(of(&FOUR_BY_FOUR_TO_32), (154, 0x4288_9407_6937_ee61));
        let three = THREE_BY_THREE_MAX_TILES
            .iter()
            .flat_map(|&(k, n, s, p)| [u64::from(k), n, u64::from(s), p]);
        assert_eq!(
            (THREE_BY_THREE_MAX_TILES.len(), fingerprint(three)),
            (9, 0x5734_b913_f7e0_58dd)
        );
    }
}
