//! A compact, self-checking policy file for embedding the optimal policy of
//! the states that matter (those visited with at least some probability) in a
//! web page or another program.
//!
//! ```text
//! offset size  field
//!      0    8  magic "S2048PL1"
//!      8    1  board shape: the side of a square, rows + 16 * columns of a
//!              rectangle ([`crate::Shape::code`])
//!      9    1  target exponent
//!     10    1  objective (0 win, 1 score)
//!     11    1  zero
//!     12    4  chance of a 4 in millionths, less 100,000 (i32)
//!     16    8  record count (u64)
//!     24    8  xxh3-64 of the records
//!     32  9*k  records, sorted by state: state (u64, canonical board in the
//!              nybble encoding of `board`), action (u8: 0 left, 1 right,
//!              2 up, 3 down, in the canonical orientation)
//! ```
//!
//! All integers are little-endian. Bytes 10 to 15 are zero for the standard
//! game (win, a 4 with chance 0.1).
//! The discount is not carried. To use it: canonicalise the board (keeping
//! the symmetry), binary-search the state, and map the action back through the
//! inverse symmetry ([`crate::rules::canonical::direction_image`]).

use xxhash_rust::xxh3::xxh3_64;

use crate::rules::game::Objective;
use crate::rules::spawn::SpawnRule;
use crate::{Direction, Shape};

/// File magic.
pub const MAGIC: [u8; 8] = *b"S2048PL1";
/// The standard rule's chance of a 4, in millionths.
const STANDARD_FOURS: u32 = SpawnRule::STANDARD_FOURS_PER_MILLION;
const HEADER: usize = 32;

/// Why a policy file was rejected.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PolicyFileError {
    /// Not a policy file, or cut short.
    #[error("not a solve2048 policy file, or truncated")]
    Format,
    /// Records damaged.
    #[error("policy file checksum mismatch (file damaged)")]
    Checksum,
    /// Records out of order or with a bad action code.
    #[error("policy file records are malformed")]
    Records,
}

/// A policy: sorted canonical states and their optimal actions.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyFile {
    /// The board's shape.
    pub shape: Shape,
    /// Target exponent.
    pub target_exp: u8,
    /// What the policy maximises.
    pub objective: Objective,
    /// The chance of a 4 it was solved for, in millionths.
    pub fours_per_million: u32,
    /// (canonical state, action), sorted by state.
    pub entries: Vec<(u64, Direction)>,
}

impl PolicyFile {
    /// Encode (entries must be sorted by state and distinct).
    pub fn encode(&self) -> Vec<u8> {
        let mut records = Vec::with_capacity(self.entries.len() * 9);
        for &(s, a) in &self.entries {
            records.extend_from_slice(&s.to_le_bytes());
            records.push(a as u8);
        }
        let mut out = Vec::with_capacity(HEADER + records.len());
        out.extend_from_slice(&MAGIC);
        let objective = match self.objective {
            Objective::Win => 0,
            Objective::Score => 1,
        };
        out.extend_from_slice(&[self.shape.code(), self.target_exp, objective, 0]);
        let fours = self.fours_per_million as i32 - STANDARD_FOURS as i32;
        out.extend_from_slice(&fours.to_le_bytes());
        out.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        out.extend_from_slice(&xxh3_64(&records).to_le_bytes());
        out.extend_from_slice(&records);
        out
    }

    /// Decode and verify.
    pub fn decode(bytes: &[u8]) -> Result<PolicyFile, PolicyFileError> {
        if bytes.len() < HEADER || bytes[0..8] != MAGIC {
            return Err(PolicyFileError::Format);
        }
        let count = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        let records = &bytes[HEADER..];
        if records.len() != count.checked_mul(9).ok_or(PolicyFileError::Format)? {
            return Err(PolicyFileError::Format);
        }
        if xxh3_64(records) != u64::from_le_bytes(bytes[24..32].try_into().unwrap()) {
            return Err(PolicyFileError::Checksum);
        }
        let mut entries = Vec::with_capacity(count);
        for r in records.chunks_exact(9) {
            let s = u64::from_le_bytes(r[0..8].try_into().unwrap());
            let a = Direction::from_code(r[8]).ok_or(PolicyFileError::Records)?;
            if entries.last().is_some_and(|&(p, _)| p >= s) {
                return Err(PolicyFileError::Records);
            }
            entries.push((s, a));
        }
        let objective = match bytes[10] {
            0 => Objective::Win,
            1 => Objective::Score,
            _ => return Err(PolicyFileError::Format),
        };
        let fours = i32::from_le_bytes(bytes[12..16].try_into().unwrap())
            .checked_add(STANDARD_FOURS as i32)
            .filter(|m| (0..=1_000_000).contains(m))
            .ok_or(PolicyFileError::Format)?;
        Ok(PolicyFile {
            shape: Shape::from_code(bytes[8]).map_err(|_| PolicyFileError::Format)?,
            target_exp: bytes[9],
            objective,
            fours_per_million: fours as u32,
            entries,
        })
    }

    /// The optimal action of a canonical state, if the file holds it.
    pub fn action(&self, state: u64) -> Option<Direction> {
        self.entries
            .binary_search_by_key(&state, |&(s, _)| s)
            .ok()
            .map(|i| self.entries[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let p = PolicyFile {
            shape: Shape::square(3),
            target_exp: 9,
            objective: Objective::Win,
            fours_per_million: STANDARD_FOURS,
            entries: vec![
                (3, Direction::Up),
                (17, Direction::Left),
                (99, Direction::Down),
            ],
        };
        let bytes = p.encode();
        assert_eq!(bytes.len(), 32 + 27);
        assert_eq!(bytes[10..16], [0; 6], "the standard game's bytes as before");
        let q = PolicyFile::decode(&bytes).unwrap();
        assert_eq!(q, p);
        let other = PolicyFile {
            objective: Objective::Score,
            fours_per_million: 500_000,
            ..p.clone()
        };
        assert_eq!(PolicyFile::decode(&other.encode()), Ok(other));
        assert_eq!(q.action(17), Some(Direction::Left));
        assert_eq!(q.action(18), None);
        let mut bad = bytes.clone();
        bad[40] ^= 1;
        assert_eq!(PolicyFile::decode(&bad), Err(PolicyFileError::Checksum));
        assert_eq!(
            PolicyFile::decode(&bytes[..40]),
            Err(PolicyFileError::Format)
        );
    }
}
