//! Runs as tasks write and read them: keys to write as runs ([`NewRun`]),
//! encoded a frame at a time on all threads and placed in bundles, and read
//! back blob by blob, each blob decoded whole as a merge or an expand
//! reaches it, the first of every run on all threads ([`RunKeys`]).

use std::collections::BTreeMap;

use futures::{StreamExt, TryStreamExt};
use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind};
use solve2048_core::kernel::GroupedKeys;
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{
    frames_checksum, run_frame_keys, JobSpec, RunFrame, RunRef, RUN_SAMPLES,
};
use solve2048_store::{layout, StoreError};

use super::bundle::{target_id, Bundle, TRANSIENT_ZSTD_LEVEL};
use super::error::WorkerError;
use super::run::Run;

/// A final chunk of `job`'s states, encoded: `keys` (sorted, distinct) as
/// chunk `id` at the job's compression level. What a merge and an expand
/// write.
pub(super) fn encode_states(job: &JobSpec, id: ChunkId, keys: &[u64]) -> Vec<u8> {
    let h = ChunkHeader {
        kind: ChunkKind::States,
        game: job.game,
        id,
        count: keys.len() as u64,
    };
    chunk::encode_keys(&h, keys, job.zstd_level)
}

/// Keys at evenly spaced ranks of sorted `keys` ([`RUN_SAMPLES`] of them).
fn samples(keys: &[u64]) -> Vec<u64> {
    let n = RUN_SAMPLES.min(keys.len());
    (0..n).map(|i| keys[i * keys.len() / n]).collect()
}

impl Run<'_> {
    /// Write `runs`, as one bundle a target layer (so that each is deleted
    /// once its layer is expanded); a run longer than a frame
    /// ([`run_frame_keys`]) as frames. The frames are encoded on all the
    /// worker's threads.
    pub(super) async fn write_runs(
        &self,
        source: Option<&ChunkId>,
        runs: Vec<NewRun>,
    ) -> Result<Vec<RunRef>, WorkerError> {
        let (job, attempt) = (self.job.clone(), self.attempt);
        let encoded = self
            .blocking(move || {
                use rayon::prelude::*;
                runs.into_par_iter()
                    .map(|run| EncodedRun::of(&job, run))
                    .collect::<Vec<_>>()
            })
            .await?;
        let mut bundles: BTreeMap<u32, Bundle> = BTreeMap::new();
        let made = encoded.into_iter().map(|run| {
            let sum = run.part.sum;
            let bundle = bundles
                .entry(sum)
                .or_insert_with(|| Bundle::new(layout::runs(source, sum, attempt)));
            run.add_to(bundle)
        });
        let refs = made.collect();
        for bundle in bundles.into_values() {
            self.put_bundle(bundle).await?;
        }
        Ok(refs)
    }

    /// The blobs of `runs` that may hold keys in `[lo, hi)`, read (one byte
    /// range a run, a few runs at a time), each with its header and place,
    /// run by run; runs with none are left out.
    pub(super) async fn read_runs(
        &self,
        part: PartId,
        group: u32,
        runs: &[RunRef],
        (lo, hi): (u64, u64),
    ) -> Result<Vec<(RunRef, Vec<Blob>)>, WorkerError> {
        let header = |count| self.header(ChunkKind::Run, target_id((part, group)), count);
        // A Vec of futures, not a lazy map: a closure in the stream would
        // make the task's future not Send for every lifetime.
        let blobs: Vec<(&RunRef, Vec<RunFrame>)> = runs
            .iter()
            .map(|r| (r, r.blobs_in(lo, hi)))
            .filter(|(_, b)| !b.is_empty())
            .collect();
        let mut reads = Vec::with_capacity(blobs.len());
        for (r, b) in &blobs {
            let (start, end) = (b[0].offset, b[b.len() - 1].offset + b[b.len() - 1].len);
            reads.push(self.store.get_range(&r.object, start, end - start));
        }
        let loaded: Vec<bytes::Bytes> = futures::stream::iter(reads)
            .buffered(8)
            .try_collect()
            .await?;
        Ok(blobs
            .iter()
            .zip(loaded)
            .map(|((r, b), bytes)| {
                let base = b[0].offset;
                let blobs = b
                    .iter()
                    .map(|f| {
                        let at = (f.offset - base) as usize;
                        (bytes.slice(at..at + f.len as usize), header(f.count), *f)
                    })
                    .collect();
                ((*r).clone(), blobs)
            })
            .collect())
    }

    /// The error of a merge or an expand whose run `i` of `read` holds a
    /// damaged blob `f`: the object and byte range named.
    pub(super) fn damaged_run(
        &self,
        read: &[(RunRef, Vec<Blob>)],
        (i, f, source): (usize, RunFrame, chunk::FormatError),
    ) -> WorkerError {
        StoreError::Rejected {
            object: format!(
                "{} bytes {}..{}",
                read[i].0.object,
                f.offset,
                f.offset + f.len
            ),
            source,
        }
        .into()
    }
}

