//! The in-memory value table of one layer, looked up by the solve kernel.
//!
//! Open addressing with linear probing over interleaved `(state, value)` slots,
//! so that a lookup usually costs one cache line. The empty board (key 0) is
//! never a state and marks a free slot. At most 2/3 full.

use crate::part::mix;

/// Map from canonical state to value for one layer.
pub struct ValueTable {
    slots: Vec<(u64, f64)>,
    shift: u32,
    len: usize,
}

impl ValueTable {
    /// An empty table sized for `capacity` states.
    pub fn with_capacity(capacity: usize) -> ValueTable {
        let want = (capacity.max(1) * 3)
            .div_ceil(2)
            .next_power_of_two()
            .max(16);
        ValueTable {
            slots: vec![(0, 0.0); want],
            shift: 64 - want.trailing_zeros(),
            len: 0,
        }
    }

    /// Number of states held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of memory the slots take.
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<(u64, f64)>()
    }

    #[inline(always)]
    fn home(&self, key: u64) -> usize {
        (mix(key) >> self.shift) as usize
    }

    /// Insert or overwrite. Panics on key 0 (not a state) or a full table,
    /// both programming errors.
    pub fn insert(&mut self, key: u64, value: f64) {
        assert!(key != 0, "the empty board is not a state");
        assert!(
            self.len * 3 < self.slots.len() * 2,
            "value table over capacity"
        );
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == 0 {
                *slot = (key, value);
                self.len += 1;
                return;
            }
            if slot.0 == key {
                slot.1 = value;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<f64> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, v) = self.slots[i];
            if k == key {
                return Some(v);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & mask;
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
}
