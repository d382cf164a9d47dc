//! How 4x4 max tiles past the published figures (64 and up) are
//! extrapolated, and how far off the same rule was where it can be checked.
//!
//! The rule, for max tile 2^k from the max tiles below it:
//!
//! - **States.** The log growth of the states from one max tile to the next
//!   shrinks by a steady ratio: ln(T_k / T_(k-1)) = r ln(T_(k-1) / T_(k-2)).
//!   On 3x3, where every max tile is exact, r is 0.742 to 0.796 over the six
//!   steps to max tiles 16 ... 512; on 4x4 it is 0.745 (max tile 16) and
//!   0.771 (32). The rule takes r as the mean of every ratio seen (both
//!   boards; the steps from max tile 2, a handful of states, are left out)
//!   and gives a range from the least and the greatest, widened to the
//!   worst error of the backtest as many steps ahead.
//! - **Largest part.** A max tile's states over its largest part (the
//!   profile's width) grow as the spread of its profile over the tile sum,
//!   [`SPREAD_GROWTH`] a step, and the largest part's tile sum moves further
//!   than on the last step by the last step's ratio.
//! - **Past the backtest.** The rule is checked at most [`DECAYING_STEPS`]
//!   steps ahead (max tile 32 from those up to 8), so past that (4x4 max
//!   tiles past 128) the states keep the last step's growth without further
//!   decay: an upper figure, the range's low end continuing the decay.
//!
//! [`backtests`] applies the rule to the max tiles that are known (16
//! exact, 32 published) from those below them.

use crate::tables::{
    FOUR_BY_FOUR_PEAK_32, FOUR_BY_FOUR_TOTALS, FOUR_BY_FOUR_TO_32, THREE_BY_THREE_MAX_TILES,
};

/// The figures of one max tile the rule extrapolates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaxTile {
    /// Exponent of the max tile.
    pub k: u8,
    /// States with this max tile.
    pub states: f64,
    /// Tile sum of its largest part.
    pub peak_sum: f64,
    /// States of its largest part.
    pub peak_states: f64,
}

/// How much wider the profile of each max tile is than the one before: the
/// standard deviation of the tile sum over the states of a max tile grows
/// 1.74x to 1.76x a step on 3x3 from max tile 32 to 512 (checked by a
/// test), 1.72x on 4x4 from 8 to 16.
pub const SPREAD_GROWTH: f64 = 1.75;

/// How many steps past the known max tiles the log growth keeps decaying
/// in the central and upper figures: as far as the backtest reaches.
pub const DECAYING_STEPS: u8 = 2;

/// The first max-tile exponent whose decay ratio is used: the ratio of
/// max tile 8 involves max tile 2, whose few states are noise.
const FIRST_RATIO: u8 = 4;

/// The known 4x4 max tiles, 2 to 32: exact to 16, published for 32.
pub fn four_by_four() -> Vec<MaxTile> {
    let mut out: Vec<MaxTile> = (1..=4)
        .map(|k| {
            let rows = FOUR_BY_FOUR_TO_32.iter().filter(|r| r.1 == k);
            let (peak_sum, _, peak) = rows
                .clone()
                .max_by_key(|r| r.2)
                .copied()
                .unwrap_or_default();
            MaxTile {
                k,
                states: rows.map(|r| r.2 as f64).sum(),
                peak_sum: peak_sum as f64,
                peak_states: peak as f64,
            }
        })
        .collect();
    let (k, peak_sum, peak) = FOUR_BY_FOUR_PEAK_32;
    out.push(MaxTile {
        k,
        states: (FOUR_BY_FOUR_TOTALS[2].1 - FOUR_BY_FOUR_TOTALS[1].1) as f64,
        peak_sum: peak_sum as f64,
        peak_states: peak as f64,
    });
    out
}

/// Every 3x3 max tile, 2 to 512, exact.
pub fn three_by_three() -> Vec<MaxTile> {
    THREE_BY_THREE_MAX_TILES
        .iter()
        .map(|&(k, states, peak_sum, peak)| MaxTile {
            k,
            states: states as f64,
            peak_sum: peak_sum as f64,
            peak_states: peak as f64,
        })
        .collect()
}

/// The decay ratios of `tiles` (consecutive max tiles from 2) from
/// [`FIRST_RATIO`] on.
fn decay_ratios(tiles: &[MaxTile]) -> Vec<f64> {
    tiles
        .windows(3)
        .filter(|w| w[2].k >= FIRST_RATIO)
        .map(|w| (w[2].states / w[1].states).ln() / (w[1].states / w[0].states).ln())
        .collect()
}

