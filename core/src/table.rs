//! The in-memory value table of one layer, looked up by the solve kernel.
//!
//! Open addressing with linear probing over interleaved `(state, value)` slots,
//! so that a lookup usually costs one cache line. The empty board (key 0) is
//! never a state and marks a free slot. The capacity is 1.5 times the state
//! count (not rounded up to a power of two, which could double the memory of a
//! large layer); the home slot is a multiply-shift of the state's hash.

use crate::part::mix;

/// Slots of a table sized for `capacity` states: 1.5 times the capacity, at
/// least 16.
fn slot_count(capacity: usize) -> usize {
    (capacity.max(1) * 3).div_ceil(2).max(16)
}

/// Map from canonical state to value for one layer.
pub struct ValueTable {
    slots: Vec<(u64, f64)>,
    len: usize,
    capacity: usize,
}

impl ValueTable {
    /// An empty table sized for `capacity` states.
    pub fn with_capacity(capacity: usize) -> ValueTable {
        ValueTable {
            slots: vec![(0, 0.0); slot_count(capacity)],
            len: 0,
            capacity: capacity.max(1),
        }
    }

    /// Heap bytes a table sized for `capacity` states allocates: what
    /// capacity planning charges a worker for one layer's table.
    pub fn bytes_for(capacity: usize) -> u64 {
        (slot_count(capacity) * std::mem::size_of::<(u64, f64)>()) as u64
    }

    /// Heap bytes this table holds.
    pub fn heap_bytes(&self) -> u64 {
        (self.slots.capacity() * std::mem::size_of::<(u64, f64)>()) as u64
    }

    /// Number of states held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        ((mix(key) as u128 * self.slots.len() as u128) >> 64) as usize
    }

    /// Insert or overwrite. Panics on key 0 (not a state) or on a new key
    /// beyond the capacity, both programming errors.
    pub fn insert(&mut self, key: u64, value: f64) {
        assert!(key != 0, "the empty board is not a state");
        let mut i = self.home(key);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == 0 {
                // Slots are 1.5x the capacity, so probes always end.
                assert!(self.len < self.capacity, "value table over capacity");
                *slot = (key, value);
                self.len += 1;
                return;
            }
            if slot.0 == key {
                slot.1 = value;
                return;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<f64> {
        let mut i = self.home(key);
        loop {
            let (k, v) = self.slots[i];
            if k == key {
                return Some(v);
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
        let mut t = ValueTable::with_capacity(1000);
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
    fn planned_bytes_are_the_allocation() {
        for n in [0usize, 1, 10, 1000, 123_457] {
            let t = ValueTable::with_capacity(n);
            assert_eq!(ValueTable::bytes_for(n), t.heap_bytes(), "capacity {n}");
        }
        // 16-byte slots, 1.5 slots per state.
        assert_eq!(ValueTable::bytes_for(1_000_000), 24_000_000);
    }
}
