//! State counts for planning: every part's states, exact where known and
//! estimated elsewhere.
//!
//! Exact where they are known: every 2x2 and 3x3 game is enumerated in
//! memory (seconds), 4x4 parts with a max tile of at most 8 come from a
//! measured table ([`FOUR_BY_FOUR_TO_16`]), and a store's layer indexes
//! ([`override_with_store`]) replace anything else. The remaining 4x4 parts
//! (max tile 16 and above) are *estimated* by a model calibrated on
//! published figures; see [`estimate_profile`].

use std::collections::BTreeMap;

use serde::Serialize;
use solve2048_core::part::PartId;
use solve2048_core::task::LayerIndex;
use solve2048_core::Game;

use crate::records::{CoordinatorError, Records};

/// Whether a count is known or modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Counted: enumerated, measured, or read from a store.
    Exact,
    /// From the model; see [`estimate_part`].
    Estimated,
}

impl Source {
    /// Exact only when both are.
    fn and(self, other: Source) -> Source {
        if self == Source::Exact && other == Source::Exact {
            Source::Exact
        } else {
            Source::Estimated
        }
    }

    /// The label printed in tables.
    pub fn label(self) -> &'static str {
        match self {
            Source::Exact => "exact",
            Source::Estimated => "estimated",
        }
    }
}

/// The non-terminal canonical states of one part.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PartCount {
    /// Tile sum.
    pub sum: u32,
    /// Exponent of the max tile.
    pub max_exp: u8,
    /// States.
    pub states: u64,
    /// Known or modelled.
    pub source: Source,
}

/// The states of one layer (tile sum).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LayerCount {
    /// Tile sum.
    pub sum: u32,
    /// Parts with at least one state.
    pub parts: usize,
    /// States.
    pub states: u64,
    /// `exact` when every part of the layer is.
    pub source: Source,
}

/// Exact part counts of 4x4 games for max tiles up to 8: (tile sum, max-tile
/// exponent, states). Every part of 4x4 to 16, so also every part with a max
/// tile of at most 8 of any 4x4 game (no state on the way to such a part
/// holds a larger tile, so the target does not change them). From a real
/// run: `solve2048 solve --board 4 --target 16 --json` (`parts`), 23,482,821
/// states in all, as published.
#[rustfmt::skip]
pub const FOUR_BY_FOUR_TO_16: &[(u32, u8, u64)] = &[
    (4, 1, 21), (6, 1, 35), (6, 2, 33), (8, 1, 25),
    (8, 2, 145), (10, 1, 6), (10, 2, 356), (10, 3, 24),
    (12, 2, 714), (12, 3, 124), (14, 2, 1_259), (14, 3, 400),
    (16, 2, 2_104), (16, 3, 1_059), (18, 2, 3_225), (18, 3, 2_468),
    (20, 2, 4_555), (20, 3, 5_330), (22, 2, 5_922), (22, 3, 10_656),
    (24, 2, 7_321), (24, 3, 19_763), (26, 2, 8_419), (26, 3, 34_297),
    (28, 2, 8_952), (28, 3, 56_357), (30, 2, 9_087), (30, 3, 87_525),
    (32, 2, 8_597), (32, 3, 130_380), (34, 2, 7_376), (34, 3, 187_499),
    (36, 2, 6_032), (36, 3, 260_597), (38, 2, 4_346), (38, 3, 351_688),
    (40, 2, 2_799), (40, 3, 461_966), (42, 2, 1_797), (42, 3, 589_857),
    (44, 2, 939), (44, 3, 734_897), (46, 2, 386), (46, 3, 892_705),
    (48, 2, 177), (48, 3, 1_056_030), (50, 2, 31), (50, 3, 1_218_391),
    (52, 3, 1_369_262), (54, 3, 1_495_187), (56, 3, 1_591_238), (58, 3, 1_647_634),
    (60, 3, 1_656_782), (62, 3, 1_617_354), (64, 3, 1_530_275), (66, 3, 1_398_860),
    (68, 3, 1_232_145), (70, 3, 1_041_329), (72, 3, 841_744), (74, 3, 646_406),
    (76, 3, 469_112), (78, 3, 319_526), (80, 3, 203_334), (82, 3, 119_573),
    (84, 3, 64_457), (86, 3, 31_408), (88, 3, 13_535), (90, 3, 5_070),
    (92, 3, 1_571), (94, 3, 318), (96, 3, 29),
];

