//! The slice of a group that a gather task takes, and the union of its
//! requests, which finds where each request's afterstates lie among those
//! it answers.

use solve2048_core::formats::chunk::{self, ChunkHeader, FormatError};
use solve2048_core::kernel;
use solve2048_core::kernel::value_table::ValueTable;
use solve2048_core::space::ids::SliceMemo;
use solve2048_core::task::{GatherPiece, SLICE_INSERT_KEYS};
use solve2048_core::Shape;

use super::error::WorkerError;
use super::run::Run;

/// A gather's requests in one slice: their distinct afterstates there,
/// sorted, and where each request's afterstates in the slice lie among
/// them, found as they are merged (each request is decoded once).
pub(super) struct Union {
    /// The distinct afterstates, sorted.
    pub(super) keys: Vec<u64>,
    /// For each request, the index in `keys` of each of its afterstates in
    /// the slice, in the request's order.
    pub(super) places: Vec<Vec<u32>>,
}

/// The slice of a group a gather task takes ([`solve2048_core::space::ids::slice_of`]):
/// its states and the afterstates it answers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slice {
    pub(super) index: u32,
    pub(super) of: u32,
}

impl Slice {
    /// The whole group.
    pub(super) const WHOLE: Slice = Slice { index: 0, of: 1 };

    /// A test of whether a key (a state or an afterstate of an `n` x `n`
    /// game) is in it, for many keys ([`SliceMemo`]).
    pub(super) fn holds(self, n: Shape) -> impl FnMut(u64) -> bool {
        let mut memo = (self.of > 1).then(|| SliceMemo::new(n, self.of));
        move |key| memo.as_mut().is_none_or(|m| m.slice_of(key) == self.index)
    }

    /// Sorted `keys` (states or afterstates of an `n` x `n` game) cut into
    /// the `of` slices of their group, each in order: one pass over them,
    /// where a filter a slice ([`Self::holds`]) passes over them all once
    /// for each slice.
    pub(super) fn split(keys: Vec<u64>, of: u32, n: Shape) -> Vec<Vec<u64>> {
        let mut memo = SliceMemo::new(n, of);
        let mut pieces = vec![Vec::with_capacity(keys.len() / of as usize); of as usize];
        for k in keys {
            pieces[memo.slice_of(k) as usize].push(k);
        }
        pieces
    }

    /// The (key, value) pairs of `pairs` whose key is in it, unzipped.
    pub(super) fn keep(
        self,
        n: Shape,
        pairs: impl Iterator<Item = (u64, f64)>,
    ) -> (Vec<u64>, Vec<f64>) {
        let mut holds = self.holds(n);
        pairs.filter(|&(k, _)| holds(k)).unzip()
    }

    /// `table` with the states of one chunk that lie in this slice added,
    /// with their values: all at once for the whole group, else
    /// [`SLICE_INSERT_KEYS`] states at a time, so that beside the table only
    /// one piece's kept states and their partition are held. None once they
    /// would pass the table's capacity.
    pub(super) fn fill(
        self,
        mut table: ValueTable,
        n: Shape,
        states: &[u64],
        values: &[f64],
    ) -> Option<ValueTable> {
        if self.of <= 1 {
            if table.len() + states.len() > table.capacity() {
                return None;
            }
            table.insert_many(states, values);
            return Some(table);
        }
        let mut holds = self.holds(n);
        let piece = SLICE_INSERT_KEYS as usize;
        let (mut keys, mut kept) = (Vec::with_capacity(piece), Vec::with_capacity(piece));
        for (s, v) in states.chunks(piece).zip(values.chunks(piece)) {
            keys.clear();
            kept.clear();
            for (&k, &x) in s.iter().zip(v) {
                if holds(k) {
                    keys.push(k);
                    kept.push(x);
                }
            }
            if table.len() + keys.len() > table.capacity() {
                return None;
            }
            table.insert_many(&keys, &kept);
        }
        Some(table)
    }

