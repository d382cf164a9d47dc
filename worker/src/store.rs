//! The object store behind a job: a local directory by default.
//!
//! Every write is a single `put` of a complete object: the local backend
//! writes a temporary file and renames it into place, so a reader sees either
//! no object or the whole one, never a torn write. Readers verify each chunk's
//! header and checksums and name the object they reject.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use solve2048_core::chunk::{self, ChunkHeader, FormatError};

/// Errors reading or writing the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location could not be opened or created.
    #[error("cannot open store {location}: {reason}")]
    Open {
        /// The location given.
        location: String,
        /// Why.
        reason: String,
    },
    /// A read failed.
    #[error("cannot read {object}: {source}")]
    Read {
        /// The object.
        object: String,
        /// The cause.
        source: object_store::Error,
    },
    /// A required object is missing.
    #[error("{object} is missing from the store")]
    Missing {
        /// The object.
        object: String,
    },
    /// A write failed.
    #[error("cannot write {object}: {source}")]
    Write {
        /// The object.
        object: String,
        /// The cause.
        source: object_store::Error,
    },
    /// An object failed verification.
    #[error("rejected {object}: {source}")]
    Rejected {
        /// The object.
        object: String,
        /// What was wrong.
        source: FormatError,
    },
}

/// A job's store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    location: String,
    written: Arc<AtomicU64>,
}

impl Store {
    /// Open a store: a local directory (created if needed) or a `file://` URL.
    pub fn open(location: &str) -> Result<Store, StoreError> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        if let Some((scheme, _)) = location.split_once("://") {
            if scheme != "file" {
                return Err(open_err(format!(
                    "the {scheme}:// scheme is not supported by this build; use a local directory"
                )));
            }
        }
        let dir = location.strip_prefix("file://").unwrap_or(location);
        let path = Path::new(dir);
        std::fs::create_dir_all(path).map_err(|e| open_err(e.to_string()))?;
        // Probe writability now, so an unwritable store fails before any work.
        let probe = path.join(".write-probe");
        std::fs::write(&probe, b"ok").map_err(|e| open_err(format!("not writable: {e}")))?;
        let _ = std::fs::remove_file(&probe);
        let fs = LocalFileSystem::new_with_prefix(path).map_err(|e| open_err(e.to_string()))?;
        Ok(Store {
            inner: Arc::new(fs),
            location: location.to_string(),
            written: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The location it was opened from.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The underlying object store.
    pub fn object_store(&self) -> Arc<dyn ObjectStore> {
        self.inner.clone()
    }

    /// Bytes written since the last call.
    pub fn take_bytes_written(&self) -> u64 {
        self.written.swap(0, Ordering::Relaxed)
    }

    /// Write a whole object atomically.
    pub async fn put(&self, object: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.written
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.inner
            .put(&ObjectPath::from(object), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|source| StoreError::Write {
                object: object.to_string(),
                source,
            })
    }

    /// Read a whole object, or `None` if it does not exist.
    pub async fn get(&self, object: &str) -> Result<Option<Bytes>, StoreError> {
        match self.inner.get(&ObjectPath::from(object)).await {
            Ok(r) => r
                .bytes()
                .await
                .map(Some)
                .map_err(|source| StoreError::Read {
                    object: object.to_string(),
                    source,
                }),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(StoreError::Read {
                object: object.to_string(),
                source,
            }),
        }
    }

    /// Read a whole object that must exist.
    pub async fn get_required(&self, object: &str) -> Result<Bytes, StoreError> {
        self.get(object).await?.ok_or_else(|| StoreError::Missing {
            object: object.to_string(),
        })
    }

    /// Delete an object (missing is fine).
    pub async fn delete(&self, object: &str) -> Result<(), StoreError> {
        match self.inner.delete(&ObjectPath::from(object)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(source) => Err(StoreError::Write {
                object: object.to_string(),
                source,
            }),
        }
    }

    /// Read an object and decode it with `decode`, naming the object if it
    /// is missing or rejected.
    async fn read_verified<T>(
        &self,
        object: &str,
        expect: &ChunkHeader,
        decode: fn(&[u8], &ChunkHeader) -> Result<T, FormatError>,
    ) -> Result<T, StoreError> {
        let bytes = self.get_required(object).await?;
        decode(&bytes, expect).map_err(|source| StoreError::Rejected {
            object: object.to_string(),
            source,
        })
    }

    /// Read and verify sorted keys (states or a run).
    pub async fn read_keys(
        &self,
        object: &str,
        expect: &ChunkHeader,
    ) -> Result<Vec<u64>, StoreError> {
        self.read_verified(object, expect, chunk::decode_keys).await
    }

    /// [`Store::read_keys`] taking owned arguments (for batches of reads).
    pub async fn read_keys_owned(
        &self,
        object: String,
        expect: ChunkHeader,
    ) -> Result<Vec<u64>, StoreError> {
        self.read_keys(&object, &expect).await
    }

    /// Read and verify values.
    pub async fn read_values(
        &self,
        object: &str,
        expect: &ChunkHeader,
    ) -> Result<Vec<f64>, StoreError> {
        self.read_verified(object, expect, chunk::decode_values)
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
}
