//! n-tuple networks: a value function of afterstates made of lookup tables,
//! one per tuple of cells, indexed by the tiles in those cells and summed over
//! the board's 8 symmetries (Szubert & Jaśkowski 2014), with their tuple specs,
//! their weights files and the `ntuple:FILE` player.
//!
//! # Tuple specs
//!
//! A tuple spec names the tuples of a network: either a preset or a list.
//!
//! - Presets: `4x4-rows-squares` (rows 0 and 1, and the 2x2 squares at the
//!   corner, the edge and the centre: 5 tuples of 4 cells, 1.3 MB of weights),
//!   `3x3-pentomino` (row 0 with the two cells under its first two, the
//!   corner square, the L along row 0 and the L along row 1: one tuple of 5
//!   cells and three of 4, 5.0 MB), `3x3-rows-squares` (rows 0 and 1 of 3
//!   cells and the corner 2x2 square), `3x3-corners` (the corner square and
//!   the two 4-cell L shapes along row 0: 3 tuples of 4 cells), `2x2-board`
//!   (the whole board: one tuple of 4 cells).
//! - A list: tuples separated by `,`, cells of a tuple by `-`, each cell as
//!   two digits, row then column (`00` is the top-left corner):
//!   `00-01-02-03,10-11-12-13,00-01-10-11`. Tuples have 1 to 6 cells (a
//!   tuple of `k` cells has `16^k` weights), all inside the board, none twice.
//!
//! Each tuple's table is indexed by the exponents in its cells, the first cell
//! lowest: `index = e0 + 16 e1 + 256 e2 + ...`. The network's value of a board
//! is the sum, over its tuples and the 8 symmetries `g`, of the tuple's weight
//! at the cells the tuple's cells land on under `g`, so that every symmetric
//! image of a board has the same value.
//!
//! # Weights files
//!
//! Little-endian throughout:
//!
//! ```text
//! offset  size  field
//!      0     8  magic "S2048NTW"
//!      8     4  format version (1)
//!     12     4  board size n
//!     16     8  training games so far
//!     24     8  training seed
//!     32     4  learning rate (f32)
//!     36     4  length L of the tuple spec, in bytes
//!     40     8  number W of weights (the sum of 16^k over tuples)
//!     48     L  the tuple spec, UTF-8, in list form
//!   48+L    4W  the weights, f32, tuple by tuple, in index order
//!  48+L+4W   8  xxh3-64 of every byte before it
//! ```
//!
//! A file is refused, by name and reason, when its magic, version, length or
//! checksum is wrong, when its spec does not parse or does not match W, or
//! (for a player) when it is for another board size.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use solve2048_core::rules::canonical::cell_images;
use solve2048_core::rules::moves::Mover;
use solve2048_core::{Direction, Shape};
use xxhash_rust::xxh3::xxh3_64;

use crate::player::{certain, check_size, scored_moves, square_side, Player};
use crate::{NotExact, PlayerError};

/// The largest number of cells in a tuple (`16^6` weights, 64 MiB).
pub const MAX_TUPLE_CELLS: usize = 6;

/// The tuples of a network for one board size (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TupleSpec {
    n: usize,
    /// Each tuple's cells, as (row, column).
    tuples: Vec<Vec<(u8, u8)>>,
}

/// The preset tuple specs: name, board size, list form.
pub const PRESETS: &[(&str, usize, &str)] = &[
    (
        "4x4-rows-squares",
        4,
        "00-01-02-03,10-11-12-13,00-01-10-11,01-02-11-12,11-12-21-22",
    ),
    (
        "3x3-pentomino",
        3,
        "00-01-02-10-11,00-01-10-11,00-01-02-12,00-10-11-12",
    ),
    ("3x3-rows-squares", 3, "00-01-02,10-11-12,00-01-10-11"),
    ("3x3-corners", 3, "00-01-10-11,00-01-02-10,00-01-02-12"),
    ("2x2-board", 2, "00-01-11-10"),
];

