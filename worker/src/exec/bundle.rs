//! Chunks written as one object ([`Bundle`]): one put, one delete, each
//! chunk found again by its byte range.

use solve2048_core::chunk::file_checksum;

/// Chunks written as one object (one put, one delete): each blob is added
/// whole and found again by its byte range.
#[derive(Default)]
pub(super) struct Bundle {
    pub(super) bytes: Vec<u8>,
}

impl Bundle {
    /// Append an encoded chunk; returns its offset, length and payload
    /// checksum.
    pub(super) fn add(&mut self, blob: Vec<u8>) -> (u64, u64, u64) {
        let offset = self.bytes.len() as u64;
        let checksum = file_checksum(&blob);
        self.bytes.extend_from_slice(&blob);
        (offset, blob.len() as u64, checksum)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
