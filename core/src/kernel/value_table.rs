//! The in-memory value table of one layer, looked up by the solve kernel.
//!
//! Open addressing with linear probing over interleaved `(state, value)` slots,
//! so that a lookup usually costs one cache line. The empty board (key 0) is
//! never a state and marks a free slot. The capacity is 1.5 times the state
//! count (not rounded up to a power of two, which could double the memory of a
//! large layer); the home slot is a multiply-shift of the state's hash.
//!
//! [`ValueTable::insert_many`] builds on all threads without a shared write:
//! the keys are first partitioned by the range of slots their home slot is
//! in (a stream of writes), then each range is filled by one thread, its
//! slots hot in cache, and the few keys whose probe runs past the end of
//! their range are placed last, one thread alone. Inserted one at a time at
//! random slots, a key cost a miss to memory; 4x4 to 16's layer tables took
//! 14% of a profile of its whole game in memory. What [`ValueTable::get`]
//! answers never depends on the order of insertion. The slots live in huge
//! pages ([`crate::kernel::huge_pages`]), since lookups land anywhere in
//! gigabytes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use crate::kernel::huge_pages::{huge_zeroed, Zeroed};
use crate::space::ids::mix;

/// The slots of a table sized for `capacity` states (1.5 times the
/// capacity, at least 16, rounded up to a whole number of ranges) and the
/// log2 of the number of ranges [`ValueTable::insert_many`] cuts them into:
/// a power of two, so that a key's range is the top bits of its hash and,
/// the slots being a multiple of it, every home slot of a range's keys lies
/// in that range.
fn layout(capacity: usize) -> (usize, u32) {
    let raw = (capacity.max(1) * 3).div_ceil(2).max(16);
    let bits = (raw / RANGE_SLOTS).clamp(1, MAX_RANGES).ilog2();
    (raw.next_multiple_of(1 << bits), bits)
}

/// One `(state, value bits)` pair, aligned so that it never straddles a cache
/// line.
#[repr(C, align(16))]
struct Slot {
    key: AtomicU64,
    value: AtomicU64,
}

// SAFETY: two atomic u64s, zero bytes each a 0: the empty slot.
unsafe impl Zeroed for Slot {}

/// Chunks of a layer a worker reads ahead while it builds the layer's table
/// (each is inserted as it arrives): what capacity planning charges for the
/// build beyond the table.
pub const LOAD_IN_FLIGHT: usize = 4;

/// Slots of a range that [`ValueTable::insert_many`] fills on one thread:
/// 64 KiB of slots, in a core's L2 while it is filled.
const RANGE_SLOTS: usize = 1 << 12;

/// Most ranges a table is cut into for [`ValueTable::insert_many`] (the
/// partition writes to this many places at once).
const MAX_RANGES: usize = 1 << 12;

/// Keys a range's fill looks ahead to prefetch their home slots.
const INSERT_AHEAD: usize = 16;

/// Extra bytes [`ValueTable::insert_many`] holds while it inserts `keys`
/// keys: each key and value, partitioned.
pub const fn insert_bytes(keys: usize) -> u64 {
    16 * keys as u64
}

/// A raw pointer that may cross to another thread: each thread writes only
/// its own places through it.
struct SendPtr<T>(*mut T);
// SAFETY: used only where each thread writes places no other thread does.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendPtr<T> {}

/// Map from canonical state to value for one layer.
pub struct ValueTable {
    slots: Vec<Slot>,
    /// log2 of the number of ranges [`ValueTable::insert_many`] fills apart.
    range_bits: u32,
    len: AtomicUsize,
    capacity: usize,
}

impl ValueTable {
    /// An empty table sized for `capacity` states.
    pub fn with_capacity(capacity: usize) -> ValueTable {
        let (slots, range_bits) = layout(capacity);
        ValueTable {
            // All zero: every slot empty (key 0).
            slots: huge_zeroed(slots),
            range_bits,
            len: AtomicUsize::new(0),
            capacity: capacity.max(1),
        }
    }

    /// Heap bytes a table sized for `capacity` states allocates: what
    /// capacity planning charges a worker for one layer's table.
    pub fn bytes_for(capacity: usize) -> u64 {
        (layout(capacity).0 * std::mem::size_of::<Slot>()) as u64
    }