/// Published totals of non-terminal 4x4 states by target (The Mathematics of
/// 2048; `tests/data/published.csv`), as (target exponent, states). The states with
/// max tile at most 2^(k-1) of any 4x4 game are exactly those of the game to
/// 2^k, so consecutive totals give the states of each max tile.
const FOUR_BY_FOUR_TOTALS: [(u8, u64); 3] =
    [(4, 23_482_821), (5, 1_566_798_892), (6, 40_652_843_433)];

/// Published largest parts of 4x4 games: (max-tile exponent, tile sum, states).
/// (100, 16) is the largest part of 4x4 to 32 (and reproduced exactly by this
/// program); (164, 32) the largest of 4x4 to 64.
const FOUR_BY_FOUR_PEAKS: [(u8, u32, u64); 2] = [(4, 100, 62_812_882), (5, 164, 856_386_976)];

/// The note printed with estimated counts.
pub const MODEL_NOTE: &str = "estimated: model calibrated on published totals \
     (4x4 to 16, 32, 64) and largest parts ((100, 16), (164, 32)); shape of each \
     max-tile profile taken from the exact max-tile-8 profile";

/// States of each max tile 2^k of 4x4 (k = 3, 4, 5), from the exact table and
/// the published totals.
fn max_tile_totals() -> [f64; 3] {
    let eight: u64 = FOUR_BY_FOUR_TO_16
        .iter()
        .filter(|r| r.1 == 3)
        .map(|r| r.2)
        .sum();
    let step = |i: usize| (FOUR_BY_FOUR_TOTALS[i + 1].1 - FOUR_BY_FOUR_TOTALS[i].1) as f64;
    [eight as f64, step(0), step(1)]
}

/// The note printed when a 4x4 game needs max tiles past 32, which no
/// published figure calibrates: how they are estimated, and how far off the
/// same rule was on the one step that can be checked.
pub fn extrapolation_note(target_exp: u8) -> String {
    let [t8, t16, t32] = max_tile_totals();
    let (grow_before, grow_last) = (t16 / t8, t32 / t16);
    // Applied one step back, the rule predicts max tile 32 from max tile 16
    // with the 8-to-16 growth.
    let backtest = grow_before / grow_last;
    let mut ranges = Vec::new();
    for k in 6..target_exp {
        let steps = (k - 5) as i32;
        let high = t32 * grow_last.powi(steps);
        let low = high / backtest.powi(steps);
        ranges.push(format!(
            "max tile {}: {:.2e} to {:.2e}",
            1u64 << k,
            low,
            high
        ));
    }
    format!(
        "extrapolated: no published figure covers max tiles past 32; each one is modelled by \
         growing the max-32 profile by the 16-to-32 growth ({grow_last:.1}x states a step, the \
         largest part moving 1.6 times further each step). The same rule one step back (the \
         8-to-16 growth, {grow_before:.1}x, applied to max tile 16) overestimates max tile 32 by \
         {backtest:.1}x, so each extrapolated step may be that much too high: {} states (the plan \
         uses the upper figure)",
        ranges.join("; ")
    )
}

/// The exact part counts of a 2x2 or 3x3 game, by enumerating it in memory
/// with the same kernels a job runs (3x3 to 1024, 25 million states, takes
/// seconds). `None` for 4x4, which is too large.
pub fn enumerate_small(game: &Game) -> Option<Vec<PartCount>> {
    (game.n <= 3).then(|| enumerate_exact(game, |_, _| {}))
}

