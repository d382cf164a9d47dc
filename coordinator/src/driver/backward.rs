//! The backward pass: for each layer from the top down, solve its chunks
//! from their responses, then let its groups answer the requests of the two
//! layers below; finally the start value.

use std::collections::{BTreeMap, BTreeSet};

use solve2048_core::part::{ChunkId, PartId};
use solve2048_core::task::{
    ChunkRef, GatherGroup, LayerIndex, Phase, RequestRef, ResponseRef, SolvedRef, Task, TaskOutput,
};
use solve2048_store::layout;

use super::{unexpected, Driver, Requests};
use crate::records::CoordinatorError;

impl Driver<'_> {
    /// The backward pass; returns the start value, the result digest and
    /// every object the solved job keeps.
    pub(super) async fn backward(
        &mut self,
        layers: &BTreeMap<u32, Vec<ChunkRef>>,
        mut requests: Requests,
    ) -> Result<(f64, u64, BTreeSet<String>), CoordinatorError> {
        let mut solved: BTreeMap<u32, Vec<SolvedRef>> = BTreeMap::new();
        let mut responses: BTreeMap<ChunkId, Vec<ResponseRef>> = BTreeMap::new();
        let mut digest = 0u64;
        let mut keep = BTreeSet::new();
        // Requests may reach a layer past the last one (afterstates whose
        // spawns are all lost): it answers them too, from no states.
        let top = layers
            .keys()
            .chain(requests.keys())
            .copied()
            .max()
            .unwrap_or(4);
        for sum in (4..=top).rev().step_by(2) {
            if let Some(chunks) = layers.get(&sum) {
                let below: u64 = layers
                    .range(..sum)
                    .flat_map(|(_, c)| c)
                    .map(|c| c.count)
                    .sum();
                self.scheduler.set_states_ahead(below);
                let tasks: Vec<Task> = chunks
                    .iter()
                    .map(|c| Task::Solve {
                        chunk: *c,
                        responses: responses.remove(&c.id).unwrap_or_default(),
                    })
                    .collect();
                let read: Vec<String> = tasks
                    .iter()
                    .flat_map(|t| match t {
                        Task::Solve { responses, .. } => responses.clone(),
                        _ => Vec::new(),
                    })
                    .map(|r| r.object)
                    .collect();
                let mut refs = Vec::with_capacity(chunks.len());
                for out in self.stage(Phase::Solve, "solve", sum, tasks).await? {
                    match out {
                        TaskOutput::Solved { solved, digest: d } => {
                            digest = digest.wrapping_add(d);
                            refs.push(solved);
                        }
                        other => return Err(unexpected("solve", &other)),
                    }
                }
                self.index_solved(sum, &refs).await?;
                // Free the response bundles no chunk still to solve reads (a
                // group answers the two layers below it).
                let waiting = responses.values().flatten().map(|r| r.object.as_str());
                self.delete_unreferenced(read.iter().map(String::as_str), waiting)
                    .await?;
                for r in &refs {
                    keep.insert(layout::states_of(&r.chunk));
                    keep.insert(layout::values_of(r));
                    keep.insert(layout::policy_of(r));
                }
                solved.insert(sum, refs);
            }
            if let Some(asked) = requests.remove(&sum) {
                let mut by_group: BTreeMap<(PartId, u32), Vec<SolvedRef>> = BTreeMap::new();
                for r in solved.get(&sum).into_iter().flatten() {
                    by_group
                        .entry((r.chunk.id.part, r.chunk.id.group))
                        .or_default()
                        .push(*r);
                }
                let read: Vec<String> =
                    asked.values().flatten().map(|r| r.object.clone()).collect();
                let tasks = gather_tasks(asked, by_group, self.job.chunk_size);
                for out in self.stage(Phase::Solve, "gather", sum, tasks).await? {
                    match out {
                        TaskOutput::Responses(answered) => {
                            for r in answered {
                                responses.entry(r.source).or_default().push(r);
                            }
                        }
                        other => return Err(unexpected("gather", &other)),
                    }
                }
                // Free the request bundles no layer still to gather reads (a
                // chunk asks the two layers above it).
                let waiting = requests
                    .values()
                    .flat_map(|groups| groups.values().flatten())
                    .map(|r| r.object.as_str());
                self.delete_unreferenced(read.iter().map(String::as_str), waiting)
                    .await?;
            }
        }
        let layer = |s: u32| solved.get(&s).cloned().unwrap_or_default();
        let starts = [layer(4), layer(6), layer(8)].concat();
        let out = self
            .stage(
                Phase::Solve,
                "start",
                4,
                vec![Task::StartValue { layers: starts }],
            )
            .await?;
        match out.first() {
            Some(TaskOutput::StartValue(v)) => Ok((*v, digest, keep)),
            Some(other) => Err(unexpected("start-value", other)),
            None => Err(unexpected("start-value", &TaskOutput::Runs(Vec::new()))),
        }
    }

    /// Record in layer `sum`'s index where its values and policy are.
    async fn index_solved(&self, sum: u32, refs: &[SolvedRef]) -> Result<(), CoordinatorError> {
        let object = layout::layer_index(sum);
        let mut index: LayerIndex = self.records.get_json(&object).await?;
        for part in &mut index.parts {
            part.solved = refs
                .iter()
                .filter(|r| r.chunk.id.part == part.part)
                .copied()
                .collect();
        }
        self.records.put_json(&object, &index).await
    }
}

/// Request keys a gather task answers at most, in chunks of the job: a task
/// holds its group's values and about 26 bytes a request key
/// ([`solve2048_core::footprint::gather_bytes`]). A group asked more is
/// answered in pieces, each with a share of its requests and reading the
/// group's values again: bytes read grow with the pieces, never with the
/// number of workers.
const GATHER_KEYS_PER_CHUNK: u64 = 2;

