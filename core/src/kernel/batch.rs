//! How many states a rayon job takes at a time inside a kernel ([`BATCH`]),
//! the one concatenation of what the jobs made ([`concat`], [`append`]),
//! and the cut of a buffer into the places jobs fill apart ([`places`]).

use rayon::prelude::*;

/// States a rayon job takes at a time inside a kernel.
pub(super) const BATCH: usize = 1024;

/// Keys from which [`concat`] copies on all threads.
const PARALLEL_CONCAT_FROM: usize = 1 << 18;

/// `pieces` one after another, copied on all threads when they are many
/// keys (rayon's own collect of an unindexed iterator appends them on one).
pub(super) fn concat(pieces: Vec<Vec<u64>>) -> Vec<u64> {
    if pieces.len() == 1 {
        return pieces.into_iter().next().expect("one piece");
    }
    let mut out = Vec::new();
    append(&mut out, pieces);
    out
}

/// `pieces` appended to `out` one after another, copied on all threads when
/// they are many keys; `out` grows as `extend` grows it.
pub(super) fn append(out: &mut Vec<u64>, pieces: Vec<Vec<u64>>) {
    let total = pieces.iter().map(Vec::len).sum();
    out.reserve(total);
    if total < PARALLEL_CONCAT_FROM {
        pieces.iter().for_each(|p| out.extend_from_slice(p));
        return;
    }
    let start = out.len();
    let spare = &mut out.spare_capacity_mut()[..total];
    places(spare, pieces.iter().map(Vec::len))
        .into_par_iter()
        .zip(pieces.par_iter())
        .for_each(|(place, p)| {
            place.iter_mut().zip(p).for_each(|(to, &key)| {
                to.write(key);
            })
        });
    // SAFETY: the `total` places after `start` were reserved above and each
    // was written, by the piece whose place it is.
    unsafe { out.set_len(start + total) };
}

/// `buffer` cut into consecutive places of `lens` items each, for threads
/// to fill apart; panics if they pass its end.
pub(crate) fn places<T>(
    mut buffer: &mut [T],
    lens: impl IntoIterator<Item = usize>,
) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for n in lens {
        let (place, rest) = buffer.split_at_mut(n);
        out.push(place);
        buffer = rest;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of few keys in all (copied on one thread) and of many (on
    /// all threads), with empty ones among them.
    fn pieces() -> [Vec<Vec<u64>>; 2] {
        let made = |n: u64, len: fn(u64) -> u64| -> Vec<Vec<u64>> {
            (0..n)
                .map(|i| (0..len(i)).map(|k| i * 100_000 + k).collect())
                .collect()
        };
        let [few, many] = [made(300, |i| i % 7), made(40, |i| i * 400)];
        let total = |p: &[Vec<u64>]| p.iter().map(Vec::len).sum::<usize>();
        assert!(total(&few) < PARALLEL_CONCAT_FROM && total(&many) >= PARALLEL_CONCAT_FROM);
        [few, many]
    }

    #[test]
    fn concat_keeps_the_order() {
        for pieces in pieces() {
            let want: Vec<u64> = pieces.iter().flatten().copied().collect();
            assert_eq!(concat(pieces), want);
        }
        assert!(concat(Vec::new()).is_empty());
        assert_eq!(concat(vec![vec![3, 4]]), vec![3, 4]);
    }

    /// Pieces appended after the keys there are.
    #[test]
    fn append_keeps_what_was_there() {
        for pieces in pieces() {
            let mut out = vec![1, 2, 3];
            let mut want = out.clone();
            want.extend(pieces.iter().flatten());
            append(&mut out, pieces);
            assert_eq!(out, want);
        }
    }
}