/// Every part of `game` by enumerating it in memory; `visit` sees each
/// part's states.
fn enumerate_exact(game: &Game, visit: impl FnMut(PartId, &[u64])) -> Vec<PartCount> {
    solve2048_core::in_memory::enumerate(game, visit)
        .into_iter()
        .map(|(part, states)| PartCount {
            sum: part.sum,
            max_exp: part.max_exp,
            states,
            source: Source::Exact,
        })
        .collect()
}

/// A measured max-tile profile of 4x4 as a template: (tile-sum offset from
/// its largest part, states relative to the largest part).
fn template(max_exp: u8) -> Vec<(f64, f64)> {
    let rows: Vec<(u32, u64)> = FOUR_BY_FOUR_TO_16
        .iter()
        .filter(|r| r.1 == max_exp)
        .map(|r| (r.0, r.2))
        .collect();
    let (peak_sum, peak) = rows.iter().copied().max_by_key(|r| r.1).unwrap_or((0, 1));
    rows.iter()
        .map(|&(s, n)| (s as f64 - peak_sum as f64, n as f64 / peak as f64))
        .collect()
}

/// The template at offset `x` (linear between its points, 0 outside).
fn template_at(t: &[(f64, f64)], x: f64) -> f64 {
    match t.windows(2).find(|w| w[0].0 <= x && x <= w[1].0) {
        Some(w) => {
            let f = (x - w[0].0) / (w[1].0 - w[0].0);
            w[0].1 + f * (w[1].1 - w[0].1)
        }
        None => 0.0,
    }
}

/// Calibration of one max tile: its total states, and its largest part.
#[derive(Clone, Copy, Debug)]
struct Calibration {
    total: u64,
    peak_sum: u32,
    peak_states: u64,
}

/// The published calibration of 4x4 max tile 2^k (k >= 4); beyond 32 it is
/// extrapolated geometrically (totals and largest parts grow by the 16-to-32
/// ratio each time, the largest part's tile sum moves 1.6 times further each
/// time), which is an order of magnitude at best.
fn calibration(k: u8) -> Calibration {
    let total = |i: usize| FOUR_BY_FOUR_TOTALS[i + 1].1 - FOUR_BY_FOUR_TOTALS[i].1;
    let known = [
        Calibration {
            total: total(0),
            peak_sum: FOUR_BY_FOUR_PEAKS[0].1,
            peak_states: FOUR_BY_FOUR_PEAKS[0].2,
        },
        Calibration {
            total: total(1),
            peak_sum: FOUR_BY_FOUR_PEAKS[1].1,
            peak_states: FOUR_BY_FOUR_PEAKS[1].2,
        },
    ];
    if k <= 5 {
        return known[(k - 4) as usize];
    }
    let steps = (k - 5) as i32;
    let grow = |a: u64, b: u64| b as f64 * (b as f64 / a as f64).powi(steps);
    // The peak moved 30, 40 and 64 from max tile 4 to 8, 16 and 32: about
    // 1.6 times further each time.
    let shift = (known[1].peak_sum - known[0].peak_sum) as f64;
    let moved: f64 = (1..=steps).map(|j| shift * 1.6f64.powi(j)).sum();
    Calibration {
        total: grow(known[0].total, known[1].total).min(u64::MAX as f64 / 4.0) as u64,
        peak_sum: (known[1].peak_sum + moved as u32).next_multiple_of(2),
        peak_states: grow(known[0].peak_states, known[1].peak_states).min(u64::MAX as f64 / 4.0)
            as u64,
    }
}

