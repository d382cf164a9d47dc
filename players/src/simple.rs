//! The simplest players: `random` (a uniformly random legal move), `order:XXXX`
//! (the first legal move in a fixed order) and `greedy` (the legal move whose
//! merges make the most value).

use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::rng::SeededRng;
use solve2048_core::{Direction, Shape};

use crate::player::{certain, legal_moves, scored_moves, Player};
use crate::{NotExact, PlayerError};

/// `random`: a uniformly random legal move, drawn from its own seeded stream
/// (`below(number of legal moves)`, legal moves in left, right, up, down
/// order).
#[derive(Clone)]
pub struct RandomPlayer {
    mover: Mover,
    rng: SeededRng,
}

impl RandomPlayer {
    /// A random player for boards of `shape` whose stream starts from `seed`.
    pub fn new(shape: Shape, seed: u64) -> Result<RandomPlayer, PlayerError> {
        Ok(RandomPlayer {
            mover: Mover::new(shape),
            rng: SeededRng::new(seed),
        })
    }
}

impl Player for RandomPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let mut legal = [Direction::Left; 4];
        let mut k = 0;
        for (d, _) in legal_moves(&self.mover, board) {
            legal[k] = d;
            k += 1;
        }
        (k > 0).then(|| legal[self.rng.below(k as u64) as usize])
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        let legal: Vec<Direction> = legal_moves(&self.mover, board).map(|(d, _)| d).collect();
        let p = 1.0 / legal.len() as f64;
        Ok(legal.into_iter().map(|d| (d, p)).collect())
    }

    fn name(&self) -> String {
        "random".to_string()
    }

    fn reseed(&mut self, seed: u64) {
        self.rng = SeededRng::new(seed);
    }
}

/// `order:XXXX`: the first legal move in a fixed order of the four
/// directions, on the board as it lies (`order:LDRU` tries left, then down,
/// then right, then up).
#[derive(Clone)]
pub struct OrderPlayer {
    mover: Mover,
    order: [Direction; 4],
}

impl OrderPlayer {
    /// An order player for boards of `shape`.
    pub fn new(shape: Shape, order: [Direction; 4]) -> Result<OrderPlayer, PlayerError> {
        Ok(OrderPlayer {
            mover: Mover::new(shape),
            order,
        })
    }

    /// Parse an order such as `LDRU`: each of `L`, `R`, `U`, `D` exactly once
    /// (either case).
    pub fn parse_order(text: &str) -> Result<[Direction; 4], PlayerError> {
        let bad = |reason: String| PlayerError::BadParameter {
            player: "order".to_string(),
            param: text.to_string(),
            reason,
        };
        let letters: Vec<char> = text.chars().collect();
        if letters.len() != 4 {
            return Err(bad(format!(
                "an order is the four letters L, R, U, D each once (e.g. LDRU); got {} characters",
                letters.len()
            )));
        }
        let mut order = [Direction::Left; 4];
        for (i, ch) in letters.iter().enumerate() {
            let d = letter_direction(*ch)
                .ok_or_else(|| bad(format!("{ch:?} is not one of L, R, U, D")))?;
            if order[..i].contains(&d) {
                return Err(bad(format!("{} appears twice", ch.to_ascii_uppercase())));
            }
            order[i] = d;
        }
        Ok(order)
    }

    /// The order as letters, e.g. `LDRU`.
    pub fn order_text(order: &[Direction; 4]) -> String {
        order.iter().map(|&d| direction_letter(d)).collect()
    }
}

/// The letter of a direction in order specs: `L`, `R`, `U` or `D`.
pub fn direction_letter(d: Direction) -> char {
    match d {
        Direction::Left => 'L',
        Direction::Right => 'R',
        Direction::Up => 'U',
        Direction::Down => 'D',
    }
}

fn letter_direction(ch: char) -> Option<Direction> {
    match ch.to_ascii_uppercase() {
        'L' => Some(Direction::Left),
        'R' => Some(Direction::Right),
        'U' => Some(Direction::Up),
        'D' => Some(Direction::Down),
        _ => None,
    }
}

