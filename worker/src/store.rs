//! The object store behind a job: a local directory by default, or an
//! S3-compatible bucket (`s3://BUCKET/PREFIX`).
//!
//! Every write makes a complete object visible at once: the local backend
//! writes a temporary file and renames it into place; S3 puts (and multipart
//! uploads, on completion) are atomic. A reader sees either no object or the
//! whole one, never a torn write. Readers verify each chunk's header and
//! checksums and name the object they reject.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use object_store::aws::AmazonS3;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, RetryConfig, WriteMultipart};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use solve2048_core::chunk::{self, ChunkHeader, FormatError};

use crate::cache::{cacheable, ChunkCache};

/// Objects at least this large are uploaded in parts.
const MULTIPART_FROM: usize = 32 << 20;

/// Size of one uploaded part.
const PART_SIZE: usize = 16 << 20;

/// A local directory, created if needed and checked writable now, so an
/// unwritable store fails before any work.
fn open_local(dir: &str) -> Result<LocalFileSystem, String> {
    let path = Path::new(dir);
    std::fs::create_dir_all(path).map_err(|e| e.to_string())?;
    let probe = path.join(".write-probe");
    std::fs::write(&probe, b"ok").map_err(|e| format!("not writable: {e}"))?;
    let _ = std::fs::remove_file(&probe);
    LocalFileSystem::new_with_prefix(path).map_err(|e| e.to_string())
}

/// An S3 bucket (and prefix), from `BUCKET/PREFIX` and the `AWS_*`
/// environment. Transient errors (timeouts, 5xx, refused connections) are
/// retried with exponential backoff for up to five minutes per request, so a
/// server restart only pauses the job.
fn open_s3(rest: &str) -> Result<PrefixStore<AmazonS3>, String> {
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err("no bucket: use s3://BUCKET/PREFIX".into());
    }
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(15),
            base: 2.0,
        },
        max_retries: 40,
        retry_timeout: Duration::from_secs(300),
    };
    let s3 = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(retry)
        .build()
        // object_store's messages name settings, never secret values.
        .map_err(|e| e.to_string())?;
    Ok(PrefixStore::new(s3, prefix.trim_end_matches('/')))
}

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
    cache: Option<Arc<ChunkCache>>,
}

impl Store {
    /// Open a store: a local directory (created if needed), a `file://` URL,
    /// or `s3://BUCKET/PREFIX` configured the standard way from `AWS_*`
    /// variables (credentials, `AWS_REGION`, `AWS_ENDPOINT_URL`,
    /// `AWS_ALLOW_HTTP=true` for a local server,
    /// `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=false` for path-style addressing).
    pub fn open(location: &str) -> Result<Store, StoreError> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        let inner: Arc<dyn ObjectStore> = match location.split_once("://") {
            Some(("s3", rest)) => Arc::new(open_s3(rest).map_err(open_err)?),
            Some(("file", dir)) => Arc::new(open_local(dir).map_err(open_err)?),
            Some((scheme, _)) => {
                return Err(open_err(format!(
                    "the {scheme}:// scheme is not supported; use a local directory or s3://BUCKET/PREFIX"
                )))
            }
            None => Arc::new(open_local(location).map_err(open_err)?),
        };
        Ok(Store {
            inner,
            location: location.to_string(),
            written: Arc::new(AtomicU64::new(0)),
            cache: None,
        })
    }

    /// Keep fetched states and values chunks in `cache` as well.
    pub fn with_cache(mut self, cache: ChunkCache) -> Store {
        self.cache = Some(Arc::new(cache));
        self
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

    /// Write a whole object atomically: one put, or for a large object a
    /// multipart upload, which becomes visible only when it completes.
    pub async fn put(&self, object: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.written
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        let path = ObjectPath::from(object);
        let err = |source| StoreError::Write {
            object: object.to_string(),
            source,
        };
        if bytes.len() < MULTIPART_FROM {
            self.inner
                .put(&path, PutPayload::from(bytes))
                .await
                .map_err(err)?;
            return Ok(());
        }
        let upload = self.inner.put_multipart(&path).await.map_err(err)?;
        let mut parts = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
        parts.write(&bytes);
        parts.finish().await.map_err(err)?;
        Ok(())
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
        let cache = self.cache.as_ref().filter(|_| cacheable(object));
        if let Some(c) = cache {
            if let Some(bytes) = c.get(object) {
                match decode(&bytes, expect) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        tracing::warn!(object, error = %e, "damaged cache entry dropped");
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

    /// Read a keys object and verify its header and checksums, without
    /// decoding it: its bytes, for [`chunk::stream_keys`].
    pub async fn read_key_bytes_owned(
        &self,
        object: String,
        expect: ChunkHeader,
    ) -> Result<Vec<u8>, StoreError> {
        self.read_verified(&object, &expect, chunk::verified_bytes)
            .await
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