/// The modelled profile of 4x4 max tile 2^k (k >= 4): states by tile sum.
///
/// The model: the states of max tile 2^k over tile sum follow the shape of
/// the exact max-tile-8 profile, centred on the published largest part and
/// stretched along the tile sum until the profile holds the published total
/// of that max tile; its height is then scaled so the integer counts add up
/// to the total exactly (the largest part comes out within a fraction of a
/// percent of the published one). Below the largest part the stretch is cut
/// short where it would reach below tile sum 2^k + 2, the least that holds
/// a 2^k. The same construction predicts the exact max-tile-8 profile from
/// the max-tile-4 one within 3.2% (sum of absolute errors over the total;
/// tested in `model_predicts_max_8_from_max_4`).
pub fn estimate_profile(k: u8) -> BTreeMap<u32, u64> {
    stretch(&template(3), calibration(k), (1u32 << k) + 2)
}

/// `template` centred on `cal.peak_sum`, stretched to hold `cal.total`
/// states, with no part below `min_sum`.
fn stretch(t: &[(f64, f64)], cal: Calibration, min_sum: u32) -> BTreeMap<u32, u64> {
    let first = t.first().map_or(-1.0, |p| p.0).min(-1.0);
    let last = t.last().map_or(0.0, |p| p.0);
    let centre = cal.peak_sum as f64;
    let left_most = (centre - min_sum as f64) / -first;
    let profile = |w: f64| -> Vec<(u32, f64)> {
        let wl = w.min(left_most);
        let hi = (centre + last * w).ceil().max(0.0) as u32;
        (min_sum.next_multiple_of(2)..=hi)
            .step_by(2)
            .map(|s| {
                let d = s as f64 - centre;
                let x = if d < 0.0 { d / wl } else { d / w };
                (s, cal.peak_states as f64 * template_at(t, x))
            })
            .filter(|&(_, v)| v > 0.0)
            .collect()
    };
    let mass = |w: f64| profile(w).iter().map(|p| p.1).sum::<f64>();
    // The mass grows with the stretch: bisect.
    let (mut lo, mut hi) = (1e-3f64, 1e3f64);
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if mass(mid) < cal.total as f64 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let points = profile(hi);
    let scale = cal.total as f64 / points.iter().map(|p| p.1).sum::<f64>().max(1.0);
    let mut out: BTreeMap<u32, u64> = points
        .iter()
        .map(|&(s, v)| (s, (v * scale).floor() as u64))
        .collect();
    // Give the rounding remainder to the largest part, so the total is exact.
    let short = cal.total.saturating_sub(out.values().sum::<u64>());
    if let Some(top) = out.values_mut().max() {
        *top += short;
    }
    out
}

/// The state counts of every part of `game`: exact for 2x2 and 3x3 (by
/// enumeration) and for 4x4 parts with max tile at most 8, estimated for the
/// other 4x4 parts ([`estimate_profile`]).
pub fn part_counts(game: &Game) -> Vec<PartCount> {
    if let Some(exact) = enumerate_small(game) {
        return exact;
    }
    let mut out: Vec<PartCount> = FOUR_BY_FOUR_TO_16
        .iter()
        .filter(|r| r.1 < game.target_exp)
        .map(|&(sum, max_exp, states)| PartCount {
            sum,
            max_exp,
            states,
            source: Source::Exact,
        })
        .collect();
    for k in 4..game.target_exp {
        for (sum, states) in estimate_profile(k) {
            out.push(PartCount {
                sum,
                max_exp: k,
                states,
                source: Source::Estimated,
            });
        }
    }
    out.sort_by_key(|p| (p.sum, p.max_exp));
    out
}

