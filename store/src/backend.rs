//! What is behind a [`crate::Store`]: a local directory or an S3 bucket,
//! decided once, from the location, when the store is opened. Everything
//! that differs between the two (where a local store's files are, how long
//! a bucket's failing requests are retried) is read from the [`Backend`],
//! never from the location string again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use object_store::local::LocalFileSystem;
use object_store::ObjectStore;

use crate::local::InPlace;
use crate::s3::open_s3;
use crate::{StoreError, Unopenable};

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

/// The kind of store, with what each kind needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A local directory (a plain path or a `file://` URL). Its requests
    /// are never retried.
    Local {
        /// The directory, absolute (as another process must open it).
        root: PathBuf,
    },
    /// An S3-compatible bucket (`s3://BUCKET/PREFIX`).
    S3 {
        /// How long a transiently failing request is retried.
        retry_for: Duration,
    },
}

impl Backend {
    /// How long a transiently failing request is retried; None: never.
    pub fn retry_for(&self) -> Option<Duration> {
        match self {
            Backend::Local { .. } => None,
            Backend::S3 { retry_for } => Some(*retry_for),
        }
    }

    /// The directory of a local store; None for a bucket.
    pub fn local_root(&self) -> Option<&Path> {
        match self {
            Backend::Local { root } => Some(root),
            Backend::S3 { .. } => None,
        }
    }
}

/// The backend `location` names, opened for `access`, and the object store
/// that reaches it.
pub(crate) fn open(
    location: &str,
    access: Access,
) -> Result<(Backend, Arc<dyn ObjectStore>), StoreError> {
    let open_err = |cause: Unopenable| StoreError::Open {
        location: location.to_string(),
        cause,
    };
    let dir = match location.split_once("://") {
        Some(("s3", rest)) => {
            let (s3, retry_for) = open_s3(rest).map_err(open_err)?;
            return Ok((Backend::S3 { retry_for }, Arc::new(s3)));
        }
        Some(("file", dir)) => dir,
        Some((scheme, _)) => return Err(open_err(Unopenable::Scheme(scheme.to_string()))),
        None => location,
    };
    let path = Path::new(dir);
    match access {
        Access::ReadWrite => make_writable(path).map_err(open_err)?,
        Access::ReadOnly if !path.is_dir() => {
            return Err(StoreError::Absent {
                location: location.to_string(),
            })
        }
        Access::ReadOnly => {}
    }
    let root = (std::fs::canonicalize(path))
        .map_err(|e| open_err(local("cannot resolve the directory")(e)))?;
    let files =
        LocalFileSystem::new_with_prefix(&root).map_err(|e| open_err(Unopenable::LocalStore(e)))?;
    Ok((Backend::Local { root }, Arc::new(InPlace::new(files))))
}

/// Create the directory `path` if needed and check that it can be written.
fn make_writable(path: &Path) -> Result<(), Unopenable> {
    std::fs::create_dir_all(path).map_err(local("cannot create the directory"))?;
    let probe = path.join(".write-probe");
    std::fs::write(&probe, b"ok").map_err(local("not writable"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A local directory's I/O error, saying `what` failed.
fn local(what: &'static str) -> impl Fn(std::io::Error) -> Unopenable {
    move |source| Unopenable::Local { what, source }
}
