//! Tile placement: the random start and the canonical successors of a state.
//!
//! A successor is a move followed by a spawn. Instead of canonicalising every
//! successor from scratch, the 8 symmetric images of the afterstate are
//! computed once and the new tile is ORed into each image at the position its
//! cell maps to ([`crate::rules::canonical::cell_images`]); the minimum is the
//! canonical successor (on 3x3 and 4x4 boards with AVX2, the 8 images in
//! vector lanes: `crate::rules::lanes`).

use std::collections::BTreeMap;

use crate::rules::canonical::{canonical, Orientation};
use crate::rules::shape::Shape;
use crate::rules::symmetry::Symmetry;

/// The spawn rule: a spawned tile is a 4 (exponent 2) with probability
/// `four` and a 2 (exponent 1) otherwise, on a uniformly random empty cell.
///
/// The chances are kept as the reduced fraction `four_weight / (two_weight +
/// four_weight)` (the standard rule is 1/10: weights 9 and 1), so that the
/// start distribution's weights are integers and `two` and `four` are the
/// correctly rounded values of the fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpawnRule {
    /// Probability that a spawned tile is a 2.
    pub two: f64,
    /// Probability that a spawned tile is a 4.
    pub four: f64,
    /// A 2's integer weight.
    pub two_weight: u64,
    /// A 4's integer weight.
    pub four_weight: u64,
}

impl SpawnRule {
    /// The standard rule's chance of a 4 (0.1), in millionths.
    pub const STANDARD_FOURS_PER_MILLION: u32 = 100_000;

    /// The rule with a 4 spawned with probability `fours_per_million` / 10^6
    /// (at most 10^6).
    pub fn new(fours_per_million: u32) -> SpawnRule {
        let four = fours_per_million.min(1_000_000) as u64;
        let two = 1_000_000 - four;
        let g = gcd(two, four);
        let (two_weight, four_weight) = (two / g, four / g);
        let total = (two_weight + four_weight) as f64;
        SpawnRule {
            two: two_weight as f64 / total,
            four: four_weight as f64 / total,
            two_weight,
            four_weight,
        }
    }

    /// The standard rule: a 2 with probability 0.9, a 4 with 0.1.
    pub fn standard() -> SpawnRule {
        SpawnRule::new(SpawnRule::STANDARD_FOURS_PER_MILLION)
    }

    /// Probability of a tile of exponent `tile` (1 for a 2, 2 for a 4).
    #[inline]
    pub fn chance(&self, tile: u8) -> f64 {
        if tile == 1 {
            self.two
        } else {
            self.four
        }
    }

    /// Whether the rule ever spawns a tile of exponent `tile` (1 for a 2,
    /// 2 for a 4): a tile of chance 0 makes no successor, request or push.
    #[inline]
    pub fn spawns(&self, tile: u8) -> bool {
        self.weight(tile) > 0
    }