    /// The distinct afterstates in it of requests (verified, compressed, in
    /// `loaded`), sorted, and where each request's lie among them: they are
    /// read as streams, filtered, and merged. The streams share one memo: a
    /// large group has requests from thousands of chunks on the largest
    /// games, and a memo each would cost their number times its size. The
    /// requests hold at most `u32::MAX` keys in all (the caller checks).
    pub(super) fn union(
        self,
        loaded: &[Vec<u8>],
        headers: &[ChunkHeader],
        n: Shape,
    ) -> Result<Union, (usize, FormatError)> {
        let holds = std::cell::RefCell::new(self.holds(n));
        let holds = &holds;
        let streams = loaded
            .iter()
            .zip(headers)
            .enumerate()
            .map(|(i, (bytes, h))| {
                chunk::stream_keys(bytes, h)
                    .map(|keys| {
                        keys.filter(move |k| k.as_ref().map_or(true, |&k| (holds.borrow_mut())(k)))
                    })
                    .map_err(|e| (i, e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // A slice holds about its share of each request's keys.
        let mut places: Vec<Vec<u32>> = (headers.iter())
            .map(|h| Vec::with_capacity((h.count / u64::from(self.of.max(1))) as usize))
            .collect();
        let mut keys: Vec<u64> = Vec::new();
        let mut merged = kernel::Merged::new(streams);
        while let Some((key, i)) = merged.next_head()? {
            if keys.last() != Some(&key) {
                keys.push(key);
            }
            places[i].push((keys.len() - 1) as u32);
        }
        Ok(Union { keys, places })
    }
}

impl Run<'_> {
    /// The slice a gather task over `groups` groups takes: the whole group,
    /// or one piece of a single group cut in slices.
    pub(super) fn gather_slice(
        &self,
        groups: usize,
        piece: Option<GatherPiece>,
    ) -> Result<Slice, WorkerError> {
        match piece {
            Some(p) if groups != 1 || p.slice >= p.slices => Err(self.invalid(format!(
                "piece {} of {} slices over {groups} groups",
                p.slice, p.slices
            ))),
            Some(p) => Ok(Slice {
                index: p.slice,
                of: p.slices,
            }),
            None => Ok(Slice::WHOLE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys cut into slices in one pass are, slice by slice, those the
    /// slice's filter keeps, in order.
    #[test]
    fn split_keys_are_each_slices_filtered_keys() {
        let mut x = 0x1234_5678_9abc_def1_u64;
        let mut keys: Vec<u64> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Tiles of exponent 0 to 7: few large-tile layouts repeat.
                x & 0x7777_7777_7777_7777
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for of in 1..=4 {
            let pieces = Slice::split(keys.clone(), of, Shape::square(4));
            assert_eq!(pieces.len(), of as usize);
            for (index, piece) in pieces.iter().enumerate() {
                let mut holds = Slice {
                    index: index as u32,
                    of,
                }
                .holds(Shape::square(4));
                let kept: Vec<u64> = keys.iter().copied().filter(|&k| holds(k)).collect();
                assert_eq!(piece, &kept, "slice {index} of {of}");
                assert!(of == 1 || piece.len() < keys.len(), "slice {index} of {of}");
            }
        }
    }

    /// A slice's table filled chunk by chunk holds the states the slice's
    /// filter keeps (all of them for the whole group), with their values,
    /// and no other; a chunk that would pass the table's capacity gives
    /// None.
    #[test]
    fn a_slice_fills_its_table_with_its_own_states() {
        let n = Shape::square(4);
        let mut x = 0x5eed_0123_4567_89ab_u64;
        let mut keys: Vec<u64> = (0..3 * SLICE_INSERT_KEYS as usize / 2 + 1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & 0x7777_7777_7777_7777
            })
            .filter(|&k| k != 0)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let values: Vec<f64> = keys.iter().map(|&k| (k % 1000) as f64 / 7.0).collect();
        let slice = Slice { index: 1, of: 3 };
        let mut holds = slice.holds(n);
        let mine: Vec<(u64, f64)> = (keys.iter().zip(&values))
            .filter(|(&k, _)| holds(k))
            .map(|(&k, &v)| (k, v))
            .collect();
        assert!(mine.len() > 1000 && mine.len() < keys.len() / 2);
        // Two chunks.
        let cut = keys.len() / 3;
        let fill = |slice: Slice, capacity: usize| {
            let table = ValueTable::with_capacity(capacity);
            let table = slice.fill(table, n, &keys[..cut], &values[..cut])?;
            slice.fill(table, n, &keys[cut..], &values[cut..])
        };
        // The whole group keeps every state.
        let whole = fill(Slice::WHOLE, keys.len()).expect("room for the group");
        assert_eq!(whole.len(), keys.len());
        assert!(keys
            .iter()
            .zip(&values)
            .all(|(&k, &v)| whole.get(k) == Some(v)));
        assert!(fill(Slice::WHOLE, keys.len() - 1).is_none());
        let table = fill(slice, mine.len()).expect("room for the slice");
        assert_eq!(table.len(), mine.len());
        for &(k, v) in &mine {
            assert_eq!(table.get(k), Some(v));
        }
        let others = keys.iter().filter(|&&k| !holds(k));
        assert!(others.take(1000).all(|&k| table.get(k).is_none()));
        assert!(fill(slice, mine.len() - 1).is_none());
    }

    /// The union of requests that share keys holds each key of the slice
    /// once, sorted, and places each request's keys in the slice at
    /// themselves, in the request's order.
    #[test]
    fn the_union_places_each_requests_keys() {
        use solve2048_core::formats::chunk::ChunkKind;
        use solve2048_core::space::ids::{ChunkId, PartId};
        let n = Shape::square(4);
        let game = solve2048_core::Game::new(4, 2048, 1.0).unwrap();
        let mut x = 0x0bad_cafe_1234_5678_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 0x7777_7777_7777_7777
        };
        let pool: Vec<u64> = (0..3_000).map(|_| next()).collect();
        // Requests of random draws from one pool, so they share keys; one
        // is empty.
        let requests: Vec<Vec<u64>> = (0..7)
            .map(|r| {
                let mut keys: Vec<u64> = (0..r * 300)
                    .map(|_| pool[next() as usize % 3_000])
                    .collect();
                keys.sort_unstable();
                keys.dedup();
                keys
            })
            .collect();
        let headers: Vec<ChunkHeader> = (requests.iter().enumerate())
            .map(|(i, keys)| ChunkHeader {
                kind: ChunkKind::Requests,
                game,
                id: ChunkId {
                    part: PartId {
                        sum: 40,
                        max_exp: 5,
                    },
                    group: 0,
                    index: i as u32,
                },
                count: keys.len() as u64,
            })
            .collect();
        let loaded: Vec<Vec<u8>> = (requests.iter().zip(&headers))
            .map(|(keys, h)| chunk::encode_keys(h, keys, 1))
            .collect();
        for of in 1..=3 {
            for index in 0..of {
                let slice = Slice { index, of };
                let union = slice.union(&loaded, &headers, n).unwrap();
                let mut holds = slice.holds(n);
                let mut all: Vec<u64> = requests
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|&k| holds(k))
                    .collect();
                all.sort_unstable();
                all.dedup();
                assert_eq!(union.keys, all, "slice {index} of {of}");
                for (keys, places) in requests.iter().zip(&union.places) {
                    let kept: Vec<u64> = keys.iter().copied().filter(|&k| holds(k)).collect();
                    let placed: Vec<u64> =
                        places.iter().map(|&at| union.keys[at as usize]).collect();
                    assert_eq!(placed, kept, "slice {index} of {of}");
                }
            }
        }
    }
}
