//! A local directory's object store: [`LocalFileSystem`], with its small
//! requests made where they are asked.
//!
//! `LocalFileSystem` hands every request to tokio's blocking pool: a wake of
//! a parked thread there and of the asking task on its way back, tens of
//! microseconds of core time in switches for a read or a write of a few
//! kilobytes that takes a few. A game of many small tasks (3x3 to 1024
//! makes 6,762) spent more of its core time on those switches than on its
//! file operations. [`InPlace`] makes the reads, whole writes and deletes of
//! objects up to [`IN_PLACE_UP_TO`] bytes on the asking thread, as the same
//! file operations `LocalFileSystem` makes (a write goes to a staging file
//! beside the object, `OBJECT#N`, renamed over it), and hands everything
//! else to `LocalFileSystem`. Each request made in place then yields to the
//! runtime once, as one on the pool did: the asking task's other work and
//! its deadline (a web request's timeout) are looked at between requests.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path as FsPath, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, Error, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    RenameOptions, Result,
};

/// The largest object read or written in place: at most about a
/// millisecond of copying, so a runtime thread never waits long on a disk.
pub const IN_PLACE_UP_TO: u64 = 1 << 20;

/// The name [`InPlace`] gives its errors' store.
const STORE: &str = "InPlace";

/// [`LocalFileSystem`], with small reads, writes and deletes made in place.
#[derive(Debug)]
pub struct InPlace {
    files: LocalFileSystem,
}

impl InPlace {
    /// `files`, with its small requests made in place.
    pub fn new(files: LocalFileSystem) -> InPlace {
        InPlace { files }
    }
}

impl fmt::Display for InPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InPlace({})", self.files)
    }
}

/// An I/O error of `path` as the object store's error: not found, or
/// generic with an I/O error of the same kind naming the path as its
/// source (a full disk stays `StorageFull`, as `LocalFileSystem`'s does).
fn io_error(path: &FsPath, source: io::Error) -> Error {
    match source.kind() {
        ErrorKind::NotFound => Error::NotFound {
            path: path.display().to_string(),
            source: Box::new(source),
        },
        kind => Error::Generic {
            store: STORE,
            source: Box::new(io::Error::new(
                kind,
                format!("{}: {source}", path.display()),
            )),
        },
    }
}

