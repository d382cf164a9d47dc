//! Checksummed JSON records: every metadata object (job manifest, commit and
//! failure records, layer indexes, summary, lock, status) is one JSON
//! document that carries the xxh3-64 of its own bytes, so a flipped byte
//! anywhere in it (a digit of a number included, which still parses) is
//! refused on read and by `verify`, naming the object.
//!
//! ```text
//! {"xxh3":"0123456789abcdef","record":{ ... the record ... }}\n
//! ```
//!
//! The checksum is the xxh3-64 of the whole object with its 16 hex digits
//! written as `0`s, in lowercase hex. The record stays plain JSON (`jq
//! .record` reads it). The layout is fixed, so a reader checks the bytes
//! before it parses anything.

use solve2048_core::task::{JobManifest, ManifestError};

use crate::{Store, StoreError};
use xxhash_rust::xxh3::xxh3_64;

/// What every record starts with.
const PREFIX: &[u8] = b"{\"xxh3\":\"";
/// What follows the checksum's digits.
const MIDDLE: &[u8] = b"\",\"record\":";
/// What every record ends with.
const SUFFIX: &[u8] = b"}\n";
/// Hex digits of the checksum.
const DIGITS: usize = 16;

/// Why the bytes of a record were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not laid out as a checksummed record (written by an older format,
    /// truncated, or damaged where the layout is).
    #[error("not a checksummed record (truncated, damaged, or written by another format version)")]
    Layout,
    /// The bytes do not hash to the checksum they carry.
    #[error("record checksum mismatch: recorded {recorded}, computed {computed:016x}")]
    Checksum {
        /// The digits the record carries.
        recorded: String,
        /// What its bytes hash to.
        computed: u64,
    },
}

/// The bytes of a record holding `body` (JSON).
pub fn seal(body: &[u8]) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(PREFIX.len() + DIGITS + MIDDLE.len() + body.len() + SUFFIX.len());
    out.extend_from_slice(PREFIX);
    out.extend_from_slice(&[b'0'; DIGITS]);
    out.extend_from_slice(MIDDLE);
    out.extend_from_slice(body);
    out.extend_from_slice(SUFFIX);
    let sum = format!("{:016x}", xxh3_64(&out));
    out[PREFIX.len()..PREFIX.len() + DIGITS].copy_from_slice(sum.as_bytes());
    out
}

/// The JSON body of a record, once its layout and checksum are verified.
pub fn open(bytes: &[u8]) -> Result<&[u8], RecordError> {
    let start = PREFIX.len() + DIGITS + MIDDLE.len();
    if bytes.len() < start + SUFFIX.len()
        || !bytes.starts_with(PREFIX)
        || &bytes[PREFIX.len() + DIGITS..start] != MIDDLE
        || !bytes.ends_with(SUFFIX)
    {
        return Err(RecordError::Layout);
    }
    let digits = &bytes[PREFIX.len()..PREFIX.len() + DIGITS];
    let mut zeroed = bytes.to_vec();
    zeroed[PREFIX.len()..PREFIX.len() + DIGITS].fill(b'0');
    let computed = xxh3_64(&zeroed);
    // Exact lowercase digits: a digit flipped to upper case is damage too.
    if format!("{computed:016x}").as_bytes() != digits {
        return Err(RecordError::Checksum {
            recorded: String::from_utf8_lossy(digits).into_owned(),
            computed,
        });
    }
    Ok(&bytes[start..bytes.len() - SUFFIX.len()])
}

/// Parse `job.json`: a checksummed record holding the manifest. A store of
/// an older format version wrote it as plain JSON: its version is read from
/// that, so it gets the version message rather than "damaged".
pub fn manifest(bytes: &[u8]) -> Result<JobManifest, ManifestError> {
    match open(bytes) {
        Ok(body) => JobManifest::parse(body),
        Err(e) if bytes.starts_with(PREFIX) => Err(ManifestError::Damaged(Box::new(e))),
        Err(e) => match JobManifest::parse(bytes) {
            Err(version @ ManifestError::Version { found }) if found != 0 => Err(version),
            _ => Err(ManifestError::Damaged(Box::new(e))),
        },
    }
}

/// Reading and writing records through a store.
impl Store {
    /// Read a checksummed JSON record ([`crate::record`]), or `None` when it
    /// does not exist; a record whose checksum or shape is wrong is named.
    pub async fn get_json_opt<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<Option<T>, StoreError> {
        match self.get(object).await? {
            Some(bytes) => parse_record(object, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Read a checksummed JSON record that must exist.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<T, StoreError> {
        self.get_json_opt(object)
            .await?
            .ok_or_else(|| StoreError::Missing {
                object: object.to_string(),
            })
    }

    /// Write a checksummed JSON record (one atomic put), indented for people.
    pub async fn put_json<T: serde::Serialize>(
        &self,
        object: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_vec_pretty(value).expect("records serialize");
        self.put(object, seal(&body)).await
    }

    /// Write a checksummed JSON record on one line (commit records: many,
    /// and read by programs).
    pub async fn put_json_compact<T: serde::Serialize>(
        &self,
        object: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_vec(value).expect("records serialize");
        self.put(object, seal(&body)).await
    }
}

/// Parse the bytes of checksummed record `object`, naming it when they are
/// refused.
pub fn parse_record<T: serde::de::DeserializeOwned>(
    object: &str,
    bytes: &[u8],
) -> Result<T, StoreError> {
    let damaged = |source: Box<dyn std::error::Error + Send + Sync>| StoreError::Damaged {
        object: object.to_string(),
        source,
    };
    let body = open(bytes).map_err(|e| damaged(Box::new(e)))?;
    serde_json::from_slice(body).map_err(|e| damaged(Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_to_its_body_and_is_json() {
        let body = br#"{"a": [1, 2.5, "x"]}"#;
        let sealed = seal(body);
        assert_eq!(open(&sealed).unwrap(), body);
        let v: serde_json::Value = serde_json::from_slice(&sealed).unwrap();
        assert_eq!(v["record"]["a"][1], 2.5);
    }

    #[test]
    fn every_single_byte_flip_is_refused() {
        let sealed = seal(br#"{"count": 12345, "checksum": 987}"#);
        for i in 0..sealed.len() {
            for bit in 0..8 {
                let mut bad = sealed.clone();
                bad[i] ^= 1 << bit;
                assert!(open(&bad).is_err(), "flip of bit {bit} of byte {i} passed");
            }
        }
        // Truncated, or an older plain-JSON record.
        assert_eq!(open(&sealed[..sealed.len() - 1]), Err(RecordError::Layout));
        assert_eq!(open(b"{\"format_version\": 3}"), Err(RecordError::Layout));
    }
}
