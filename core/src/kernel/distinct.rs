//! Keys sorted with their repeats dropped: by sorting them all
//! ([`sort_distinct`]), or, where most keys repeat (a chunk's afterstates:
//! about four made for each distinct one), by dropping the repeats first in
//! hash buckets that fit in a core's cache and sorting only the distinct
//! keys ([`distinct_of_pieces`]).

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::batch::{concat, places};

/// Sort `keys` and drop their repeats; a large set on all the worker's
/// threads. The way for keys that seldom repeat (an expand's spawns: about
/// 1.3 made for each distinct one), where dropping repeats first does not
/// pay.
pub fn sort_distinct(keys: &mut Vec<u64>) {
    sort(keys);
    keys.dedup();
}

/// Sort `keys`: many of them on all the worker's threads, where it has more
/// than one ([`sort_on`]); else by the standard library's sort. On one
/// thread that took 12.7 ns a key against 20.3 for rayon's (the 2.2 M
/// spawns of 4x4 to 16's largest layer).
fn sort(keys: &mut [u64]) {
    sort_on(keys, rayon::current_num_threads());
}

/// Keys from which [`sort_on`] sorts on all threads.
const PARALLEL_SORT_FROM: usize = 1 << 16;

/// Sort `keys` on `ways` threads, in place: a quicksort whose partitions
/// are made on all of them ([`partition_on`]) down to one piece a thread,
/// each piece then sorted by the standard library's sort. The pivot cuts a
/// sample of the keys in the ratio of the threads each side gets. Rayon's
/// own parallel sort partitions its whole input on one thread first, and
/// its sort of a piece is an older one, slower by half again: on two
/// threads it spent 20 ns of core time a key.
fn sort_on(keys: &mut [u64], ways: usize) {
    if ways <= 1 || keys.len() <= PARALLEL_SORT_FROM {
        keys.sort_unstable();
        return;
    }
    // The lower keys go to `ways / 2` threads, the upper to the rest.
    let low_ways = ways / 2;
    let pivot = sample_quantile(keys, low_ways as f64 / ways as f64);
    let below = partition_on(keys, &|key| key < pivot, ways);
    if below == 0 {
        // The pivot is the least key: its copies go first, sorted as they
        // are, and the rest is sorted again (the pivot is in `keys`, so
        // fewer remain).
        let least = partition_on(keys, &|key| key == pivot, ways);
        sort_on(&mut keys[least..], ways);
        return;
    }
    let (low, high) = keys.split_at_mut(below);
    rayon::join(|| sort_on(low, low_ways), || sort_on(high, ways - low_ways));
}

/// The key at `share` (from 0 to 1) of the way up a sample of 255 keys
/// spread evenly over `keys` (not empty).
fn sample_quantile(keys: &[u64], share: f64) -> u64 {
    const SAMPLE: usize = 255;
    let step = (keys.len() / SAMPLE).max(1);
    let mut sample: Vec<u64> = keys.iter().step_by(step).copied().collect();
    let at = ((sample.len() as f64 * share) as usize).min(sample.len() - 1);
    *sample.select_nth_unstable(at).1
}

/// Move the keys of `keys` that are `below` to its front, in no order, on
/// `ways` threads; returns how many there are. Each half is partitioned
/// apart, then the upper keys of the first half and the lower ones of the
/// second trade places (a rotation).
fn partition_on(keys: &mut [u64], below: &(impl Fn(u64) -> bool + Sync), ways: usize) -> usize {
    if ways <= 1 || keys.len() <= PARALLEL_SORT_FROM {
        return partition(keys, below);
    }
    let half = keys.len() / 2;
    let (first, second) = keys.split_at_mut(half);
    let (a, b) = rayon::join(
        || partition_on(first, below, ways / 2),
        || partition_on(second, below, ways - ways / 2),
    );
    keys[a..half + b].rotate_left(half - a);
    a + b
}

/// [`partition_on`] on one thread, with no branch on the keys: each key is
/// swapped with the first that is not below, which moves on past it when
/// it is below.
fn partition(keys: &mut [u64], below: impl Fn(u64) -> bool) -> usize {
    let mut low = 0;
    for i in 0..keys.len() {
        let key = keys[i];
        keys.swap(i, low);
        low += usize::from(below(key));
    }
    low
}

/// Keys from which [`distinct_of_pieces`] drops repeats in buckets; fewer
/// are sorted whole.
const BUCKETS_FROM: usize = 1 << 16;

/// Keys a bucket holds on average: its hash set (twice as many slots of 8
/// bytes) stays in a core's L2 cache.
const BUCKET_KEYS: usize = 8192;