/// The decay ratio the rule uses, and the range it has been seen in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decay {
    /// The mean of the ratios seen.
    pub central: f64,
    /// The least seen.
    pub low: f64,
    /// The greatest seen.
    pub high: f64,
}

/// The decay ratio from every 3x3 step and the steps of `known` (4x4).
pub fn decay(known: &[MaxTile]) -> Decay {
    decay_of(&[&three_by_three(), known])
}

/// The decay ratio from the steps of `boards` (each its consecutive max
/// tiles from 2) pooled.
fn decay_of(boards: &[&[MaxTile]]) -> Decay {
    let seen: Vec<f64> = boards.iter().flat_map(|b| decay_ratios(b)).collect();
    Decay {
        central: seen.iter().sum::<f64>() / seen.len().max(1) as f64,
        low: seen.iter().copied().fold(f64::INFINITY, f64::min),
        high: seen.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The next `steps` max tiles after `known` (at least three consecutive
/// max tiles), by the rule with decay ratio `r` for the first `decaying`
/// steps and none after.
pub fn extrapolate(known: &[MaxTile], r: f64, steps: u8, decaying: u8) -> Vec<MaxTile> {
    let (a, b, c) = match known {
        [.., a, b, c] => (*a, *b, *c),
        _ => return Vec::new(),
    };
    let width = |t: MaxTile| t.states / t.peak_states;
    let mut growth = (c.states / b.states).ln();
    let mut shift = c.peak_sum - b.peak_sum;
    let further = shift / (b.peak_sum - a.peak_sum);
    let mut last = c;
    let mut out = Vec::new();
    for step in 0..steps {
        if step < decaying {
            growth *= r;
        }
        shift *= further;
        let states = last.states * growth.exp();
        let next = MaxTile {
            k: last.k + 1,
            states,
            peak_sum: (last.peak_sum + shift).round(),
            peak_states: states / (width(last) * SPREAD_GROWTH),
        };
        out.push(next);
        last = next;
    }
    out
}

/// The estimate of one 4x4 max tile past 32, with its range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// By the mean decay ratio.
    pub central: MaxTile,
    /// States by the least decay ratio seen.
    pub low_states: f64,
    /// States by the greatest.
    pub high_states: f64,
}

/// The estimate of 4x4 max tile 2^k (k > 5) from every known max tile. Its
/// range is the wider of the decay ratios' and the backtest's: the worst
/// error the rule made as many steps ahead (two steps at most; each step
/// past two adds the worst one-step error).
pub fn estimate(k: u8) -> Option<Estimate> {
    let known = four_by_four();
    let e = predict(&known, k)?;
    let factor = error_factor(k - known.last()?.k);
    Some(Estimate {
        low_states: e.low_states.min(e.central.states / factor),
        high_states: e.high_states.max(e.central.states * factor),
        ..e
    })
}

/// How far off a count extrapolated `steps` max tiles past the known ones
/// may be, as a factor of at least 1: the worst error the backtest made as
/// many steps ahead ([`DECAYING_STEPS`] at most; each step past them adds
/// the worst one-step error).
pub fn error_factor(steps: u8) -> f64 {
    let near = steps.min(DECAYING_STEPS);
    worst_error(near) * worst_error(1).powi(i32::from(steps - near))
}

/// The worst error of the backtest `steps` ahead, as a factor of at least 1.
fn worst_error(steps: u8) -> f64 {
    backtests()
        .iter()
        .filter(|t| t.actual.k - t.from == steps)
        .map(|t| t.states_error().max(1.0 / t.states_error()))
        .fold(1.0, f64::max)
}

/// The estimate of max tile 2^k from the max tiles of `known` (4x4) below
/// it; `None` for a known one.
fn predict(known: &[MaxTile], k: u8) -> Option<Estimate> {
    predict_with(known, k, decay(known))
}

/// The estimate of max tile 2^k from the max tiles of `known` below it,
/// with decay ratio `d`.
fn predict_with(known: &[MaxTile], k: u8, d: Decay) -> Option<Estimate> {
    let top = known.last()?.k;
    let steps = k.checked_sub(top).filter(|&s| s > 0)?;
    let at = |r: f64, decaying: u8| extrapolate(known, r, steps, decaying).last().copied();
    Some(Estimate {
        central: at(d.central, DECAYING_STEPS)?,
        low_states: at(d.low, steps)?.states,
        high_states: at(d.high, DECAYING_STEPS)?.states,
    })
}

/// The rule applied to a known max tile from the ones below it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backtest {
    /// Exponent of the largest max tile the prediction starts from.
    pub from: u8,
    /// What the rule predicts.
    pub predicted: Estimate,
    /// The exact or published figures.
    pub actual: MaxTile,
}

impl Backtest {
    /// Predicted states over actual.
    pub fn states_error(&self) -> f64 {
        self.predicted.central.states / self.actual.states
    }

    /// Predicted largest part over actual.
    pub fn peak_error(&self) -> f64 {
        self.predicted.central.peak_states / self.actual.peak_states
    }
}

/// The rule on 4x4 max tiles 16 (exact) and 32 (published), each predicted
/// from the max tiles below it (and every 3x3 one), one step and two steps
/// ahead: (16 from 2..8, 32 from 2..16, 32 from 2..8).
pub fn backtests() -> Vec<Backtest> {
    let known = four_by_four();
    [(4u8, 3u8), (5, 4), (5, 3)]
        .into_iter()
        .filter_map(|(k, below)| {
            let predicted = predict(&known[..below as usize], k)?;
            Some(Backtest {
                from: below,
                predicted,
                actual: known[k as usize - 1],
            })
        })
        .collect()
}

/// The note printed when a 4x4 game needs max tiles past 32: the rule, its
/// backtest, and the range of each extrapolated max tile.
pub fn extrapolation_note(target_exp: u8) -> String {
    let known = four_by_four();
    let d = decay(&known);
    let tests = backtests();
    let told: Vec<String> = tests
        .iter()
        .map(|t| {
            format!(
                "max tile {} from those up to {}: {:.2}x its states, largest part {:.2}x at sum {} \
                 (actual {})",
                1u64 << t.actual.k,
                1u64 << t.from,
                t.states_error(),
                t.peak_error(),
                t.predicted.central.peak_sum,
                t.actual.peak_sum
            )
        })
        .collect();
    let ranges: Vec<String> = (6..target_exp)
        .filter_map(|k| {
            let e = estimate(k)?;
            Some(format!(
                "max tile {}: {:.2e} states ({:.2e} to {:.2e}), largest part {:.2e} at sum {}",
                1u64 << k,
                e.central.states,
                e.low_states,
                e.high_states,
                e.central.peak_states,
                e.central.peak_sum
            ))
        })
        .collect();
    format!(
        "extrapolated: no published figure covers max tiles past 32. Each one's log growth of \
         states is the last one's times {:.3} (the mean decay ratio seen on 3x3, max tiles 16 to \
         512, and 4x4, 16 and 32; seen from {:.3} to {:.3}), its largest part its states over a \
         width growing {SPREAD_GROWTH}x a step (the growth of the spread of each max tile's \
         profile on 3x3), at a tile sum moving as much further as on the last step; past max tile 128 (further \
         than any backtest) the states keep the max-128 growth, an upper figure. Backtest, the same rule from the max tiles below: {}. {} (each range the wider of \
         the least and greatest decay ratio seen, the least decaying on past 128, and the worst \
         backtest error as many steps ahead; the plan uses the first figure)",
        d.central,
        d.low,
        d.high,
        told.join("; "),
        ranges.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counts::enumerate_small;
    use solve2048_core::Game;

    /// The 3x3 table is what the in-memory enumeration gives, and the
    /// spread of each max tile's profile grows [`SPREAD_GROWTH`] a step from
    /// max tile 32 on.
    #[test]
    fn three_by_three_table_is_exact_and_spreads_steadily() {
        let parts = enumerate_small(&Game::new(3, 1024, 1.0).unwrap()).unwrap();
        for t in three_by_three() {
            let mine: Vec<_> = parts.iter().filter(|p| p.max_exp == t.k).collect();
            let states: u64 = mine.iter().map(|p| p.states).sum();
            let top = mine.iter().max_by_key(|p| p.states).unwrap();
            assert_eq!(
                (states, top.sum, top.states),
                (t.states as u64, t.peak_sum as u32, t.peak_states as u64),
                "max tile {}",
                1 << t.k
            );
        }
        let spread = |k: u8| {
            let mine: Vec<_> = parts.iter().filter(|p| p.max_exp == k).collect();
            let n: f64 = mine.iter().map(|p| p.states as f64).sum();
            let mean = mine
                .iter()
                .map(|p| p.sum as f64 * p.states as f64)
                .sum::<f64>()
                / n;
            let var = mine
                .iter()
                .map(|p| (p.sum as f64 - mean).powi(2) * p.states as f64)
                .sum::<f64>();
            (var / n).sqrt()
        };
        for k in 5..=9 {
            let growth = spread(k) / spread(k - 1);
            assert!(
                (growth - SPREAD_GROWTH).abs() < 0.011,
                "max tile {}: {growth}",
                1 << k
            );
        }
    }

    #[test]
    fn decay_ratio_is_steady() {
        let d = decay(&four_by_four());
        let near = |a: f64, b: f64| (a - b).abs() < 5e-4;
        assert!(near(d.central, 0.769), "{d:?}");
        assert!(near(d.low, 0.742) && near(d.high, 0.796), "{d:?}");
    }

    /// The backtest, recomputed: the rule's errors on the max tiles it can be
    /// checked on stay within these, and each actual figure lies within the
    /// range the rule gave.
    #[test]
    fn backtest_errors_stay_small() {
        let tests = backtests();
        // (from, max tile, most states error, most largest-part error, most
        // tile-sum error of the largest part)
        let most = [
            (3, 4, 1.17, 1.17, 2.0),
            (4, 5, 1.02, 1.06, 11.0),
            (3, 5, 1.32, 1.39, 19.0),
        ];
        assert_eq!(tests.len(), most.len());
        for (t, (from, k, states, peak, sum)) in tests.iter().zip(most) {
            assert_eq!((t.from, t.actual.k), (from, k));
            let off = |e: f64| e.max(1.0 / e);
            assert!(off(t.states_error()) < states, "{t:?}");
            assert!(off(t.peak_error()) < peak, "{t:?}");
            assert!(
                (t.predicted.central.peak_sum - t.actual.peak_sum).abs() <= sum,
                "{t:?}"
            );
            let p = t.predicted;
            assert!(
                p.low_states <= t.actual.states && t.actual.states <= p.high_states,
                "{t:?}"
            );
        }
    }

    /// The same rule on 3x3 (each max tile from the 3x3 ones below it and
    /// the 4x4 steps): 1% to 3% low one step ahead, 4% to 7% two steps
    /// ahead, as 3x3's decay ratio creeps up.
    #[test]
    fn rule_backtests_on_3x3() {
        let three = three_by_three();
        let four = four_by_four();
        for k in 5u8..=9 {
            for (steps, lowest) in [(1u8, 0.97), (2, 0.92)] {
                let below = &three[..(k - steps) as usize];
                if below.len() < 4 {
                    continue;
                }
                let e = predict_with(below, k, decay_of(&[below, &four])).unwrap();
                let error = e.central.states / three[k as usize - 1].states;
                assert!(
                    (lowest..1.0).contains(&error),
                    "max tile {} from {} steps below: {error}",
                    1 << k,
                    steps
                );
            }
        }
    }

    #[test]
    fn max_tile_64_and_128() {
        let e = estimate(6).unwrap();
        let near = |a: f64, b: f64| (a / b - 1.0).abs() < 0.01;
        assert!(near(e.central.states, 4.69e11), "{e:?}");
        // The backtest's worst one-step error (1.17x) is wider than the
        // decay ratios' range (4.30e11 to 5.12e11).
        assert!(
            near(e.low_states, 4.02e11) && near(e.high_states, 5.46e11),
            "{e:?}"
        );
        assert_eq!(e.central.peak_sum, 266.0);
        let e = estimate(7).unwrap();
        assert!(near(e.central.states, 3.17e12), "{e:?}");
        assert!(
            near(e.low_states, 2.41e12) && near(e.high_states, 4.17e12),
            "{e:?}"
        );
        // Past 128 the growth stops decaying (the low end keeps decaying).
        let grown = e.central.states / estimate(6).unwrap().central.states;
        let next = estimate(8).unwrap();
        assert!(
            near(next.central.states, e.central.states * grown),
            "{next:?}"
        );
        assert!(next.low_states < e.low_states * grown, "{next:?}");
        assert!(estimate(5).is_none());
        let note = extrapolation_note(7);
        assert!(
            note.contains("max tile 64: 4.69e11 states (4.02e11 to 5.46e11)"),
            "{note}"
        );
    }
}