/// The gather tasks of one layer. Consecutive groups of a part share a task
/// while their states add up to at most a chunk and their request keys to
/// at most [`GATHER_KEYS_PER_CHUNK`] chunks, so small groups do not each cost
/// a task; a group asked more than that is answered in pieces. Every input
/// is in a fixed order (groups in key order, requests in the order their
/// chunks were enumerated), so a rerun plans the same tasks.
fn gather_tasks(
    asked: BTreeMap<(PartId, u32), Vec<RequestRef>>,
    mut chunks: BTreeMap<(PartId, u32), Vec<SolvedRef>>,
    chunk_size: u64,
) -> Vec<Task> {
    let max_keys = GATHER_KEYS_PER_CHUNK * chunk_size;
    let mut tasks = Vec::new();
    // (part, groups, states, request keys) of the task being filled.
    let mut batch: Option<(PartId, Vec<GatherGroup>, u64, u64)> = None;
    let flush = |batch: &mut Option<(PartId, Vec<GatherGroup>, u64, u64)>,
                 tasks: &mut Vec<Task>| {
        if let Some((part, groups, _, _)) = batch.take() {
            tasks.push(Task::Gather {
                part,
                groups,
                piece: None,
            });
        }
    };
    for ((part, group), requests) in asked {
        let solved = chunks.remove(&(part, group)).unwrap_or_default();
        let states: u64 = solved.iter().map(|c| c.chunk.count).sum();
        let keys: u64 = requests.iter().map(|r| r.count).sum();
        if keys > max_keys {
            flush(&mut batch, &mut tasks);
            // Consecutive shares of whole requests, each of at most
            // `max_keys` keys (or one request, if larger).
            let mut shares: Vec<Vec<RequestRef>> = vec![Vec::new()];
            let mut filled = 0;
            for r in requests {
                let share = shares.last_mut().expect("never empty");
                if filled + r.count > max_keys && !share.is_empty() {
                    shares.push(Vec::new());
                    filled = 0;
                }
                filled += r.count;
                shares.last_mut().expect("never empty").push(r);
            }
            for (i, share) in shares.into_iter().enumerate() {
                tasks.push(Task::Gather {
                    part,
                    groups: vec![GatherGroup {
                        group,
                        chunks: solved.clone(),
                        requests: share,
                    }],
                    piece: Some(i as u32),
                });
            }
            continue;
        }
        let g = GatherGroup {
            group,
            chunks: solved,
            requests,
        };
        match &mut batch {
            Some((p, groups, total, asked))
                if *p == part && *total + states <= chunk_size && *asked + keys <= max_keys =>
            {
                groups.push(g);
                *total += states;
                *asked += keys;
            }
            _ => {
                flush(&mut batch, &mut tasks);
                batch = Some((part, vec![g], states, keys));
            }
        }
    }
    flush(&mut batch, &mut tasks);
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(sum: u32) -> PartId {
        PartId { sum, max_exp: 3 }
    }

    fn request(group: u32, index: u32, count: u64) -> RequestRef {
        RequestRef {
            source: ChunkId {
                part: part(10),
                group: 0,
                index,
            },
            part: part(12),
            group,
            object: format!("requests/{index}"),
            offset: 0,
            len: 1,
            count,
            checksum: 0,
        }
    }

    fn solved(group: u32, count: u64) -> SolvedRef {
        SolvedRef {
            chunk: ChunkRef {
                id: ChunkId {
                    part: part(12),
                    group,
                    index: 0,
                },
                count,
                checksum: 0,
                attempt: solve2048_core::task::AttemptId(1),
            },
            attempt: solve2048_core::task::AttemptId(1),
            values_checksum: 0,
            policy_checksum: 0,
        }
    }

    /// Small groups share tasks up to a chunk of states and two of request
    /// keys; a group asked more is answered in pieces of whole requests,
    /// each with all of the group's chunks; every request is answered once.
    #[test]
    fn gathers_are_bounded_by_states_and_request_keys() {
        let chunk = 100;
        let mut asked = BTreeMap::new();
        let mut chunks = BTreeMap::new();
        // Groups 0 and 1 fit one task; group 2 would pass a chunk of states.
        for (g, states, keys) in [(0, 40, 50), (1, 50, 50), (2, 30, 20)] {
            asked.insert((part(12), g), vec![request(g, g, keys)]);
            chunks.insert((part(12), g), vec![solved(g, states)]);
        }
        // Group 3 is asked 5 requests of 70 keys: pieces of at most 200.
        asked.insert(
            (part(12), 3),
            (0..5).map(|i| request(3, 10 + i, 70)).collect(),
        );
        chunks.insert((part(12), 3), vec![solved(3, 10)]);
        let tasks = gather_tasks(asked, chunks, chunk);
        let shape: Vec<(Vec<u32>, Option<u32>, usize)> = tasks
            .iter()
            .map(|t| match t {
                Task::Gather { groups, piece, .. } => (
                    groups.iter().map(|g| g.group).collect(),
                    *piece,
                    groups.iter().map(|g| g.requests.len()).sum(),
                ),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (vec![0, 1], None, 2),
                (vec![2], None, 1),
                (vec![3], Some(0), 2),
                (vec![3], Some(1), 2),
                (vec![3], Some(2), 1),
            ]
        );
        // Keys are distinct for pieces of one group.
        let keys: std::collections::BTreeSet<String> = tasks.iter().map(Task::key).collect();
        assert_eq!(keys.len(), tasks.len());
        for t in &tasks {
            if let Task::Gather { groups, .. } = t {
                assert!(groups.iter().all(|g| !g.chunks.is_empty()));
            }
        }
    }
}