/// Most buckets: 16 Ki, for 128 Mi keys and more.
const MAX_BUCKET_BITS: u32 = 14;

/// The multiplier of the keys' hash: its top bits pick the bucket, the bits
/// below them the slot in the bucket's set.
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// The distinct keys of `pieces` (as the threads made them), sorted.
///
/// Each key is copied once, into the bucket that the top bits of its hash
/// pick (the pieces in a few groups, on all threads); each bucket drops its
/// repeats in a hash set that stays in cache; the distinct keys are sorted.
/// On a chunk's afterstates (4.2 made for each distinct one, 4x4 to 16) this
/// took 13.5 ns a key made on one thread and 7.4 on two, where concatenating
/// and sorting them took 24 and 15 to 18. It holds the pieces and one copy of
/// their keys, as concatenating them does.
pub(crate) fn distinct_of_pieces(pieces: Vec<Vec<u64>>) -> Vec<u64> {
    let total: usize = pieces.iter().map(Vec::len).sum();
    if total < BUCKETS_FROM {
        let mut keys = concat(pieces);
        sort_distinct(&mut keys);
        return keys;
    }
    let bits = (total / BUCKET_KEYS).ilog2().min(MAX_BUCKET_BITS);
    let (mut keys, sizes) = scatter(&pieces, bits, total);
    drop(pieces);
    let kept: Vec<usize> = places(&mut keys, sizes.iter().copied())
        .into_par_iter()
        .map_init(Vec::new, |set, bucket| drop_repeats(bucket, set, bits))
        .collect();
    let (mut to, mut from) = (0, 0);
    for (&kept, &size) in kept.iter().zip(&sizes) {
        keys.copy_within(from..from + kept, to);
        (to, from) = (to + kept, from + size);
    }
    keys.truncate(to);
    sort(&mut keys);
    keys
}

/// The bucket of `key`: the top `bits` of its hash.
#[inline(always)]
fn bucket_of(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(MUL) >> (64 - bits)) as usize
}

/// The `total` keys of `pieces` copied bucket by bucket (`bits` bits of
/// buckets), and the size of each bucket. The pieces are taken in a few
/// groups on all threads: each group counts its keys of each bucket, then
/// copies them to its own places in the buckets.
fn scatter(pieces: &[Vec<u64>], bits: u32, total: usize) -> (Vec<u64>, Vec<usize>) {
    let buckets = 1usize << bits;
    let groups = (4 * rayon::current_num_threads()).clamp(1, pieces.len().max(1));
    let groups: Vec<&[Vec<u64>]> = pieces.chunks(pieces.len().div_ceil(groups)).collect();
    let counts: Vec<Vec<usize>> = groups
        .par_iter()
        .map(|group| {
            let mut count = vec![0usize; buckets];
            for &key in group.iter().flatten() {
                count[bucket_of(key, bits)] += 1;
            }
            count
        })
        .collect();
    let mut keys: Vec<u64> = Vec::with_capacity(total);
    // Bucket by bucket, each group's place in it.
    let lens = (0..buckets).flat_map(|b| counts.iter().map(move |count| count[b]));
    let mut to: Vec<Vec<&mut [MaybeUninit<u64>]>> = groups.iter().map(|_| Vec::new()).collect();
    for (i, place) in places(&mut keys.spare_capacity_mut()[..total], lens)
        .into_iter()
        .enumerate()
    {
        to[i % groups.len()].push(place);
    }
    groups.par_iter().zip(to).for_each(|(group, mut to)| {
        let mut next = vec![0usize; buckets];
        for &key in group.iter().flatten() {
            let b = bucket_of(key, bits);
            to[b][next[b]].write(key);
            next[b] += 1;
        }
    });
    // SAFETY: the `total` places were reserved above, and each was written:
    // a group's places in a bucket hold as many keys as it counted there.
    unsafe { keys.set_len(total) };
    let sizes = (0..buckets)
        .map(|b| counts.iter().map(|count| count[b]).sum())
        .collect();
    (keys, sizes)
}

