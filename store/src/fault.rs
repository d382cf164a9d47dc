//! Fault injection for tests: an [`ObjectStore`] that wraps another and
//! fails on cue. A test hands it to [`crate::Store::wrapped`] when it makes
//! the store; nothing in a running job switches it on.
//!
//! - [`FillsUp`]: a store that fills up, as a full disk or a used-up S3
//!   quota does: writes fail once a number of bytes went through it.

use std::fmt;
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result, UploadPart,
};

/// A store with room for `quota` bytes: each put, and each part of a
/// multipart upload, takes its bytes from what is left, or fails with an
/// [`io::ErrorKind::StorageFull`] cause ("No space left on device") and
/// writes nothing. Reads, lists and deletes pass through; deleting frees
/// no room. Clones of a [`crate::Store`] share their wrapper, so every
/// store made from one counts against the same quota.
#[derive(Debug)]
pub struct FillsUp {
    inner: Arc<dyn ObjectStore>,
    quota: u64,
    left: Arc<AtomicU64>,
}

impl FillsUp {
    /// `inner` with room for `quota` bytes more.
    pub fn new(inner: Arc<dyn ObjectStore>, quota: u64) -> FillsUp {
        FillsUp {
            inner,
            quota,
            left: Arc::new(AtomicU64::new(quota)),
        }
    }
}

impl fmt::Display for FillsUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FillsUp({} bytes, {})", self.quota, self.inner)
    }
}

/// Take `len` bytes of `left` (of `quota`), or fail as a full disk does.
fn take(left: &AtomicU64, quota: u64, len: u64) -> Result<()> {
    left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(len))
        .map(|_| ())
        .map_err(|_| object_store::Error::Generic {
            store: "FillsUp",
            source: Box::new(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("No space left on device (the test's quota of {quota} bytes is used up)"),
            )),
        })
}

#[async_trait]
impl ObjectStore for FillsUp {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        take(&self.left, self.quota, payload.content_length() as u64)?;
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        let upload = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(FillingUpload {
            upload,
            quota: self.quota,
            left: self.left.clone(),
        }))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

/// A multipart upload through [`FillsUp`]: each part takes its bytes.
#[derive(Debug)]
struct FillingUpload {
    upload: Box<dyn MultipartUpload>,
    quota: u64,
    left: Arc<AtomicU64>,
}

#[async_trait]
impl MultipartUpload for FillingUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        match take(&self.left, self.quota, data.content_length() as u64) {
            Ok(()) => self.upload.put_part(data),
            Err(e) => Box::pin(async move { Err(e) }),
        }
    }

    async fn complete(&mut self) -> Result<PutResult> {
        self.upload.complete().await
    }

    async fn abort(&mut self) -> Result<()> {
        self.upload.abort().await
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, WriteMultipart};

    use super::*;

    /// Whether `e` is, or is caused by, a full disk.
    fn is_full(e: &(dyn std::error::Error + 'static)) -> bool {
        let mut cause = Some(e);
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<io::Error>() {
                return io.kind() == io::ErrorKind::StorageFull;
            }
            cause = c.source();
        }
        false
    }

    #[tokio::test]
    async fn puts_fail_once_the_quota_is_used_and_write_nothing() {
        let memory = Arc::new(InMemory::new());
        let store = FillsUp::new(memory.clone(), 10);
        let (a, b, c) = (Path::from("a"), Path::from("b"), Path::from("c"));
        store.put(&a, vec![0u8; 6].into()).await.unwrap();
        let err = store.put(&b, vec![0u8; 5].into()).await.unwrap_err();
        assert!(is_full(&err), "{err}");
        assert!(err.to_string().contains("No space left on device"), "{err}");
        assert!(matches!(
            memory.head(&b).await,
            Err(object_store::Error::NotFound { .. })
        ));
        // What fits still does; reads pass through.
        store.put(&c, vec![1u8; 4].into()).await.unwrap();
        assert_eq!(store.get(&c).await.unwrap().bytes().await.unwrap().len(), 4);
        assert!(is_full(
            &store.put(&b, vec![0u8; 1].into()).await.unwrap_err()
        ));
    }

    #[tokio::test]
    async fn a_multipart_upload_fails_at_the_part_past_the_quota() {
        let memory = Arc::new(InMemory::new());
        let store = FillsUp::new(memory.clone(), 25);
        let path = Path::from("big");
        let mut writer =
            WriteMultipart::new_with_chunk_size(store.put_multipart(&path).await.unwrap(), 10);
        writer.put(Bytes::from(vec![7u8; 30]));
        let err = writer.finish().await.unwrap_err();
        assert!(is_full(&err), "{err}");
        assert!(matches!(
            memory.head(&path).await,
            Err(object_store::Error::NotFound { .. })
        ));
    }

    #[tokio::test]
    async fn a_store_made_with_it_names_the_object_and_counts_only_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().to_str().unwrap();
        let store = crate::Store::open(location, crate::Access::ReadWrite)
            .unwrap()
            .wrapped(|inner| Arc::new(FillsUp::new(inner, 8)));
        let other = store.with_own_counters();
        store.put("x/a.json", vec![0; 5]).await.unwrap();
        let err = other.put("x/b.json", vec![0; 5]).await.unwrap_err();
        assert!(
            matches!(&err, crate::StoreError::Write { object, .. } if object == "x/b.json"),
            "{err}"
        );
        let crate::StoreError::Write { error, .. } = &err else {
            unreachable!()
        };
        assert!(is_full(error), "{err}");
        assert_eq!(
            (store.take_bytes_written(), other.take_bytes_written()),
            (5, 0)
        );
        assert_eq!(store.list("x").await.unwrap(), ["x/a.json"]);
        assert_eq!(
            store.backend().local_root(),
            Some(dir.path().canonicalize().unwrap().as_path())
        );
    }
}
