//! Sorted keys (states, runs, requests): delta + LEB128 varint, zstd, read
//! whole or streamed through a small window.

use super::codec::{compress, content_size, decompress};
use super::header::{ChunkHeader, FormatError};
use crate::kernel::places;

/// Encode sorted, distinct keys (states or a run).
pub fn encode_keys(header: &ChunkHeader, keys: &[u64], level: i32) -> Vec<u8> {
    header.write(&compress(&varint_body(keys), level))
}

/// The body of sorted, distinct keys: the first as a varint, each later one
/// as the varint of its difference from the one before. A large body is
/// written in pieces on all threads, where there are more than one: each
/// piece's length is counted first, then each writes its own place (the
/// same bytes, and no more memory, than one loop).
pub(crate) fn varint_body(keys: &[u64]) -> Vec<u8> {
    debug_assert!(keys.windows(2).all(|w| w[0] < w[1]));
    if keys.len() < PARALLEL_FROM || rayon::current_num_threads() < 2 {
        let mut body = Vec::with_capacity(keys.len() * 3);
        push_varints(&mut body, 0, keys);
        return body;
    }
    use rayon::prelude::*;
    // The key before piece `i`'s first: where its first difference is from.
    let before = |i: usize| if i > 0 { keys[i * ENCODE_PIECE - 1] } else { 0 };
    let lens: Vec<usize> = (keys.par_chunks(ENCODE_PIECE).enumerate())
        .map(|(i, piece)| {
            let mut prev = before(i);
            piece
                .iter()
                .map(|&k| {
                    let bits = 64 - (k - std::mem::replace(&mut prev, k)).leading_zeros();
                    bits.div_ceil(7).max(1) as usize
                })
                .sum()
        })
        .collect();
    let mut body = vec![0u8; lens.iter().sum()];
    let places = places(&mut body, lens);
    (keys.par_chunks(ENCODE_PIECE).zip(places).enumerate()).for_each(|(i, (piece, place))| {
        let mut out = Vec::with_capacity(place.len());
        push_varints(&mut out, before(i), piece);
        place.copy_from_slice(&out);
    });
    body
}

/// Keys a piece of a body written on all threads holds.
const ENCODE_PIECE: usize = 1 << 16;

/// Push onto `body` the varints of `keys`' differences, the first from
/// `prev`.
fn push_varints(body: &mut Vec<u8>, mut prev: u64, keys: &[u64]) {
    for &k in keys {
        let mut d = k - prev;
        prev = k;
        while d >= 0x80 {
            body.push((d as u8) | 0x80);
            d >>= 7;
        }
        body.push(d as u8);
    }
}

/// The first `count` keys of a decompressed body made by [`varint_body`],
/// and the number of bytes they took. A varint is read from one 8-byte load
/// where 8 bytes remain ([`short_varint`]), byte by byte near the end.
pub(crate) fn parse_varint_keys(
    body: &[u8],
    count: usize,
) -> Result<(Vec<u64>, usize), FormatError> {
    let mut keys = vec![0u64; count];
    let used = parse_into(body, &mut keys, true)?;
    Ok((keys, used))
}

/// Fills `out` with the keys the varints at the start of `body` sum to
/// (from 0), and returns the bytes they took; a delta of 0 is an error but
/// for the first key where `zero_first`.
fn parse_into(body: &[u8], out: &mut [u64], zero_first: bool) -> Result<usize, FormatError> {
    let (mut pos, mut prev) = (0usize, 0u64);
    let count = out.len();
    for (i, key) in out.iter_mut().enumerate() {
        let short = body
            .get(pos..)
            .and_then(|rest| rest.first_chunk::<8>())
            .and_then(|w| short_varint(u64::from_le_bytes(*w)));
        let d = match short {
            Some((d, len)) => {
                pos += len;
                d
            }
            None => {
                let (d, len) = byte_varint(&body[pos.min(body.len())..]).map_err(|e| {
                    e.unwrap_or_else(|| FormatError::Body(format!("{i} keys, header says {count}")))
                })?;
                pos += len;
                d
            }
        };
        if d == 0 && (i > 0 || !zero_first) {
            return Err(FormatError::Body("keys not strictly increasing".into()));
        }
        prev = prev
            .checked_add(d)
            .ok_or_else(|| FormatError::Body("key overflow".into()))?;
        *key = prev;
    }
    Ok(pos)
}

