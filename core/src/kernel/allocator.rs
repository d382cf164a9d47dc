//! The binaries' global allocator ([`HugePageAlloc`]): the system
//! allocator, except that a buffer of [`HUGE_FROM`] bytes or more is a
//! mapping of its own in huge pages, kept when it is freed for the next
//! (see [`super::huge_pages`] for why fresh memory costs).

use std::alloc::{GlobalAlloc, Layout, System};

use super::huge_pages::{advise_huge_pages, HUGE_PAGE, PAGE};

/// Bytes from which [`HugePageAlloc`] maps an allocation on its own, in
/// huge pages: glibc's largest threshold for mapping one on its own. A
/// smaller one it may carve from memory it keeps, with no fault at all.
pub const HUGE_FROM: usize = 32 << 20;

/// The system allocator, except that an allocation of [`HUGE_FROM`] bytes
/// or more (at most page-aligned) is a mapping of its own, of whole huge
/// pages and advised to be backed by them, that grows or shrinks by
/// `mremap` and is kept when freed, for the next. Linux only; elsewhere it
/// is the system allocator. The binaries install it with
/// `#[global_allocator]`.
pub struct HugePageAlloc;

/// Whether [`HugePageAlloc`] maps an allocation of `layout` on its own.
#[inline]
fn mapped(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE_FROM && layout.align() <= PAGE
}

