//! The chunk file format shared by state, value, policy and run objects.
//!
//! ```text
//! offset size  field
//!      0    8  magic "S2048CK\0"
//!      8    2  format version (u16)
//!     10    1  kind (1 states, 2 values, 3 policy, 4 run, 5 requests, 6 responses,
//!                  7 pushes)
//!     11    1  board side n
//!     12    1  target exponent
//!     13    1  max-tile exponent of the part
//!     14    2  zero
//!     16    8  discount (f64 bits)
//!     24    4  tile sum of the part
//!     28    4  group
//!     32    4  chunk index (runs: source chunk's position in its layer)
//!     36    4  zero
//!     40    8  element count
//!     48    8  payload length in bytes
//!     56    8  xxh3-64 of the payload
//!     64    8  xxh3-64 of bytes 0..64
//!     72    .  payload: zstd of the body
//! ```
//!
//! Bodies: states, runs and requests are strictly increasing u64 keys, the
//! first as a LEB128 varint and each later one as the varint of its
//! difference from the one before; values are little-endian f64; policy is
//! one action code per state; responses and pushes are keys as above
//! followed by one little-endian f64 per key. All integers are little-endian.
//!
//! Reading and writing keys is in [`keys`], values, policy and responses in
//! [`values`].

use xxhash_rust::xxh3::xxh3_64;

use crate::game::Game;
use crate::part::ChunkId;

pub mod keys;
pub mod values;

pub use keys::{decode_keys, encode_keys, stream_keys, verified_bytes, KeyStream};
pub use values::{
    decode_policy, decode_responses, decode_values, encode_policy, encode_responses, encode_values,
};

/// File magic.
pub const MAGIC: [u8; 8] = *b"S2048CK\0";
/// Current chunk format version. Version 2: a state's group is a hash of its
/// tiles as a multiset ([`crate::part::group_of`]), so a store of version 1
/// would be read with the wrong groups. Version 3: the backward pass by
/// requests and responses (kinds 5 and 6), values summed per tile
/// (`kernel::solve::afterstate_value`), and groups merged in key-range
/// pieces. Version 4: every JSON record (job, commits, layer indexes,
/// summary, ...) carries a checksum of its bytes.
pub const FORMAT_VERSION: u16 = 4;
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
    /// Afterstates of a chunk with the sums of their spawns' values (the
    /// header names the chunk).
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
    /// Written by another format version.
    #[error("chunk format version {found}, this build reads version {FORMAT_VERSION}")]
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

    pub(crate) fn write(&self, payload: &[u8]) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER_LEN + payload.len());
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        h.push(self.kind as u8);
        h.push(self.game.n);
        h.push(self.game.target_exp);
        h.push(self.id.part.max_exp);
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&self.game.discount.to_bits().to_le_bytes());
        h.extend_from_slice(&self.id.part.sum.to_le_bytes());
        h.extend_from_slice(&self.id.group.to_le_bytes());
        h.extend_from_slice(&self.id.index.to_le_bytes());
        h.extend_from_slice(&[0; 4]);
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
        if version != FORMAT_VERSION {
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
                n: bytes[11],
                target_exp: bytes[12],
                discount: f64::from_bits(u64_at(16)),
            },
            id: ChunkId {
                part: crate::part::PartId {
                    sum: u32_at(24),
                    max_exp: bytes[13],
                },
                group: u32_at(28),
                index: u32_at(32),
            },
            count: u64_at(40),
        };
        Ok((header, payload))
    }

    /// Check that a header read from a file is the one the reader expects
    /// (`count` is checked only when `self.count` is not `u64::MAX`).
    pub(crate) fn check(&self, found: &ChunkHeader) -> Result<(), FormatError> {
        let same_game = self.game.n == found.game.n
            && self.game.target_exp == found.game.target_exp
            && self.game.discount.to_bits() == found.game.discount.to_bits();
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

/// The compressed checksum of a finished chunk file (its payload checksum),
/// which names its content in commit records.
pub fn file_checksum(bytes: &[u8]) -> u64 {
    if bytes.len() >= HEADER_LEN {
        u64::from_le_bytes(bytes[56..64].try_into().unwrap())
    } else {
        0
    }
}

thread_local! {
    /// This thread's zstd compression context and its level: making a
    /// context costs more than compressing a small chunk, and a job writes
    /// many small ones (runs, requests, responses).
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    /// This thread's zstd decompression context.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

pub(crate) fn compress(body: &[u8], level: i32) -> Vec<u8> {
    COMPRESSOR.with_borrow_mut(|slot| {
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            let c = zstd::bulk::Compressor::new(level).expect("a zstd context");
            *slot = Some((level, c));
        }
        let (_, c) = slot.as_mut().expect("made above");
        c.compress(body)
            .expect("zstd compression of an in-memory buffer")
    })
}

pub(crate) fn decompress(payload: &[u8], limit: usize) -> Result<Vec<u8>, FormatError> {
    DECOMPRESSOR.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().expect("a zstd context"));
        }
        slot.as_mut()
            .expect("made above")
            .decompress(payload, limit)
            .map_err(|e| FormatError::Body(format!("zstd: {e}")))
    })
}

/// The size the payload's zstd frame says it decompresses to, if it says.
pub(crate) fn content_size(payload: &[u8]) -> Option<u64> {
    zstd::zstd_safe::get_frame_content_size(payload)
        .ok()
        .flatten()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::part::PartId;

    pub(crate) fn header(kind: ChunkKind, count: u64) -> ChunkHeader {
        ChunkHeader {
            kind,
            game: Game::new(3, 512, 1.0).unwrap(),
            id: ChunkId {
                part: PartId {
                    sum: 40,
                    max_exp: 5,
                },
                group: 2,
                index: 1,
            },
            count,
        }
    }
}
