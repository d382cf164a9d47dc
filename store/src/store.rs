//! The object store behind a job: a local directory by default, or an
//! S3-compatible bucket (`s3://BUCKET/PREFIX`). Both sides of a job (the
//! coordinator's records and the workers' chunks) and every reader of a
//! solution go through [`Store`].
//!
//! Every write makes a complete object visible at once: the local backend
//! writes a temporary file and renames it into place; S3 puts (and multipart
//! uploads, on completion) are atomic. A reader sees either no object or the
//! whole one, never a torn write. Readers verify each chunk's header and
//! checksums and name the object they reject.
//!
//! Retries: object_store retries S3 gets, lists and puts through transient
//! errors (timeouts, 5xx, refused or reset connections) for up to five
//! minutes, but not deletes (S3's DELETE is not flagged idempotent there);
//! deleting is idempotent here, so [`Store::delete`] retries itself for the
//! same five minutes.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::aws::AmazonS3;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, RetryConfig, WriteMultipart};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use solve2048_core::chunk::FormatError;

use crate::cache::ChunkCache;

/// How long a failing delete is retried before the error stands.
const DELETE_RETRY_FOR: Duration = Duration::from_secs(300);

/// Objects at least this large are uploaded in parts.
const MULTIPART_FROM: usize = 32 << 20;

/// Size of one uploaded part.
const PART_SIZE: usize = 16 << 20;

/// A test hook that makes a store fill up: with `SOLVE2048_TEST_STORE_QUOTA`
/// set to a number of bytes, this process's puts fail, as on a full disk or
/// an S3 quota, once it has written that many bytes to stores (every store
/// it opened, together). Tests use it where a small filesystem cannot be
/// mounted.
mod quota {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;

    use super::StoreError;

    /// The variable.
    pub const VAR: &str = "SOLVE2048_TEST_STORE_QUOTA";

    fn left() -> Option<&'static AtomicU64> {
        static LEFT: OnceLock<Option<AtomicU64>> = OnceLock::new();
        LEFT.get_or_init(|| {
            std::env::var(VAR)
                .ok()
                .and_then(|v| v.parse().ok())
                .map(AtomicU64::new)
        })
        .as_ref()
    }

    /// Take `len` bytes of the quota for a put of `object`, or fail it.
    pub fn take(object: &str, len: u64) -> Result<(), StoreError> {
        let Some(left) = left() else { return Ok(()) };
        let taken = left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(len));
        taken.map(|_| ()).map_err(|_| StoreError::Write {
            object: object.to_string(),
            source: object_store::Error::Generic {
                store: "quota",
                source: Box::new(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    format!("No space left on device (the {VAR} test quota is used up)"),
                )),
            },
        })
    }
}

/// Whether a store is opened to be written or only read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A job's store: a local directory is created if needed and checked
    /// writable now, so an unwritable store fails before any work.
    ReadWrite,
    /// A store that must exist, opened only to be read (a solved store on a
    /// read-only share, or another user's): nothing is created or probed,
    /// and a write is refused.
    ReadOnly,
}

/// A local directory opened for `access`.
fn open_local(dir: &str, access: Access) -> Result<LocalFileSystem, String> {
    let path = Path::new(dir);
    match access {
        Access::ReadWrite => {
            std::fs::create_dir_all(path).map_err(|e| e.to_string())?;
            let probe = path.join(".write-probe");
            std::fs::write(&probe, b"ok").map_err(|e| format!("not writable: {e}"))?;
            let _ = std::fs::remove_file(&probe);
        }
        Access::ReadOnly => {
            if !path.is_dir() {
                return Err("no such directory".into());
            }
        }
    }
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
    /// A JSON record that does not parse.
    #[error("record {object} is damaged: {reason}")]
    Damaged {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// A write to a store opened read-only.
    #[error("cannot write {object}: store {location} is opened read-only")]
    ReadOnly {
        /// The object.
        object: String,
        /// The store.
        location: String,
    },
}

/// A job's store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    location: String,
    access: Access,
    written: Arc<AtomicU64>,
    read: Arc<AtomicU64>,
    pub(crate) cache: Option<Arc<ChunkCache>>,
}