    /// Heap bytes this table holds.
    pub fn heap_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<Slot>()) as u64
    }

    /// Number of states it was sized for: inserting more is refused.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of states held.
    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        ((mix(key) as u128 * self.slots.len() as u128) >> 64) as usize
    }

    /// Insert or overwrite one state; true if it was new. Safe to call from
    /// many threads at once. Panics on key 0 (not a state) or on a new key
    /// beyond the capacity, both programming errors.
    pub fn insert(&self, key: u64, value: f64) -> bool {
        let new = self.place(key, value);
        if new {
            let len = self.len.fetch_add(1, Relaxed) + 1;
            assert!(len <= self.capacity, "value table over capacity");
        }
        new
    }

    /// Insert or overwrite `keys[i] -> values[i]` for all `i`, on all of
    /// rayon's threads. Panics like [`ValueTable::insert`], or if the two
    /// slices differ in length.
    pub fn insert_many(&mut self, keys: &[u64], values: &[f64]) {
        assert_eq!(keys.len(), values.len(), "one value per key");
        let (pairs, starts) = self.partition(keys, values);
        let width = self.slots.len() >> self.range_bits;
        let table = &*self;
        let (added, spilled): (Vec<usize>, Vec<Vec<(u64, u64)>>) = starts
            .par_windows(2)
            .enumerate()
            .map(|(r, w)| table.fill_range(&pairs[w[0]..w[1]], (r + 1) * width))
            .unzip();
        let mut added: usize = added.into_iter().sum();
        for (key, bits) in spilled.into_iter().flatten() {
            added += self.place(key, f64::from_bits(bits)) as usize;
        }
        let len = self.len.fetch_add(added, Relaxed) + added;
        assert!(len <= self.capacity, "value table over capacity");
    }

    /// The range of `key`: the top bits of its hash.
    #[inline(always)]
    fn range_of(&self, key: u64) -> usize {
        match self.range_bits {
            0 => 0,
            bits => (mix(key) >> (64 - bits)) as usize,
        }
    }

    /// `keys` and their values (as bits) ordered by their range, and where
    /// each range's keys start (one more offset than ranges); on all
    /// threads, each taking a stretch of the keys.
    fn partition(&self, keys: &[u64], values: &[f64]) -> (Vec<(u64, u64)>, Vec<usize>) {
        let ranges = 1usize << self.range_bits;
        let stretch = keys
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1 << 14);
        let counts: Vec<Vec<usize>> = keys
            .par_chunks(stretch)
            .map(|ks| {
                let mut c = vec![0usize; ranges];
                ks.iter().for_each(|&k| c[self.range_of(k)] += 1);
                c
            })
            .collect();
        // Stretch `i`'s keys of range `r` go from `at[i][r]` on.
        let mut at = vec![vec![0usize; ranges]; counts.len()];
        let mut starts = Vec::with_capacity(ranges + 1);
        let mut next = 0;
        for r in 0..ranges {
            starts.push(next);
            for (i, c) in counts.iter().enumerate() {
                at[i][r] = next;
                next += c[r];
            }
        }
        starts.push(next);
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(keys.len());
        // Each stretch writes its keys into places no other stretch writes.
        let base = SendPtr(out.as_mut_ptr());
        let stretches = keys.par_chunks(stretch).zip(values.par_chunks(stretch));
        stretches.zip(at).for_each(|((ks, vs), mut at)| {
            let base = &base;
            for (&k, &v) in ks.iter().zip(vs) {
                let r = self.range_of(k);
                // SAFETY: `at[r]` runs over this stretch's own places of
                // range `r`, inside the output's capacity of `keys.len()`.
                unsafe { base.0.add(at[r]).write((k, v.to_bits())) };
                at[r] += 1;
            }
        });
        // SAFETY: every place was written: the stretches' counts sum to
        // `keys.len()`.
        unsafe { out.set_len(keys.len()) };
        (out, starts)
    }

    /// Insert `pairs` (keys and value bits of one range, whose slots end
    /// at `end`) into the range's slots, which no other thread touches
    /// meanwhile; returns how many were new, and those whose probe ran past
    /// the range's end (placed later, alone).
    fn fill_range(&self, pairs: &[(u64, u64)], end: usize) -> (usize, Vec<(u64, u64)>) {
        let (mut added, mut spilled) = (0, Vec::new());
        for (i, &(key, bits)) in pairs.iter().enumerate() {
            if let Some(&(ahead, _)) = pairs.get(i + INSERT_AHEAD) {
                self.prefetch(ahead);
            }
            assert!(key != 0, "the empty board is not a state");
            let mut at = self.home(key);
            loop {
                if at == end {
                    spilled.push((key, bits));
                    break;
                }
                let slot = &self.slots[at];
                let k = slot.key.load(Relaxed);
                if k == 0 || k == key {
                    slot.key.store(key, Relaxed);
                    slot.value.store(bits, Relaxed);
                    added += (k == 0) as usize;
                    break;
                }
                at += 1;
            }
        }
        (added, spilled)
    }

    /// Claim `key`'s slot (or find it) and store `value`; true if new.
    #[inline]
    fn place(&self, key: u64, value: f64) -> bool {
        assert!(key != 0, "the empty board is not a state");
        let mut i = self.home(key);
        // Slots are 1.5x the capacity, so a probe ends unless the capacity
        // was overrun by more than half; then it fails instead of spinning.
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            let new = match slot.key.compare_exchange(0, key, Relaxed, Relaxed) {
                Ok(_) => true,
                Err(k) if k == key => false,
                Err(_) => {
                    i += 1;
                    if i == self.slots.len() {
                        i = 0;
                    }
                    continue;
                }
            };
            slot.value.store(value.to_bits(), Relaxed);
            return new;
        }
        panic!("value table over capacity");
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<f64> {
        let mut i = self.home(key);
        loop {
            let slot = &self.slots[i];
            let k = slot.key.load(Relaxed);
            if k == key {
                return Some(f64::from_bits(slot.value.load(Relaxed)));
            }
            if k == 0 {
                return None;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
    }

    /// Hint the CPU to start loading the home slot of `key`.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        unsafe {
            // SAFETY: prefetch never faults; the index is within the slots.
            let p = self.slots.as_ptr().add(self.home(key));
            std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_overwrite() {
        let t = ValueTable::with_capacity(1000);
        for k in 1..=1000u64 {
            t.insert(k * 7919, k as f64);
        }
        assert_eq!(t.len(), 1000);
        for k in 1..=1000u64 {
            assert_eq!(t.get(k * 7919), Some(k as f64));
        }
        assert_eq!(t.get(5), None);
        t.insert(7919, 0.5);
        assert_eq!(t.get(7919), Some(0.5));
        assert_eq!(t.len(), 1000);
    }

    #[test]
    fn a_parallel_build_finds_every_key() {
        let n = 300_000u64;
        // An odd multiplier is a bijection on u64: distinct, non-zero keys.
        let keys: Vec<u64> = (1..=n)
            .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let values: Vec<f64> = (1..=n).map(|k| k as f64 / 7.0).collect();
        let mut t = ValueTable::with_capacity(n as usize);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        // In two calls, the second into a table already holding keys.
        let half = n as usize / 2;
        pool.install(|| t.insert_many(&keys[..half], &values[..half]));
        assert_eq!(t.len(), half);
        pool.install(|| t.insert_many(&keys[half..], &values[half..]));
        assert_eq!(t.len(), n as usize);
        for (k, v) in keys.iter().zip(&values) {
            assert_eq!(t.get(*k), Some(*v));
        }
        assert_eq!(t.get(12345), None);
        // The table was cut into ranges, and some keys' probes ran past the
        // end of theirs (they were placed last): found all the same.
        assert!(t.range_bits >= 4, "{} range bits", t.range_bits);
        let width = t.slots.len() >> t.range_bits;
        let spilled = (0..t.slots.len())
            .filter(|&i| {
                let k = t.slots[i].key.load(Relaxed);
                k != 0 && t.home(k) / width != i / width
            })
            .count();
        assert!(spilled > 0, "no key ran past its range");
        // Overwrites do not count as new states.
        pool.install(|| t.insert_many(&keys[..10], &[0.5; 10]));
        assert_eq!(t.len(), n as usize);
        assert_eq!(t.get(keys[3]), Some(0.5));
    }

    #[test]
    #[should_panic(expected = "over capacity")]
    fn a_build_beyond_the_capacity_fails() {
        let mut t = ValueTable::with_capacity(100);
        let keys: Vec<u64> = (1..=101).collect();
        t.insert_many(&keys, &[0.0; 101]);
    }

    #[test]
    fn planned_bytes_are_the_allocation() {
        for n in [0usize, 1, 10, 1000, 123_457] {
            let t = ValueTable::with_capacity(n);
            assert_eq!(ValueTable::bytes_for(n), t.heap_bytes(), "capacity {n}");
        }
        // 16-byte slots, 1.5 slots per state, rounded up to a whole number
        // of ranges (256 of them).
        assert_eq!(ValueTable::bytes_for(1_000_000), 16 * 1_500_160);
    }
}
