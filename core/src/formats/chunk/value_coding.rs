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
            if varied * EACH_STATE_BELOW >= values.len()
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
        if self.count % 4 == 0 {
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
        if new.len() % 8 != 0 {
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
                .is_none_or(|&b| self.read % 4 == 0 || b >> (2 * (self.read % 4)) == 0);
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
