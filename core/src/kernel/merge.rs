//! The merge kernel: sorted runs into one sorted, distinct list.

/// Merge sorted runs into one sorted, distinct list.
///
/// Each run is a stream of strictly increasing keys (a run object read with
/// [`crate::chunk::stream_keys`]), merged k ways through a heap that holds
/// one key per run: memory is the output and the runs' compressed bytes, not
/// every key of every run. A group's runs hold several times its states
/// (21 times a chunk for the largest group of 4x4 to 32), so this bounds a
/// merge by what it writes. A run's error stops the merge and comes back
/// with the run's index.
pub fn merge<E, R>(runs: Vec<R>) -> Result<Vec<u64>, (usize, E)>
where
    R: Iterator<Item = Result<u64, E>>,
{
    use std::cmp::Reverse;
    use std::collections::binary_heap::{BinaryHeap, PeekMut};
    let mut runs = runs;
    let mut heap = BinaryHeap::with_capacity(runs.len());
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some(key) = run.next() {
            heap.push(Reverse((key.map_err(|e| (i, e))?, i)));
        }
    }
    let mut out: Vec<u64> = Vec::new();
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((key, i)) = *top;
        if out.last() != Some(&key) {
            out.push(key);
        }
        match runs[i].next() {
            // Replacing the top sifts it down once, cheaper than pop + push.
            Some(Ok(next)) => *top = Reverse((next, i)),
            Some(Err(e)) => return Err((i, e)),
            None => {
                PeekMut::pop(top);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(merge(runs(vec![vec![], vec![7]])), Ok(vec![7]));
    }

    /// The k-way merge against the obvious one: concatenate, sort, dedup.
    #[test]
    fn merge_equals_sorting_everything() {
        for k in [1usize, 2, 5, 64] {
            let input: Vec<Vec<u64>> = (0..k as u64)
                .map(|r| {
                    let mut v: Vec<u64> = (0..(r * 37 % 500))
                        .map(|i| crate::part::mix(r * 1000 + i) % 2000)
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
}