/// Replace the counts of every layer a store has indexed with its exact
/// counts (a layer index is written once all its parts are merged, so an
/// indexed layer is complete).
pub fn override_with_store(parts: Vec<PartCount>, stored: &[LayerIndex]) -> Vec<PartCount> {
    let indexed: std::collections::BTreeSet<u32> = stored.iter().map(|l| l.sum).collect();
    let mut out: Vec<PartCount> = parts
        .into_iter()
        .filter(|p| !indexed.contains(&p.sum))
        .collect();
    for layer in stored {
        for part in &layer.parts {
            out.push(PartCount {
                sum: layer.sum,
                max_exp: part.part.max_exp,
                states: part.chunks.iter().map(|c| c.count).sum(),
                source: Source::Exact,
            });
        }
    }
    out.sort_by_key(|p| (p.sum, p.max_exp));
    out
}

/// Layers from parts.
pub fn layers(parts: &[PartCount]) -> Vec<LayerCount> {
    let mut out: BTreeMap<u32, LayerCount> = BTreeMap::new();
    for p in parts.iter().filter(|p| p.states > 0) {
        let l = out.entry(p.sum).or_insert(LayerCount {
            sum: p.sum,
            parts: 0,
            states: 0,
            source: Source::Exact,
        });
        l.parts += 1;
        l.states += p.states;
        l.source = l.source.and(p.source);
    }
    out.into_values().collect()
}

