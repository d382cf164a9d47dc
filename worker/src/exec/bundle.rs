//! Chunks written as one object ([`Bundle`]): one put, one delete, each
//! chunk found again by its byte range.

use solve2048_core::formats::chunk::file_checksum;
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::PieceRef;

/// Highest zstd level for runs, requests and responses: they live only
/// until they are read, and at the job's level (3 by default) compressing
/// runs took a tenth of the forward pass.
pub(super) const TRANSIENT_ZSTD_LEVEL: i32 = 1;

/// The id in the header of a run, request or push to `group` of `part`
/// (the index field is unused: 0).
pub(super) fn target_id((part, group): (PartId, u32)) -> ChunkId {
    ChunkId {
        part,
        group,
        index: 0,
    }
}

/// Chunks written as one object (one put, one delete): each blob is added
/// whole and found again by its byte range.
pub(super) struct Bundle {
    /// The object it is written as.
    pub(super) object: String,
    pub(super) bytes: Vec<u8>,
}

impl Bundle {
    /// An empty bundle, to be written as `object`.
    pub(super) fn new(object: String) -> Bundle {
        Bundle {
            object,
            bytes: Vec::new(),
        }
    }

    /// Append an encoded chunk; returns its offset, length and payload
    /// checksum.
    pub(super) fn add(&mut self, blob: Vec<u8>) -> (u64, u64, u64) {
        let offset = self.bytes.len() as u64;
        let checksum = file_checksum(&blob);
        self.bytes.extend_from_slice(&blob);
        (offset, blob.len() as u64, checksum)
    }

    /// Append an encoded piece of `count` afterstates of chunk `source`
    /// addressed to `group` of `part` (a request, push or response);
    /// returns its reference.
    pub(super) fn add_piece(
        &mut self,
        source: ChunkId,
        (part, group): (PartId, u32),
        count: u64,
        blob: Vec<u8>,
    ) -> PieceRef {
        let (offset, len, checksum) = self.add(blob);
        PieceRef {
            source,
            part,
            group,
            object: self.object.clone(),
            offset,
            len,
            count,
            checksum,
            reference: false,
            slice: None,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}
