//! Large in-memory buffers: backed by transparent huge pages where the
//! operating system offers them.
//!
//! The value tables are looked up at random across gigabytes; with 4 KiB
//! pages nearly every lookup also misses the TLB and walks the page table.
//! Linux backs a range with 2 MiB pages when asked (`MADV_HUGEPAGE`), which
//! this machine's default setting (`madvise`) does only on request.

/// Size of a transparent huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// A vector of `len` copies of `fill`, its memory advised to be backed by
/// huge pages before it is first touched.
pub fn huge_vec<T: Clone>(len: usize, fill: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(len);
    advise_huge_pages(v.as_ptr() as usize, len * std::mem::size_of::<T>());
    v.resize(len, fill);
    v
}

/// Ask the kernel to back the whole huge pages inside `[addr, addr + bytes)`
/// with huge pages. Advice only: it never changes contents, and a refusal
/// (other OS, huge pages disabled) leaves ordinary pages.
fn advise_huge_pages(addr: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = addr.next_multiple_of(HUGE_PAGE);
        let end = (addr + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // SAFETY: the range lies inside an allocation the caller owns and
            // has not handed out; MADV_HUGEPAGE changes only how it is backed.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, bytes, HUGE_PAGE);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_vec_is_filled() {
        let v = huge_vec(3 * HUGE_PAGE / 8 + 5, 7u64);
        assert_eq!(v.len(), 3 * HUGE_PAGE / 8 + 5);
        assert!(v.iter().all(|&x| x == 7));
        assert!(huge_vec(0, 1u8).is_empty());
    }
}
