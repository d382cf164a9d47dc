//! The slice of a group that a gather task takes, and how it finds a
//! request's afterstates among those it answers.

use solve2048_core::formats::chunk::{self, ChunkHeader, FormatError};
use solve2048_core::kernel::{self, seek};
use solve2048_core::space::ids::SliceMemo;
use solve2048_core::task::GatherPiece;
use solve2048_core::Shape;

use super::error::WorkerError;
use super::run::Run;

/// The afterstates of one request (verified, compressed `bytes`) that are in
/// `union` (sorted: the requests' afterstates in a slice), each with its
/// index there, in order. A request's keys are sorted too, so a cursor that
/// gallops forward finds each one, or finds it is in another slice.
pub(super) fn in_union<'a>(
    bytes: &'a [u8],
    header: &ChunkHeader,
    union: &'a [u64],
) -> Result<impl Iterator<Item = Result<(u64, usize), FormatError>> + 'a, FormatError> {
    let mut at = 0;
    Ok(
        chunk::stream_keys(bytes, header)?.filter_map(move |key| match key {
            Err(e) => Some(Err(e)),
            Ok(key) => {
                at = seek(union, at, key);
                (union.get(at) == Some(&key)).then_some(Ok((key, at)))
            }
        }),
    )
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

    /// The distinct afterstates in it of requests (verified, compressed, in
    /// `loaded`), sorted: they are read as streams, filtered, and merged.
    /// The streams share one memo: a large group has requests from
    /// thousands of chunks on the largest games, and a memo each would cost
    /// their number times its size.
    pub(super) fn union(
        self,
        loaded: &[Vec<u8>],
        headers: &[ChunkHeader],
        n: Shape,
    ) -> Result<Vec<u64>, (usize, FormatError)> {
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
        kernel::merge(streams)
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
}
