//! The one home of storage in solve2048: every byte a job, a worker or a
//! reader of a solution puts into or gets from a store goes through here.
//!
//! Modules:
//! - [`layout`]: the object names (where each thing lives).
//! - [`backend`]: [`Backend`], what a store is (a local directory or an S3
//!   bucket), decided once when it is opened, and [`Access`].
//! - [`store`]: [`Store`], a local directory or an S3 bucket opened read-write
//!   or read-only: atomic puts, JSON records, deletes and lists, retries, and
//!   counts of the bytes read and written.
//! - [`local`]: a local directory's object store, its small requests made
//!   in place, not on the blocking pool.
//! - [`fault`]: object stores that fail on cue, which tests wrap a store in
//!   when they make it (a store that fills up).
//! - [`error`]: [`StoreError`], what can go wrong, naming the store or object.
//! - [`s3`]: an S3 bucket opened, and its failing requests retried.
//! - [`requests`]: counts of the requests a store makes, retries by cause.
//! - [`record`]: checksummed JSON records (every metadata object).
//! - [`verified`]: chunk reads that verify each object and name the one they
//!   reject.
//! - [`check`]: every object of a store read back and checked, concurrently;
//!   every damaged or missing one reported.
//! - [`cache`]: a bounded local cache of fetched chunks (`worker --cache-dir`).

#![deny(missing_docs)]

pub mod backend;
pub mod cache;
pub mod check;
pub mod error;
pub mod fault;
pub mod layout;
pub mod local;
pub mod record;
pub mod requests;
pub mod s3;
pub mod store;
pub mod verified;

pub use backend::{Access, Backend};
pub use cache::ChunkCache;
pub use error::{StoreError, Unopenable};
pub use requests::RequestCounts;
pub use store::Store;
