//! How a version-5 values chunk codes its values, bit for bit
//! (`core/examples/value_codecs.rs` measured the candidates).
//!
//! A solve's values repeat: a state's value is that of the canonical
//! afterstate its optimal move leads to, so every state whose move leads to
//! one afterstate has the same value; and many afterstates share a value
//! too. What is left are the distinct values themselves, whose mantissas
//! are as good as random (3x3 to 1024: a quarter of the states hold a value
//! new to their chunk, about 7 bytes each). The payload is a coding byte,
//! then that coding's body:
//!
//! - [`Coding::Plain`]: the zstd of the values as little-endian f64, as in
//!   version 4.
//! - [`Coding::EachState`]: every state's value as a token (below).
//! - [`Coding::ByAfterstate`]: a state whose optimal move (its policy code)
//!   leads to a canonical afterstate an earlier state of the chunk led to
//!   takes that state's value and costs nothing; the others (the first to
//!   reach an afterstate, a move that makes the target, and the exceptions
//!   whose value differs from their afterstate's) are tokens. Reading it
//!   needs the chunk's states and policy ([`SolvedChunk`]).
//!
//! A token is 0.0, 1.0, a value new to the chunk, or one met before (a
//! reference: how many new values back). A body is four streams, each its
//! raw length and compressed length as varints and then its zstd frame
//! (none when empty): the tokens, 2 bits each, four to a byte from the low
//! bits; the exceptions, the gaps between their state indices as varints;
//! the references as varints; the new values' bits in byte planes (every
//! value's lowest byte, then every second byte, ...: the high planes, sign
//! and exponent, compress, the mantissa's do not).

use std::collections::hash_map::{Entry, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::codec::{compress, decompress};
use super::header::FormatError;
use crate::rules::board::Board;
use crate::rules::direction::Direction;
use crate::rules::game::{Game, Objective};
use crate::rules::moves::{has_exponent, Mover};
use crate::rules::symmetry::Symmetry;
use crate::space::ids::mix;

/// How a version-5 values chunk is coded: its payload's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Coding {
    /// zstd of the little-endian f64s (version 4's body).
    Plain = 0,
    /// Tokens for the states whose value does not follow from an earlier
    /// state's with the same best afterstate.
    ByAfterstate = 1,
    /// A token for every state.
    EachState = 2,
}

/// A solved chunk's states and policy codes, in order: what reading values
/// coded [`Coding::ByAfterstate`] takes besides the values chunk.
#[derive(Clone, Copy, Debug)]
pub struct SolvedChunk<'a> {
    /// The chunk's states.
    pub states: &'a [u64],
    /// Their optimal action codes (0 to 3, [`Direction::ALL`] order).
    pub policy: &'a [u8],
}

/// A chunk with fewer varied values (not exactly 0 or 1) than one in this
/// many is coded [`Coding::EachState`]: its tokens are nearly all 0 or 1 and
/// compress to almost nothing either way, and reading it needs no moves.
const EACH_STATE_BELOW: usize = 64;

/// The payload of a version-5 values chunk: [`Coding::ByAfterstate`] where
/// `solved` is given and the chunk's values vary, else
/// [`Coding::EachState`].
pub(crate) fn encode(
    game: &Game,
    values: &[f64],
    solved: Option<SolvedChunk<'_>>,
    level: i32,
) -> Vec<u8> {
    let varied = values
        .iter()
        .filter(|&&v| v.to_bits() != ZERO && v.to_bits() != ONE)
        .count();
    let by_afterstate = match solved {
        Some(s)
            if varied > 0
                && varied * EACH_STATE_BELOW >= values.len()
                && s.states.len() == values.len()
                && s.policy.len() == values.len() =>
        {
            by_afterstate(game, values, s, level)
        }
        _ => None,
    };
    by_afterstate.unwrap_or_else(|| {
        let mut t = Tokens::default();
        values.iter().for_each(|v| t.push(v.to_bits()));
        t.finish(Coding::EachState, Vec::new(), level)
    })
}