/// One blob of a run as a merge or an expand reads it: its bytes, its
/// header and its place.
pub(super) type Blob = (bytes::Bytes, ChunkHeader, RunFrame);

/// Keys to write as a run: sorted and distinct, for one group of one part.
pub(super) struct NewRun {
    pub(super) part: PartId,
    pub(super) group: u32,
    /// What the keys are ([`RunRef::spawns`]).
    pub(super) spawns: Option<u8>,
    pub(super) keys: Vec<u64>,
}

/// The non-empty groups of `by_part` as runs, their keys what `spawns`
/// says of each part's.
pub(super) fn grouped_runs(
    by_part: GroupedKeys,
    spawns: impl Fn(PartId) -> Option<u8>,
) -> Vec<NewRun> {
    let mut runs = Vec::new();
    for (part, groups) in by_part {
        for (group, keys) in groups.into_iter().enumerate() {
            if !keys.is_empty() {
                let (group, spawns) = (group as u32, spawns(part));
                runs.push(NewRun {
                    part,
                    group,
                    spawns,
                    keys,
                });
            }
        }
    }
    runs
}

/// A run encoded, not yet placed in a bundle: its frames ([`run_frame_keys`]
/// keys each), each as (first key, keys, blob).
pub(super) struct EncodedRun {
    part: PartId,
    group: u32,
    spawns: Option<u8>,
    count: u64,
    samples: Vec<u64>,
    frames: Vec<(u64, u64, Vec<u8>)>,
}

impl EncodedRun {
    /// `run` encoded, its frames on all the worker's threads.
    pub(super) fn of(job: &JobSpec, run: NewRun) -> EncodedRun {
        use rayon::prelude::*;
        let level = job.zstd_level.min(TRANSIENT_ZSTD_LEVEL);
        // A run's header carries its target part and group.
        let id = target_id((run.part, run.group));
        let frames = run
            .keys
            .par_chunks(run_frame_keys(job.chunk_size) as usize)
            .map(|frame| {
                let count = frame.len() as u64;
                let h = ChunkHeader {
                    kind: ChunkKind::Run,
                    game: job.game,
                    id,
                    count,
                };
                (frame[0], count, chunk::encode_keys(&h, frame, level))
            })
            .collect();
        EncodedRun {
            part: run.part,
            group: run.group,
            spawns: run.spawns,
            count: run.keys.len() as u64,
            samples: samples(&run.keys),
            frames,
        }
    }

    /// Append its frames to `bundle`; its reference.
    pub(super) fn add_to(self, bundle: &mut Bundle) -> RunRef {
        let mut frames: Vec<RunFrame> = self
            .frames
            .into_iter()
            .map(|(first, count, blob)| {
                let (offset, len, checksum) = bundle.add(blob);
                RunFrame {
                    first,
                    offset,
                    len,
                    count,
                    checksum,
                }
            })
            .collect();
        let (offset, len) = (frames[0].offset, frames.iter().map(|f| f.len).sum());
        let checksum = match frames.as_slice() {
            [one] => one.checksum,
            many => frames_checksum(many),
        };
        if frames.len() == 1 {
            frames.clear();
        }
        RunRef {
            part: self.part,
            group: self.group,
            spawns: self.spawns,
            object: bundle.object.clone(),
            offset,
            len,
            count: self.count,
            checksum,
            samples: self.samples,
            frames,
        }
    }
}

/// The keys in `[lo, hi)` of one run's blobs (run `run` of a merge), each
/// blob verified and decoded whole as the merge reaches it: a blob's keys
/// come from one decoding loop and a slice, not a stream a key.
pub(super) struct RunKeys<'a> {
    run: usize,
    blobs: std::slice::Iter<'a, Blob>,
    keys: Vec<u64>,
    at: usize,
    end: usize,
    lo: u64,
    hi: u64,
    /// The blob that failed to decode, told at the next key.
    failed: Option<(RunFrame, chunk::FormatError)>,
}

