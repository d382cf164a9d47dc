//! Large in-memory buffers: backed by transparent huge pages where the
//! operating system offers them.
//!
//! The value tables are looked up at random across gigabytes; with 4 KiB
//! pages nearly every lookup also misses the TLB and walks the page table.
//! Linux backs a range with 2 MiB pages when asked (`MADV_HUGEPAGE`), which
//! this machine's default setting (`madvise`) does only on request.
//!
//! Every large buffer is fresh memory too: the system allocator hands a
//! buffer of more than 32 MiB back to the operating system when it is
//! freed, so the next one is faulted in page by page, and the kernel zeroes
//! each page. On the development VM a 4 KiB page costs about 0.4 s a GB
//! that way, a 2 MiB page that was just freed a tenth of it, and one the
//! host must back anew 30 to 50 times that; faults were a fifth of the
//! samples of the floor of 4x4 to 32. The binaries' global allocator
//! ([`super::allocator`]) maps large buffers in huge pages and keeps the
//! freed ones for the next.

/// Size of a transparent huge page on x86-64 and aarch64 Linux.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Types whose every byte zero is a valid value.
///
/// # Safety
/// A value whose bytes are all zero must be a valid `Self`.
pub unsafe trait Zeroed {}

/// A vector of `len` all-zero `T`s, its memory advised to be backed by huge
/// pages. Allocated zeroed: the allocator zeroes memory it kept, and the
/// kernel the fresh pages, as it populates them ([`populate`]) on all
/// threads.
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
    populate(ptr as usize, layout.size());
    // SAFETY: `ptr` was allocated by the global allocator with the layout of
    // `len` `T`s, all of them zero bytes, which `T: Zeroed` makes valid.
    unsafe { Vec::from_raw_parts(ptr, len, len) }
}

/// Bytes of a table one thread populates at a time ([`populate`]).
const POPULATE_STEP: usize = 32 * HUGE_PAGE;

/// Have the kernel back the whole huge pages inside `[addr, addr + bytes)`
/// (fresh, all zero) with writable pages now, on all threads. A table's
/// first touch of a page is often a read (a probe); the kernel then maps
/// its shared zero page, and the write that follows copies it into a new
/// huge page, flushing every core's TLB: 10% of the samples of the floor of
/// 4x4 to 32. Advice only: a kernel without `MADV_POPULATE_WRITE` (before
/// Linux 5.14) leaves the pages to fault as they are touched.
fn populate(addr: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        use rayon::prelude::*;
        let start = addr.next_multiple_of(HUGE_PAGE);
        let end = (addr + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            (start..end)
                .into_par_iter()
                .step_by(POPULATE_STEP)
                .for_each(|from| {
                    let len = POPULATE_STEP.min(end - from);
                    // SAFETY: the range lies inside an allocation the caller
                    // owns, all zero and not handed out; populating it
                    // changes no contents.
                    unsafe {
                        libc::madvise(from as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE);
                    }
                });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, bytes, POPULATE_STEP);
}

/// Ask the kernel to back `[addr, addr + bytes)` with huge pages where it
/// holds whole ones. The advice covers the whole pages the range touches,
/// so that a mapping of its own
/// ([`HugePageAlloc`](super::allocator::HugePageAlloc)) is advised whole
/// and stays one mapping, which `mremap` can resize (it refuses a range
/// over several).
/// Advice only: it never changes contents, and a refusal (other OS, huge
/// pages disabled) leaves ordinary pages.
pub(crate) fn advise_huge_pages(addr: usize, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf only reads a system setting.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .unwrap_or(PAGE)
            .max(1);
        let start = addr / page * page;
        // SAFETY: the range covers an allocation the caller owns and the
        // rest of its pages; MADV_HUGEPAGE changes only how they are backed.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                addr + bytes - start,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, bytes);
}

/// The smallest page of the platforms [`super::allocator::HugePageAlloc`]
/// maps on.
pub(crate) const PAGE: usize = 4096;

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