impl Store {
    /// Open a store: a local directory (created if needed), a `file://` URL,
    /// or `s3://BUCKET/PREFIX` configured the standard way from `AWS_*`
    /// variables (credentials, `AWS_REGION`, `AWS_ENDPOINT_URL`,
    /// `AWS_ALLOW_HTTP=true` for a local server,
    /// `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=false` for path-style addressing).
    pub fn open(location: &str, access: Access) -> Result<Store, StoreError> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        let inner: Arc<dyn ObjectStore> = match location.split_once("://") {
            Some(("s3", rest)) => Arc::new(open_s3(rest).map_err(open_err)?),
            Some(("file", dir)) => Arc::new(open_local(dir, access).map_err(open_err)?),
            Some((scheme, _)) => {
                return Err(open_err(format!(
                    "the {scheme}:// scheme is not supported; use a local directory or s3://BUCKET/PREFIX"
                )))
            }
            None => Arc::new(open_local(location, access).map_err(open_err)?),
        };
        Ok(Store {
            inner,
            location: location.to_string(),
            access,
            written: Arc::new(AtomicU64::new(0)),
            read: Arc::new(AtomicU64::new(0)),
            cache: None,
        })
    }

    /// The same store with counters of its own: what one task reads and
    /// writes, counted apart from the others running at the same time.
    pub fn with_own_counters(&self) -> Store {
        Store {
            written: Arc::new(AtomicU64::new(0)),
            read: Arc::new(AtomicU64::new(0)),
            ..self.clone()
        }
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

    /// Whether it is a local directory (not a bucket).
    pub fn is_local(&self) -> bool {
        !self.location.contains("://") || self.location.starts_with("file://")
    }

    /// Bytes written since the last call.
    pub fn take_bytes_written(&self) -> u64 {
        self.written.swap(0, Ordering::Relaxed)
    }

    /// Bytes read from the store (not from the cache) since the last call.
    pub fn take_bytes_read(&self) -> u64 {
        self.read.swap(0, Ordering::Relaxed)
    }

    fn writable(&self, object: &str) -> Result<(), StoreError> {
        match self.access {
            Access::ReadWrite => Ok(()),
            Access::ReadOnly => Err(StoreError::ReadOnly {
                object: object.to_string(),
                location: self.location.clone(),
            }),
        }
    }

    /// Write a whole object atomically: one put, or for a large object a
    /// multipart upload, which becomes visible only when it completes.
    pub async fn put(&self, object: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.writable(object)?;
        quota::take(object, bytes.len() as u64)?;
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
            Ok(r) => {
                let bytes = r.bytes().await.map_err(|source| StoreError::Read {
                    object: object.to_string(),
                    source,
                })?;
                self.read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                Ok(Some(bytes))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(StoreError::Read {
                object: object.to_string(),
                source,
            }),
        }
    }

    /// Read bytes `[offset, offset + len)` of an object that must exist.
    pub async fn get_range(
        &self,
        object: &str,
        offset: u64,
        len: u64,
    ) -> Result<Bytes, StoreError> {
        let path = ObjectPath::from(object);
        match self.inner.get_range(&path, offset..offset + len).await {
            Ok(bytes) => {
                self.read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                Ok(bytes)
            }
            Err(object_store::Error::NotFound { .. }) => Err(StoreError::Missing {
                object: object.to_string(),
            }),
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

    /// Delete an object (missing is fine), retrying failures for up to
    /// [`DELETE_RETRY_FOR`] (see the module docs).
    pub async fn delete(&self, object: &str) -> Result<(), StoreError> {
        self.writable(object)?;
        let start = std::time::Instant::now();
        let mut backoff = Duration::from_millis(200);
        loop {
            match self.inner.delete(&ObjectPath::from(object)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => return Ok(()),
                Err(e) if start.elapsed() < DELETE_RETRY_FOR => {
                    tracing::warn!(object, error = %e, ?backoff, "delete failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(15));
                }
                Err(source) => {
                    return Err(StoreError::Write {
                        object: object.to_string(),
                        source,
                    })
                }
            }
        }
    }

    /// Names of the objects under `prefix` (a folder such as `layers`).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let metas: Vec<_> = self
            .inner
            .list(Some(&ObjectPath::from(prefix)))
            .try_collect()
            .await
            .map_err(|source| StoreError::Read {
                object: format!("{prefix}/"),
                source,
            })?;
        Ok(metas.into_iter().map(|m| m.location.to_string()).collect())
    }

    /// Every object under `prefix` (`""`: the whole store) with its size in
    /// bytes.
    pub async fn list_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let path = (!prefix.is_empty()).then(|| ObjectPath::from(prefix));
        let metas: Vec<_> =
            self.inner
                .list(path.as_ref())
                .try_collect()
                .await
                .map_err(|source| StoreError::Read {
                    object: format!("{prefix}/"),
                    source,
                })?;
        Ok(metas
            .into_iter()
            .map(|m| (m.location.to_string(), m.size))
            .collect())
    }

    /// Whether `object` exists.
    pub async fn exists(&self, object: &str) -> Result<bool, StoreError> {
        match self.inner.head(&ObjectPath::from(object)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(source) => Err(StoreError::Read {
                object: object.to_string(),
                source,
            }),
        }
    }

    /// Set `object` aside: its bytes go to `quarantine/<object>`, the reason
    /// to `quarantine/<object>.reason.txt`, and the object is deleted. A
    /// missing object gets its reason only.
    pub async fn quarantine(&self, object: &str, reason: &str) -> Result<(), StoreError> {
        let aside = format!("{}/{object}", crate::layout::QUARANTINE);
        if let Some(bytes) = self.get(object).await? {
            self.put(&aside, bytes.to_vec()).await?;
        }
        self.put(
            &format!("{aside}.reason.txt"),
            format!("{reason}\n").into_bytes(),
        )
        .await?;
        self.delete(object).await
    }

    /// Remove the empty folders a local store keeps under `prefix` once its
    /// objects are deleted (a bucket has no folders). Best effort.
    pub fn remove_empty_folders(&self, prefix: &str) {
        let Some(root) = self.local_root() else {
            return;
        };
        fn prune(dir: &Path) -> bool {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return false;
            };
            let mut empty = true;
            for e in entries.flatten() {
                let path = e.path();
                empty &= path.is_dir() && prune(&path);
            }
            empty && std::fs::remove_dir(dir).is_ok()
        }
        prune(&root.join(prefix));
    }

    fn local_root(&self) -> Option<std::path::PathBuf> {
        self.is_local()
            .then(|| {
                self.location
                    .strip_prefix("file://")
                    .unwrap_or(&self.location)
            })
            .map(std::path::PathBuf::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_read_only_store_reads_and_refuses_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        let location = root.to_str().unwrap();
        let rw = Store::open(location, Access::ReadWrite).unwrap();
        rw.put_json("a/b.json", &vec![1, 2, 3]).await.unwrap();
        let before: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();

        let ro = Store::open(location, Access::ReadOnly).unwrap();
        assert_eq!(
            ro.get_json::<Vec<u32>>("a/b.json").await.unwrap(),
            [1, 2, 3]
        );
        assert!(ro.get("a/missing.json").await.unwrap().is_none());
        assert_eq!(ro.list("a").await.unwrap(), ["a/b.json"]);
        let err = ro.put("a/c.json", b"{}".to_vec()).await.unwrap_err();
        assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
        assert!(err.to_string().contains("read-only"), "{err}");
        assert!(matches!(
            ro.delete("a/b.json").await,
            Err(StoreError::ReadOnly { .. })
        ));
        // Opening and reading created nothing (no write probe).
        let after: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(before, after);
        // A missing directory is an error, not created.
        let missing = dir.path().join("nothing-here");
        let err = Store::open(missing.to_str().unwrap(), Access::ReadOnly)
            .err()
            .unwrap();
        assert!(err.to_string().contains("no such directory"), "{err}");
        assert!(!missing.exists());
    }

    #[tokio::test]
    async fn damaged_records_and_missing_objects_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), Access::ReadWrite).unwrap();
        store.put("r.json", b"{not json".to_vec()).await.unwrap();
        let err = store.get_json::<Vec<u32>>("r.json").await.unwrap_err();
        assert!(
            matches!(err, StoreError::Damaged { ref object, .. } if object == "r.json"),
            "{err}"
        );
        let err = store.get_json::<Vec<u32>>("none.json").await.unwrap_err();
        assert!(
            matches!(err, StoreError::Missing { ref object } if object == "none.json"),
            "{err}"
        );
        assert_eq!(store.take_bytes_read(), 9);
    }

    #[tokio::test]
    async fn empty_folders_are_removed_and_full_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), Access::ReadWrite).unwrap();
        store.put("runs/s1/g1/x.run", b"x".to_vec()).await.unwrap();
        store.put("runs/s2/g1/y.run", b"y".to_vec()).await.unwrap();
        store.delete("runs/s1/g1/x.run").await.unwrap();
        store.remove_empty_folders("runs");
        assert!(!dir.path().join("runs/s1").exists());
        assert!(dir.path().join("runs/s2/g1/y.run").exists());
        store.delete("runs/s2/g1/y.run").await.unwrap();
        store.remove_empty_folders("runs");
        assert!(!dir.path().join("runs").exists());
    }
}
