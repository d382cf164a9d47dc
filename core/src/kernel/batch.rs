//! How many states a rayon job takes at a time inside a kernel ([`BATCH`]).

/// States a rayon job takes at a time inside a kernel.
pub(super) const BATCH: usize = 1024;
