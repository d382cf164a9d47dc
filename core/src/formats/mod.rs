//! The file formats: what the store's objects and exported policies hold,
//! byte by byte.
//!
//! Modules:
//! - [`chunk`]: the on-disk chunk format (header, checksum, compression).
//! - [`policy_file`]: the compact exported-policy file format and its reader.

pub mod chunk;
pub mod policy_file;