impl Player for OrderPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        self.order
            .into_iter()
            .find(|&d| self.mover.apply(board, d) != board)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(certain(self.choose(board)))
    }

    fn name(&self) -> String {
        format!("order:{}", Self::order_text(&self.order))
    }
}

/// `greedy`: the legal move with the largest score (the sum of the values of
/// the tiles its merges create); ties, including all-zero scores, go to the
/// first in left, right, up, down order.
#[derive(Clone)]
pub struct GreedyPlayer {
    mover: Mover,
}

impl GreedyPlayer {
    /// A greedy player for boards of `shape`.
    pub fn new(shape: Shape) -> Result<GreedyPlayer, PlayerError> {
        Ok(GreedyPlayer {
            mover: Mover::new(shape),
        })
    }
}

impl Player for GreedyPlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let mut best: Option<(Direction, u32)> = None;
        for (d, _, score) in scored_moves(&self.mover, board) {
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((d, score));
            }
        }
        best.map(|(d, _)| d)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(certain(self.choose(board)))
    }

    fn name(&self) -> String {
        "greedy".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::Board;

    fn b(s: &str) -> u64 {
        Board::parse(s).unwrap().0 .0
    }

    #[test]
    fn order_parses_each_letter_once() {
        use Direction::*;
        assert_eq!(
            OrderPlayer::parse_order("LDRU").unwrap(),
            [Left, Down, Right, Up]
        );
        assert_eq!(
            OrderPlayer::parse_order("urdl").unwrap(),
            [Up, Right, Down, Left]
        );
        for bad in ["LLRU", "LDR", "LDRUX", "LDRX", ""] {
            assert!(
                matches!(
                    OrderPlayer::parse_order(bad),
                    Err(PlayerError::BadParameter { .. })
                ),
                "{bad}"
            );
        }
        let e = OrderPlayer::parse_order("LLRU").unwrap_err().to_string();
        assert!(e.contains("L appears twice"), "{e}");
    }

    #[test]
    fn order_takes_the_first_legal_move_in_its_order() {
        let mut p =
            OrderPlayer::new(Shape::square(2), OrderPlayer::parse_order("LDRU").unwrap()).unwrap();
        // Left is illegal (tiles packed left, no merges), down is legal.
        assert_eq!(p.choose(b("2 4 / . .")), Some(Direction::Down));
        // Left and down illegal, right legal.
        assert_eq!(p.choose(b(". . / 2 .")), Some(Direction::Right));
        // Only up is legal.
        assert_eq!(p.choose(b(". . / 2 4")), Some(Direction::Up));
        assert_eq!(p.choose(b("2 4 / 4 2")), None);
        assert_eq!(p.distribution(b("2 4 / 4 2")).unwrap(), vec![]);
        assert_eq!(p.name(), "order:LDRU");
    }

    #[test]
    fn greedy_takes_the_largest_merge_with_ties_in_fixed_order() {
        let mut p = GreedyPlayer::new(Shape::square(3)).unwrap();
        // Left/right merge the 2s (4 points); up/down merge the 8s (16).
        let x = b("2 2 8 / . . 8 / . . .");
        assert_eq!(p.choose(x), Some(Direction::Up));
        // Left and right merge the same; left comes first.
        assert_eq!(p.choose(b("2 2 . / . . . / . . .")), Some(Direction::Left));
        // Nothing merges: the first legal move, right.
        assert_eq!(p.choose(b("2 4 . / . . . / . . .")), Some(Direction::Right));
    }

    #[test]
    fn random_is_uniform_over_legal_moves() {
        let mut p = RandomPlayer::new(Shape::square(2), 5).unwrap();
        let x = b("2 . / . .");
        let d = p.distribution(x).unwrap();
        assert_eq!(
            d,
            vec![(Direction::Right, 0.5), (Direction::Down, 0.5)],
            "left and up are illegal"
        );
        let mut counts = [0i32; 4];
        for _ in 0..10_000 {
            counts[p.choose(x).unwrap() as usize] += 1;
        }
        assert_eq!(counts[0] + counts[2], 0);
        assert!((counts[1] - 5000).abs() < 200, "{counts:?}");
    }
}
