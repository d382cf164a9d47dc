//! What can go wrong reading or writing a store, each error naming the
//! store or the object. An error prints its own words and exposes its cause
//! as `source()` ([`solve2048_core::chain::Chain`] writes both), except for
//! `object_store`'s errors, which print their own causes: those are
//! printed, not exposed, so that no cause is said twice.

use solve2048_core::formats::chunk::FormatError;

use crate::requests::{Cause, Op};
use crate::s3::RETRY_TIMEOUT_VAR;

/// Errors reading or writing the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The location could not be opened or created.
    #[error("cannot open store {location}")]
    Open {
        /// The location given.
        location: String,
        /// Why.
        #[source]
        cause: Unopenable,
    },
    /// A store opened read-only whose directory does not exist.
    #[error("store {location} does not exist")]
    Absent {
        /// The location given.
        location: String,
    },
    /// A read failed.
    #[error("cannot read {object}: {error}")]
    Read {
        /// The object.
        object: String,
        /// The cause (printed: it prints its own causes).
        error: object_store::Error,
    },
    /// A required object is missing.
    #[error("{object} is missing from the store")]
    Missing {
        /// The object.
        object: String,
    },
    /// A write failed.
    #[error("cannot write {object}: {error}")]
    Write {
        /// The object.
        object: String,
        /// The cause (printed: it prints its own causes).
        error: object_store::Error,
    },
    /// An object failed verification.
    #[error("rejected {object}")]
    Rejected {
        /// The object.
        object: String,
        /// What was wrong.
        source: FormatError,
    },
    /// A JSON record that is refused: not a checksummed record, a checksum
    /// mismatch, or a body that does not parse as what it should hold.
    #[error("record {object} is damaged")]
    Damaged {
        /// The object.
        object: String,
        /// Why ([`crate::record::RecordError`], a JSON error).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A request failed transiently until the retry deadline.
    #[error("store {location}: {op} {object} failed {attempts} times in {seconds:.1} s, the last with {cause} (retried for up to {RETRY_TIMEOUT_VAR}={limit} s): {error}")]
    GaveUp {
        /// The store.
        location: String,
        /// The operation.
        op: Op,
        /// The object (a prefix ending in `/` for a list).
        object: String,
        /// Attempts made.
        attempts: u32,
        /// Seconds from the first attempt.
        seconds: f64,
        /// The last failure's cause.
        cause: Cause,
        /// The retry deadline, seconds.
        limit: f64,
        /// The last failure (boxed: it is large, and rare; printed: it
        /// prints its own causes).
        error: Box<object_store::Error>,
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

/// Why a store's location cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum Unopenable {
    /// A URL scheme other than `file://` and `s3://`.
    #[error("the {0}:// scheme is not supported; use a local directory or s3://BUCKET/PREFIX")]
    Scheme(String),
    /// An `s3://` URL without a bucket.
    #[error("no bucket: use s3://BUCKET/PREFIX")]
    NoBucket,
    /// A retry or stall setting that is not a positive number of seconds.
    #[error("{var}={value}: expected a positive number of seconds")]
    Seconds {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The S3 client cannot be built from the `AWS_*` settings (its
    /// message names settings, never secret values; it prints its own
    /// causes, so it is printed, not exposed).
    #[error("{0}")]
    S3(object_store::Error),
    /// A local directory that cannot be created, written or resolved.
    #[error("{what}")]
    Local {
        /// What failed.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A local directory `object_store` refuses.
    #[error("{0}")]
    LocalStore(object_store::Error),
}