    /// The exponents of the tiles the rule spawns (1 for a 2, 2 for a 4),
    /// in that order.
    pub fn tiles(&self) -> impl Iterator<Item = u8> + '_ {
        [1u8, 2].into_iter().filter(|&t| self.spawns(t))
    }

    /// Integer weight of a tile of exponent `tile` (1 for a 2, 2 for a 4).
    fn weight(&self, tile: u8) -> u64 {
        if tile == 1 {
            self.two_weight
        } else {
            self.four_weight
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Calls `f(two, four)` for each empty cell of afterstate `t`, in increasing
/// cell order, with the canonical boards made by placing a 2 and a 4 there
/// ([`Symmetry::for_each_spawn`], chosen for this one afterstate: a
/// kernel's loop chooses its [`Symmetry`] once instead).
#[inline]
pub fn for_each_spawn(t: u64, shape: Shape, f: impl FnMut(u64, u64)) {
    crate::with_symmetry!(shape, |sym| sym.for_each_spawn(t, f))
}

/// [`for_each_spawn`] with the boards keyed by `orientation`: canonical, or
/// as they lie.
#[inline]
pub fn for_each_spawn_in(orientation: Orientation, t: u64, shape: Shape, f: impl FnMut(u64, u64)) {
    crate::with_symmetry!(orientation, shape, |sym| sym.for_each_spawn(t, f))
}

/// [`for_each_spawn_of`] with the boards keyed by `orientation`.
#[inline]
pub fn for_each_spawn_of_in(
    orientation: Orientation,
    t: u64,
    shape: Shape,
    tile: u8,
    f: impl FnMut(u64),
) {
    crate::with_symmetry!(orientation, shape, |sym| sym.for_each_spawn_of(t, tile, f))
}

/// Calls `f(board)` for each empty cell of afterstate `t`, in increasing cell
/// order, with the canonical board made by placing a tile of exponent `tile`
/// (1 for a 2, 2 for a 4) there: [`for_each_spawn`] for one tile.
#[inline]
pub fn for_each_spawn_of(t: u64, shape: Shape, tile: u8, f: impl FnMut(u64)) {
    crate::with_symmetry!(shape, |sym| sym.for_each_spawn_of(t, tile, f))
}

/// The start distribution: canonical boards with two tiles placed on the empty
/// board by the spawn rule. Probabilities are kept as integer weights over a
/// common denominator so that expectations are exact where the values are
/// (a game that is always won has start value exactly 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Starts {
    /// Start board (canonical, unless made by [`Starts::actual`]) -> weight.
    pub weights: BTreeMap<u64, u64>,
    /// Sum of all weights.
    pub denominator: u64,
}

impl Starts {
    /// The start distribution of a game on boards of `shape` under `rule`.
    pub fn new(shape: Shape, rule: &SpawnRule) -> Starts {
        Starts::of(shape, rule, |board| canonical(board, shape))
    }

    /// The start distribution over boards as they lie (not canonical): what
    /// a player that is not symmetric starts from.
    pub fn actual(shape: Shape, rule: &SpawnRule) -> Starts {
        Starts::of(shape, rule, |board| board)
    }

    /// The start distribution with each start board keyed by `key(board)`.
    /// Boards of probability 0 (a 4 when the rule spawns none, or a 2) are
    /// left out.
    fn of(shape: Shape, rule: &SpawnRule, key: impl Fn(u64) -> u64) -> Starts {
        let cells: Vec<u32> = (0..shape.rows())
            .flat_map(|r| (0..shape.cols()).map(move |c| (16 * r + 4 * c) as u32))
            .collect();
        // A tile has its rule's integer weight (9 and 1 for 0.9 and 0.1);
        // each ordered pair of distinct cells is equally likely.
        let tiles: Vec<(u64, u64)> = rule.tiles().map(|e| (e as u64, rule.weight(e))).collect();
        let mut weights = BTreeMap::new();
        let mut denominator = 0;
        for &a in &cells {
            for &(ea, wa) in &tiles {
                for &b in cells.iter().filter(|&&b| b != a) {
                    for &(eb, wb) in &tiles {
                        let board = (ea << a) | (eb << b);
                        *weights.entry(key(board)).or_insert(0) += wa * wb;
                        denominator += wa * wb;
                    }
                }
            }
        }
        Starts {
            weights,
            denominator,
        }
    }

    /// Probability of a start board (canonical, unless made by
    /// [`Starts::actual`]).
    pub fn probability(&self, board: u64) -> f64 {
        self.weights
            .get(&board)
            .map_or(0.0, |&w| w as f64 / self.denominator as f64)
    }

    /// Expectation of `value` over the start distribution.
    pub fn expect(&self, mut value: impl FnMut(u64) -> f64) -> f64 {
        let total: f64 = self
            .weights
            .iter()
            .map(|(&s, &w)| w as f64 * value(s))
            .sum();
        total / self.denominator as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::slow;

    #[test]
    fn spawns_match_slow() {
        let mut seed = 99u64;
        for shape in Shape::all() {
            for _ in 0..3000 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                // Sparse random boards: each cell empty with probability ~1/2,
                // tiles of exponents 1 to 4 or, on about half the boards, 12
                // to 15 (which set the top bit of a 4x4 board's images).
                let mut t = 0u64;
                for r in 0..shape.rows() {
                    for c in 0..shape.cols() {
                        let v = (seed >> (3 * (4 * r + c))) & 7;
                        if v >= 4 {
                            let tile = if seed >> 63 == 0 { v - 3 } else { 19 - v };
                            t |= tile << (16 * r + 4 * c);
                        }
                    }
                }
                let mut fast = Vec::new();
                for_each_spawn(t, shape, |two, four| {
                    fast.push(two);
                    fast.push(four);
                });
                let slow_spawns = slow::spawns(t, shape, 0.1);
                let slow: Vec<u64> = slow_spawns
                    .iter()
                    .map(|&(b, _)| slow::canonical(b, shape))
                    .collect();
                assert_eq!(fast, slow, "{shape} t={t:#x}");
                let mut lying = Vec::new();
                for_each_spawn_in(Orientation::AsTheyLie, t, shape, |two, four| {
                    lying.push(two);
                    lying.push(four);
                });
                let slow: Vec<u64> = slow_spawns.iter().map(|&(b, _)| b).collect();
                assert_eq!(lying, slow, "{shape} t={t:#x} as it lies");
            }
        }
    }

    #[test]
    fn spawns_of_one_tile_are_the_pairs_halves() {
        let mut seed = 7u64;
        for shape in Shape::all() {
            for _ in 0..2000 {
                seed = crate::space::ids::mix(seed);
                let t = seed & shape.block_mask() & 0x3333_3333_3333_3333;
                for o in [Orientation::Canonical, Orientation::AsTheyLie] {
                    let (mut twos, mut fours) = (Vec::new(), Vec::new());
                    for_each_spawn_in(o, t, shape, |a, b| {
                        twos.push(a);
                        fours.push(b);
                    });
                    let mut only = Vec::new();
                    for_each_spawn_of_in(o, t, shape, 1, |a| only.push(a));
                    assert_eq!(only, twos);
                    only.clear();
                    for_each_spawn_of_in(o, t, shape, 2, |b| only.push(b));
                    assert_eq!(only, fours);
                }
            }
        }
    }

    /// The rules the tests try: the standard one, none or only 4s, even
    /// chances and a fine-grained one.
    fn rules() -> Vec<(f64, SpawnRule)> {
        [100_000, 0, 1_000_000, 500_000, 123_457]
            .into_iter()
            .map(|m| (m as f64 / 1e6, SpawnRule::new(m)))
            .collect()
    }

    #[test]
    fn a_rule_is_its_fraction_and_its_chances_sum_to_one() {
        let standard = SpawnRule::standard();
        assert_eq!((standard.two, standard.four), (0.9, 0.1));
        assert_eq!((standard.two_weight, standard.four_weight), (9, 1));
        assert_eq!(SpawnRule::new(0).four_weight, 0);
        assert_eq!(SpawnRule::new(1_000_000).two_weight, 0);
        assert_eq!(SpawnRule::new(250_000).two_weight, 3);
        // A certain win stays exactly 1 through the solve's formula for
        // every rule a game can have.
        for m in 0..=1_000_000 {
            let r = SpawnRule::new(m);
            assert_eq!(r.two + r.four, 1.0, "{m} fours a million");
        }
    }

    #[test]
    fn starts_match_slow_and_sum_to_one() {
        for (p, rule) in rules() {
            for shape in Shape::all() {
                let fast = Starts::new(shape, &rule);
                let slow = slow::starts(shape, p);
                assert_eq!(
                    fast.weights.keys().collect::<Vec<_>>(),
                    slow.keys().collect::<Vec<_>>(),
                    "p={p}"
                );
                for (&k, q) in &slow {
                    assert!((q - fast.probability(k)).abs() < 1e-15);
                }
                assert_eq!(fast.expect(|_| 1.0), 1.0);
            }
        }
    }

    /// The starts as they lie: two spawns on the empty board, each board
    /// with the probability of its ways to arise; their canonical forms
    /// give the canonical starts back.
    #[test]
    fn actual_starts_are_two_spawns_on_the_empty_board() {
        for (p, rule) in rules() {
            for shape in Shape::all() {
                let actual = Starts::actual(shape, &rule);
                let mut want: BTreeMap<u64, f64> = BTreeMap::new();
                for (one, p1) in slow::spawns(0, shape, p) {
                    for (two, p2) in slow::spawns(one, shape, p) {
                        *want.entry(two).or_default() += p1 * p2;
                    }
                }
                assert_eq!(
                    actual.weights.keys().collect::<Vec<_>>(),
                    want.keys().collect::<Vec<_>>()
                );
                let mut folded: BTreeMap<u64, f64> = BTreeMap::new();
                for (&b, q) in &want {
                    assert!((q - actual.probability(b)).abs() < 1e-15);
                    *folded.entry(canonical(b, shape)).or_default() += q;
                }
                let canon = Starts::new(shape, &rule);
                for (&b, q) in &folded {
                    assert!((q - canon.probability(b)).abs() < 1e-15);
                }
                assert_eq!(actual.denominator, canon.denominator);
                assert_eq!(actual.expect(|_| 1.0), 1.0);
            }
        }
    }
}