impl TupleSpec {
    /// Parse a preset name or a list (see the module docs) for side `n`.
    pub fn parse(text: &str, n: usize) -> Result<TupleSpec, PlayerError> {
        check_size(n)?;
        let bad = |reason: String| PlayerError::TupleSpec {
            spec: text.to_string(),
            reason,
        };
        let text = text.trim();
        if let Some(&(name, size, list)) = PRESETS.iter().find(|p| p.0 == text) {
            if size != n {
                return Err(bad(format!(
                    "preset {name} is for {size}x{size}, not {n}x{n}"
                )));
            }
            return TupleSpec::parse(list, n);
        }
        if text.chars().any(|c| c.is_ascii_alphabetic()) {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
            return Err(bad(format!(
                "not a preset ({}) nor a list like 00-01-02-03,00-01-10-11",
                names.join(", ")
            )));
        }
        let mut tuples = Vec::new();
        for tuple in text.split(',') {
            let mut cells: Vec<(u8, u8)> = Vec::new();
            for cell in tuple.split('-') {
                let cell = cell.trim();
                let digits: Vec<u32> = cell.chars().filter_map(|c| c.to_digit(10)).collect();
                if cell.len() != 2 || digits.len() != 2 {
                    return Err(bad(format!(
                        "cell {cell:?} is not two digits, row then column"
                    )));
                }
                let (r, c) = (digits[0] as u8, digits[1] as u8);
                if r as usize >= n || c as usize >= n {
                    return Err(bad(format!("cell {cell} is outside the {n}x{n} board")));
                }
                if cells.contains(&(r, c)) {
                    return Err(bad(format!("cell {cell} appears twice in a tuple")));
                }
                cells.push((r, c));
            }
            if cells.len() > MAX_TUPLE_CELLS {
                return Err(bad(format!(
                    "a tuple has {} cells; at most {MAX_TUPLE_CELLS}",
                    cells.len()
                )));
            }
            tuples.push(cells);
        }
        Ok(TupleSpec { n, tuples })
    }

    /// The default spec of side `n`: `4x4-rows-squares`, `3x3-pentomino` or
    /// `2x2-board`.
    pub fn default_for(n: usize) -> TupleSpec {
        let name = match n {
            4 => "4x4-rows-squares",
            3 => "3x3-pentomino",
            _ => "2x2-board",
        };
        TupleSpec::parse(name, n).expect("presets parse")
    }

    /// Board side.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Each tuple's cells, as (row, column).
    pub fn tuples(&self) -> &[Vec<(u8, u8)>] {
        &self.tuples
    }

    /// The number of weights: the sum of `16^k` over tuples of `k` cells.
    pub fn weight_count(&self) -> usize {
        self.tuples.iter().map(|t| 1usize << (4 * t.len())).sum()
    }
}

impl fmt::Display for TupleSpec {
    /// The list form (presets are written out, so that a weights file does
    /// not depend on what a preset name means).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tuples: Vec<String> = self
            .tuples
            .iter()
            .map(|t| {
                t.iter()
                    .map(|(r, c)| format!("{r}{c}"))
                    .collect::<Vec<_>>()
                    .join("-")
            })
            .collect();
        write!(f, "{}", tuples.join(","))
    }
}

/// Where one tuple's table is read under one symmetry.
#[derive(Clone, Debug)]
struct Lookup {
    /// The start of the tuple's table in the weights.
    offset: usize,
    /// The bit shift of each of the tuple's cells on the board.
    shifts: [u8; MAX_TUPLE_CELLS],
    len: u8,
}

impl Lookup {
    #[inline(always)]
    fn index(&self, x: u64) -> usize {
        let mut index = 0usize;
        for i in 0..self.len as usize {
            index |= (((x >> self.shifts[i]) & 0xF) as usize) << (4 * i);
        }
        self.offset + index
    }
}

/// An n-tuple network: weights and the training state that made them.
#[derive(Clone)]
pub struct Network {
    spec: TupleSpec,
    weights: Vec<f32>,
    lookups: Vec<Lookup>,
    /// Training games played into these weights.
    pub games: u64,
    /// The seed of the training run (0 for a network never trained).
    pub seed: u64,
    /// The learning rate of the training run (0 for a network never trained).
    pub learning_rate: f32,
}

