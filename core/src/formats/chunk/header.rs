//! A chunk file's header (the layout is in the [module docs](super)): the
//! magic, format version and header length, what a chunk holds
//! ([`ChunkKind`]), the identity a header carries ([`ChunkHeader`]), why a
//! file is rejected ([`FormatError`]), and a finished file's checksum
//! ([`file_checksum`]).

use xxhash_rust::xxh3::xxh3_64;

use crate::rules::game::{Game, Objective};
use crate::rules::shape::Shape;
use crate::space::ids::ChunkId;

/// File magic.
pub const MAGIC: [u8; 8] = *b"S2048CK\0";
/// The chunk format version this build writes. Version 2: a state's group
/// is a hash of its tiles as a multiset ([`crate::space::ids::group_of`]),
/// so a store of version 1 would be read with the wrong groups. Version 3:
/// the backward pass by requests and responses (kinds 5 and 6), values
/// summed per tile (`kernel::solve::afterstate_value`), and groups merged in
/// key-range pieces. Version 4: every JSON record (job, commits, layer
/// indexes, summary, ...) carries a checksum of its bytes. Version 5: values
/// and a response's sums in the value codec ([`super::values`]), policy codes
/// packed four to a byte; everything else as in version 4.
pub const FORMAT_VERSION: u16 = 5;
/// The oldest chunk format version this build reads: a version-4 chunk
/// differs from a version-5 one only in how values and policy codes are
/// coded, which its header's version says, so a store of version 4 still
/// verifies and answers queries.
pub const OLDEST_READABLE_VERSION: u16 = 4;
/// Header length in bytes.
pub const HEADER_LEN: usize = 72;

/// What a chunk holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChunkKind {
    /// Sorted canonical states of a chunk.
    States = 1,
    /// Values, in the order of the chunk's states.
    Values = 2,
    /// Optimal action codes, in the order of the chunk's states.
    Policy = 3,
    /// Sorted successors emitted by an enumerate task for one group of a part.
    Run = 4,
    /// Sorted afterstates of a chunk whose spawns land in one group of a
    /// part (the header names that part and group).
    Requests = 5,
    /// The sums of the spawns' values of a chunk's afterstates in one
    /// request, those in the answering gather's slice, in order (the header
    /// names the chunk; the keys are the request's, which the solve reads
    /// beside it).
    Responses = 6,
    /// Evaluation jobs: afterstates of a chunk whose spawns land in one
    /// group, each with the probability that the player makes it (the
    /// header names that part and group, as for requests).
    Pushes = 7,
}

impl ChunkKind {
    fn from_u8(v: u8) -> Option<ChunkKind> {
        match v {
            1 => Some(ChunkKind::States),
            2 => Some(ChunkKind::Values),
            3 => Some(ChunkKind::Policy),
            4 => Some(ChunkKind::Run),
            5 => Some(ChunkKind::Requests),
            6 => Some(ChunkKind::Responses),
            7 => Some(ChunkKind::Pushes),
            _ => None,
        }
    }
}

/// The identity a header carries: what the file claims to be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkHeader {
    /// Kind of content.
    pub kind: ChunkKind,
    /// The game it belongs to.
    pub game: Game,
    /// Which chunk (for runs: target part and group, and source index).
    pub id: ChunkId,
    /// Number of elements.
    pub count: u64,
}

/// Why a chunk file was rejected.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FormatError {
    /// Shorter than a header.
    #[error("truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header")]
    Truncated {
        /// Bytes present.
        len: usize,
    },
    /// Not a solve2048 chunk at all.
    #[error("not a solve2048 chunk (bad magic)")]
    Magic,
    /// Written by a format version this build does not read.
    #[error(
        "chunk format version {found}, this build reads versions \
         {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
    )]
    Version {
        /// Version in the file.
        found: u16,
    },
    /// Header bytes damaged.
    #[error("header checksum mismatch (file damaged)")]
    HeaderChecksum,
    /// Unknown kind byte.
    #[error("unknown chunk kind {0}")]
    UnknownKind(u8),
    /// A board-shape byte that names no shape.
    #[error("unknown board shape byte {0:#04x}")]
    UnknownShape(u8),
    /// Payload length differs from the header.
    #[error("payload is {found} bytes, header says {expected} (file truncated or padded)")]
    PayloadLength {
        /// Length the header records.
        expected: u64,
        /// Length present.
        found: u64,
    },
    /// Payload bytes damaged.
    #[error(
        "payload checksum mismatch: header {expected:#018x}, computed {found:#018x} (file damaged)"
    )]
    PayloadChecksum {
        /// Checksum the header records.
        expected: u64,
        /// Checksum of the bytes present.
        found: u64,
    },
    /// A file of another kind, game or chunk than the one asked for.
    #[error("holds {found} but {expected} was expected")]
    Identity {
        /// What the reader asked for.
        expected: String,
        /// What the header says.
        found: String,
    },
    /// The body does not decode to `count` well-formed elements.
    #[error("body is malformed: {0}")]
    Body(String),
}

impl ChunkHeader {
    fn describe(&self) -> String {
        format!(
            "{:?} of {} ({}) with {} elements",
            self.kind,
            self.id,
            self.game.name(),
            self.count
        )
    }

    /// This header and `payload` as a chunk file of [`FORMAT_VERSION`].
    pub(crate) fn write(&self, payload: &[u8]) -> Vec<u8> {
        self.write_as(FORMAT_VERSION, payload)
    }

