//! The zstd compression of chunk bodies, with a compression and a
//! decompression context kept per thread.

use super::header::FormatError;

thread_local! {
    /// This thread's zstd compression context and its level: making a
    /// context costs more than compressing a small chunk, and a job writes
    /// many small ones (runs, requests, responses).
    static COMPRESSOR: std::cell::RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    /// This thread's zstd decompression context.
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

pub(crate) fn compress(body: &[u8], level: i32) -> Vec<u8> {
    COMPRESSOR.with_borrow_mut(|slot| {
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            let c = zstd::bulk::Compressor::new(level).expect("a zstd context");
            *slot = Some((level, c));
        }
        let (_, c) = slot.as_mut().expect("made above");
        c.compress(body)
            .expect("zstd compression of an in-memory buffer")
    })
}

pub(crate) fn decompress(payload: &[u8], limit: usize) -> Result<Vec<u8>, FormatError> {
    DECOMPRESSOR.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().expect("a zstd context"));
        }
        slot.as_mut()
            .expect("made above")
            .decompress(payload, limit)
            .map_err(|e| FormatError::Body(format!("zstd: {e}")))
    })
}

/// The size the payload's zstd frame says it decompresses to, if it says.
pub(crate) fn content_size(payload: &[u8]) -> Option<u64> {
    zstd::zstd_safe::get_frame_content_size(payload)
        .ok()
        .flatten()
}