impl fmt::Debug for Network {
    /// The spec and training state, without the weights.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Network")
            .field("spec", &self.spec.to_string())
            .field("weights", &self.weights.len())
            .field("games", &self.games)
            .field("seed", &self.seed)
            .field("learning_rate", &self.learning_rate)
            .finish()
    }
}

const MAGIC: &[u8; 8] = b"S2048NTW";
const VERSION: u32 = 1;
const HEADER: usize = 48;

impl Network {
    /// A network of `spec` with every weight 0.
    pub fn new(spec: TupleSpec) -> Network {
        let weights = vec![0.0; spec.weight_count()];
        Network::with_weights(spec, weights)
    }

    fn with_weights(spec: TupleSpec, weights: Vec<f32>) -> Network {
        let pos = cell_images(Shape::square(spec.n as u8));
        let mut lookups = Vec::with_capacity(8 * spec.tuples.len());
        let mut offset = 0;
        for t in &spec.tuples {
            for map in pos {
                let mut shifts = [0u8; MAX_TUPLE_CELLS];
                for (i, &(r, c)) in t.iter().enumerate() {
                    shifts[i] = 4 * map[(4 * r + c) as usize];
                }
                lookups.push(Lookup {
                    offset,
                    shifts,
                    len: t.len() as u8,
                });
            }
            offset += 1 << (4 * t.len());
        }
        Network {
            spec,
            weights,
            lookups,
            games: 0,
            seed: 0,
            learning_rate: 0.0,
        }
    }

    /// The network's tuples.
    pub fn spec(&self) -> &TupleSpec {
        &self.spec
    }

    /// Board side.
    pub fn n(&self) -> usize {
        self.spec.n
    }

    /// The weights, tuple by tuple.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// The number of weights each value reads (8 per tuple).
    pub fn active_weights(&self) -> usize {
        self.lookups.len()
    }

    /// The value of a board (an afterstate, in training).
    #[inline]
    pub fn value(&self, x: u64) -> f32 {
        self.lookups.iter().map(|l| self.weights[l.index(x)]).sum()
    }

    /// Add `delta` to every weight that [`Network::value`] reads for `x`.
    #[inline]
    pub fn update(&mut self, x: u64, delta: f32) {
        for l in &self.lookups {
            let i = l.index(x);
            self.weights[i] += delta;
        }
    }

    /// The legal move with the largest score plus value of its afterstate
    /// (ties to the first in left, right, up, down order), with that
    /// afterstate, its score and its value; `None` when no move is legal.
    pub fn best_move(&self, mover: &Mover, x: u64) -> Option<(Direction, u64, u32, f32)> {
        let mut best: Option<(Direction, u64, u32, f32)> = None;
        for (d, after, score) in scored_moves(mover, x) {
            let v = self.value(after);
            if best.is_none_or(|b| score as f32 + v > b.2 as f32 + b.3) {
                best = Some((d, after, score, v));
            }
        }
        best
    }