/// The varint at the start of `bytes`, a byte at a time, and its length;
/// `Err(None)` when `bytes` is empty, `Err(Some(..))` when it is cut off or
/// too long.
fn byte_varint(bytes: &[u8]) -> Result<(u64, usize), Option<FormatError>> {
    let (mut d, mut shift) = (0u64, 0);
    for (i, &b) in bytes.iter().enumerate() {
        if shift > 63 {
            return Err(Some(FormatError::Body("varint too long".into())));
        }
        d |= ((b & 0x7F) as u64) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok((d, i + 1));
        }
    }
    Err((!bytes.is_empty()).then(|| FormatError::Body("varint cut off".into())))
}

/// Keys from which a body is written ([`varint_body`]) and parsed
/// ([`decode_keys`]) in pieces on all threads, where there are more than one.
const PARALLEL_FROM: usize = 1 << 18;

/// Body bytes a piece of [`parse_in_pieces`] takes, about.
const PARSE_PIECE: usize = 1 << 18;

/// The `count` keys of a well-formed `body` made by [`varint_body`] and its
/// length, parsed in pieces on all threads, or `None` for any other body
/// (which [`parse_varint_keys`] then reads, to name what is wrong). A piece
/// starts after a byte whose high bit is clear, which ends a varint, so
/// each piece holds whole varints, as many as such bytes: each piece's
/// keys are summed from 0 in its own place, then moved up by the sum of
/// the deltas before it.
fn parse_in_pieces(body: &[u8], count: usize) -> Option<(Vec<u64>, usize)> {
    use rayon::prelude::*;
    let mut starts = vec![0];
    let mut at = PARSE_PIECE;
    while at < body.len() {
        while at < body.len() && body[at - 1] & 0x80 != 0 {
            at += 1;
        }
        if at < body.len() {
            starts.push(at);
        }
        at += PARSE_PIECE;
    }
    starts.push(body.len());
    let pieces: Vec<&[u8]> = starts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
    let counts: Vec<usize> = pieces
        .par_iter()
        .map(|p| p.iter().filter(|&&b| b & 0x80 == 0).count())
        .collect();
    if counts.iter().sum::<usize>() != count {
        return None;
    }
    let mut keys = vec![0u64; count];
    let mut outs = places(&mut keys, counts);
    // Each piece's keys as sums of its own deltas, and its last sum.
    let sums: Vec<Option<u64>> = (pieces.par_iter().zip(outs.par_iter_mut()).enumerate())
        .map(|(i, (piece, out))| {
            let used = parse_into(piece, out, i == 0).ok()?;
            (used == piece.len()).then(|| out.last().copied().unwrap_or(0))
        })
        .collect();
    let mut bases = Vec::with_capacity(sums.len());
    let mut base = 0u64;
    for sum in sums {
        bases.push(base);
        base = base.checked_add(sum?)?;
    }
    outs.into_par_iter()
        .zip(bases)
        .for_each(|(out, base)| out.iter_mut().for_each(|k| *k += base));
    Some((keys, body.len()))
}