/// Keep the first of each key of `bucket` (whose hashes share their top
/// `bits`), in order, at its front, with `set` as the hash set; returns how
/// many were kept.
fn drop_repeats(bucket: &mut [u64], set: &mut Vec<u64>, bits: u32) -> usize {
    // A free slot holds FREE; the key FREE itself is kept apart.
    const FREE: u64 = u64::MAX;
    let slots = (2 * bucket.len()).next_power_of_two().max(16);
    set.clear();
    set.resize(slots, FREE);
    let (mask, below) = (slots - 1, slots.trailing_zeros());
    let (mut kept, mut free_seen) = (0, false);
    for i in 0..bucket.len() {
        let key = bucket[i];
        let fresh = if key == FREE {
            !std::mem::replace(&mut free_seen, true)
        } else {
            let mut slot = ((key.wrapping_mul(MUL) << bits) >> (64 - below)) as usize;
            loop {
                match set[slot] {
                    k if k == key => break false,
                    FREE => {
                        set[slot] = key;
                        break true;
                    }
                    _ => slot = (slot + 1) & mask,
                }
            }
        };
        if fresh {
            bucket[kept] = key;
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys with many repeats, far apart and near, u64::MAX and 0 among them.
    fn repeated(n: u64) -> Vec<Vec<u64>> {
        let keys: Vec<u64> = (0..n)
            .map(|i| match i % 1000 {
                7 => u64::MAX,
                8 => 0,
                _ => (i * 7919 % (n / 6 + 1)).wrapping_mul(0x2545_F491_4F6C_DD1D),
            })
            .collect();
        let mut pieces: Vec<Vec<u64>> = keys.chunks(3001).map(<[u64]>::to_vec).collect();
        pieces.insert(pieces.len().min(3), Vec::new());
        pieces
    }

    fn sorted_distinct(pieces: &[Vec<u64>]) -> Vec<u64> {
        let mut want: Vec<u64> = pieces.concat();
        want.sort_unstable();
        want.dedup();
        want
    }

    /// Pieces above and below BUCKETS_FROM, on one thread and on three:
    /// their keys sorted, each once.
    #[test]
    fn distinct_of_pieces_is_sorted_and_distinct() {
        for n in [0, 5, 40_000, 300_000, 1_000_000] {
            let pieces = repeated(n);
            let want = sorted_distinct(&pieces);
            if n >= 300_000 {
                assert!(pieces.concat().len() >= BUCKETS_FROM);
                assert!(want.len() * 4 < pieces.concat().len(), "keys repeat");
            }
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let got = pool.install(|| distinct_of_pieces(pieces.clone()));
                assert_eq!(got, want, "{n} keys, {threads} threads");
            }
        }
        assert!(distinct_of_pieces(Vec::new()).is_empty());
    }

    /// Sorts on pools of 1 to 4 threads, of keys above and below
    /// PARALLEL_SORT_FROM, as the standard library sorts them: random ones;
    /// few values repeated, two in three the least (so the pivot is the
    /// least key); all equal; sorted; reversed; u64::MAX and 0 among them.
    #[test]
    fn sort_is_the_standard_sort() {
        let n = 5 * PARALLEL_SORT_FROM as u64;
        let random = |i: u64| (i ^ 0x5DEE_CE66).wrapping_mul(0x2545_F491_4F6C_DD1D);
        let inputs: Vec<Vec<u64>> = vec![
            (0..n).map(random).collect(),
            (0..n)
                .map(|i| if i % 3 == 0 { 5 + random(i) % 7 } else { 5 })
                .collect(),
            vec![9; n as usize],
            (0..n).collect(),
            (0..n).rev().collect(),
            (0..n)
                .map(|i| [u64::MAX, 0, random(i)][(i % 3) as usize])
                .collect(),
            (0..1000).map(random).collect(),
        ];
        for keys in inputs {
            let mut want = keys.clone();
            want.sort_unstable();
            for threads in [1, 2, 3, 4] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut got = keys.clone();
                pool.install(|| sort(&mut got));
                assert!(got == want, "{} keys, {threads} threads", keys.len());
            }
        }
    }

    /// A partition puts the keys below first, on one thread and on several.
    #[test]
    fn a_partition_puts_the_keys_below_first() {
        let keys: Vec<u64> = (0..300_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9) % 1000)
            .collect();
        for ways in [1, 2, 3] {
            let mut got = keys.clone();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(ways)
                .build()
                .unwrap();
            let below = pool.install(|| partition_on(&mut got, &|k| k < 300, ways));
            assert_eq!(below, keys.iter().filter(|&&k| k < 300).count());
            assert!(got[..below].iter().all(|&k| k < 300), "{ways} ways");
            assert!(got[below..].iter().all(|&k| k >= 300), "{ways} ways");
            got.sort_unstable();
            let mut want = keys.clone();
            want.sort_unstable();
            assert_eq!(got, want, "the same keys");
        }
    }

    /// Each key kept once, in the order of its first arrival, u64::MAX too.
    #[test]
    fn a_bucket_keeps_the_first_of_each_key() {
        let mut bucket = vec![5, u64::MAX, 3, 5, 9, u64::MAX, 3, 0, 0];
        let kept = drop_repeats(&mut bucket, &mut Vec::new(), 3);
        assert_eq!(&bucket[..kept], &[5, u64::MAX, 3, 9, 0]);
    }
}
