//! A small, fully specified random number generator (splitmix64) and the
//! spawn rule on top of it, so that a seed gives the same game on every
//! platform and version.
//!
//! The algorithm is frozen: `play`, the players' games and their tests pin
//! games by seed, so changing any step here changes every recorded game.
//!
//! - [`SeededRng::next_u64`] is splitmix64: the state advances by the golden
//!   gamma `0x9E3779B97F4A7C15` and the output is the splitmix64 finaliser
//!   ([`crate::space::ids::mix`]) of the new state.
//! - [`SeededRng::below`] maps 64 random bits to `0..k` by a multiply-shift
//!   (`(bits * k) >> 64`).
//! - [`SeededRng::spawn`] draws the empty cell first (`below(empty cells)`,
//!   cells in increasing nybble order), then the tile: a 4 when the top 53
//!   bits of the next draw, as a fraction of `2^53`, are below the rule's
//!   chance of a 4 ([`SpawnRule::four`]; 0.1 unless
//!   [`SeededRng::with_rule`] gives another), else a 2.

use crate::rules::board::empty_bits;
use crate::rules::shape::Shape;
use crate::rules::spawn::SpawnRule;

/// A splitmix64 generator with the spawn rule it places tiles by (see the
/// module docs for the exact algorithm).
#[derive(Clone, Debug, PartialEq)]
pub struct SeededRng {
    state: u64,
    four: f64,
}

impl SeededRng {
    /// A generator from a seed, placing tiles by the standard rule.
    pub fn new(seed: u64) -> SeededRng {
        SeededRng {
            state: seed,
            four: SpawnRule::standard().four,
        }
    }

    /// This generator placing tiles by `rule` instead.
    pub fn with_rule(self, rule: &SpawnRule) -> SeededRng {
        SeededRng {
            four: rule.four,
            ..self
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        crate::space::ids::mix(self.state.wrapping_sub(0x9E37_79B9_7F4A_7C15))
    }

    /// A uniform integer below `k` (`k` > 0).
    pub fn below(&mut self, k: u64) -> u64 {
        ((self.next_u64() as u128 * k as u128) >> 64) as u64
    }

    /// Place a tile by the spawn rule: uniform empty cell of the block of
    /// `shape`, 4 with the rule's probability. `x` must have an empty cell.
    pub fn spawn(&mut self, x: u64, shape: Shape) -> u64 {
        let mut empties = empty_bits(x, shape);
        let k = empties.count_ones() as u64;
        for _ in 0..self.below(k) {
            empties &= empties - 1;
        }
        let cell = empties.trailing_zeros();
        let four = ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < self.four;
        x | ((if four { 2u64 } else { 1 }) << cell)
    }

    /// A start board: two tiles spawned on the empty board of `shape`.
    pub fn start(&mut self, shape: Shape) -> u64 {
        let x = self.spawn(0, shape);
        self.spawn(x, shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_outputs() {
        // The published splitmix64 sequence from seed 0.
        let mut rng = SeededRng::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn spawns_fill_empty_cells_with_the_right_odds() {
        for (n, m) in [
            (2, 100_000),
            (3, 100_000),
            (4, 100_000),
            (3, 500_000),
            (4, 0),
            (2, 1_000_000),
        ] {
            let rule = SpawnRule::new(m);
            let mut rng = SeededRng::new(7 + n as u64).with_rule(&rule);
            let n = Shape::square(n);
            let mut fours = 0;
            let draws = 20_000;
            for _ in 0..draws {
                let x = rng.start(n);
                assert_eq!(x & !n.block_mask(), 0);
                assert_eq!(crate::Board(x).empty_cells(n) as usize, n.cells() - 2);
                let y = rng.spawn(x, n);
                let new = y ^ x;
                assert_eq!(new.count_ones(), 1, "one tile added, {n}");
                assert_eq!(x & (0xF << (new.trailing_zeros() / 4 * 4)), 0);
                if (new >> (new.trailing_zeros() / 4 * 4)) == 2 {
                    fours += 1;
                }
            }
            let share = fours as f64 / draws as f64;
            assert!(
                (share - rule.four).abs() < 0.01,
                "{n} m={m} share of 4s {share}"
            );
        }
    }

    #[test]
    fn below_is_in_range_and_seeded() {
        let mut a = SeededRng::new(42);
        let mut b = SeededRng::new(42);
        for k in 1..1000 {
            let x = a.below(k);
            assert!(x < k);
            assert_eq!(x, b.below(k));
        }
    }
}
