//! The chunk file format shared by state, value, policy and run objects.
//!
//! ```text
//! offset size  field
//!      0    8  magic "S2048CK\0"
//!      8    2  format version (u16)
//!     10    1  kind (1 states, 2 values, 3 policy, 4 run, 5 requests, 6 responses,
//!                  7 pushes)
//!     11    1  board shape: the side of a square (2, 3, 4), rows + 16 * columns
//!              of a rectangle ([`crate::Shape::code`])
//!     12    1  target exponent
//!     13    1  max-tile exponent of the part
//!     14    2  zero
//!     16    8  discount (f64 bits)
//!     24    4  tile sum of the part
//!     28    4  group
//!     32    4  chunk index (runs: source chunk's position in its layer)
//!     36    4  chance of a 4 in millionths less the standard 100,000 (i32;
//!                  0 for the standard rule, as in files from before the field)
//!     40    8  element count
//!     48    8  payload length in bytes
//!     56    8  xxh3-64 of the payload
//!     64    8  xxh3-64 of bytes 0..64
//!     72    .  payload: zstd of the body
//! ```
//!
//! Bodies: states, runs and requests are strictly increasing u64 keys, the
//! first as a LEB128 varint and each later one as the varint of its
//! difference from the one before; responses (one sum per key of the
//! request they answer) are little-endian f64; values are coded as
//! [`value_coding`] says (version 5; little-endian f64 in version 4), read
//! beside their chunk's states and policy; policy is one action code per
//! state, four to a byte from the low bits (version 5; a byte each in
//! version 4); pushes are keys as above followed by one little-endian f64
//! per key. All integers are little-endian. The payload is the zstd of the
//! body, except a version-5 values chunk's (its coding byte, then its
//! streams, each zstd'd).
//!
//! Reading and writing keys is in [`keys`], values, policy and pushes in
//! [`values`], the coding of values in [`value_coding`]; the header in
//! `header` and the compression of bodies in `codec`.

mod codec;
mod header;
pub mod keys;
pub mod value_coding;
pub mod values;

pub use header::{
    file_checksum, ChunkHeader, ChunkKind, FormatError, FORMAT_VERSION, HEADER_LEN, MAGIC,
    OLDEST_READABLE_VERSION,
};
pub use keys::{decode_keys, encode_keys, stream_keys, verified_bytes, KeyStream};
pub use value_coding::SolvedChunk;
pub use values::{
    decode_policy, decode_pushes, decode_solved_values, decode_values, encode_policy,
    encode_pushes, encode_solved_values, encode_values,
};

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules::game::Game;
    use crate::space::ids::{ChunkId, PartId};

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