/// Values coded by afterstate with more exceptions than one in this many
/// states (values not made from their best afterstate's alone) are coded
/// [`Coding::EachState`] instead.
const EXCEPTIONS_BELOW: usize = 4;

/// The payload of [`Coding::Plain`] (written by no build: a reader's test).
#[cfg(test)]
pub(crate) fn encode_plain(values: &[f64], level: i32) -> Vec<u8> {
    let mut payload = vec![Coding::Plain as u8];
    payload.extend(compress(&le_bytes(values), level));
    payload
}

/// Values as little-endian f64 bytes.
pub(crate) fn le_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian f64 bytes as values (`body` a multiple of 8 bytes).
pub(crate) fn from_le_bytes(body: &[u8]) -> Vec<f64> {
    body.chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect()
}

/// The `count` values of a version-5 payload; `solved` is needed when it
/// is coded [`Coding::ByAfterstate`].
pub(crate) fn decode(
    game: &Game,
    payload: &[u8],
    count: usize,
    solved: Option<SolvedChunk<'_>>,
) -> Result<Vec<f64>, FormatError> {
    let (&coding, body) = payload
        .split_first()
        .ok_or_else(|| FormatError::Body("no value coding byte".into()))?;
    match coding {
        c if c == Coding::Plain as u8 => {
            let raw = decompress(body, count * 8)?;
            if raw.len() != count * 8 {
                return Err(FormatError::Body(format!(
                    "{} value bytes for {count} values",
                    raw.len()
                )));
            }
            Ok(from_le_bytes(&raw))
        }
        c if c == Coding::EachState as u8 => {
            let mut streams = Streams::read(body, count)?;
            if !streams.exceptions.is_empty() {
                return Err(FormatError::Body(
                    "exceptions in values coded each state".into(),
                ));
            }
            let values = (0..count)
                .map(|_| streams.token())
                .collect::<Result<Vec<u64>, _>>()?;
            streams.finished()?;
            Ok(values.into_iter().map(f64::from_bits).collect())
        }
        c if c == Coding::ByAfterstate as u8 => {
            let solved = solved.ok_or_else(|| {
                FormatError::Body(
                    "values coded by afterstate are read with their chunk's states and policy"
                        .into(),
                )
            })?;
            if solved.states.len() != count || solved.policy.len() != count {
                return Err(FormatError::Body(format!(
                    "{count} values coded by afterstate, but {} states and {} policy codes",
                    solved.states.len(),
                    solved.policy.len()
                )));
            }
            from_afterstates(game, Streams::read(body, count)?, solved)
        }
        c => Err(FormatError::Body(format!("unknown value coding {c}"))),
    }
}

/// The bits of 0.0 and 1.0, the values a token names without a stream.
const ZERO: u64 = 0;
const ONE: u64 = 0x3FF0_0000_0000_0000;

/// Token codes.
const T_ZERO: u8 = 0;
const T_ONE: u8 = 1;
const T_NEW: u8 = 2;
const T_REF: u8 = 3;

/// A map keyed by boards or value bits, hashed by one multiply-mix (std's
/// SipHash took most of the coding's time).
type FastMap<V> = HashMap<u64, V, BuildHasherDefault<MixHasher>>;

