//! The expand task: a group's states from its runs ([`Run::expand`]).

use solve2048_core::formats::chunk;
use solve2048_core::kernel::{self, Merged};
use solve2048_core::rules::canonical::Orientation;
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{
    ChunkRef, JobSpec, RunFrame, RunRef, TaskOutput, EXPAND_CHUNKS, SPAWNS_PER_AFTERSTATE,
};
use solve2048_store::layout;

use super::bundle::Bundle;
use super::error::WorkerError;
use super::run::Run;
use super::runs::{encode_states, Blob, EncodedRun, NewRun, RunKeys};

impl Run<'_> {
    /// A group's states from its runs: the afterstates of its afterstate
    /// runs spawned, the keys of its state runs as they are; sorted and
    /// distinct, written as chunks of the job's size (the last one
    /// shorter). A group whose raw spawns pass [`EXPAND_CHUNKS`] chunks is
    /// sorted that many at a time instead, each written as a sorted run of
    /// states, for a merge to take. The task holds the runs' compressed
    /// bytes and that many chunks of raw spawns.
    pub(super) async fn expand(
        &self,
        part: PartId,
        group: u32,
        runs: &[RunRef],
    ) -> Result<TaskOutput, WorkerError> {
        let read = self.read_runs(part, group, runs, (0, u64::MAX)).await?;
        let classes: Vec<(Option<u8>, Vec<Blob>)> =
            read.iter().map(|(r, b)| (r.spawns, b.clone())).collect();
        let job = self.job.clone();
        // Runs of states, when the group makes too many spawns to sort at
        // once, are written as they are made, each its own bundle: the task
        // holds at most two besides the spawns it is sorting.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<EncodedRun>(1);
        let making = self.blocking(move || {
            expand_runs(&job, part, group, &classes, &mut |run| {
                // A closed channel means the writing failed, and the task with it.
                let _ = tx.blocking_send(run);
            })
        });
        let writing = async {
            let mut refs = Vec::new();
            while let Some(run) = rx.recv().await {
                let object = layout::expanded_run(&part, group, refs.len() as u32, self.attempt);
                let mut bundle = Bundle::new(object);
                refs.push(run.add_to(&mut bundle));
                self.put_bundle(bundle).await?;
            }
            Ok::<_, WorkerError>(refs)
        };
        let (made, refs) = tokio::join!(making, writing);
        let made = made?.map_err(|e| self.damaged_run(&read, e))?;
        let refs = refs?;
        match made {
            Expanded::Chunks(chunks) => {
                let mut out = Vec::with_capacity(chunks.len());
                for (id, count, bytes) in chunks {
                    let checksum = self
                        .put_chunk(&layout::states(&id, self.attempt), bytes)
                        .await?;
                    out.push(ChunkRef {
                        id,
                        count,
                        checksum,
                        attempt: self.attempt,
                    });
                }
                Ok(TaskOutput::Chunks(out))
            }
            Expanded::Runs => Ok(TaskOutput::Runs(refs)),
        }
    }
}

/// What an expand made of its group.
enum Expanded {
    /// The group's chunks, encoded: (id, states, bytes).
    Chunks(Vec<(ChunkId, u64, Vec<u8>)>),
    /// Sorted runs of its states, for a merge, handed out as made.
    Runs,
}

/// The expand of group `group` of `part` from its runs' blobs (`runs`: what
/// each run's keys are, and its blobs), on all the worker's threads; a group
/// whose spawns pass [`EXPAND_CHUNKS`] chunks hands each sorted run of
/// states to `emit` as it is made. A damaged blob is named by its run and
/// frame.
fn expand_runs(
    job: &JobSpec,
    part: PartId,
    group: u32,
    runs: &[(Option<u8>, Vec<Blob>)],
    emit: &mut dyn FnMut(EncodedRun),
) -> Result<Expanded, (usize, RunFrame, chunk::FormatError)> {
    let chunk_size = job.chunk_size.max(1) as usize;
    let held = EXPAND_CHUNKS as usize * chunk_size;
    // A batch's spawns pass what is held by at most a chunk.
    let batch = (chunk_size / SPAWNS_PER_AFTERSTATE as usize).max(1);
    let mut raw: Vec<u64> = Vec::new();
    let mut spilled = false;
    // Sorted, distinct keys handed out as a run of the group's states.
    let mut spill = |keys: Vec<u64>| {
        emit(EncodedRun::of(
            job,
            NewRun {
                part,
                group,
                spawns: None,
                keys,
            },
        ))
    };
    for spawns in [None, Some(1u8), Some(2)] {
        let streams: Vec<RunKeys> = RunKeys::decoded(
            (runs.iter().enumerate())
                .filter(|(_, (s, _))| *s == spawns)
                .map(|(i, (_, blobs))| RunKeys::new(i, blobs, 0, u64::MAX))
                .collect(),
        );
        if streams.is_empty() {
            continue;
        }
        let mut keys = Merged::new(streams);
        loop {
            let some: Vec<u64> = keys
                .by_ref()
                .take(batch)
                .collect::<Result<_, _>>()
                .map_err(|(_, e)| e)?;
            if some.is_empty() {
                break;
            }
            match spawns {
                None if raw.is_empty() => raw = some,
                None => raw.extend_from_slice(&some),
                Some(tile) => {
                    kernel::spawns(&job.game, Orientation::Canonical, tile, &some, &mut raw)
                }
            }
            if raw.len() >= held {
                kernel::sort_distinct(&mut raw);
                spill(std::mem::take(&mut raw));
                spilled = true;
            }
        }
    }
    kernel::sort_distinct(&mut raw);
    if spilled {
        if !raw.is_empty() {
            spill(raw);
        }
        return Ok(Expanded::Runs);
    }
    Ok(Expanded::Chunks(encode_chunks(job, part, group, &raw)))
}

/// The group's sorted, distinct states `keys` cut into its chunks and
/// encoded on the worker's threads: (id, states, bytes).
fn encode_chunks(
    job: &JobSpec,
    part: PartId,
    group: u32,
    keys: &[u64],
) -> Vec<(ChunkId, u64, Vec<u8>)> {
    use rayon::prelude::*;
    keys.par_chunks(job.chunk_size.max(1) as usize)
        .enumerate()
        .map(|(index, keys)| {
            let id = ChunkId {
                part,
                group,
                index: index as u32,
            };
            (id, keys.len() as u64, encode_states(job, id, keys))
        })
        .collect()
}
