//! Large in-memory buffers: backed by transparent huge pages where the
//! operating system offers them.
//!
//! The value tables are looked up at random across gigabytes; with 4 KiB
//! pages nearly every lookup also misses the TLB and walks the page table.
//! Linux backs a range with 2 MiB pages when asked (`MADV_HUGEPAGE`), which
//! this machine's default setting (`madvise`) does only on request.
//!
//! Every large buffer is fresh memory too: the allocator hands a buffer of
//! more than 32 MiB back to the operating system when it is freed, so the
//! next one is faulted in page by page, and the kernel zeroes each page.
//! On the development VM a 4 KiB page costs about 0.4 s a GB that way, a
//! 2 MiB page that was just freed a tenth of it (one the host must back
//! anew costs about as much as 4 KiB pages); faults were a fifth of the
//! samples of the floor of 4x4 to 32. [`HugePageAlloc`], the binaries' global allocator,
//! maps each allocation of [`HUGE_FROM`] bytes or more on its own, advised
//! huge pages.

use std::alloc::{GlobalAlloc, Layout, System};

/// Size of a transparent huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Types whose every byte zero is a valid value.
///
/// # Safety
/// A value whose bytes are all zero must be a valid `Self`.
pub unsafe trait Zeroed {}

/// A vector of `len` all-zero `T`s, its memory advised to be backed by huge
/// pages. Allocated zeroed: a large one is fresh pages from the operating
/// system, which the kernel zeroes as it populates them ([`populate`]), on
/// all threads, not filled here on one.
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
/// holds whole ones. The advice covers the whole pages the range touches, so
/// that a mapping of its own ([`HugePageAlloc`]) is advised whole and stays
/// one mapping, which `mremap` can resize (it refuses a range over several).
/// Advice only: it never changes contents, and a refusal (other OS, huge
/// pages disabled) leaves ordinary pages.
fn advise_huge_pages(addr: usize, bytes: usize) {
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

/// Bytes from which [`HugePageAlloc`] maps an allocation on its own, in
/// huge pages: glibc's largest threshold for mapping one on its own. A
/// smaller one it may carve from memory it keeps, with no fault at all.
pub const HUGE_FROM: usize = 32 << 20;

/// The system allocator, except that an allocation of [`HUGE_FROM`] bytes
/// or more (at most page-aligned) is a mapping of its own, advised to be
/// backed by huge pages, and grows or shrinks by `mremap`. Linux only;
/// elsewhere it is the system allocator. The binaries install it with
/// `#[global_allocator]`.
pub struct HugePageAlloc;

/// Whether [`HugePageAlloc`] maps an allocation of `layout` on its own.
#[inline]
fn mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE_FROM && layout.align() <= PAGE
}

/// The smallest page of the platforms [`HugePageAlloc`] maps on.
const PAGE: usize = 4096;

// SAFETY: every allocation is either the system allocator's (freed and
// resized by it) or a private anonymous mapping of at least its size, page
// aligned (freed by munmap and resized by mremap); [`mapped`] tells which
// from the layout, which the caller passes back unchanged.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            true => map(layout.size()),
            // SAFETY: the caller's layout has a non-zero size.
            false => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            // A fresh mapping reads as zeros.
            true => map(layout.size()),
            // SAFETY: as in `alloc`.
            false => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match mapped(layout) {
            // SAFETY: `ptr` is a mapping of `layout.size()` bytes.
            true => unsafe { unmap(ptr, layout.size()) },
            // SAFETY: the system allocator made `ptr` with `layout`.
            false => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's `new_size` with the old alignment is a valid
        // layout (`GlobalAlloc::realloc`'s contract).
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (mapped(layout), mapped(new)) {
            // SAFETY: `ptr` is a mapping of `layout.size()` bytes.
            (true, true) => unsafe { remap(ptr, layout.size(), new_size) },
            // SAFETY: the system allocator made `ptr` with `layout`.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // Across the threshold: a new allocation, the bytes both hold
            // copied, the old one freed.
            _ => {
                // SAFETY: `new` has a non-zero size (at least the old one's,
                // or the threshold's).
                let to = unsafe { self.alloc(new) };
                if !to.is_null() {
                    // SAFETY: both hold at least the smaller size; they are
                    // distinct allocations; `ptr` was allocated with `layout`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                to
            }
        }
    }
}

