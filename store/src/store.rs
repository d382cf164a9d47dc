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
//! On S3 every request is retried in one place ([`crate::s3`]); every request
//! and retry is counted ([`crate::requests`]), on local stores as well
//! (never retried).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};

use crate::backend::{self, Access, Backend};
use crate::cache::ChunkCache;
use crate::requests::{Counters, Op, RequestCounts};
use crate::s3::Attempt;
use crate::StoreError;

/// Objects a list page holds (S3's page size).
const LIST_PAGE: u64 = 1000;

/// Objects at least this large are uploaded in parts.
const MULTIPART_FROM: usize = 32 << 20;

/// Size of one uploaded part.
const PART_SIZE: usize = 16 << 20;

/// A job's store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<dyn ObjectStore>,
    pub(crate) location: String,
    pub(crate) backend: Backend,
    access: Access,
    written: Arc<AtomicU64>,
    read: Arc<AtomicU64>,
    pub(crate) requests: Arc<Counters>,
    pub(crate) cache: Option<Arc<ChunkCache>>,
}

impl Store {
    /// Open a store: a local directory (created if needed), a `file://` URL,
    /// or `s3://BUCKET/PREFIX` configured the standard way from `AWS_*`
    /// variables (credentials, `AWS_REGION`, `AWS_ENDPOINT_URL`,
    /// `AWS_ALLOW_HTTP=true` for a local server,
    /// `AWS_VIRTUAL_HOSTED_STYLE_REQUEST=false` for path-style addressing).
    pub fn open(location: &str, access: Access) -> Result<Store, StoreError> {
        let (backend, inner) = backend::open(location, access)?;
        Ok(Store {
            inner,
            location: location.to_string(),
            backend,
            access,
            written: Arc::new(AtomicU64::new(0)),
            read: Arc::new(AtomicU64::new(0)),
            requests: Arc::new(Counters::default()),
            cache: None,
        })
    }