/// Write `payload` to a staging file beside `path` (`PATH#N`, the first N
/// free, making the folders it needs) and rename it over `path`: a reader
/// sees the old object or the new one, never part of one.
fn put_in_place(path: &FsPath, payload: &PutPayload) -> io::Result<()> {
    let (mut file, staging) = staging_file(path)?;
    let written = payload
        .iter()
        .try_for_each(|part| file.write_all(part))
        .and_then(|()| std::fs::rename(&staging, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    written
}

/// A new staging file for `path`, and its name.
fn staging_file(path: &FsPath) -> io::Result<(File, PathBuf)> {
    let mut n = 1u64;
    loop {
        let mut name = path.as_os_str().to_owned();
        name.push(format!("#{n}"));
        let staging = PathBuf::from(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&staging)
        {
            Ok(file) => return Ok((file, staging)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => n += 1,
            Err(e) if e.kind() == ErrorKind::NotFound => match path.parent() {
                Some(folder) => std::fs::create_dir_all(folder)?,
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
}

/// Bytes `range` of `file`, read whole.
fn read_range(file: &File, range: &Range<u64>) -> io::Result<Bytes> {
    let mut bytes = vec![0u8; (range.end - range.start) as usize];
    file.read_exact_at(&mut bytes, range.start)?;
    Ok(Bytes::from(bytes))
}

#[async_trait]
impl ObjectStore for InPlace {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        let plain = matches!(opts.mode, PutMode::Overwrite) && opts.attributes.is_empty();
        if !plain || payload.content_length() as u64 > IN_PLACE_UP_TO {
            return self.files.put_opts(location, payload, opts).await;
        }
        let path = self.files.path_to_filesystem(location)?;
        put_in_place(&path, &payload).map_err(|e| io_error(&path, e))?;
        tokio::task::yield_now().await;
        Ok(PutResult {
            e_tag: None,
            version: None,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.files.put_multipart_opts(location, opts).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let path = self.files.path_to_filesystem(location)?;
        let file = File::open(&path).map_err(|e| io_error(&path, e))?;
        let metadata = file.metadata().map_err(|e| io_error(&path, e))?;
        if metadata.is_dir() {
            let source = io::Error::new(ErrorKind::NotFound, "is a folder");
            return Err(io_error(&path, source));
        }
        let meta = ObjectMeta {
            location: location.clone(),
            last_modified: metadata.modified().map_err(|e| io_error(&path, e))?.into(),
            size: metadata.len(),
            e_tag: None,
            version: None,
        };
        options.check_preconditions(&meta)?;
        let range = match &options.range {
            Some(r) => r.as_range(meta.size).map_err(|e| Error::Generic {
                store: STORE,
                source: Box::new(e),
            })?,
            None => 0..meta.size,
        };
        let payload = if options.head {
            GetResultPayload::Stream(futures::stream::empty().boxed())
        } else if range.end - range.start > IN_PLACE_UP_TO {
            // Read on the blocking pool by `GetResult::bytes`.
            GetResultPayload::File(file, path)
        } else {
            let bytes = read_range(&file, &range).map_err(|e| io_error(&path, e))?;
            GetResultPayload::Stream(futures::stream::once(async { Ok(bytes) }).boxed())
        };
        tokio::task::yield_now().await;
        Ok(GetResult {
            payload,
            meta,
            range,
            attributes: Default::default(),
            extensions: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        let files = self.files.clone();
        locations
            .then(move |location| {
                let deleted = location.and_then(|location| {
                    let path = files.path_to_filesystem(&location)?;
                    std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
                    Ok(location)
                });
                async {
                    tokio::task::yield_now().await;
                    deleted
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        self.files.list(prefix)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        self.files.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.files.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        self.files.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::{GetRange, ObjectStoreExt};

    fn stores(dir: &FsPath) -> (InPlace, LocalFileSystem) {
        let files = LocalFileSystem::new_with_prefix(dir).unwrap();
        (InPlace::new(files.clone()), files)
    }

    async fn get(store: &dyn ObjectStore, name: &str, range: Option<GetRange>) -> Result<Bytes> {
        let options = GetOptions {
            range,
            ..GetOptions::default()
        };
        store
            .get_opts(&Path::from(name), options)
            .await?
            .bytes()
            .await
    }

    /// Small and large objects, whole and in ranges: what one writes the
    /// other reads, and missing objects are `NotFound` to both.
    #[tokio::test]
    async fn it_reads_and_writes_what_local_file_system_does() {
        let dir = tempfile::tempdir().unwrap();
        let (in_place, files) = stores(dir.path());
        let big = IN_PLACE_UP_TO as usize + 3;
        for (name, len) in [("a/b/small", 1000), ("c/big", big), ("empty", 0)] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            for (writer, reader) in [
                (&in_place as &dyn ObjectStore, &files as &dyn ObjectStore),
                (&files, &in_place),
            ] {
                writer
                    .put(&Path::from(name), bytes.clone().into())
                    .await
                    .unwrap();
                assert_eq!(get(reader, name, None).await.unwrap(), bytes, "{name}");
                if len > 10 {
                    let part = get(reader, name, Some(GetRange::Bounded(3..len as u64 - 2)));
                    assert_eq!(part.await.unwrap(), bytes[3..len - 2], "{name}");
                }
                let head = reader.head(&Path::from(name)).await.unwrap();
                assert_eq!(head.size, len as u64);
            }
        }
        // Nothing but the objects: no staging file left.
        let mut names: Vec<_> = (files.list(None).map(|m| m.unwrap().location.to_string()))
            .collect()
            .await;
        names.sort();
        assert_eq!(names, ["a/b/small", "c/big", "empty"]);
        for store in [&in_place as &dyn ObjectStore, &files] {
            let err = get(store, "a/none", None).await.unwrap_err();
            assert!(matches!(err, Error::NotFound { .. }), "{err}");
            let err = get(store, "a/b", None).await.unwrap_err();
            assert!(matches!(err, Error::NotFound { .. }), "a folder: {err}");
        }
        let err = get(&in_place, "a/b/small", Some(GetRange::Bounded(2000..2001)));
        assert!(!matches!(err.await.unwrap_err(), Error::NotFound { .. }));
    }

    /// A failed file operation keeps its kind and names its path.
    #[test]
    fn io_errors_keep_their_kind_and_name_the_path() {
        let path = FsPath::new("/store/a/b");
        let full = io::Error::new(ErrorKind::StorageFull, "No space left on device");
        let err = io_error(path, full);
        let Error::Generic { source, .. } = &err else {
            panic!("{err}");
        };
        let io = source.downcast_ref::<io::Error>().expect("an I/O error");
        assert_eq!(io.kind(), ErrorKind::StorageFull);
        assert!(
            err.to_string()
                .contains("/store/a/b: No space left on device"),
            "{err}"
        );
        let gone = io_error(path, io::Error::from(ErrorKind::NotFound));
        assert!(matches!(gone, Error::NotFound { ref path, .. } if path == "/store/a/b"));
    }

    #[tokio::test]
    async fn deletes_are_local_file_systems() {
        let dir = tempfile::tempdir().unwrap();
        let (in_place, _) = stores(dir.path());
        let name = Path::from("x/y");
        in_place.put(&name, vec![1u8; 10].into()).await.unwrap();
        in_place.delete(&name).await.unwrap();
        assert!(!dir.path().join("x/y").exists());
        let err = in_place.delete(&name).await.unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
    }

    /// A request made in place yields to the runtime once before it
    /// answers, so that a deadline set around it is looked at.
    #[tokio::test]
    async fn requests_made_in_place_yield_once() {
        let dir = tempfile::tempdir().unwrap();
        let (in_place, _) = stores(dir.path());
        let name = Path::from("y");
        let mut put = std::pin::pin!(in_place.put(&name, b"1".to_vec().into()));
        assert!(futures::poll!(put.as_mut()).is_pending());
        put.await.unwrap();
        let mut got = std::pin::pin!(in_place.get(&name));
        assert!(futures::poll!(got.as_mut()).is_pending());
        assert_eq!(got.await.unwrap().bytes().await.unwrap(), &b"1"[..]);
        let mut deleted = std::pin::pin!(in_place.delete(&name));
        assert!(futures::poll!(deleted.as_mut()).is_pending());
        deleted.await.unwrap();
    }

    /// A staging file a killed write left behind does not stop the next
    /// write of its object, and stays for the sweep to remove.
    #[tokio::test]
    async fn a_leftover_staging_file_is_stepped_over() {
        let dir = tempfile::tempdir().unwrap();
        let (in_place, _) = stores(dir.path());
        std::fs::create_dir_all(dir.path().join("r")).unwrap();
        std::fs::write(dir.path().join("r/o#1"), b"torn").unwrap();
        in_place
            .put(&Path::from("r/o"), b"whole".to_vec().into())
            .await
            .unwrap();
        assert_eq!(std::fs::read(dir.path().join("r/o")).unwrap(), b"whole");
        assert_eq!(std::fs::read(dir.path().join("r/o#1")).unwrap(), b"torn");
        assert!(!dir.path().join("r/o#2").exists());
    }
}
