//! The chunk file format shared by state, value, policy and run objects.
//!
//! ```text
//! offset size  field
//!      0    8  magic "S2048CK\0"
//!      8    2  format version (u16)
//!     10    1  kind (1 states, 2 values, 3 policy, 4 run)
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
//! Bodies: states (and runs) are strictly increasing u64 keys, the first as a
//! LEB128 varint and each later one as the varint of its difference from the
//! one before; values are little-endian f64; policy is one action code per
//! state. All integers are little-endian.

use xxhash_rust::xxh3::xxh3_64;

use crate::game::Game;
use crate::part::ChunkId;

/// File magic.
pub const MAGIC: [u8; 8] = *b"S2048CK\0";
/// Current chunk format version. Version 2: a state's group is a hash of its
/// tiles as a multiset ([`crate::part::group_of`]), so a store of version 1
/// would be read with the wrong groups.
pub const FORMAT_VERSION: u16 = 2;
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
}

impl ChunkKind {
    fn from_u8(v: u8) -> Option<ChunkKind> {
        match v {
            1 => Some(ChunkKind::States),
            2 => Some(ChunkKind::Values),
            3 => Some(ChunkKind::Policy),
            4 => Some(ChunkKind::Run),
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

    fn write(&self, payload: &[u8]) -> Vec<u8> {
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
    fn check(&self, found: &ChunkHeader) -> Result<(), FormatError> {
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

fn compress(body: &[u8], level: i32) -> Vec<u8> {
    zstd::bulk::compress(body, level).expect("zstd compression of an in-memory buffer")
}

fn decompress(payload: &[u8], limit: usize) -> Result<Vec<u8>, FormatError> {
    zstd::bulk::decompress(payload, limit).map_err(|e| FormatError::Body(format!("zstd: {e}")))
}

/// Encode sorted, distinct keys (states or a run).
pub fn encode_keys(header: &ChunkHeader, keys: &[u64], level: i32) -> Vec<u8> {
    debug_assert!(keys.windows(2).all(|w| w[0] < w[1]));
    let mut body = Vec::with_capacity(keys.len() * 3);
    let mut prev = 0u64;
    for &k in keys {
        let mut d = k - prev;
        prev = k;
        while d >= 0x80 {
            body.push((d as u8) | 0x80);
            d >>= 7;
        }
        body.push(d as u8);
    }
    header.write(&compress(&body, level))
}

/// Decode and verify keys; `expect` names the chunk the reader asked for.
pub fn decode_keys(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<u64>, FormatError> {
    let stream = stream_keys(bytes, expect)?;
    let mut keys = Vec::with_capacity(stream.left as usize);
    for key in stream {
        keys.push(key?);
    }
    Ok(keys)
}

/// Verify a keys object's header and payload checksum without decoding it,
/// and return its bytes (to be read later with [`stream_keys`]).
pub fn verified_bytes(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<u8>, FormatError> {
    let (found, _) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    Ok(bytes.to_vec())
}

/// Verify a keys object (states or a run) and read its keys one at a time,
/// decompressing as it goes: memory for a small window, not the whole body.
/// A damaged body shows up as an `Err` item, after which the stream ends.
pub fn stream_keys<'a>(
    bytes: &'a [u8],
    expect: &ChunkHeader,
) -> Result<KeyStream<'a>, FormatError> {
    let (found, payload) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    let decoder = zstd::stream::read::Decoder::with_buffer(payload)
        .map_err(|e| FormatError::Body(format!("zstd: {e}")))?;
    Ok(KeyStream {
        decoder,
        window: vec![0; STREAM_WINDOW].into_boxed_slice(),
        pos: 0,
        len: 0,
        count: found.count,
        left: found.count,
        prev: 0,
        done: false,
    })
}

/// Decompressed bytes a [`KeyStream`] holds at a time.
const STREAM_WINDOW: usize = 64 << 10;

/// The keys of one verified keys object, in order (see [`stream_keys`]).
pub struct KeyStream<'a> {
    decoder: zstd::stream::read::Decoder<'static, &'a [u8]>,
    window: Box<[u8]>,
    pos: usize,
    len: usize,
    count: u64,
    left: u64,
    prev: u64,
    done: bool,
}

impl KeyStream<'_> {
    /// The next body byte, None at the end of the body.
    #[inline]
    fn byte(&mut self) -> Result<Option<u8>, FormatError> {
        if self.pos == self.len {
            use std::io::Read;
            self.len = self
                .decoder
                .read(&mut self.window)
                .map_err(|e| FormatError::Body(format!("zstd: {e}")))?;
            self.pos = 0;
            if self.len == 0 {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.window[self.pos - 1]))
    }

    fn key(&mut self) -> Result<Option<u64>, FormatError> {
        if self.left == 0 {
            // The body must end with the last key the header counts.
            return match self.byte()? {
                None => Ok(None),
                Some(_) => Err(FormatError::Body(format!(
                    "more keys than the {} the header says",
                    self.count
                ))),
            };
        }
        let d = match self.window[self.pos..self.len].get(..10) {
            // Fast path: a whole varint (at most 10 bytes) is in the window.
            Some(w) => {
                let (mut d, mut i) = (0u64, 0);
                loop {
                    let b = w[i];
                    d |= ((b & 0x7F) as u64) << (7 * i);
                    i += 1;
                    if b & 0x80 == 0 {
                        break;
                    }
                    if i == 10 {
                        return Err(FormatError::Body("varint too long".into()));
                    }
                }
                self.pos += i;
                d
            }
            None => self.slow_varint()?,
        };
        self.finish_key(d)
    }

    /// A varint that may cross the window's end.
    fn slow_varint(&mut self) -> Result<u64, FormatError> {
        let mut d = 0u64;
        let mut shift = 0;
        loop {
            let Some(b) = self.byte()? else {
                return Err(if shift == 0 {
                    FormatError::Body(format!(
                        "{} keys, header says {}",
                        self.count - self.left,
                        self.count
                    ))
                } else {
                    FormatError::Body("varint cut off".into())
                });
            };
            if shift > 63 {
                return Err(FormatError::Body("varint too long".into()));
            }
            d |= ((b & 0x7F) as u64) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(d);
            }
        }
    }

    /// Add delta `d` to the previous key.
    #[inline]
    fn finish_key(&mut self, d: u64) -> Result<Option<u64>, FormatError> {
        if d == 0 && self.left != self.count {
            return Err(FormatError::Body("keys not strictly increasing".into()));
        }
        self.prev = self
            .prev
            .checked_add(d)
            .ok_or_else(|| FormatError::Body("key overflow".into()))?;
        self.left -= 1;
        Ok(Some(self.prev))
    }
}

impl Iterator for KeyStream<'_> {
    type Item = Result<u64, FormatError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let key = self.key().transpose();
        if !matches!(key, Some(Ok(_))) {
            self.done = true;
        }
        key
    }
}