    /// The same store with every request going through `wrap(inner)`: how a
    /// test injects faults (see [`crate::fault`]), given when the store is
    /// made. The backend stays what it was opened as.
    pub fn wrapped(
        mut self,
        wrap: impl FnOnce(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore>,
    ) -> Store {
        self.inner = wrap(self.inner);
        self
    }

    /// The same store with counters of its own: what one task reads and
    /// writes, counted apart from the others running at the same time.
    pub fn with_own_counters(&self) -> Store {
        Store {
            written: Arc::new(AtomicU64::new(0)),
            read: Arc::new(AtomicU64::new(0)),
            requests: Arc::new(Counters::default()),
            ..self.clone()
        }
    }

    /// Keep fetched states, values and policy chunks in `cache` as well.
    pub fn with_cache(mut self, cache: ChunkCache) -> Store {
        self.cache = Some(Arc::new(cache));
        self
    }

    /// The location it was opened from.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// What it is: a local directory or a bucket.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The location as another process opens it, on this machine or
    /// another: a local directory's absolute path, or the bucket's URL.
    pub fn shared_location(&self) -> String {
        match &self.backend {
            Backend::Local { root } => root.to_string_lossy().into_owned(),
            Backend::S3 { .. } => self.location.clone(),
        }
    }

    /// Bytes written since the last call.
    pub fn take_bytes_written(&self) -> u64 {
        self.written.swap(0, Ordering::Relaxed)
    }

    /// Bytes read from the store (not from the cache) since the last call.
    pub fn take_bytes_read(&self) -> u64 {
        self.read.swap(0, Ordering::Relaxed)
    }

    /// Requests made (and retried) since the last call.
    pub fn take_requests(&self) -> RequestCounts {
        self.requests.take()
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
    /// multipart upload, which becomes visible only when it completes. Its
    /// bytes count as written once it is.
    pub async fn put(&self, object: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.writable(object)?;
        let len = bytes.len() as u64;
        self.put_whole(object, bytes).await?;
        self.written.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// [`Store::put`]'s write, retried.
    async fn put_whole(&self, object: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let path = ObjectPath::from(object);
        let bytes = Bytes::from(bytes);
        let name = |error| StoreError::Write {
            object: object.to_string(),
            error,
        };
        if bytes.len() < MULTIPART_FROM {
            return self
                .retrying(Op::Put, object, || async {
                    self.inner
                        .put(&path, PutPayload::from(bytes.clone()))
                        .await
                        .map(|_| ())
                        .map_err(Attempt::answer)
                })
                .await
                .map_err(|f| f.or(name));
        }
        // The create, each part and the completion: one request each, an
        // attempt being the whole upload again.
        let parts = bytes.len().div_ceil(PART_SIZE) as u64;
        self.retrying(Op::Put, object, || async {
            self.requests.request(Op::Put, parts + 1);
            let upload = self
                .inner
                .put_multipart(&path)
                .await
                .map_err(Attempt::answer)?;
            let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
            writer.put(bytes.clone());
            writer.finish().await.map(|_| ()).map_err(Attempt::answer)
        })
        .await
        .map_err(|f| f.or(name))
    }

    /// Read a whole object, or `None` if it does not exist.
    pub async fn get(&self, object: &str) -> Result<Option<Bytes>, StoreError> {
        self.fetch(object, None).await
    }

    /// Read bytes `[offset, offset + len)` of an object that must exist.
    pub async fn get_range(
        &self,
        object: &str,
        offset: u64,
        len: u64,
    ) -> Result<Bytes, StoreError> {
        let range = GetRange::Bounded(offset..offset + len);
        self.fetch(object, Some(range))
            .await?
            .ok_or_else(|| StoreError::Missing {
                object: object.to_string(),
            })
    }

    /// Read `range` of an object (all of it for None), or `None` if it does
    /// not exist; a body shorter than announced is retried, never returned.
    async fn fetch(
        &self,
        object: &str,
        range: Option<GetRange>,
    ) -> Result<Option<Bytes>, StoreError> {
        let path = ObjectPath::from(object);
        let got = self
            .retrying(Op::Get, object, || async {
                let options = GetOptions {
                    range: range.clone(),
                    ..GetOptions::default()
                };
                let r = match self.inner.get_opts(&path, options).await {
                    Ok(r) => r,
                    Err(object_store::Error::NotFound { .. }) => return Ok(None),
                    Err(e) => return Err(Attempt::answer(e)),
                };
                let expected = r.range.end - r.range.start;
                let bytes = r.bytes().await.map_err(Attempt::body)?;
                if bytes.len() as u64 != expected {
                    return Err(Attempt::short(bytes.len() as u64, expected));
                }
                Ok(Some(bytes))
            })
            .await
            .map_err(|f| {
                f.or(|error| StoreError::Read {
                    object: object.to_string(),
                    error,
                })
            })?;
        if let Some(bytes) = &got {
            self.read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        Ok(got)
    }

    /// Read a whole object that must exist.
    pub async fn get_required(&self, object: &str) -> Result<Bytes, StoreError> {
        self.get(object).await?.ok_or_else(|| StoreError::Missing {
            object: object.to_string(),
        })
    }

    /// Delete an object (missing is fine; deleting is idempotent, so it is
    /// retried like the other requests).
    pub async fn delete(&self, object: &str) -> Result<(), StoreError> {
        self.writable(object)?;
        let path = ObjectPath::from(object);
        self.retrying(Op::Delete, object, || async {
            match self.inner.delete(&path).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(Attempt::answer(e)),
            }
        })
        .await
        .map_err(|f| {
            f.or(|error| StoreError::Write {
                object: object.to_string(),
                error,
            })
        })
    }

    /// Every object under `prefix` (None: the whole store): one list
    /// request a page.
    async fn list_metas(
        &self,
        prefix: Option<&ObjectPath>,
        shown: &str,
    ) -> Result<Vec<object_store::ObjectMeta>, StoreError> {
        let object = format!("{shown}/");
        self.retrying(Op::List, &object, || async {
            let metas: Vec<_> = self
                .inner
                .list(prefix)
                .try_collect()
                .await
                .map_err(Attempt::answer)?;
            self.requests
                .request(Op::List, metas.len() as u64 / LIST_PAGE);
            Ok(metas)
        })
        .await
        .map_err(|f| {
            f.or(|error| StoreError::Read {
                object: object.clone(),
                error,
            })
        })
    }

    /// Names of the objects under `prefix` (a folder such as `layers`).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let metas = self
            .list_metas(Some(&ObjectPath::from(prefix)), prefix)
            .await?;
        Ok(metas.into_iter().map(|m| m.location.to_string()).collect())
    }

    /// Every object under `prefix` (`""`: the whole store) with its size in
    /// bytes.
    pub async fn list_sizes(&self, prefix: &str) -> Result<Vec<(String, u64)>, StoreError> {
        let path = (!prefix.is_empty()).then(|| ObjectPath::from(prefix));
        let metas = self.list_metas(path.as_ref(), prefix).await?;
        Ok(metas
            .into_iter()
            .map(|m| (m.location.to_string(), m.size))
            .collect())
    }

    /// Whether `object` exists.
    pub async fn exists(&self, object: &str) -> Result<bool, StoreError> {
        let path = ObjectPath::from(object);
        self.retrying(Op::Head, object, || async {
            match self.inner.head(&path).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::NotFound { .. }) => Ok(false),
                Err(e) => Err(Attempt::answer(e)),
            }
        })
        .await
        .map_err(|f| {
            f.or(|error| StoreError::Read {
                object: object.to_string(),
                error,
            })
        })
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

    /// Remove the files a local store holds under `prefix` that are not
    /// objects in `keep`, and the folders left empty (a bucket holds
    /// neither). Deleting an object leaves its folders behind, and a write
    /// a killed process left unfinished leaves a staging file that is no
    /// object. Which names the object store gives its staging files is its
    /// own business: for when nothing writes under `prefix` any more and
    /// every object there that is not in `keep` was deleted, every other
    /// file there is a leftover, whatever its name. Best effort.
    pub fn remove_local_leftovers(&self, prefix: &str, keep: &BTreeSet<String>) {
        let Some(root) = self.backend.local_root() else {
            return;
        };
        prune(root, &root.join(prefix), keep);
    }
}

/// Remove the files under `dir` that are not the objects `keep` (names
/// relative to `root`, `/`-separated), and the folders left empty; whether
/// `dir` itself was removed.
fn prune(root: &Path, dir: &Path, keep: &BTreeSet<String>) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut empty = true;
    for e in entries.flatten() {
        let path = e.path();
        empty &= if path.is_dir() {
            prune(root, &path, keep)
        } else {
            !is_kept(root, &path, keep) && std::fs::remove_file(&path).is_ok()
        };
    }
    empty && std::fs::remove_dir(dir).is_ok()
}