    /// This header and `payload` as a chunk file of format `version` (an
    /// older one only in tests of reading old files).
    pub(crate) fn write_as(&self, version: u16, payload: &[u8]) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER_LEN + payload.len());
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&version.to_le_bytes());
        h.push(self.kind as u8);
        h.push(self.game.shape.code());
        h.push(self.game.target_exp);
        h.push(self.id.part.max_exp);
        h.push(objective_field(self.game.objective));
        h.push(0);
        h.extend_from_slice(&self.game.discount.to_bits().to_le_bytes());
        h.extend_from_slice(&self.id.part.sum.to_le_bytes());
        h.extend_from_slice(&self.id.group.to_le_bytes());
        h.extend_from_slice(&self.id.index.to_le_bytes());
        h.extend_from_slice(&fours_field(self.game.fours_per_million).to_le_bytes());
        h.extend_from_slice(&self.count.to_le_bytes());
        h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        h.extend_from_slice(&xxh3_64(payload).to_le_bytes());
        let hc = xxh3_64(&h);
        h.extend_from_slice(&hc.to_le_bytes());
        h.extend_from_slice(payload);
        h
    }

    /// Read and verify a header and payload checksum; returns the header and
    /// the (still compressed) payload.
    pub fn read(bytes: &[u8]) -> Result<(ChunkHeader, &[u8]), FormatError> {
        Self::read_versioned(bytes).map(|(h, _, payload)| (h, payload))
    }

    /// [`ChunkHeader::read`], with the format version the chunk was written
    /// in (which says how its body is coded).
    pub(crate) fn read_versioned(bytes: &[u8]) -> Result<(ChunkHeader, u16, &[u8]), FormatError> {
        if bytes.len() < HEADER_LEN {
            return Err(FormatError::Truncated { len: bytes.len() });
        }
        if bytes[0..8] != MAGIC {
            return Err(FormatError::Magic);
        }
        let u16_at = |o: usize| u16::from_le_bytes(bytes[o..o + 2].try_into().unwrap());
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let version = u16_at(8);
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(FormatError::Version { found: version });
        }
        if xxh3_64(&bytes[0..64]) != u64_at(64) {
            return Err(FormatError::HeaderChecksum);
        }
        let kind = ChunkKind::from_u8(bytes[10]).ok_or(FormatError::UnknownKind(bytes[10]))?;
        let payload = &bytes[HEADER_LEN..];
        let expected_len = u64_at(48);
        if payload.len() as u64 != expected_len {
            return Err(FormatError::PayloadLength {
                expected: expected_len,
                found: payload.len() as u64,
            });
        }
        let expected_sum = u64_at(56);
        let found_sum = xxh3_64(payload);
        if found_sum != expected_sum {
            return Err(FormatError::PayloadChecksum {
                expected: expected_sum,
                found: found_sum,
            });
        }
        let header = ChunkHeader {
            kind,
            game: Game {
                shape: Shape::from_code(bytes[11])
                    .map_err(|_| FormatError::UnknownShape(bytes[11]))?,
                target_exp: bytes[12],
                discount: f64::from_bits(u64_at(16)),
                fours_per_million: (u32_at(36) as i32)
                    .wrapping_add(STANDARD_FOURS as i32)
                    .clamp(0, 1_000_000) as u32,
                objective: match bytes[14] {
                    0 => Objective::Win,
                    _ => Objective::Score,
                },
            },
            id: ChunkId {
                part: crate::space::ids::PartId {
                    sum: u32_at(24),
                    max_exp: bytes[13],
                },
                group: u32_at(28),
                index: u32_at(32),
            },
            count: u64_at(40),
        };
        Ok((header, version, payload))
    }

    /// Check that a header read from a file is the one the reader expects
    /// (`count` is checked only when `self.count` is not `u64::MAX`).
    pub(crate) fn check(&self, found: &ChunkHeader) -> Result<(), FormatError> {
        let same_game = self.game.shape == found.game.shape
            && self.game.target_exp == found.game.target_exp
            && self.game.discount.to_bits() == found.game.discount.to_bits()
            && self.game.fours_per_million == found.game.fours_per_million
            && self.game.objective == found.game.objective;
        let count_ok = self.count == u64::MAX || self.count == found.count;
        if self.kind != found.kind || !same_game || self.id != found.id || !count_ok {
            return Err(FormatError::Identity {
                expected: self.describe(),
                found: found.describe(),
            });
        }
        Ok(())
    }
}

/// The standard rule's chance of a 4, in millionths.
const STANDARD_FOURS: u32 = crate::rules::spawn::SpawnRule::STANDARD_FOURS_PER_MILLION;

/// The header field of a chance of a 4 (in millionths): its difference from
/// the standard rule's, so a standard game's header is as it was before the
/// field existed.
fn fours_field(fours_per_million: u32) -> i32 {
    fours_per_million as i32 - STANDARD_FOURS as i32
}

/// The header byte of an objective (byte 14): 0 for win, so a win game's
/// header is as it was before the field existed.
fn objective_field(objective: Objective) -> u8 {
    match objective {
        Objective::Win => 0,
        Objective::Score => 1,
    }
}

/// The compressed checksum of a finished chunk file (its payload checksum),
/// which names its content in commit records.
pub fn file_checksum(bytes: &[u8]) -> u64 {
    if bytes.len() >= HEADER_LEN {
        u64::from_le_bytes(bytes[56..64].try_into().unwrap())
    } else {
        0
    }
}
