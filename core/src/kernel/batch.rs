//! How many states a rayon job takes at a time inside a kernel ([`BATCH`]),
//! and the one concatenation of what the jobs made ([`concat`]).

use rayon::prelude::*;

/// States a rayon job takes at a time inside a kernel.
pub(super) const BATCH: usize = 1024;

/// Keys from which [`concat`] copies on all threads.
const PARALLEL_CONCAT_FROM: usize = 1 << 18;

/// `pieces` one after another, copied on all threads when they are many
/// keys (rayon's own collect of an unindexed iterator appends them on one).
pub(super) fn concat(pieces: Vec<Vec<u64>>) -> Vec<u64> {
    let total = pieces.iter().map(Vec::len).sum();
    if pieces.len() == 1 {
        return pieces.into_iter().next().expect("one piece");
    }
    if total < PARALLEL_CONCAT_FROM {
        return pieces.concat();
    }
    let mut out = vec![0u64; total];
    let mut places = Vec::with_capacity(pieces.len());
    let mut rest = out.as_mut_slice();
    for p in &pieces {
        let (place, more) = rest.split_at_mut(p.len());
        places.push(place);
        rest = more;
    }
    places
        .into_par_iter()
        .zip(pieces.par_iter())
        .for_each(|(place, p)| place.copy_from_slice(p));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concat_keeps_the_order() {
        // Few keys, copied on one thread, and many, on all.
        for (n, len) in [(300u64, 7u64), (40, 10_000)] {
            let pieces: Vec<Vec<u64>> = (0..n)
                .map(|i| (0..i % len).map(|k| i * 100_000 + k).collect())
                .collect();
            let want: Vec<u64> = pieces.iter().flatten().copied().collect();
            assert_eq!(concat(pieces), want);
        }
        assert!(concat(Vec::new()).is_empty());
        assert_eq!(concat(vec![vec![3, 4]]), vec![3, 4]);
    }
}