/// A private anonymous mapping of `bytes` bytes advised huge pages; null
/// if the system refuses it.
#[cfg(target_os = "linux")]
fn map(bytes: usize) -> *mut u8 {
    // SAFETY: a new private anonymous mapping touches no existing memory.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    advise_huge_pages(ptr as usize, bytes);
    ptr as *mut u8
}

/// Unmap a mapping of `bytes` bytes at `ptr` ([`map`]).
///
/// # Safety
/// `ptr` is a live mapping of `bytes` bytes, used no more.
#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: *mut u8, bytes: usize) {
    // SAFETY: as the caller promises. A failure leaves the memory mapped:
    // a leak, never a dangling use.
    unsafe { libc::munmap(ptr as *mut libc::c_void, bytes) };
}

/// A mapping of `old` bytes at `ptr` ([`map`]) resized to `new` bytes,
/// moved if it must be; null (and `ptr` untouched) if the system refuses.
///
/// # Safety
/// `ptr` is a live mapping of `old` bytes.
#[cfg(target_os = "linux")]
unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    // SAFETY: as the caller promises; MREMAP_MAYMOVE moves the pages, not
    // their contents, and the mapping keeps its advice as it grows.
    let to = unsafe { libc::mremap(ptr as *mut libc::c_void, old, new, libc::MREMAP_MAYMOVE) };
    match to == libc::MAP_FAILED {
        true => std::ptr::null_mut(),
        false => to as *mut u8,
    }
}

#[cfg(not(target_os = "linux"))]
fn map(_: usize) -> *mut u8 {
    unreachable!("only Linux maps allocations on their own")
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_: *mut u8, _: usize) {
    unreachable!("only Linux maps allocations on their own")
}

#[cfg(not(target_os = "linux"))]
unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
    unreachable!("only Linux maps allocations on their own")
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

    /// The byte at `i` of a buffer filled by [`fill`] with `seed`.
    fn pattern(seed: u8, i: usize) -> u8 {
        seed ^ (i as u8) ^ ((i >> 12) as u8)
    }

    /// Write the pattern of `seed` over `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr` holds `len` writable bytes.
    unsafe fn fill(ptr: *mut u8, len: usize, seed: u8) {
        // SAFETY: as the caller promises.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        bytes
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = pattern(seed, i));
    }

    /// Whether the `len` bytes at `ptr` hold the pattern of `seed`.
    ///
    /// # Safety
    /// `ptr` holds `len` initialised bytes.
    unsafe fn holds(ptr: *const u8, len: usize, seed: u8) -> bool {
        // SAFETY: as the caller promises.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
        bytes
            .iter()
            .enumerate()
            .all(|(i, &b)| b == pattern(seed, i))
    }

    /// An allocation resized below, across and above the threshold of a
    /// mapping of its own keeps the bytes both sizes hold; a zeroed one is
    /// zero on both sides of it.
    #[test]
    fn the_allocator_keeps_contents_across_the_threshold() {
        let alloc = HugePageAlloc;
        let sizes = [1000, HUGE_FROM + 12_345, 2 * HUGE_FROM, HUGE_FROM, 4096, 77];
        let layout = |size| Layout::from_size_align(size, 16).expect("a layout");
        // SAFETY: each pointer is used with the layout it was allocated or
        // last resized with, within its size, and freed once.
        unsafe {
            let mut ptr = alloc.alloc(layout(sizes[0]));
            assert!(!ptr.is_null());
            fill(ptr, sizes[0], 1);
            for (k, w) in sizes.windows(2).enumerate() {
                let (old, new) = (w[0], w[1]);
                ptr = alloc.realloc(ptr, layout(old), new);
                assert!(!ptr.is_null(), "{old} -> {new}");
                assert!(holds(ptr, old.min(new), k as u8 + 1), "{old} -> {new}");
                fill(ptr, new, k as u8 + 2);
            }
            alloc.dealloc(ptr, layout(sizes[sizes.len() - 1]));
            for size in [100, HUGE_FROM + 1] {
                let ptr = alloc.alloc_zeroed(layout(size));
                assert!(!ptr.is_null());
                assert!(std::slice::from_raw_parts(ptr, size)
                    .iter()
                    .all(|&b| b == 0));
                fill(ptr, size, 9);
                alloc.dealloc(ptr, layout(size));
            }
        }
        assert_eq!(mapped(layout(HUGE_FROM)), cfg!(target_os = "linux"));
        assert!(!mapped(layout(HUGE_FROM - 1)));
        assert!(!mapped(
            Layout::from_size_align(HUGE_FROM, 2 * PAGE).expect("a layout")
        ));
    }
}
