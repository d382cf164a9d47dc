//! The merge kernel: sorted runs into one sorted, distinct list, read as it
//! is merged; the split of a large group's runs into key ranges that merge
//! apart; and a cursor through sorted keys ([`seek`]).

/// Merge sorted runs into one sorted, distinct list ([`Merged`], collected).
pub fn merge<E, R>(runs: Vec<R>) -> Result<Vec<u64>, (usize, E)>
where
    R: Iterator<Item = Result<u64, E>>,
{
    Merged::new(runs).collect()
}

/// The keys of sorted runs, merged into one sorted, distinct sequence as it
/// is read.
///
/// Each run is a stream of strictly increasing keys (a run object read with
/// [`crate::formats::chunk::stream_keys`]), merged k ways through a tree of losers
/// that holds one key per run: memory is the runs' compressed bytes and
/// whatever the reader keeps, not every key of every run. A group's runs
/// hold several times its states (5.5 times for the largest group of 4x4 to
/// 32), so a merge that writes its output as it goes is bounded by one
/// chunk. A run's error ends the sequence and comes back with the run's
/// index.
///
/// Each key replays one leaf-to-root path of matches, a comparison and two
/// selects a level with no branch on the outcome. With a binary heap in its
/// place, the merge loop took about a quarter of a profile of the forward
/// pass of 4x4 to 32; the same 128-run merges take 0.6 times as long
/// with the tree (the `merge_128_runs` benchmark's input).
pub struct Merged<R> {
    runs: Vec<R>,
    /// `losers[j]` for `j` in `1..k`: the head (key, run) that lost the
    /// match at node `j`, whose children are nodes `2j` and `2j + 1`, the
    /// leaf of run `i` being node `k + i`.
    losers: Vec<Head>,
    /// The head that won every match: the least key.
    winner: Head,
    last: Option<u64>,
    started: bool,
    done: bool,
}

/// A run's current key and the run's index; [`ENDED`] once it has no more.
type Head = (u64, usize);

/// The head of a run that has ended: above every key of every run.
const ENDED: Head = (u64::MAX, usize::MAX);

impl<E, R> Merged<R>
where
    R: Iterator<Item = Result<u64, E>>,
{
    /// The merge of `runs`.
    pub fn new(runs: Vec<R>) -> Merged<R> {
        Merged {
            runs,
            losers: Vec::new(),
            winner: ENDED,
            last: None,
            started: false,
            done: false,
        }
    }

    /// Run `i`'s next head.
    #[inline]
    fn advance(&mut self, i: usize) -> Result<Head, (usize, E)> {
        match self.runs[i].next() {
            Some(Ok(key)) => Ok((key, i)),
            Some(Err(e)) => Err((i, e)),
            None => Ok(ENDED),
        }
    }

    /// Read each run's first key and play every match, bottom-up.
    fn start(&mut self) -> Result<(), (usize, E)> {
        self.started = true;
        let k = self.runs.len();
        // `won[j]`: the head that wins node j's subtree.
        let mut won = vec![ENDED; 2 * k];
        for i in 0..k {
            won[k + i] = self.advance(i)?;
        }
        self.losers = vec![ENDED; k];
        for j in (1..k).rev() {
            let (a, b) = (won[2 * j], won[2 * j + 1]);
            won[j] = a.min(b);
            self.losers[j] = a.max(b);
        }
        self.winner = if k == 0 { ENDED } else { won[1] };
        Ok(())
    }

    /// Replay the matches on the path of run `i`'s leaf to the root with its
    /// new head `head`.
    #[inline]
    fn replay(&mut self, i: usize, head: Head) {
        let losers = &mut self.losers[..];
        let mut win = head;
        let mut node = (losers.len() + i) / 2;
        while node >= 1 {
            let other = losers[node];
            let swap = other < win;
            losers[node] = if swap { win } else { other };
            win = if swap { other } else { win };
            node /= 2;
        }
        self.winner = win;
    }

    /// The least head of all the runs, and the index of its run, taken
    /// from that run; repeats are not skipped. `None` once every run ended.
    pub fn next_head(&mut self) -> Result<Option<(u64, usize)>, (usize, E)> {
        if !self.started {
            self.start()?;
        }
        let (key, i) = self.winner;
        if (key, i) == ENDED {
            return Ok(None);
        }
        let next = self.advance(i)?;
        self.replay(i, next);
        Ok(Some((key, i)))
    }

    fn step(&mut self) -> Result<Option<u64>, (usize, E)> {
        while let Some((key, _)) = self.next_head()? {
            if self.last != Some(key) {
                self.last = Some(key);
                return Ok(Some(key));
            }
        }
        Ok(None)
    }
}

impl<E, R> Iterator for Merged<R>
where
    R: Iterator<Item = Result<u64, E>>,
{
    type Item = Result<u64, (usize, E)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let out = self.step().transpose();
        if !matches!(out, Some(Ok(_))) {
            self.done = true;
        }
        out
    }
}

