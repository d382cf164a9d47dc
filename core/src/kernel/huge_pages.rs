//! Large in-memory buffers: backed by transparent huge pages where the
//! operating system offers them.
//!
//! The value tables are looked up at random across gigabytes; with 4 KiB
//! pages nearly every lookup also misses the TLB and walks the page table.
//! Linux backs a range with 2 MiB pages when asked (`MADV_HUGEPAGE`), which
//! this machine's default setting (`madvise`) does only on request.

/// Size of a transparent huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Types whose every byte zero is a valid value.
///
/// # Safety
/// A value whose bytes are all zero must be a valid `Self`.
pub unsafe trait Zeroed {}

/// A vector of `len` all-zero `T`s, its memory advised to be backed by huge
/// pages. Allocated zeroed: a large one is fresh pages from the operating
/// system, touched first by whichever thread writes each, not filled here
/// on one thread.
pub fn huge_zeroed<T: Zeroed>(len: usize) -> Vec<T> {
    let layout = std::alloc::Layout::array::<T>(len).expect("a table that fits the address space");
    if layout.size() == 0 {
        return Vec::new();
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    advise_huge_pages(ptr as usize, layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of
    // `len` `T`s, all of them zero bytes, which `T: Zeroed` makes valid.
    unsafe { Vec::from_raw_parts(ptr, len, len) }
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

    // SAFETY: zero is a u64.
    unsafe impl Zeroed for u64 {}

    #[test]
    fn huge_zeroed_is_zero() {
        let mut v = huge_zeroed::<u64>(3 * HUGE_PAGE / 8 + 5);
        assert_eq!(v.len(), 3 * HUGE_PAGE / 8 + 5);
        assert!(v.iter().all(|&x| x == 0));
        v.push(7);
        assert_eq!(v.last(), Some(&7));
        assert!(huge_zeroed::<u64>(0).is_empty());
    }
}