/// Whether the file `path` under `root` is one of the objects `keep`.
fn is_kept(root: &Path, path: &Path, keep: &BTreeSet<String>) -> bool {
    let Ok(relative) = path.strip_prefix(root) else {
        return true;
    };
    let parts: Option<Vec<&str>> = relative.iter().map(|p| p.to_str()).collect();
    // A name that is no UTF-8 is no object of ours.
    parts.is_some_and(|p| keep.contains(&p.join("/")))
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
        assert!(matches!(err, StoreError::Absent { .. }), "{err}");
        assert!(err.to_string().contains("does not exist"), "{err}");
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
    async fn empty_folders_and_files_that_are_no_kept_object_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap(), Access::ReadWrite).unwrap();
        store.put("runs/s1/g1/x.run", b"x".to_vec()).await.unwrap();
        store.put("runs/s2/g1/y.run", b"y".to_vec()).await.unwrap();
        store.put("other/o.json", b"o".to_vec()).await.unwrap();
        store.delete("runs/s1/g1/x.run").await.unwrap();
        // What writes killed before their rename leave, whatever the object
        // store names its staging files: no object.
        let leftovers = ["runs/s2/g1/y.run#3", "runs/s2/g1/.y.run.tmp", "runs/s2/a#b"];
        for name in leftovers {
            std::fs::write(dir.path().join(name), b"z").unwrap();
        }
        let keep = BTreeSet::from(["runs/s2/g1/y.run".to_string()]);
        store.remove_local_leftovers("runs", &keep);
        assert!(!dir.path().join("runs/s1").exists());
        for name in leftovers {
            assert!(!dir.path().join(name).exists(), "{name}");
        }
        assert_eq!(store.list("runs").await.unwrap(), ["runs/s2/g1/y.run"]);
        assert!(
            dir.path().join("other/o.json").exists(),
            "not under the prefix"
        );
        store.delete("runs/s2/g1/y.run").await.unwrap();
        store.remove_local_leftovers("runs", &BTreeSet::new());
        assert!(!dir.path().join("runs").exists());
    }

    #[test]
    fn the_backend_is_chosen_once_from_the_location() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let url = format!("file://{}", dir.path().display());
        for location in [dir.path().to_str().unwrap(), &url] {
            let store = Store::open(location, Access::ReadOnly).unwrap();
            assert_eq!(store.backend(), &Backend::Local { root: root.clone() });
            assert_eq!(store.shared_location(), root.to_str().unwrap());
            assert_eq!(store.location(), location);
        }
        let err = Store::open("gs://bucket/x", Access::ReadOnly)
            .err()
            .unwrap();
        assert!(
            matches!(&err, StoreError::Open { cause: crate::Unopenable::Scheme(s), .. } if s == "gs"),
            "{err}"
        );
    }
}
