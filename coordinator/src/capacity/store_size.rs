//! The size of a solved store, from bytes a state measured on real 4x4
//! stores made with the default chunk size.

use serde::Serialize;

/// Bytes on disk a state of `states/` objects (zstd level 3, default chunk
/// size): measured on 4x4 to 32 (`solve --board 4 --target 32`, README
/// "Measured").
pub const STATES_BYTES_PER_STATE: f64 = 0.39;

/// Bytes on disk a state of `values/` objects. 4x4 to 32 needs almost
/// nothing (every value is 1); a game whose values vary takes more: 0.35 on
/// 4x4 to 16 at discount 0.99, 3.37 on 3x3 to 1024. Planned at the 3x3
/// figure, since a 4x4-to-64 or -128 store has values that vary as much;
/// an f64 never takes more than 8.
pub const VALUES_BYTES_PER_STATE: f64 = 3.37;

/// Bytes on disk a state of `policy/` objects: 0.03 on 4x4 to 32, 0.18 on
/// 4x4 to 16 at discount 0.99, 0.59 on 3x3 to 1024; planned at the 4x4 one
/// with varied values.
pub const POLICY_BYTES_PER_STATE: f64 = 0.18;

/// What the store size rests on.
pub const STORE_NOTE: &str = "store: measured bytes a state at the default chunk size and zstd \
     level 3: states 0.39 (4x4 to 32), values 3.37 (3x3 to 1024; 4x4 to 32 takes ~0 and 4x4 to 16 \
     at discount 0.99 0.35, so this is an upper figure for a game whose values vary), policy 0.18 \
     (4x4 to 16 at discount 0.99); transient objects (runs, requests, responses awaiting their \
     readers, a few layers at a time) not included";

/// The size of a solved store.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StoreSize {
    /// `states/` objects.
    pub states_bytes: u64,
    /// `values/` objects.
    pub values_bytes: u64,
    /// `policy/` objects.
    pub policy_bytes: u64,
    /// All three.
    pub total_bytes: u64,
}

/// The store size of a job with `states` states.
pub fn store_size(states: u64) -> StoreSize {
    let b = |per: f64| (states as f64 * per) as u64;
    let (s, v, p) = (
        b(STATES_BYTES_PER_STATE),
        b(VALUES_BYTES_PER_STATE),
        b(POLICY_BYTES_PER_STATE),
    );
    StoreSize {
        states_bytes: s,
        values_bytes: v,
        policy_bytes: p,
        total_bytes: s + v + p,
    }
}