/// Encode values (f64, bit-exact).
pub fn encode_values(header: &ChunkHeader, values: &[f64], level: i32) -> Vec<u8> {
    let body: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    header.write(&compress(&body, level))
}

/// Decode and verify values.
pub fn decode_values(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<f64>, FormatError> {
    let (found, payload) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    let body = decompress(payload, count * 8)?;
    if body.len() != count * 8 {
        return Err(FormatError::Body(format!(
            "{} value bytes for {count} values",
            body.len()
        )));
    }
    Ok(body
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect())
}

/// Encode policy action codes.
pub fn encode_policy(header: &ChunkHeader, actions: &[u8], level: i32) -> Vec<u8> {
    header.write(&compress(actions, level))
}

/// Decode and verify policy action codes.
pub fn decode_policy(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<u8>, FormatError> {
    let (found, payload) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    let body = decompress(payload, count)?;
    if body.len() != count || body.iter().any(|&a| a > 3) {
        return Err(FormatError::Body("policy codes malformed".into()));
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::PartId;

    fn header(kind: ChunkKind, count: u64) -> ChunkHeader {
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

    #[test]
    fn round_trips() {
        let keys = vec![1u64, 2, 300, 70_000, u64::MAX - 1];
        let h = header(ChunkKind::States, 5);
        let bytes = encode_keys(&h, &keys, 3);
        assert_eq!(decode_keys(&bytes, &h).unwrap(), keys);
        let vals = vec![0.0, 1.0, 0.123456789, f64::MIN_POSITIVE, 0.5];
        let hv = header(ChunkKind::Values, 5);
        assert_eq!(
            decode_values(&encode_values(&hv, &vals, 3), &hv).unwrap(),
            vals
        );
        let hp = header(ChunkKind::Policy, 3);
        assert_eq!(
            decode_policy(&encode_policy(&hp, &[0, 3, 2], 3), &hp).unwrap(),
            vec![0, 3, 2]
        );
    }

    /// A body written under a header with another count, with checksums
    /// that match: only decoding can tell.
    fn with_count(keys: &[u64], count: u64) -> (Vec<u8>, ChunkHeader) {
        let mut h = header(ChunkKind::Run, keys.len() as u64);
        let mut bytes = encode_keys(&h, keys, 1);
        h.count = count;
        let payload = bytes.split_off(HEADER_LEN);
        (h.write(&payload), h)
    }

    #[test]
    fn streams_keys_of_large_bodies_and_refuses_wrong_counts() {
        // More than one window of body bytes, with varints of 1 to 7 bytes.
        let keys: Vec<u64> = (1..200_000u64)
            .scan(0u64, |k, i| {
                *k += 1 + (crate::part::mix(i) >> (20 + i % 44));
                Some(*k)
            })
            .take_while(|&k| k < u64::MAX / 2)
            .collect();
        assert!(keys.len() > 1000);
        let h = header(ChunkKind::Run, keys.len() as u64);
        let bytes = encode_keys(&h, &keys, 1);
        let streamed: Result<Vec<u64>, _> = stream_keys(&bytes, &h).unwrap().collect();
        assert_eq!(streamed.unwrap(), keys);
        let dense: Vec<u64> = (5..300_000).collect();
        let hd = header(ChunkKind::Run, dense.len() as u64);
        assert_eq!(
            decode_keys(&encode_keys(&hd, &dense, 1), &hd).unwrap(),
            dense
        );

        let (short, hs) = with_count(&[3, 4, 9], 4);
        assert_eq!(
            decode_keys(&short, &hs),
            Err(FormatError::Body("3 keys, header says 4".into()))
        );
        let (long, h) = with_count(&[3, 4, 9], 2);
        assert_eq!(
            decode_keys(&long, &h),
            Err(FormatError::Body(
                "more keys than the 2 the header says".into()
            ))
        );
        // The stream ends after its error.
        let mut stream = stream_keys(&short, &hs).unwrap();
        assert_eq!(stream.by_ref().filter(Result::is_err).count(), 1);
        assert!(stream.next().is_none());
    }

    #[test]
    fn rejects_damage_and_foreign_files() {
        let h = header(ChunkKind::States, 3);
        let bytes = encode_keys(&h, &[5, 6, 9], 3);
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decode_keys(&flipped, &h),
            Err(FormatError::PayloadChecksum { .. })
        ));
        let mut head = bytes.clone();
        head[30] ^= 1;
        assert_eq!(decode_keys(&head, &h), Err(FormatError::HeaderChecksum));
        assert_eq!(
            decode_keys(&bytes[..bytes.len() - 1], &h).unwrap_err(),
            FormatError::PayloadLength {
                expected: (bytes.len() - HEADER_LEN) as u64,
                found: (bytes.len() - HEADER_LEN - 1) as u64
            }
        );
        assert_eq!(
            decode_keys(&bytes[..10], &h),
            Err(FormatError::Truncated { len: 10 })
        );
        assert_eq!(
            decode_keys(
                b"not a chunk at all, not at all, not at all, not at all, not at all, not at all",
                &h
            ),
            Err(FormatError::Magic)
        );
        let mut other = h;
        other.game = Game::new(3, 1024, 1.0).unwrap();
        assert!(matches!(
            decode_keys(&bytes, &other),
            Err(FormatError::Identity { .. })
        ));
        let mut other = h;
        other.id.index = 2;
        assert!(matches!(
            decode_keys(&bytes, &other),
            Err(FormatError::Identity { .. })
        ));
        let mut v2 = bytes.clone();
        v2[8] = 9;
        assert_eq!(decode_keys(&v2, &h), Err(FormatError::Version { found: 9 }));
        assert_eq!(verified_bytes(&bytes, &h).unwrap(), bytes);
        assert!(matches!(
            verified_bytes(&flipped, &h),
            Err(FormatError::PayloadChecksum { .. })
        ));
    }
}