/// The exact layers of `game` a store has indexed (empty when none yet).
/// Errors when the store holds another game (the discount does not change
/// the states, so it may differ) or no job at all.
pub async fn stored_layers(
    records: &Records,
    game: &Game,
) -> Result<Vec<LayerIndex>, CoordinatorError> {
    let manifest = records
        .manifest()
        .await?
        .ok_or_else(|| CoordinatorError::NoJob {
            location: records.location().to_string(),
        })?;
    let found = manifest.job.game;
    if (found.n, found.target_exp) != (game.n, game.target_exp) {
        return Err(CoordinatorError::ForeignJob {
            location: records.location().to_string(),
            found: found.name(),
            requested: game.name(),
        });
    }
    records.layer_indexes().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::part::ChunkId;
    use solve2048_core::task::{AttemptId, ChunkRef, PartIndex};

    fn game(n: u32, target: u64) -> Game {
        Game::new(n, target, 1.0).unwrap()
    }

    fn total(parts: &[PartCount]) -> u64 {
        parts.iter().map(|p| p.states).sum()
    }

    #[test]
    fn measured_table_is_4x4_to_16() {
        let parts = part_counts(&game(4, 16));
        assert_eq!(total(&parts), 23_482_821);
        assert!(parts.iter().all(|p| p.source == Source::Exact));
        // 4x4 to 8: the parts with max tile at most 4.
        let to8 = part_counts(&game(4, 8));
        assert!(to8
            .iter()
            .all(|p| p.max_exp <= 2 && p.source == Source::Exact));
    }

    #[test]
    fn estimates_add_up_to_the_published_totals() {
        for (target, states, peak) in [
            (32, 1_566_798_892u64, (100, 4, 62_812_882u64)),
            (64, 40_652_843_433, (164, 5, 856_386_976)),
        ] {
            let parts = part_counts(&game(4, target));
            assert_eq!(total(&parts), states, "4x4 to {target}");
            let top = parts.iter().max_by_key(|p| p.states).unwrap();
            assert_eq!((top.sum, top.max_exp), (peak.0, peak.1), "4x4 to {target}");
            let off = (top.states as f64 / peak.2 as f64 - 1.0).abs();
            assert!(off < 0.05, "largest part {} vs {}", top.states, peak.2);
            assert_eq!(top.source, Source::Estimated);
            // Max tile 8 and below stays exact.
            assert!(parts
                .iter()
                .filter(|p| p.max_exp <= 3)
                .all(|p| p.source == Source::Exact));
            // No part below the smallest sum that can hold its max tile.
            assert!(parts
                .iter()
                .all(|p| p.sum >= (1 << p.max_exp) + 2 || p.max_exp <= 3));
        }
    }

    #[test]
    fn model_predicts_max_8_from_max_4() {
        let exact: BTreeMap<u32, u64> = FOUR_BY_FOUR_TO_16
            .iter()
            .filter(|r| r.1 == 3)
            .map(|r| (r.0, r.2))
            .collect();
        let (&peak_sum, &peak_states) = exact.iter().max_by_key(|e| e.1).unwrap();
        let total = exact.values().sum::<u64>();
        let cal = Calibration {
            total,
            peak_sum,
            peak_states,
        };
        let model = stretch(&template(2), cal, 10);
        assert_eq!(model.values().sum::<u64>(), total);
        let sums: std::collections::BTreeSet<u32> =
            exact.keys().chain(model.keys()).copied().collect();
        let error: u64 = sums
            .iter()
            .map(|s| {
                let (a, b) = (exact.get(s).copied(), model.get(s).copied());
                a.unwrap_or(0).abs_diff(b.unwrap_or(0))
            })
            .sum();
        let share = error as f64 / total as f64;
        assert!(share < 0.04, "off by {share}");
    }

    /// The extrapolation note gives a range for every max tile past 32, and
    /// its backtest is the published figures' own.
    #[test]
    fn extrapolation_says_how_far_off_it_may_be() {
        let [t8, t16, t32] = max_tile_totals();
        assert_eq!(t16 as u64, 1_566_798_892 - 23_482_821);
        assert_eq!(t32 as u64, 40_652_843_433 - 1_566_798_892);
        assert!(t8 > 2e7 && t8 < 23_482_821.0);
        let note = extrapolation_note(8);
        assert!(
            note.contains("max tile 64: ") && note.contains("max tile 128: "),
            "{note}"
        );
        assert!(!note.contains("max tile 256"), "{note}");
        assert!(note.contains("overestimates max tile 32 by 2.6x"), "{note}");
        // The upper figure is the model's own.
        let modelled: u64 = estimate_profile(6).values().sum();
        let high = t32 * (t32 / t16);
        assert!(
            (modelled as f64 / high - 1.0).abs() < 1e-6,
            "{modelled} vs {high}"
        );
    }

    #[test]
    fn small_games_are_enumerated_exactly() {
        // tests/data/published.csv
        for (n, target, states) in [
            (2, 8, 15u64),
            (2, 16, 35),
            (2, 32, 57),
            (2, 64, 74),
            (3, 8, 1186),
            (3, 64, 594_046),
            (3, 256, 5_643_584),
        ] {
            let parts = part_counts(&game(n, target));
            assert_eq!(total(&parts), states, "{n}x{n} to {target}");
            assert!(layers(&parts).iter().all(|l| l.source == Source::Exact));
        }
    }

    fn index(sum: u32, parts: &[(u8, &[u64])]) -> LayerIndex {
        LayerIndex {
            sum,
            parts: parts
                .iter()
                .map(|&(max_exp, chunks)| {
                    let part = PartId { sum, max_exp };
                    PartIndex {
                        part,
                        groups: 1,
                        chunks: chunks
                            .iter()
                            .enumerate()
                            .map(|(i, &count)| ChunkRef {
                                id: ChunkId {
                                    part,
                                    group: 0,
                                    index: i as u32,
                                },
                                count,
                                checksum: 0,
                                attempt: AttemptId(1),
                            })
                            .collect(),
                        solved: Vec::new(),
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn stored_layers_override_estimates() {
        let g = game(4, 64);
        let stored = [
            index(164, &[(4, &[5, 6]), (5, &[1000])]),
            index(4, &[(1, &[2])]),
        ];
        let parts = override_with_store(part_counts(&g), &stored);
        let rows = layers(&parts);
        let at = |s: u32| rows.iter().find(|l| l.sum == s).copied().unwrap();
        assert_eq!(
            at(164),
            LayerCount {
                sum: 164,
                parts: 2,
                states: 1011,
                source: Source::Exact
            }
        );
        assert_eq!(at(4).states, 2);
        assert_eq!(at(166).source, Source::Estimated);
    }
}