impl<'a> RunKeys<'a> {
    pub(super) fn new(run: usize, blobs: &'a [Blob], lo: u64, hi: u64) -> RunKeys<'a> {
        RunKeys {
            run,
            blobs: blobs.iter(),
            keys: Vec::new(),
            at: 0,
            end: 0,
            lo,
            hi,
            failed: None,
        }
    }

    /// `streams` with each one's first blob decoded, on all threads. A
    /// merge takes every run's first key before it yields its own first,
    /// and most runs are one blob: one thread decoding them all, between
    /// the parallel spawns of an expand, held the other threads idle.
    pub(super) fn decoded(mut streams: Vec<RunKeys<'a>>) -> Vec<RunKeys<'a>> {
        use rayon::prelude::*;
        streams.par_iter_mut().for_each(|s| {
            s.load();
        });
        streams
    }

    /// Decode the next blob; false when none is left. One that fails ends
    /// the run, its error told at the next key.
    fn load(&mut self) -> bool {
        let Some((bytes, h, f)) = self.blobs.next() else {
            return false;
        };
        match chunk::decode_keys(bytes, h) {
            Ok(keys) => {
                self.at = keys.partition_point(|&k| k < self.lo);
                self.end = keys.partition_point(|&k| k < self.hi);
                if self.end < keys.len() {
                    // The later blobs hold larger keys still.
                    self.blobs = [].iter();
                }
                self.keys = keys;
            }
            Err(e) => {
                self.blobs = [].iter();
                self.failed = Some((*f, e));
            }
        }
        true
    }
}

impl Iterator for RunKeys<'_> {
    type Item = Result<u64, (usize, RunFrame, chunk::FormatError)>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.at < self.end {
                self.at += 1;
                return Some(Ok(self.keys[self.at - 1]));
            }
            if let Some((f, e)) = self.failed.take() {
                return Some(Err((self.run, f, e)));
            }
            if !self.load() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::Game;

    /// Blobs of a run as a merge holds them: each frame encoded whole.
    fn blobs(frames: &[Vec<u64>]) -> Vec<(bytes::Bytes, ChunkHeader, RunFrame)> {
        let game = Game::new(4, 32, 1.0).unwrap();
        frames
            .iter()
            .map(|keys| {
                let h = ChunkHeader {
                    kind: ChunkKind::Run,
                    game,
                    id: target_id((
                        PartId {
                            sum: 40,
                            max_exp: 4,
                        },
                        0,
                    )),
                    count: keys.len() as u64,
                };
                let frame = RunFrame {
                    first: keys[0],
                    offset: 0,
                    len: 0,
                    count: keys.len() as u64,
                    checksum: 0,
                };
                (chunk::encode_keys(&h, keys, 1).into(), h, frame)
            })
            .collect()
    }

    /// A run's keys in a range, across its frames; a damaged frame is
    /// named by its run and frame, and ends the run.
    #[test]
    fn run_keys_are_the_frames_keys_in_range() {
        let frames = vec![
            (1..100).collect::<Vec<u64>>(),
            (200..300).collect(),
            (400..500).collect(),
        ];
        let all: Vec<u64> = frames.concat();
        let run = blobs(&frames);
        for (lo, hi) in [(0, u64::MAX), (150, 450), (250, 260), (99, 100), (300, 400)] {
            let got: Vec<u64> = RunKeys::new(0, &run, lo, hi).map(|k| k.unwrap()).collect();
            let want: Vec<u64> = all
                .iter()
                .copied()
                .filter(|k| (lo..hi).contains(k))
                .collect();
            assert_eq!(got, want, "[{lo}, {hi})");
        }
        let mut damaged = run.clone();
        let mut bytes = damaged[1].0.to_vec();
        *bytes.last_mut().unwrap() ^= 1;
        damaged[1].0 = bytes.into();
        damaged[1].2.first = 200;
        let got: Vec<_> = RunKeys::new(7, &damaged, 0, u64::MAX).collect();
        assert_eq!(got.len(), 100, "the first frame's keys, then the error");
        match got.last().unwrap() {
            Err((7, f, chunk::FormatError::PayloadChecksum { .. })) => assert_eq!(f.first, 200),
            other => panic!("{other:?}"),
        }
        // Decoded ahead, the same keys, and the same error where it lies.
        for (lo, hi) in [(0, u64::MAX), (150, 450), (300, 400)] {
            let ahead = RunKeys::decoded(vec![RunKeys::new(0, &run, lo, hi)]);
            let got: Vec<u64> = ahead.into_iter().flatten().map(|k| k.unwrap()).collect();
            assert_eq!(
                got,
                RunKeys::new(0, &run, lo, hi)
                    .map(|k| k.unwrap())
                    .collect::<Vec<_>>()
            );
        }
        damaged.swap(0, 1);
        let ahead = RunKeys::decoded(vec![RunKeys::new(7, &damaged, 0, u64::MAX)]);
        let got: Vec<_> = ahead.into_iter().flatten().collect();
        assert!(
            matches!(got.as_slice(), [Err((7, f, _))] if f.first == 200),
            "{got:?}"
        );
    }
}
