//! Values (also a response's sums), policy codes and pushes.
//!
//! Version 5 codes a values chunk by [`value_coding`](super::value_coding)
//! and packs policy codes four to a byte; a response's sums are
//! little-endian f64 in both versions (coding them as values measured 6 to
//! 8% smaller on 3x3 to 1024, for the coding's time on every sum the
//! backward pass moves). Version-4 chunks still read.

use super::codec::{compress, decompress};
use super::header::{ChunkHeader, ChunkKind, FormatError, FORMAT_VERSION};
use super::value_coding::{self, SolvedChunk};

/// Encode values (f64, bit-exact) with no chunk beside them: a response's
/// sums (one for each afterstate of its request in the gather's slice, in
/// order), or a values chunk coded without its states and policy.
pub fn encode_values(header: &ChunkHeader, values: &[f64], level: i32) -> Vec<u8> {
    match header.kind {
        ChunkKind::Values => header.write(&value_coding::encode(&header.game, values, None, level)),
        _ => header.write(&compress(&value_coding::le_bytes(values), level)),
    }
}

/// Encode a solved chunk's values, coded by the afterstates its states'
/// optimal moves lead to where that pays ([`value_coding`]).
pub fn encode_solved_values(
    header: &ChunkHeader,
    values: &[f64],
    solved: SolvedChunk<'_>,
    level: i32,
) -> Vec<u8> {
    header.write(&value_coding::encode(
        &header.game,
        values,
        Some(solved),
        level,
    ))
}

/// Decode and verify values that need no chunk beside them: a response's
/// sums, or a values chunk not coded by afterstate (a version-4 one, or one
/// whose values are nearly all 0 or 1).
pub fn decode_values(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<f64>, FormatError> {
    decode(bytes, expect, None)
}

/// Decode and verify a solved chunk's values, given its states and policy
/// (which a values chunk coded by afterstate needs).
pub fn decode_solved_values(
    bytes: &[u8],
    expect: &ChunkHeader,
    solved: SolvedChunk<'_>,
) -> Result<Vec<f64>, FormatError> {
    decode(bytes, expect, Some(solved))
}

fn decode(
    bytes: &[u8],
    expect: &ChunkHeader,
    solved: Option<SolvedChunk<'_>>,
) -> Result<Vec<f64>, FormatError> {
    let (found, version, payload) = ChunkHeader::read_versioned(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    if version == FORMAT_VERSION && found.kind == ChunkKind::Values {
        return value_coding::decode(&found.game, payload, count, solved);
    }
    let body = decompress(payload, count.saturating_mul(8))?;
    if body.len() != count.saturating_mul(8) {
        return Err(FormatError::Body(format!(
            "{} value bytes for {count} values",
            body.len()
        )));
    }
    Ok(value_coding::from_le_bytes(&body))
}

/// Encode policy action codes (0 to 3), packed four to a byte from the low
/// bits.
pub fn encode_policy(header: &ChunkHeader, actions: &[u8], level: i32) -> Vec<u8> {
    debug_assert!(actions.iter().all(|&a| a < 4));
    let packed: Vec<u8> = actions
        .chunks(4)
        .map(|q| {
            q.iter()
                .enumerate()
                .fold(0u8, |b, (i, &a)| b | ((a & 3) << (2 * i)))
        })
        .collect();
    header.write(&compress(&packed, level))
}

/// Decode and verify policy action codes.
pub fn decode_policy(bytes: &[u8], expect: &ChunkHeader) -> Result<Vec<u8>, FormatError> {
    let (found, version, payload) = ChunkHeader::read_versioned(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    if version < FORMAT_VERSION {
        // Version 4: a byte a code.
        let body = decompress(payload, count)?;
        if body.len() != count || body.iter().any(|&a| a > 3) {
            return Err(FormatError::Body("policy codes malformed".into()));
        }
        return Ok(body);
    }
    let packed = decompress(payload, count.div_ceil(4))?;
    let unused = (4 - count % 4) % 4;
    let tail_clear = packed
        .last()
        .is_none_or(|&b| unused == 0 || b >> (2 * (4 - unused)) == 0);
    if packed.len() != count.div_ceil(4) || !tail_clear {
        return Err(FormatError::Body(format!(
            "{} bytes of packed policy codes for {count} states",
            packed.len()
        )));
    }
    Ok((0..count)
        .map(|i| (packed[i / 4] >> (2 * (i % 4))) & 3)
        .collect())
}

/// Encode pushes: sorted, distinct afterstates and one mass each.
pub fn encode_pushes(header: &ChunkHeader, keys: &[u64], masses: &[f64], level: i32) -> Vec<u8> {
    debug_assert_eq!(keys.len(), masses.len());
    let mut body = super::keys::varint_body(keys);
    body.extend(masses.iter().flat_map(|v| v.to_le_bytes()));
    header.write(&compress(&body, level))
}

/// Decode and verify pushes: their afterstates and masses.
pub fn decode_pushes(
    bytes: &[u8],
    expect: &ChunkHeader,
) -> Result<(Vec<u64>, Vec<f64>), FormatError> {
    let (found, payload) = ChunkHeader::read(bytes)?;
    expect.check(&found)?;
    let count = found.count as usize;
    let body = decompress(payload, count * 18)?;
    let (keys, used) = super::keys::parse_varint_keys(&body, count)?;
    let rest = &body[used..];
    if rest.len() != count * 8 {
        return Err(FormatError::Body(format!(
            "{} mass bytes for {count} afterstates",
            rest.len()
        )));
    }
    let masses = rest
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    Ok((keys, masses))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::chunk::tests::header;
    use crate::formats::chunk::ChunkKind;

    #[test]
    fn pushes_round_trip_and_refuse_bad_bodies() {
        let keys = vec![3u64, 17, 1 << 40, u64::MAX / 3];
        let masses = vec![0.0, 2.5, 0.125, 7.0];
        let h = header(ChunkKind::Pushes, 4);
        let bytes = encode_pushes(&h, &keys, &masses, 3);
        assert_eq!(decode_pushes(&bytes, &h).unwrap(), (keys.clone(), masses));
        let mut other = h;
        other.count = 3;
        assert!(matches!(
            decode_pushes(&bytes, &other),
            Err(FormatError::Identity { .. })
        ));
        // A body cut short (a mass missing) under a header that still
        // matches.
        let mut body = crate::formats::chunk::keys::varint_body(&keys);
        body.extend([1.0f64, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()));
        let short = h.write(&compress(&body, 3));
        assert_eq!(
            decode_pushes(&short, &h),
            Err(FormatError::Body("24 mass bytes for 4 afterstates".into()))
        );
    }
}