    /// The weights file's bytes (see the module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let spec = self.spec.to_string();
        let mut out = Vec::with_capacity(HEADER + spec.len() + 4 * self.weights.len() + 8);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.spec.n as u32).to_le_bytes());
        out.extend_from_slice(&self.games.to_le_bytes());
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.learning_rate.to_le_bytes());
        out.extend_from_slice(&(spec.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.weights.len() as u64).to_le_bytes());
        out.extend_from_slice(spec.as_bytes());
        for w in &self.weights {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Read a weights file's bytes; `path` names it in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Network, PlayerError> {
        let damaged = |reason: String| PlayerError::WeightsDamaged {
            path: path.to_path_buf(),
            reason,
        };
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(damaged(
                "not a solve2048 n-tuple weights file (bad magic)".to_string(),
            ));
        }
        if bytes.len() < HEADER + 8 {
            return Err(damaged(format!("truncated: {} bytes", bytes.len())));
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let version = u32_at(8);
        if version != VERSION {
            return Err(damaged(format!(
                "format version {version}; this build reads version {VERSION}"
            )));
        }
        let spec_len = u32_at(36) as usize;
        let count = u64_at(40);
        let expected = (HEADER as u64)
            .saturating_add(spec_len as u64)
            .saturating_add(count.saturating_mul(4))
            .saturating_add(8);
        if bytes.len() as u64 != expected {
            return Err(damaged(format!(
                "length {} bytes, the header says {expected}",
                bytes.len()
            )));
        }
        let body = bytes.len() - 8;
        let stored = u64_at(body);
        let actual = xxh3_64(&bytes[..body]);
        if stored != actual {
            return Err(damaged(format!(
                "checksum mismatch (stored {stored:016x}, computed {actual:016x})"
            )));
        }
        let n = u32_at(12) as usize;
        if !(2..=4).contains(&n) {
            return Err(damaged(format!("board size {n}")));
        }
        let spec_text = std::str::from_utf8(&bytes[HEADER..HEADER + spec_len])
            .map_err(|_| damaged("tuple spec is not UTF-8".to_string()))?;
        let spec = TupleSpec::parse(spec_text, n).map_err(|e| damaged(e.to_string()))?;
        if spec.weight_count() as u64 != count {
            return Err(damaged(format!(
                "{count} weights, but the tuple spec has {}",
                spec.weight_count()
            )));
        }
        let weights = bytes[HEADER + spec_len..body]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let mut net = Network::with_weights(spec, weights);
        net.games = u64_at(16);
        net.seed = u64_at(24);
        net.learning_rate = f32::from_le_bytes(bytes[32..36].try_into().unwrap());
        Ok(net)
    }

    /// Read a weights file.
    pub fn load(path: &Path) -> Result<Network, PlayerError> {
        let bytes = std::fs::read(path).map_err(|error| PlayerError::WeightsIo {
            path: path.to_path_buf(),
            error,
        })?;
        Network::from_bytes(&bytes, path)
    }

    /// Read a weights file for side `n`: a file for another size is refused.
    pub fn load_for(path: &Path, n: usize) -> Result<Network, PlayerError> {
        let net = Network::load(path)?;
        if net.n() != n {
            return Err(PlayerError::WeightsForOtherBoard {
                path: path.to_path_buf(),
                file_n: net.n(),
                n,
            });
        }
        Ok(net)
    }

    /// Write the weights file atomically: a temporary file beside `path`,
    /// then a rename, so that a crash leaves the old file or the new one.
    pub fn save(&self, path: &Path) -> Result<(), PlayerError> {
        let io = |error| PlayerError::WeightsIo {
            path: path.to_path_buf(),
            error,
        };
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, self.to_bytes()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// `ntuple:FILE`: the legal move with the largest score plus network value
/// of its afterstate (ties to the first in left, right, up, down order).
#[derive(Clone)]
pub struct NTuplePlayer {
    net: Arc<Network>,
    mover: Mover,
    name: String,
}

impl NTuplePlayer {
    /// A player of `net`, named `name` (e.g. `ntuple:FILE`).
    pub fn new(net: Arc<Network>, name: String) -> NTuplePlayer {
        let mover = Mover::new(Shape::square(net.n() as u8));
        NTuplePlayer { net, mover, name }
    }

    /// The player of the weights file `path` for boards of `shape`: a
    /// square (networks are for squares).
    pub fn load(path: &Path, shape: Shape) -> Result<NTuplePlayer, PlayerError> {
        let net = Network::load_for(path, square_side(shape, "ntuple")?)?;
        let name = format!("ntuple:{}", path.display());
        Ok(NTuplePlayer::new(Arc::new(net), name))
    }

    /// The network.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }
}

impl Player for NTuplePlayer {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        self.net.best_move(&self.mover, board).map(|b| b.0)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(certain(self.choose(board)))
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::rules::canonical::image;
    use solve2048_core::rules::rng::SeededRng;

    fn random_network(n: usize, seed: u64) -> Network {
        let mut net = Network::new(TupleSpec::default_for(n));
        let mut rng = SeededRng::new(seed);
        for w in net.weights.iter_mut() {
            // Integers: sums in any order are exact.
            *w = rng.below(2001) as f32 - 1000.0;
        }
        net
    }

    #[test]
    fn specs_parse_and_print() {
        let s = TupleSpec::parse("4x4-rows-squares", 4).unwrap();
        assert_eq!(s.tuples().len(), 5);
        assert_eq!(s.weight_count(), 5 * 65536);
        assert_eq!(TupleSpec::parse(&s.to_string(), 4).unwrap(), s);
        let l = TupleSpec::parse("00-01-02, 11-22", 3).unwrap();
        assert_eq!(l.to_string(), "00-01-02,11-22");
        assert_eq!(l.weight_count(), 4096 + 256);
        for (bad, why) in [
            ("4x4-rows-squares", "is for 4x4"),
            ("00-01-33", "outside the 3x3"),
            ("00-00", "twice"),
            ("0-01", "two digits"),
            ("00-01-02-10-11-12-20", "at most 6"),
            ("rows", "not a preset"),
        ] {
            let e = TupleSpec::parse(bad, 3).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        for &(name, n, _) in PRESETS {
            assert!(TupleSpec::parse(name, n).is_ok(), "{name}");
        }
    }

    #[test]
    fn the_value_is_the_same_for_all_8_symmetries() {
        let mut rng = SeededRng::new(9);
        for n in 2..=4 {
            let net = random_network(n, n as u64);
            for _ in 0..500 {
                let mut x = 0u64;
                for r in 0..n {
                    for c in 0..n {
                        x |= rng.below(13) << (16 * r + 4 * c);
                    }
                }
                let v = net.value(x);
                for g in 0..8 {
                    assert_eq!(
                        net.value(image(x, Shape::square(n as u8), g)),
                        v,
                        "n={n} g={g} x={x:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_value_sums_each_tuple_over_the_symmetric_images() {
        // One tuple on the top row of a 3x3: its value is the sum of the
        // weights indexed by each image's top row.
        let mut net = Network::new(TupleSpec::parse("00-01-02", 3).unwrap());
        for (i, w) in net.weights.iter_mut().enumerate() {
            *w = i as f32;
        }
        let x = 0x0000_0456_0023_0001u64 & Shape::square(3).block_mask();
        let expect: f32 = (0..8)
            .map(|g| (image(x, Shape::square(3), g) & 0xFFF) as f32)
            .sum();
        assert_eq!(net.value(x), expect);
    }

    #[test]
    fn weights_files_round_trip_and_refuse_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.weights");
        let mut net = random_network(3, 1);
        net.games = 1234;
        net.seed = 99;
        net.learning_rate = 0.01;
        net.save(&path).unwrap();
        let back = Network::load_for(&path, 3).unwrap();
        assert_eq!(back.to_bytes(), net.to_bytes());
        assert_eq!(
            (back.games, back.seed, back.learning_rate),
            (1234, 99, 0.01)
        );
        assert_eq!(back.spec(), net.spec());

        let bytes = std::fs::read(&path).unwrap();
        // A flipped byte in the weights, in the header, in the checksum.
        for at in [HEADER + 200, 17, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let e = Network::load(&path).unwrap_err().to_string();
            assert!(e.contains("checksum mismatch"), "byte {at}: {e}");
            assert!(e.contains("net.weights"), "{e}");
        }
        let mut bad = bytes.clone();
        bad[0] = b'X';
        std::fs::write(&path, &bad).unwrap();
        assert!(Network::load(&path)
            .unwrap_err()
            .to_string()
            .contains("bad magic"));
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(Network::load(&path)
            .unwrap_err()
            .to_string()
            .contains("length"));
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(
            Network::load_for(&path, 4),
            Err(PlayerError::WeightsForOtherBoard {
                file_n: 3,
                n: 4,
                ..
            })
        ));
        assert!(matches!(
            Network::load(&dir.path().join("missing")),
            Err(PlayerError::WeightsIo { .. })
        ));
    }
}
