//! The one home of storage in solve2048: every byte a job, a worker or a
//! reader of a solution puts into or gets from a store goes through here.
//!
//! Modules:
//! - [`layout`]: the object names (where each thing lives).
//! - [`store`]: [`Store`], a local directory or an S3 bucket opened read-write
//!   or read-only: atomic puts, verified chunk reads that name the object
//!   they reject, JSON records, deletes and lists, retries.
//! - [`cache`]: a bounded local cache of fetched chunks (`worker --cache-dir`).

pub mod cache;
pub mod layout;
pub mod store;

pub use cache::ChunkCache;
pub use store::{Access, Store, StoreError};
