//! The in-memory value table of one layer, looked up by the solve kernel.
//!
//! Open addressing with linear probing over interleaved `(state, value)` slots,
//! so that a lookup usually costs one cache line. The empty board (key 0) is
//! never a state and marks a free slot. The capacity is 1.5 times the state
//! count (not rounded up to a power of two, which could double the memory of a
//! large layer); the home slot is a multiply-shift of the state's hash.
//!
//! Slots are atomics so that many threads can build one table at once
//! ([`ValueTable::insert_many`]): a key claims its slot with one
//! compare-and-swap. Which slot a key ends up in may depend on thread timing;
//! what [`ValueTable::get`] answers does not. The slots live in huge pages
//! ([`crate::kernel::huge_pages`]), since lookups land anywhere in gigabytes.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use crate::kernel::huge_pages::huge_vec;
use crate::space::ids::mix;

/// Slots of a table sized for `capacity` states: 1.5 times the capacity, at
/// least 16.
fn slot_count(capacity: usize) -> usize {
    (capacity.max(1) * 3).div_ceil(2).max(16)
}

/// One `(state, value bits)` pair, aligned so that it never straddles a cache
/// line.
#[repr(C, align(16))]
struct Slot {
    key: AtomicU64,
    value: AtomicU64,
}

impl Clone for Slot {
    fn clone(&self) -> Slot {
        Slot {
            key: AtomicU64::new(self.key.load(Relaxed)),
            value: AtomicU64::new(self.value.load(Relaxed)),
        }
    }
}

/// Chunks of a layer a worker reads ahead while it builds the layer's table
/// (each is inserted as it arrives): what capacity planning charges for the
/// build beyond the table.
pub const LOAD_IN_FLIGHT: usize = 4;

/// Keys a thread inserts between prefetches of the next ones' home slots.
const INSERT_AHEAD: usize = 16;

/// Map from canonical state to value for one layer.
pub struct ValueTable {
    slots: Vec<Slot>,
    len: AtomicUsize,
    capacity: usize,
}

impl ValueTable {
    /// An empty table sized for `capacity` states.
    pub fn with_capacity(capacity: usize) -> ValueTable {
        let empty = Slot {
            key: AtomicU64::new(0),
            value: AtomicU64::new(0),
        };
        ValueTable {
            slots: huge_vec(slot_count(capacity), empty),
            len: AtomicUsize::new(0),
            capacity: capacity.max(1),
        }
    }

    /// Heap bytes a table sized for `capacity` states allocates: what
    /// capacity planning charges a worker for one layer's table.
    pub fn bytes_for(capacity: usize) -> u64 {
        (slot_count(capacity) * std::mem::size_of::<Slot>()) as u64
    }

    /// Heap bytes this table holds.
    pub fn heap_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<Slot>()) as u64
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
    pub fn insert_many(&self, keys: &[u64], values: &[f64]) {
        assert_eq!(keys.len(), values.len(), "one value per key");
        let added: usize = keys
            .par_chunks(4096)
            .zip(values.par_chunks(4096))
            .map(|(ks, vs)| {
                let mut added = 0;
                for (i, (&k, &v)) in ks.iter().zip(vs).enumerate() {
                    if let Some(&ahead) = ks.get(i + INSERT_AHEAD) {
                        self.prefetch(ahead);
                    }
                    added += self.place(k, v) as usize;
                }
                added
            })
            .sum();
        let len = self.len.fetch_add(added, Relaxed) + added;
        assert!(len <= self.capacity, "value table over capacity");
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
        let t = ValueTable::with_capacity(n as usize);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        pool.install(|| t.insert_many(&keys, &values));
        assert_eq!(t.len(), n as usize);
        for (k, v) in keys.iter().zip(&values) {
            assert_eq!(t.get(*k), Some(*v));
        }
        assert_eq!(t.get(12345), None);
        // Overwrites do not count as new states.
        pool.install(|| t.insert_many(&keys[..10], &[0.5; 10]));
        assert_eq!(t.len(), n as usize);
        assert_eq!(t.get(keys[3]), Some(0.5));
    }

    #[test]
    #[should_panic(expected = "over capacity")]
    fn a_build_beyond_the_capacity_fails() {
        let t = ValueTable::with_capacity(100);
        let keys: Vec<u64> = (1..=101).collect();
        t.insert_many(&keys, &[0.0; 101]);
    }

    #[test]
    fn planned_bytes_are_the_allocation() {
        for n in [0usize, 1, 10, 1000, 123_457] {
            let t = ValueTable::with_capacity(n);
            assert_eq!(ValueTable::bytes_for(n), t.heap_bytes(), "capacity {n}");
        }
        // 16-byte slots, 1.5 slots per state.
        assert_eq!(ValueTable::bytes_for(1_000_000), 24_000_000);
    }
}