/// [`FastMap`]'s hasher: a u64 key mixed ([`crate::space::ids::mix`]).
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = mix(x);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The key of a state with none: its move makes the target (its value is
/// the target's) or does not move (never optimal; tolerated). A board's key
/// that happens to equal it is taken as none, by writer and reader alike.
const NO_KEY: u64 = 0;

/// Each state's key, the one its value goes by: the canonical afterstate
/// of its optimal move, and in a score game the move's score mixed in (a
/// state's value is the move's score plus its afterstate's value), or
/// [`NO_KEY`]. Two states with one key whose values differ (keys that
/// collide, or values not made alike) are exceptions, so a key needs only
/// to be the same for writer and reader.
fn keys(game: &Game, solved: SolvedChunk<'_>) -> Result<Vec<u64>, FormatError> {
    if let Some(&a) = solved.policy.iter().find(|&&a| a > 3) {
        return Err(FormatError::Body(format!("policy code {a}")));
    }
    let mover = Mover::new(game.shape);
    let score = game.objective == Objective::Score;
    let mut out = Vec::with_capacity(solved.states.len());
    crate::with_symmetry!(game.shape, |sym| {
        for (s, a) in solved.states.chunks(4).zip(solved.policy.chunks(4)) {
            let (mut t, mut wanted) = ([0u64; 4], [false; 4]);
            for i in 0..s.len() {
                t[i] = mover.apply(s[i], Direction::ALL[a[i] as usize]);
                wanted[i] = t[i] != s[i] && !has_exponent(t[i], game.target_exp);
            }
            let c = sym.canonical4(t, wanted);
            for i in 0..s.len() {
                out.push(match (wanted[i], score) {
                    (false, _) => NO_KEY,
                    (true, false) => c[i],
                    (true, true) => c[i] ^ mix(Board::merge_score(s[i], t[i])),
                });
            }
        }
    });
    Ok(out)
}

/// [`Coding::ByAfterstate`]'s payload; None where its exceptions are too
/// many ([`EXCEPTIONS_BELOW`]).
fn by_afterstate(
    game: &Game,
    values: &[f64],
    solved: SolvedChunk<'_>,
    level: i32,
) -> Option<Vec<u8>> {
    // A code that is no action (never written; the policy chunk's own
    // decoding refuses it) leaves every state without a key.
    let keys = keys(game, solved).unwrap_or_else(|_| vec![NO_KEY; values.len()]);
    let mut by_key: FastMap<u64> = FastMap::default();
    by_key.reserve(values.len() / 2);
    let mut t = Tokens::default();
    let (mut exceptions, mut next, mut excepted) = (Vec::new(), 0usize, 0usize);
    for (i, (&k, v)) in keys.iter().zip(values).enumerate() {
        let bits = v.to_bits();
        if k != NO_KEY {
            match by_key.entry(k) {
                Entry::Occupied(e) if *e.get() == bits => continue,
                Entry::Occupied(mut e) => {
                    put_varint(&mut exceptions, (i - next) as u64);
                    next = i + 1;
                    excepted += 1;
                    e.insert(bits);
                }
                Entry::Vacant(e) => {
                    e.insert(bits);
                }
            }
        }
        t.push(bits);
    }
    (excepted * EXCEPTIONS_BELOW <= values.len())
        .then(|| t.finish(Coding::ByAfterstate, exceptions, level))
}

/// The values of a [`Coding::ByAfterstate`] body.
fn from_afterstates(
    game: &Game,
    mut streams: Streams,
    solved: SolvedChunk<'_>,
) -> Result<Vec<f64>, FormatError> {
    let keys = keys(game, solved)?;
    let mut by_key: FastMap<u64> = FastMap::default();
    by_key.reserve(keys.len() / 2);
    let mut values = Vec::with_capacity(keys.len());
    let mut exception = streams.next_exception(0)?;
    for (i, &k) in keys.iter().enumerate() {
        let k = (k != NO_KEY).then_some(k);
        let known = k.and_then(|k| by_key.get(&k).copied());
        let bits = match (known, exception == Some(i)) {
            (Some(bits), false) => bits,
            (None, true) => {
                return Err(FormatError::Body(format!(
                    "exception at state {i}, whose afterstate has no value yet"
                )))
            }
            (_, is_exception) => {
                if is_exception {
                    exception = streams.next_exception(i + 1)?;
                }
                let bits = streams.token()?;
                if let Some(k) = k {
                    by_key.insert(k, bits);
                }
                bits
            }
        };
        values.push(f64::from_bits(bits));
    }
    if let Some(i) = exception {
        return Err(FormatError::Body(format!(
            "exception at state {i} of {}",
            values.len()
        )));
    }
    streams.finished()?;
    Ok(values)
}

/// The token streams being written.
#[derive(Default)]
struct Tokens {
    /// Tokens, four to a byte.
    tokens: Vec<u8>,
    /// Tokens written.
    count: usize,
    /// References, as varints.
    refs: Vec<u8>,
    /// New values' bits, in order.
    new: Vec<u64>,
    /// Each new value's index in `new`.
    index: FastMap<u32>,
}

impl Tokens {
    /// Add a token for the value of `bits`.
    fn push(&mut self, bits: u64) {
        let token = match bits {
            ZERO => T_ZERO,
            ONE => T_ONE,
            _ => match self.index.entry(bits) {
                Entry::Occupied(e) => {
                    put_varint(
                        &mut self.refs,
                        (self.new.len() - 1 - *e.get() as usize) as u64,
                    );
                    T_REF
                }
                Entry::Vacant(e) => {
                    e.insert(self.new.len() as u32);
                    self.new.push(bits);
                    T_NEW
                }
            },
        };
        if self.count.is_multiple_of(4) {
            self.tokens.push(0);
        }
        *self.tokens.last_mut().expect("pushed above") |= token << (2 * (self.count % 4));
        self.count += 1;
    }

    /// The payload: the coding byte and the four streams.
    fn finish(self, coding: Coding, exceptions: Vec<u8>, level: i32) -> Vec<u8> {
        let mut out = vec![coding as u8];
        for stream in [self.tokens, exceptions, self.refs, planes(&self.new)] {
            put_varint(&mut out, stream.len() as u64);
            if stream.is_empty() {
                put_varint(&mut out, 0);
            } else {
                let z = compress(&stream, level);
                put_varint(&mut out, z.len() as u64);
                out.extend(z);
            }
        }
        out
    }
}

/// The streams of a body being read.
struct Streams {
    tokens: Vec<u8>,
    /// Tokens read.
    read: usize,
    exceptions: Vec<u8>,
    exceptions_at: usize,
    refs: Vec<u8>,
    refs_at: usize,
    /// New values' bits.
    new: Vec<u64>,
    /// New values taken so far.
    taken: usize,
}

impl Streams {
    /// The four streams of `body`, for a chunk of `count` values (which
    /// bounds each stream's length).
    fn read(body: &[u8], count: usize) -> Result<Streams, FormatError> {
        let mut at = 0usize;
        let limits = [
            ("tokens", count.div_ceil(4)),
            ("exceptions", count * 10),
            ("references", count * 10),
            ("new values", count * 8),
        ];
        let mut streams = Vec::with_capacity(4);
        for (name, limit) in limits {
            let mut field = |what: &str| {
                get_varint(body, &mut at)
                    .map_err(|e| FormatError::Body(format!("{name} stream {what}: {e}")))
            };
            let (raw, packed) = (field("length")?, field("compressed length")?);
            if raw > limit as u64 {
                return Err(FormatError::Body(format!(
                    "{name} stream of {raw} bytes for {count} values"
                )));
            }
            let frame = body
                .get(at..)
                .and_then(|rest| rest.get(..usize::try_from(packed).ok()?))
                .ok_or_else(|| FormatError::Body(format!("{name} stream cut off")))?;
            at += frame.len();
            let stream = match raw {
                0 if packed == 0 => Vec::new(),
                _ => decompress(frame, raw as usize)?,
            };
            if stream.len() as u64 != raw {
                return Err(FormatError::Body(format!(
                    "{name} stream is {} bytes, its length says {raw}",
                    stream.len()
                )));
            }
            streams.push(stream);
        }
        if at != body.len() {
            return Err(FormatError::Body(format!(
                "{} bytes after the value streams",
                body.len() - at
            )));
        }
        let new = streams.pop().expect("four streams");
        if !new.len().is_multiple_of(8) {
            return Err(FormatError::Body(format!(
                "new values stream of {} bytes, not whole values",
                new.len()
            )));
        }
        let refs = streams.pop().expect("four streams");
        let exceptions = streams.pop().expect("four streams");
        let tokens = streams.pop().expect("four streams");
        Ok(Streams {
            tokens,
            read: 0,
            exceptions,
            exceptions_at: 0,
            refs,
            refs_at: 0,
            new: unplanes(&new),
            taken: 0,
        })
    }

    /// The value of the next token.
    #[inline]
    fn token(&mut self) -> Result<u64, FormatError> {
        let byte = self
            .tokens
            .get(self.read / 4)
            .ok_or_else(|| FormatError::Body(format!("{} tokens, more needed", self.read)))?;
        let token = (byte >> (2 * (self.read % 4))) & 3;
        self.read += 1;
        match token {
            T_ZERO => Ok(ZERO),
            T_ONE => Ok(ONE),
            T_NEW => {
                let bits = self.new.get(self.taken).copied().ok_or_else(|| {
                    FormatError::Body(format!("{} new values, more needed", self.new.len()))
                })?;
                self.taken += 1;
                Ok(bits)
            }
            _ => {
                let back = get_varint(&self.refs, &mut self.refs_at)
                    .map_err(|e| FormatError::Body(format!("reference: {e}")))?;
                usize::try_from(back)
                    .ok()
                    .and_then(|b| self.taken.checked_sub(b.checked_add(1)?))
                    .map(|i| self.new[i])
                    .ok_or_else(|| {
                        FormatError::Body(format!(
                            "reference {back} back with {} new values read",
                            self.taken
                        ))
                    })
            }
        }
    }

    /// The index of the next exception, the first at or after `from`; None
    /// when none is left.
    fn next_exception(&mut self, from: usize) -> Result<Option<usize>, FormatError> {
        if self.exceptions_at == self.exceptions.len() {
            return Ok(None);
        }
        let gap = get_varint(&self.exceptions, &mut self.exceptions_at)
            .map_err(|e| FormatError::Body(format!("exception: {e}")))?;
        usize::try_from(gap)
            .ok()
            .and_then(|g| from.checked_add(g))
            .map(Some)
            .ok_or_else(|| FormatError::Body(format!("exception gap {gap}")))
    }

    /// Check that every stream was read to its end (and the last token
    /// byte's unused bits are zero).
    fn finished(&self) -> Result<(), FormatError> {
        let tokens_whole = self.read.div_ceil(4) == self.tokens.len()
            && self
                .tokens
                .last()
                .is_none_or(|&b| self.read.is_multiple_of(4) || b >> (2 * (self.read % 4)) == 0);
        let rest = [
            (!tokens_whole, "tokens"),
            (self.refs_at != self.refs.len(), "references"),
            (self.taken != self.new.len(), "new values"),
            (self.exceptions_at != self.exceptions.len(), "exceptions"),
        ];
        match rest.iter().find(|(left, _)| *left) {
            Some((_, name)) => Err(FormatError::Body(format!("{name} left unread"))),
            None => Ok(()),
        }
    }
}

/// Values' bits in byte planes: every value's byte 0, then every byte 1, ...
fn planes(bits: &[u64]) -> Vec<u8> {
    let n = bits.len();
    let mut out = vec![0u8; n * 8];
    for (i, b) in bits.iter().enumerate() {
        for (p, byte) in b.to_le_bytes().into_iter().enumerate() {
            out[p * n + i] = byte;
        }
    }
    out
}

/// [`planes`] undone (`planes.len()` a multiple of 8).
fn unplanes(planes: &[u8]) -> Vec<u64> {
    let n = planes.len() / 8;
    (0..n)
        .map(|i| u64::from_le_bytes(std::array::from_fn(|p| planes[p * n + i])))
        .collect()
}

fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

/// The varint at `bytes[*at..]`, moving `at` past it.
fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64, &'static str> {
    let (mut x, mut shift) = (0u64, 0u32);
    loop {
        let &b = bytes.get(*at).ok_or("cut off")?;
        *at += 1;
        if shift > 63 || (shift == 63 && b > 1) {
            return Err("varint too long");
        }
        x |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Ok(x);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::formats::chunk::tests::header;
    use crate::formats::chunk::{decode_solved_values, decode_values, ChunkKind};
    use crate::rules::shape::Shape;

    /// Values every coding must keep bit for bit: zeros of both signs, 1,
    /// subnormals, the extremes, infinities and NaNs with payloads, and
    /// some arbitrary bits.
    fn awkward() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            f64::from_bits(1),
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(0x7FF8_0000_0000_0001),
            f64::from_bits(0xFFF0_0000_0000_0F00),
            0.011_337_880_082_526_88,
            1.0 - f64::EPSILON,
        ];
        v.extend((0..40u64).map(|i| f64::from_bits(mix(i))));
        v
    }

    fn same(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    /// A chunk's worth of 3x3 boards (random tiles up to 2^11, sorted and
    /// distinct) with random action codes.
    fn solved_chunk(n: usize, seed: u64) -> (Vec<u64>, Vec<u8>) {
        boards(n, seed, 12)
    }

    /// Up to `n` random 3x3 boards of exponents below `exps` (sorted and
    /// distinct) with random action codes: with few exponents, many share
    /// their afterstates, as a solve's states do.
    fn boards(n: usize, seed: u64, exps: u64) -> (Vec<u64>, Vec<u8>) {
        let mask = Shape::square(3).block_mask();
        let mut states: Vec<u64> = (0..n as u64)
            .map(|i| {
                let x = mix(seed ^ i.wrapping_mul(0x1234_5678_9abc));
                // Nybbles of at most 11, inside the 3x3 block.
                let mut b = 0;
                for cell in 0..16 {
                    b |= (((x >> (4 * cell)) & 0xF) % exps) << (4 * cell);
                }
                b & mask
            })
            .collect();
        states.sort_unstable();
        states.dedup();
        let policy = states.iter().map(|&s| (mix(s ^ seed) % 4) as u8).collect();
        (states, policy)
    }

    /// Values as a solve makes them: each a function of the state's key,
    /// drawn from `pool` (so that afterstates share values too), with every
    /// `exception_every`-th state given another value.
    fn keyed_values(
        game: &Game,
        s: SolvedChunk<'_>,
        pool: &[f64],
        exception_every: usize,
    ) -> Vec<f64> {
        let keys = keys(game, s).unwrap();
        keys.iter()
            .enumerate()
            .map(|(i, &k)| match k {
                _ if exception_every > 0 && i % exception_every == exception_every - 1 => {
                    pool[(mix(i as u64) % pool.len() as u64) as usize]
                }
                NO_KEY => 1.0,
                k => pool[(mix(k) % pool.len() as u64) as usize],
            })
            .collect()
    }

    fn game() -> Game {
        header(ChunkKind::Values, 0).game
    }

    fn write(values: &[f64], solved: Option<SolvedChunk<'_>>) -> Vec<u8> {
        let h = header(ChunkKind::Values, values.len() as u64);
        h.write(&encode(&h.game, values, solved, 3))
    }

    fn read(bytes: &[u8], solved: Option<SolvedChunk<'_>>) -> Result<Vec<f64>, FormatError> {
        let (h, _) = crate::formats::chunk::ChunkHeader::read(bytes)?;
        match solved {
            Some(s) => decode_solved_values(bytes, &h, s),
            None => decode_values(bytes, &h),
        }
    }

    /// Awkward values round-trip bit for bit in every coding, and as the
    /// plain little-endian encoding holds them.
    #[test]
    fn awkward_values_round_trip_bit_for_bit() {
        let v = awkward();
        let game = game();
        let plain = encode_plain(&v, 3);
        assert_eq!(plain[0], Coding::Plain as u8);
        let as_plain = decode(&game, &plain, v.len(), None).unwrap();
        assert!(same(&as_plain, &v));
        assert_eq!(le_bytes(&as_plain), le_bytes(&v));
        let each = write(&v, None);
        assert_eq!(
            each[crate::formats::chunk::HEADER_LEN],
            Coding::EachState as u8
        );
        assert!(same(&read(&each, None).unwrap(), &v));
        // Coded by afterstate: the awkward values on random boards, then
        // repeated so that keys and references are met again.
        let (states, policy) = solved_chunk(v.len() * 4, 7);
        let values: Vec<f64> = (0..states.len()).map(|i| v[i % v.len()]).collect();
        let s = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let by = write(&values, Some(s));
        assert_eq!(
            by[crate::formats::chunk::HEADER_LEN],
            Coding::ByAfterstate as u8
        );
        assert!(same(&read(&by, Some(s)).unwrap(), &values));
        // Without the states and policy it cannot be read, and says so.
        assert!(
            matches!(read(&by, None), Err(FormatError::Body(m)) if m.contains("states and policy"))
        );
        // The empty chunk.
        assert!(read(
            &write(
                &[],
                Some(SolvedChunk {
                    states: &[],
                    policy: &[]
                })
            ),
            None
        )
        .unwrap()
        .is_empty());
    }

    /// Values that follow their keys cost their distinct values only: far
    /// less than a token a state; exceptions are kept.
    #[test]
    fn values_that_follow_their_afterstates_are_not_stored_again() {
        let game = game();
        let (states, policy) = boards(20_000, 3, 3);
        let s = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let pool: Vec<f64> = (1..500u64).map(|i| 1.0 / (i as f64 + 0.5)).collect();
        for every in [0, 97, 5] {
            let values = keyed_values(&game, s, &pool, every);
            let by = write(&values, Some(s));
            assert!(
                same(&read(&by, Some(s)).unwrap(), &values),
                "exceptions every {every}"
            );
            let each = write(&values, None);
            assert!(same(&read(&each, None).unwrap(), &values));
            if every != 5 {
                assert_eq!(
                    by[crate::formats::chunk::HEADER_LEN],
                    Coding::ByAfterstate as u8
                );
                assert!(by.len() < each.len(), "{} vs {}", by.len(), each.len());
            } else {
                // One exception in 5 states is too many: coded each state.
                assert_eq!(
                    by[crate::formats::chunk::HEADER_LEN],
                    Coding::EachState as u8
                );
            }
        }
    }

    /// A chunk of values nearly all 0 or 1 is coded each state, readable
    /// without its states and policy.
    #[test]
    fn nearly_exact_chunks_are_coded_each_state() {
        let (states, policy) = solved_chunk(1000, 11);
        let mut values = vec![1.0; states.len()];
        values[10] = 0.25;
        let s = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let bytes = write(&values, Some(s));
        assert_eq!(
            bytes[crate::formats::chunk::HEADER_LEN],
            Coding::EachState as u8
        );
        assert!(same(&read(&bytes, None).unwrap(), &values));
        assert!(
            bytes.len() < crate::formats::chunk::HEADER_LEN + 60,
            "{}",
            bytes.len()
        );
    }

    /// A version-4 values chunk (plain little-endian f64) and policy chunk
    /// (a byte a code) still read, with or without the states.
    #[test]
    fn version_4_chunks_still_read() {
        let v = awkward();
        let h = header(ChunkKind::Values, v.len() as u64);
        let old = h.write_as(4, &compress(&le_bytes(&v), 3));
        assert!(same(&read(&old, None).unwrap(), &v));
        let (states, policy) = solved_chunk(v.len(), 5);
        let s = SolvedChunk {
            states: &states[..v.len().min(states.len())],
            policy: &policy[..v.len().min(states.len())],
        };
        if s.states.len() == v.len() {
            assert!(same(&read(&old, Some(s)).unwrap(), &v));
        }
        let hp = header(ChunkKind::Policy, 5);
        let old_policy = hp.write_as(4, &compress(&[3, 0, 2, 1, 3], 3));
        assert_eq!(
            crate::formats::chunk::decode_policy(&old_policy, &hp).unwrap(),
            [3, 0, 2, 1, 3]
        );
        let bad = hp.write_as(4, &compress(&[3, 0, 4, 1, 3], 3));
        assert!(crate::formats::chunk::decode_policy(&bad, &hp).is_err());
        // Version 3 is not read.
        let older = h.write_as(3, &compress(&le_bytes(&v), 3));
        assert_eq!(read(&older, None), Err(FormatError::Version { found: 3 }));
    }

    /// Packed policy codes round-trip at every length; bits past the last
    /// code and a short body are refused.
    #[test]
    fn policy_codes_pack_four_to_a_byte() {
        use crate::formats::chunk::{decode_policy, encode_policy};
        for n in 0..13usize {
            let codes: Vec<u8> = (0..n).map(|i| (mix(i as u64) % 4) as u8).collect();
            let h = header(ChunkKind::Policy, n as u64);
            let bytes = encode_policy(&h, &codes, 3);
            assert_eq!(decode_policy(&bytes, &h).unwrap(), codes);
        }
        let h = header(ChunkKind::Policy, 3);
        let stray = h.write(&compress(&[0b1100_0000], 3));
        assert!(matches!(
            decode_policy(&stray, &h),
            Err(FormatError::Body(_))
        ));
        let h = header(ChunkKind::Policy, 5);
        let short = h.write(&compress(&[0], 3));
        assert!(matches!(
            decode_policy(&short, &h),
            Err(FormatError::Body(_))
        ));
    }

    /// Damaged bodies (under a header whose checksums match) are refused
    /// with a body error naming what is wrong, never a panic.
    #[test]
    fn damaged_bodies_are_format_errors() {
        let game = game();
        let (states, policy) = solved_chunk(3000, 13);
        let s = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let pool: Vec<f64> = (1..300u64).map(|i| (i as f64).sqrt() / 40.0).collect();
        let values = keyed_values(&game, s, &pool, 41);
        let payload = encode(&game, &values, Some(s), 3);
        let n = values.len();
        let body = |p: &[u8]| decode(&game, p, n, Some(s));
        assert!(same(&body(&payload).unwrap(), &values));
        let err = |p: &[u8]| match body(p) {
            Err(FormatError::Body(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(err(&[]), "no value coding byte");
        assert_eq!(err(&[9]), "unknown value coding 9");
        assert!(err(&payload[..payload.len() - 3]).contains("cut off"));
        let mut long = payload.clone();
        long.push(0);
        assert_eq!(err(&long), "1 bytes after the value streams");
        // Other counts than the chunk's.
        assert!(decode(&game, &payload, n + 1, Some(s)).is_err());
        assert!(decode(&game, &payload, n - 1, Some(s)).is_err());
        // A policy code that is no action.
        let mut bad_policy = policy.clone();
        bad_policy[17] = 7;
        let bad = SolvedChunk {
            states: &states,
            policy: &bad_policy,
        };
        assert!(
            matches!(decode(&game, &payload, n, Some(bad)), Err(FormatError::Body(m)) if m == "policy code 7")
        );
        // Every single-byte change either reads to other values or is
        // refused; none panics.
        for at in 0..payload.len() {
            for flip in [1u8, 0x80, 0xFF] {
                let mut p = payload.clone();
                p[at] ^= flip;
                let _ = body(&p);
                let _ = decode(&game, &p, n, None);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random values (arbitrary bits, or drawn from a few with 0 and
        /// 1, so that they repeat) on random boards and actions round-trip
        /// bit for bit in both codings.
        #[test]
        fn random_values_round_trip(
            seed in any::<u64>(),
            n in 0usize..3000,
            distinct in 1usize..50,
            arbitrary in any::<bool>(),
            exception_every in prop_oneof![Just(0usize), 2usize..200],
        ) {
            let game = game();
            let (states, policy) = solved_chunk(n, seed);
            let s = SolvedChunk { states: &states, policy: &policy };
            let values: Vec<f64> = if arbitrary {
                (0..states.len()).map(|i| f64::from_bits(mix(seed ^ i as u64))).collect()
            } else {
                let mut pool = awkward();
                pool.truncate(distinct);
                keyed_values(&game, s, &pool, exception_every)
            };
            let by = write(&values, Some(s));
            prop_assert!(same(&read(&by, Some(s)).unwrap(), &values));
            let each = write(&values, None);
            prop_assert!(same(&read(&each, None).unwrap(), &values));
        }
    }
}