/// Decode and verify keys; `expect` names the chunk the reader asked for.
/// The body is decompressed whole and read in one loop.
pub fn decode_keys(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<u64>, FormatError> {
    let (found, payload) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    // A body holds at most 10 bytes a key (and a byte past them tells a
    // body with more keys than its header says).
    let most = 10 * count + 1;
    let limit = content_size(payload).map_or(most, |size| (size as usize).min(most));
    let body = decompress(payload, limit)?;
    // On one thread the pieces are only extra passes.
    let (keys, used) = match count >= PARALLEL_FROM && rayon::current_num_threads() > 1 {
        true => {
            parse_in_pieces(&body, count).map_or_else(|| parse_varint_keys(&body, count), Ok)?
        }
        false => parse_varint_keys(&body, count)?,
    };
    if used != body.len() {
        return Err(FormatError::Body(format!(
            "more keys than the {count} the header says"
        )));
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
    // A small body is decompressed at once with the thread's context (a
    // streaming decoder makes a context of its own, which costs more than a
    // small body); a large one through the window.
    let (decoder, window, len) = match content_size(payload) {
        Some(size) if size <= WHOLE_BODY_UP_TO => {
            let body = decompress(payload, size as usize)?;
            let len = body.len();
            (None, body.into_boxed_slice(), len)
        }
        _ => {
            let decoder = zstd::stream::read::Decoder::with_buffer(payload)
                .map_err(|e| FormatError::Body(format!("zstd: {e}")))?;
            (Some(decoder), vec![0; STREAM_WINDOW].into_boxed_slice(), 0)
        }
    };
    Ok(KeyStream {
        decoder,
        window,
        pos: 0,
        len,
        count: found.count,
        left: found.count,
        prev: 0,
        done: false,
    })
}

/// Decompressed bytes a [`KeyStream`] holds at a time.
const STREAM_WINDOW: usize = 64 << 10;

/// Bodies up to this size are decompressed at once.
const WHOLE_BODY_UP_TO: u64 = 1 << 20;

/// The varint that starts the 8 bytes `w` (little-endian) and its length,
/// without a branch a byte; `None` when it is longer than 8 bytes.
#[inline(always)]
fn short_varint(w: u64) -> Option<(u64, usize)> {
    let ends = !w & 0x8080_8080_8080_8080;
    if ends == 0 {
        return None;
    }
    // Bits up to and including the last byte's (clear) high bit.
    let bits = ends.trailing_zeros() + 1;
    let x = w & (u64::MAX >> (64 - bits));
    // Pack the 7-bit groups: pairs into 14 bits, then 28, then 56.
    let x = (x & 0x007F_007F_007F_007F) | ((x & 0x7F00_7F00_7F00_7F00) >> 1);
    let x = (x & 0x0000_3FFF_0000_3FFF) | ((x & 0x3FFF_0000_3FFF_0000) >> 2);
    let x = (x & 0x0FFF_FFFF) | ((x & 0x0FFF_FFFF_0000_0000) >> 4);
    Some((x, bits as usize / 8))
}

/// The keys of one verified keys object, in order (see [`stream_keys`]).
pub struct KeyStream<'a> {
    /// None when the whole body is in `window`.
    decoder: Option<zstd::stream::read::Decoder<'static, &'a [u8]>>,
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
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(None);
            };
            self.len = decoder
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
        let short = self.window[self.pos..self.len]
            .first_chunk::<8>()
            .and_then(|w| short_varint(u64::from_le_bytes(*w)));
        let d = match short {
            Some((d, len)) => {
                self.pos += len;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::chunk::tests::header;
    use crate::formats::chunk::{values, ChunkKind, HEADER_LEN};
    use crate::rules::game::Objective;
    use crate::Game;

    #[test]
    fn round_trips() {
        let keys = vec![1u64, 2, 300, 70_000, u64::MAX - 1];
        let h = header(ChunkKind::States, 5);
        let bytes = encode_keys(&h, &keys, 3);
        assert_eq!(decode_keys(&bytes, &h).unwrap(), keys);
        let vals = vec![0.0, 1.0, 0.123456789, f64::MIN_POSITIVE, 0.5];
        let hv = header(ChunkKind::Values, 5);
        assert_eq!(
            values::decode_values(&values::encode_values(&hv, &vals, 3), &hv).unwrap(),
            vals
        );
        let hp = header(ChunkKind::Policy, 3);
        assert_eq!(
            values::decode_policy(&values::encode_policy(&hp, &[0, 3, 2], 3), &hp).unwrap(),
            vec![0, 3, 2]
        );
    }

    #[test]
    fn short_varints_are_read_as_the_byte_loop_reads_them() {
        let mut seed = 7u64;
        for bits in 0..64 {
            for d in [1u64 << bits, (1u64 << bits) - 1, (1u64 << bits) | 0x55] {
                let body = varint_body(&[d.max(1)]);
                let (slow, len) = parse_varint_keys(&body, 1).unwrap();
                // Whatever follows the varint must not change it.
                seed = crate::space::ids::mix(seed);
                let mut w = seed.to_le_bytes();
                let n = len.min(8);
                w[..n].copy_from_slice(&body[..n]);
                let want = (len <= 8).then_some((slow[0], len));
                assert_eq!(short_varint(u64::from_le_bytes(w)), want, "{d:#x}");
            }
        }
    }

    /// A large body parsed in pieces gives the keys the one loop gives;
    /// one that is not well formed is left to that loop, which names what
    /// is wrong, through `decode_keys` too.
    #[test]
    fn bodies_parse_in_pieces_as_in_one_loop() {
        let mut seed = 11u64;
        let mut key = 0u64;
        let keys: Vec<u64> = (0..(3 * PARALLEL_FROM + 77))
            .map(|i| {
                seed = crate::space::ids::mix(seed);
                // Deltas of 1 to 9 bytes, mostly short.
                let bits = match i {
                    5 | 600_000 => 57,
                    _ if i % 1000 == 0 => 44,
                    _ => seed % 20,
                };
                key += 1 + (seed >> (64 - bits.max(1)));
                key
            })
            .collect();
        let body = varint_body(&keys);
        assert_eq!(
            parse_in_pieces(&body, keys.len()),
            Some((keys.clone(), body.len()))
        );
        let h = header(ChunkKind::States, keys.len() as u64);
        assert_eq!(decode_keys(&encode_keys(&h, &keys, 1), &h).unwrap(), keys);
        // A key repeated in a later piece, a cut body, a wrong count.
        // A zero delta (the key before repeated) spliced in at a later piece.
        let at = varint_body(&keys[..2 * PARALLEL_FROM]).len();
        let repeated = [&body[..at], &[0u8], &body[at..]].concat();
        assert_eq!(parse_in_pieces(&repeated, keys.len() + 1), None);
        let e = parse_varint_keys(&repeated, keys.len() + 1).unwrap_err();
        assert!(e.to_string().contains("not strictly increasing"), "{e}");
        assert_eq!(parse_in_pieces(&body[..body.len() - 1], keys.len()), None);
        assert_eq!(parse_in_pieces(&body, keys.len() - 1), None);
        let hr = header(ChunkKind::States, keys.len() as u64 + 1);
        let e = decode_keys(&hr.write(&compress(&repeated, 1)), &hr).unwrap_err();
        assert!(e.to_string().contains("not strictly increasing"), "{e}");
    }

    /// A large body written in pieces on several threads is, byte for
    /// byte, the one loop's, with deltas of every length at the pieces'
    /// edges; on one thread it is the one loop.
    #[test]
    fn bodies_written_in_pieces_are_the_one_loops_bytes() {
        let mut key = 0u64;
        let keys: Vec<u64> = (1..(5 * ENCODE_PIECE as u64 + 3))
            .map(|i| {
                // Deltas of 1 to 41 bits wherever they fall in a piece, and
                // one of 63 as a piece starts.
                let long = if i == 2 * ENCODE_PIECE as u64 + 1 {
                    1 << 62
                } else {
                    0
                };
                key += 1 + long + (crate::space::ids::mix(i) >> (i % 64)) % (1 << 40);
                key
            })
            .collect();
        assert!(keys.len() >= PARALLEL_FROM);
        let mut one_loop = Vec::new();
        push_varints(&mut one_loop, 0, &keys);
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            assert!(
                pool.install(|| varint_body(&keys)) == one_loop,
                "{threads} threads"
            );
        }
        assert_eq!(
            parse_varint_keys(&one_loop, keys.len()).unwrap(),
            (keys, one_loop.len())
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
                *k += 1 + (crate::space::ids::mix(i) >> (20 + i % 44));
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
        // A standard game's header has zero spawn-rule and objective bytes;
        // a game of another rule is told apart both ways.
        assert_eq!(bytes[36..40], [0; 4]);
        assert_eq!(bytes[14], 0, "a win game's objective byte");
        let score = h.game.with_objective(Objective::Score).unwrap();
        for other_game in [0, 500_000, 1_000_000]
            .map(|m| h.game.with_four_probability(m as f64 / 1e6).unwrap())
            .into_iter()
            .chain([score])
        {
            let mut other = h;
            other.game = other_game;
            assert!(matches!(
                decode_keys(&bytes, &other),
                Err(FormatError::Identity { .. })
            ));
            let theirs = encode_keys(&other, &[5, 6, 9], 3);
            assert_eq!(decode_keys(&theirs, &other).unwrap(), [5, 6, 9]);
            assert!(matches!(
                decode_keys(&theirs, &h),
                Err(FormatError::Identity { .. })
            ));
        }
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