// SAFETY: every allocation is either the system allocator's (freed and
// resized by it) or private anonymous memory of at least its size, page
// aligned, that no other allocation overlaps (kept memory no longer kept,
// or a new mapping; given back to the kept ones or unmapped when freed);
// [`mapped`] tells which from the layout, which the caller passes back
// unchanged.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            true => take(layout.size(), false),
            // SAFETY: the caller's layout has a non-zero size.
            false => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match mapped(layout) {
            true => take(layout.size(), true),
            // SAFETY: as in `alloc`.
            false => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match mapped(layout) {
            // SAFETY: `ptr` is a mapping of `layout.size()` bytes.
            true => unsafe { give(ptr, layout.size()) },
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
            (true, true) => unsafe { resize(ptr, layout.size(), new_size) },
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

/// Freed mappings [`HugePageAlloc`] keeps, at most.
const KEPT: usize = 16;

/// The mappings of [`HugePageAlloc`]: the bytes handed out, the most they
/// have been, and the freed mappings kept for the next allocations.
///
/// A freed mapping is kept, not unmapped: on a virtual machine whose host
/// takes back the memory a guest leaves free (free page reporting, after
/// about 2 s), a page the host must back anew costs 30 to 50 times one
/// the process used before (0.4 to 0.7 against 21 GB/s on the development
/// VM), and a pass's buffers and tables are freed and made again layer
/// after layer, each larger than the last. A new allocation takes the
/// smallest kept mapping that holds it, or else kept ones moved side by
/// side into one range (`mremap` moves pages, not bytes). The kept
/// mappings and the ones handed out never hold more than the most ever
/// handed out at once: keeping adds no peak.
struct Mappings {
    /// Kept mappings, `(address, bytes)`; the first `count` are in use.
    kept: List,
    count: usize,
    /// Bytes of the kept mappings.
    kept_bytes: usize,
    /// Bytes of the mappings handed out.
    live: usize,
    /// The most `live` has been.
    peak: usize,
}

/// Mappings `(address, bytes)` taken from or given up by the kept ones at
/// once.
type List = [(usize, usize); KEPT];

impl Mappings {
    const EMPTY: Mappings = Mappings {
        kept: [(0, 0); KEPT],
        count: 0,
        kept_bytes: 0,
        live: 0,
        peak: 0,
    };

    /// Remove and return kept mapping `i`.
    fn remove(&mut self, i: usize) -> (usize, usize) {
        let m = self.kept[i];
        self.count -= 1;
        self.kept[i] = self.kept[self.count];
        self.kept_bytes -= m.1;
        m
    }

    /// The index of the kept mapping with the least (`-1`) or most (`1`)
    /// bytes of those that `fits`.
    fn extreme(&self, sign: i8, fits: impl Fn(usize) -> bool) -> Option<usize> {
        let kept = &self.kept[..self.count];
        let key = |&i: &usize| kept[i].1 as i128 * sign as i128;
        (0..kept.len()).filter(|&i| fits(kept[i].1)).max_by_key(key)
    }

    /// Kept memory for `bytes`, removed into `out`: while some is missing,
    /// the smallest kept mapping that holds the rest (split, its tail still
    /// kept), else the largest; returns how many pieces.
    fn pick(&mut self, bytes: usize, out: &mut List) -> usize {
        let (mut n, mut sum) = (0, 0);
        while sum < bytes {
            let rest = bytes - sum;
            let holds = self.extreme(-1, |len| len >= rest);
            let Some(i) = holds.or_else(|| self.extreme(1, |_| true)) else {
                break;
            };
            let (addr, len) = self.remove(i);
            if len > rest {
                // The slot just freed holds the tail.
                self.stash((addr + rest, len - rest));
            }
            out[n] = (addr, len.min(rest));
            sum += out[n].1;
            n += 1;
        }
        n
    }

    /// Count `bytes` more handed out, and remove the smallest kept mappings
    /// into `evicted` while the kept and the live ones hold more than the
    /// peak; returns how many.
    fn grow_live(&mut self, bytes: usize, evicted: &mut List) -> usize {
        self.live += bytes;
        self.peak = self.peak.max(self.live);
        let mut n = 0;
        while let (true, Some(i)) = (
            self.live + self.kept_bytes > self.peak,
            self.extreme(-1, |_| true),
        ) {
            evicted[n] = self.remove(i);
            n += 1;
        }
        n
    }

    /// Keep the freed mapping `m` if there is room (in place of a smaller
    /// one when all slots are taken); returns the mapping to unmap, if any.
    fn keep(&mut self, m: (usize, usize)) -> Option<(usize, usize)> {
        self.live -= m.1;
        let out = match self.count < KEPT {
            true => None,
            false => match self.extreme(-1, |len| len < m.1) {
                None => return Some(m),
                Some(i) => Some(self.remove(i)),
            },
        };
        self.stash(m);
        out
    }

    /// Add `m` to the kept mappings (a slot is free).
    fn stash(&mut self, m: (usize, usize)) {
        self.kept[self.count] = m;
        self.count += 1;
        self.kept_bytes += m.1;
    }
}

/// [`HugePageAlloc`]'s mappings.
static MAPPINGS: std::sync::Mutex<Mappings> = std::sync::Mutex::new(Mappings::EMPTY);

/// The mappings, locked (a panic never happens while they are held, so a
/// poisoned lock holds consistent counts).
fn mappings() -> std::sync::MutexGuard<'static, Mappings> {
    MAPPINGS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bytes of the mapping that holds `bytes`: whole huge pages. Linux
/// (6.7 on) places a mapping of whole huge pages on a huge page's boundary,
/// and a move between two such boundaries keeps the huge pages whole; a
/// mapping moved off that alignment has them split into 4 KiB pages.
fn page_bytes(bytes: usize) -> usize {
    bytes.next_multiple_of(HUGE_PAGE)
}

/// Unmap `list` (mappings no longer kept nor handed out).
fn unmap_all(list: &[(usize, usize)]) {
    for &(addr, bytes) in list {
        // SAFETY: as the caller promises.
        unsafe { unmap(addr as *mut u8, bytes) };
    }
}

/// Count `bytes` more handed out, and take kept memory for them: the
/// pieces, and how many; the kept mappings the peak no longer leaves room
/// for are unmapped.
fn claim(bytes: usize) -> (List, usize) {
    let (mut pieces, mut evicted) = ([(0, 0); KEPT], [(0, 0); KEPT]);
    let (n, e) = {
        let mut m = mappings();
        let n = m.pick(bytes, &mut pieces);
        (n, m.grow_live(bytes, &mut evicted))
    };
    unmap_all(&evicted[..e]);
    (pieces, n)
}

/// Move the kept `pieces` into the mapping at `dest`, side by side;
/// returns the bytes they cover from `dest` (the rest keeps the pages it
/// had). A piece the system refuses to move is unmapped, and its place
/// keeps its pages.
///
/// # Safety
/// The mapping at `dest` is unused and holds the pieces' bytes; `pieces`
/// are mappings no longer kept nor handed out, of whole huge pages.
unsafe fn fill(dest: usize, pieces: &[(usize, usize)]) -> usize {
    let mut at = 0;
    for &(addr, len) in pieces {
        // SAFETY: as the caller promises; the piece lands inside the mapping.
        if !unsafe { move_to(addr as *mut u8, len, (dest + at) as *mut u8) } {
            unmap_all(&[(addr, len)]);
        }
        at += len;
    }
    at
}

/// A mapping of `bytes` bytes for [`HugePageAlloc`], all zero if `zero`:
/// kept memory of that size (the rest of a larger mapping stays kept), or
/// else a new mapping with kept pieces moved in. Null if the system refuses.
fn take(bytes: usize, zero: bool) -> *mut u8 {
    let bytes = page_bytes(bytes);
    let (pieces, n) = claim(bytes);
    let (ptr, reused) = match pieces[..n] {
        [(addr, len)] if len == bytes => (addr as *mut u8, bytes),
        _ => {
            let ptr = map(bytes);
            match ptr.is_null() {
                true => {
                    unmap_all(&pieces[..n]);
                    (ptr, 0)
                }
                // SAFETY: a new mapping of `bytes` bytes; kept pieces.
                false => (ptr, unsafe { fill(ptr as usize, &pieces[..n]) }),
            }
        }
    };
    match (ptr.is_null(), zero) {
        (true, _) => mappings().live -= bytes,
        // SAFETY: the mapping holds `bytes` bytes; past `reused` they are
        // new pages, which read as zeros.
        (false, true) => unsafe { std::ptr::write_bytes(ptr, 0, reused) },
        (false, false) => {}
    }
    ptr
}

/// Free a mapping of `bytes` bytes at `ptr` that [`take`] made: kept for
/// the next allocations, or unmapped.
///
/// # Safety
/// `ptr` is a live mapping of `bytes` bytes, used no more.
unsafe fn give(ptr: *mut u8, bytes: usize) {
    let out = mappings().keep((ptr as usize, page_bytes(bytes)));
    unmap_all(out.as_slice());
}

/// A mapping of `old` bytes at `ptr` that [`take`] made, resized to `new`
/// bytes, the bytes both hold kept: shrunk in place (its tail kept), or
/// grown (moved if it must be) with kept pieces moved in after its old
/// end. Null, and `ptr` untouched, if the system refuses.
///
/// # Safety
/// `ptr` is a live mapping of `old` bytes that [`take`] made.
unsafe fn resize(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    let (old, new) = (page_bytes(old), page_bytes(new));
    if new <= old {
        if new < old {
            // The tail is kept (or unmapped).
            let out = mappings().keep((ptr as usize + new, old - new));
            unmap_all(out.as_slice());
        }
        return ptr;
    }
    // SAFETY: as the caller promises.
    let to = unsafe { remap(ptr, old, new) };
    if to.is_null() {
        // A mapping made of several (`fill`) cannot be resized by one
        // `mremap`: its bytes are copied into a new one.
        let to = take(new, false);
        if !to.is_null() {
            // SAFETY: both hold `old` bytes; `ptr` is used no more.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, to, old);
                give(ptr, old);
            }
        }
        return to;
    }
    let (pieces, n) = claim(new - old);
    // SAFETY: the grown tail is new and unused; kept pieces.
    unsafe { fill(to as usize + old, &pieces[..n]) };
    to
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

/// Move the `bytes` bytes mapped at `from` to `to`, replacing what was
/// mapped there; false (and nothing moved) if the system refuses.
///
/// # Safety
/// `[from, from + bytes)` is mapped and used no more; `[to, to + bytes)` is
/// mapped and unused.
#[cfg(target_os = "linux")]
unsafe fn move_to(from: *mut u8, bytes: usize, to: *mut u8) -> bool {
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
    // SAFETY: as the caller promises; the pages move, not their contents.
    let at = unsafe { libc::mremap(from as *mut libc::c_void, bytes, bytes, flags, to) };
    at != libc::MAP_FAILED
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

#[cfg(not(target_os = "linux"))]
unsafe fn move_to(_: *mut u8, _: usize, _: *mut u8) -> bool {
    unreachable!("only Linux maps allocations on their own")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests of [`HugePageAlloc`], whose kept mappings another
    /// test running at once could take.
    static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
        let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
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

    /// The bytes the kept and the live mappings hold, and the peak.
    fn held() -> (usize, usize) {
        let m = mappings();
        (m.live + m.kept_bytes, m.peak)
    }

    /// A kept mapping handed out again is zero where asked, whether it is
    /// taken as it is, shrunk, or moved with others into a larger one; a
    /// larger one grown keeps its bytes; and the kept and live mappings
    /// never hold more than the most ever handed out.
    #[test]
    fn kept_mappings_are_reused_zeroed_and_add_no_peak() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
        let alloc = HugePageAlloc;
        let layout = |size| Layout::from_size_align(size, 16).expect("a layout");
        let zero = |ptr: *mut u8, size| {
            // SAFETY: `ptr` holds `size` initialised bytes.
            unsafe { std::slice::from_raw_parts(ptr, size) }
                .iter()
                .all(|&b| b == 0)
        };
        let big = 3 * HUGE_FROM;
        // SAFETY: each pointer is used within the size it was allocated
        // with and freed once, with that layout.
        unsafe {
            let first = alloc.alloc(layout(big));
            assert!(!first.is_null());
            fill(first, big, 3);
            alloc.dealloc(first, layout(big));
            // The same size: the kept mapping, its old bytes zeroed.
            let again = alloc.alloc_zeroed(layout(big));
            assert_eq!(again, first, "the kept mapping is reused");
            assert!(zero(again, big));
            fill(again, big, 4);
            alloc.dealloc(again, layout(big));
            // Smaller (shrunk), then larger (moved together with others).
            let small = alloc.alloc_zeroed(layout(HUGE_FROM + 4099));
            assert_eq!(small, first, "the kept mapping is reused");
            assert!(zero(small, HUGE_FROM + 4099));
            let other = alloc.alloc(layout(2 * HUGE_FROM));
            fill(small, HUGE_FROM + 4099, 5);
            fill(other, 2 * HUGE_FROM, 6);
            alloc.dealloc(small, layout(HUGE_FROM + 4099));
            alloc.dealloc(other, layout(2 * HUGE_FROM));
            let before = mappings().count;
            let size = 4 * HUGE_FROM + 12_345;
            let joined = alloc.alloc_zeroed(layout(size));
            assert!(!joined.is_null());
            assert!(mappings().count < before, "kept mappings are moved in");
            assert!(zero(joined, size));
            fill(joined, size, 7);
            assert!(held().0 <= held().1, "{:?}", held());
            // Grown: one mapping made of several is copied whole.
            let grown = alloc.realloc(joined, layout(size), 6 * HUGE_FROM);
            assert!(!grown.is_null());
            assert!(holds(grown, size, 7));
            fill(grown, 6 * HUGE_FROM, 8);
            let shrunk = alloc.realloc(grown, layout(6 * HUGE_FROM), HUGE_FROM);
            assert_eq!(shrunk, grown, "shrunk in place");
            assert!(holds(shrunk, HUGE_FROM, 8));
            assert!(held().0 <= held().1, "{:?}", held());
            alloc.dealloc(shrunk, layout(HUGE_FROM));
        }
    }
}