/// Split points that cut the keys of runs into `pieces` ranges of about
/// equal size, from each run's samples (keys at evenly spaced ranks) and key
/// count: `pieces - 1` increasing keys. Fewer when the samples cannot
/// separate that many.
pub fn splitters(runs: &[(u64, &[u64])], pieces: usize) -> Vec<u64> {
    let mut weighted: Vec<(u64, f64)> = Vec::new();
    for &(count, samples) in runs {
        if samples.is_empty() {
            continue;
        }
        let w = count as f64 / samples.len() as f64;
        weighted.extend(samples.iter().map(|&k| (k, w)));
    }
    weighted.sort_unstable_by_key(|&(k, _)| k);
    let total: f64 = weighted.iter().map(|&(_, w)| w).sum();
    let mut out: Vec<u64> = Vec::new();
    let mut acc = 0.0;
    let mut next = 1;
    for &(k, w) in &weighted {
        acc += w;
        if next < pieces && acc >= total * next as f64 / pieces as f64 {
            if out.last().is_none_or(|&l| k > l) {
                out.push(k);
            }
            next += 1;
        }
    }
    out
}

/// The first index from `from` on at which sorted `keys` holds `key` or a
/// larger key: steps that double, then a binary search within the last, so
/// a cursor that moves a little costs little (with a binary search over the
/// rest, the function that answers requests took 14% of a profile of the
/// backward pass of 4x4 to 32).
pub fn seek(keys: &[u64], from: usize, key: u64) -> usize {
    let (mut lo, mut step) = (from, 1);
    while lo + step < keys.len() && keys[lo + step] < key {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(keys.len());
    lo + keys[lo.min(hi)..hi].partition_point(|&u| u < key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The galloping cursor finds what a binary search over the rest finds,
    /// from every start and for keys below, between, on and above the keys.
    #[test]
    fn seek_is_a_binary_search_of_the_rest() {
        let keys: Vec<u64> = (0..300u64).map(|i| 3 * i).collect();
        for from in [0usize, 1, 5, 64, 299, 300] {
            for key in 0..950u64 {
                let want = from + keys[from..].partition_point(|&u| u < key);
                assert_eq!(seek(&keys, from, key), want, "from {from} key {key}");
            }
        }
        assert_eq!(seek(&[], 0, 5), 0);
    }

    fn runs(runs: Vec<Vec<u64>>) -> Vec<impl Iterator<Item = Result<u64, String>>> {
        runs.into_iter().map(|r| r.into_iter().map(Ok)).collect()
    }

    #[test]
    fn merge_dedups() {
        assert_eq!(
            merge(runs(vec![
                vec![0x1, 0x4, 0x21],
                vec![0x2, 0x4, 0x31],
                vec![0x21]
            ])),
            Ok(vec![0x1, 0x2, 0x4, 0x21, 0x31])
        );
        assert_eq!(merge(runs(vec![])), Ok(vec![]));
        // The largest key is a key like any other, not an end mark.
        assert_eq!(
            merge(runs(vec![vec![1, u64::MAX], vec![u64::MAX], vec![2]])),
            Ok(vec![1, 2, u64::MAX])
        );
        assert_eq!(merge(runs(vec![vec![], vec![7]])), Ok(vec![7]));
    }

    /// The k-way merge against the obvious one: concatenate, sort, dedup.
    #[test]
    fn merge_equals_sorting_everything() {
        for k in [1usize, 2, 3, 5, 64, 100] {
            let input: Vec<Vec<u64>> = (0..k as u64)
                .map(|r| {
                    let mut v: Vec<u64> = (0..(r * 37 % 500))
                        .map(|i| crate::space::ids::mix(r * 1000 + i) % 2000)
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            let mut expect: Vec<u64> = input.concat();
            expect.sort_unstable();
            expect.dedup();
            assert_eq!(merge(runs(input)), Ok(expect), "{k} runs");
        }
    }

    #[test]
    fn a_failing_run_stops_the_merge_and_is_named() {
        let bad = vec![Ok(1), Ok(5), Err("cut off".to_string())].into_iter();
        let good = vec![Ok(2), Ok(3)].into_iter();
        let ok: Vec<Box<dyn Iterator<Item = Result<u64, String>>>> =
            vec![Box::new(good), Box::new(bad)];
        assert_eq!(merge(ok), Err((1, "cut off".to_string())));
    }

    #[test]
    fn pieces_by_key_range_cover_the_merge() {
        let input: Vec<Vec<u64>> = (0..9u64)
            .map(|r| {
                let mut v: Vec<u64> = (0..400)
                    .map(|i| crate::space::ids::mix(r * 1000 + i) % 5000)
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let whole = merge(runs(input.clone())).unwrap();
        let samples: Vec<Vec<u64>> = input
            .iter()
            .map(|r| (0..16).map(|i| r[i * r.len() / 16]).collect())
            .collect();
        let with_counts: Vec<(u64, &[u64])> = input
            .iter()
            .zip(&samples)
            .map(|(r, s)| (r.len() as u64, s.as_slice()))
            .collect();
        let cut = splitters(&with_counts, 4);
        assert_eq!(cut.len(), 3);
        assert!(cut.windows(2).all(|w| w[0] < w[1]));
        let bounds: Vec<u64> = std::iter::once(0)
            .chain(cut.iter().copied())
            .chain(std::iter::once(u64::MAX))
            .collect();
        let mut pieces = Vec::new();
        for w in bounds.windows(2) {
            let in_range = input.iter().map(|r| {
                r.iter()
                    .copied()
                    .filter(|&k| (w[0]..w[1]).contains(&k))
                    .collect()
            });
            let streams = runs(in_range.collect());
            let piece = merge(streams).unwrap();
            // About a quarter each.
            assert!(
                piece.len() > whole.len() / 8,
                "{} of {}",
                piece.len(),
                whole.len()
            );
            pieces.extend(piece);
        }
        assert_eq!(pieces, whole);
        assert!(splitters(&[(5, &[][..])], 4).is_empty());
    }
}
