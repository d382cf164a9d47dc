//! Values (also a response's sums), policy codes and pushes.

use super::codec::{compress, decompress};
use super::header::{ChunkHeader, FormatError};

/// Encode values (f64, bit-exact): a chunk's values, or a response's sums
/// (one for each afterstate of its request in the gather's slice, in order).
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
