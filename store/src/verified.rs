//! Verified reads of chunk objects and of the chunks that lie at byte ranges
//! of bundle objects: each one's header and checksums are checked on read,
//! and one that fails is named. States, values and policy chunks go through
//! the worker's local cache when it has one.

use solve2048_core::chain::Chain;
use solve2048_core::formats::chunk::{self, ChunkHeader, FormatError, SolvedChunk};

use crate::cache::cacheable;
use crate::{Store, StoreError};

impl Store {
    /// Read an object and decode it with `decode`, naming the object if it
    /// is missing or rejected.
    async fn read_verified<T>(
        &self,
        object: &str,
        expect: &ChunkHeader,
        decode: impl Fn(&[u8], &ChunkHeader) -> Result<T, FormatError>,
    ) -> Result<T, StoreError> {
        let cache = self.cache.as_ref().filter(|_| cacheable(object));
        if let Some(c) = cache {
            if let Some(bytes) = c.get(object) {
                match decode(&bytes, expect) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        tracing::warn!(object, error = %Chain(&e), "damaged cache entry dropped");
                        c.remove(object);
                    }
                }
            }
        }
        let bytes = self.get_required(object).await?;
        let value = decode(&bytes, expect).map_err(|source| StoreError::Rejected {
            object: object.to_string(),
            source,
        })?;
        if let Some(c) = cache {
            c.put(object, &bytes);
        }
        Ok(value)
    }

    /// Read and verify sorted keys (states or a run).
    pub async fn read_keys(
        &self,
        object: &str,
        expect: &ChunkHeader,
    ) -> Result<Vec<u64>, StoreError> {
        self.read_verified(object, expect, chunk::decode_keys).await
    }

    /// Read and verify a solved chunk's values, given its states and policy
    /// (values coded by afterstate need them: [`chunk::value_coding`]).
    pub async fn read_values(
        &self,
        object: &str,
        expect: &ChunkHeader,
        solved: SolvedChunk<'_>,
    ) -> Result<Vec<f64>, StoreError> {
        self.read_verified(object, expect, |bytes, expect| {
            chunk::decode_solved_values(bytes, expect, solved)
        })
        .await
    }

    /// Read and verify policy codes.
    pub async fn read_policy(
        &self,
        object: &str,
        expect: &ChunkHeader,
    ) -> Result<Vec<u8>, StoreError> {
        self.read_verified(object, expect, chunk::decode_policy)
            .await
    }

    /// Read the chunk at bytes `[offset, offset + len)` of bundle `object`
    /// and decode it with `decode`, naming the object (and the range) if it
    /// is missing or rejected.
    pub async fn read_section<T>(
        &self,
        object: &str,
        offset: u64,
        len: u64,
        expect: &ChunkHeader,
        decode: fn(&[u8], &ChunkHeader) -> Result<T, FormatError>,
    ) -> Result<T, StoreError> {
        let bytes = self.get_range(object, offset, len).await?;
        decode(&bytes, expect).map_err(|source| StoreError::Rejected {
            object: format!("{object} bytes {offset}..{}", offset + len),
            source,
        })
    }

    /// Read and verify the sorted keys at a byte range of a bundle.
    pub async fn read_keys_at(
        &self,
        object: &str,
        offset: u64,
        len: u64,
        expect: &ChunkHeader,
    ) -> Result<Vec<u64>, StoreError> {
        self.read_section(object, offset, len, expect, chunk::decode_keys)
            .await
    }

    /// Read and verify, without decoding, the keys at a byte range of a
    /// bundle: their bytes, for [`chunk::stream_keys`].
    pub async fn read_key_bytes_at(
        &self,
        object: String,
        offset: u64,
        len: u64,
        expect: ChunkHeader,
    ) -> Result<Vec<u8>, StoreError> {
        self.read_section(&object, offset, len, &expect, chunk::verified_bytes)
            .await
    }
}
