//! The backward pass: for each layer from the top down, solve its chunks
//! from their requests and responses, then let the chunks of the layer four
//! below ask for their spawn sums (requests), then let its groups answer the
//! requests of the two layers below; finally the start value.

use std::collections::{BTreeMap, BTreeSet};

use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::space::parts::successor_parts;
use solve2048_core::task::{
    gather_cuts, ChunkRef, GatherGroup, GatherPiece, LayerIndex, Phase, RequestRef, ResponseRef,
    SolvedRef, StageKind, TargetGroups, Task, TaskOutput, GATHER_ANSWER_CHUNKS,
};
use solve2048_store::layout;

use super::stages::{addressed_to, backward_steps, file_requests, unexpected, BackStep, Requests};
use super::{Driver, Solved};
use crate::records::CoordinatorError;

/// What the backward pass carries from layer to layer.
#[derive(Default)]
struct Carried {
    /// Requests of chunks not solved yet, by chunk.
    requests: Requests,
    /// Responses to chunks not solved yet, by chunk.
    responses: BTreeMap<ChunkId, Vec<ResponseRef>>,
    /// The solved chunks of each layer.
    solved: BTreeMap<u32, Vec<SolvedRef>>,
    /// The sum of the solved chunks' digests.
    digest: u64,
    /// Every object the solved job keeps.
    keep: BTreeSet<String>,
}

impl Driver<'_> {
    /// The backward pass.
    pub(super) async fn backward(
        &mut self,
        layers: &BTreeMap<u32, Vec<ChunkRef>>,
        requests: Requests,
    ) -> Result<Solved, CoordinatorError> {
        let mut carried = Carried {
            requests,
            ..Carried::default()
        };
        // A solve's chunks ask for their spawn sums in this pass; an
        // evaluation's asked in the forward pass (with the player's masses).
        let asking = self.evaluating.is_none();
        let sizes: BTreeMap<PartId, u64> =
            layers
                .values()
                .flatten()
                .fold(BTreeMap::new(), |mut sizes, c| {
                    *sizes.entry(c.id.part).or_default() += c.count;
                    sizes
                });
        let last = layers.keys().next_back().copied().unwrap_or(4);
        let asked_top = (carried.requests.values().flatten())
            .map(|r| r.part.sum)
            .max();
        for BackStep { sum, asks } in backward_steps(last, asked_top, asking) {
            let asks: Vec<Task> = (asks.iter())
                .flat_map(|s| layers.get(s).into_iter().flatten())
                .map(|c| self.ask(c, &sizes))
                .collect();
            self.solve_layer(sum, layers, &mut carried).await?;
            if !asks.is_empty() {
                for (key, out) in self.stage(Phase::Solve, StageKind::Ask, sum, asks).await? {
                    match out {
                        TaskOutput::Requests(asked) => file_requests(&mut carried.requests, asked),
                        other => return Err(unexpected(&key, &other)),
                    }
                }
            }
            self.gather_layer(sum, &mut carried).await?;
        }
        let start_value = self.start_value(&carried.solved).await?;
        let recomputed = (carried.solved.iter())
            .filter(|(&sum, _)| !self.job.stores_values(sum))
            .flat_map(|(_, refs)| refs.iter().map(layout::values_of))
            .collect();
        Ok(Solved {
            start_value,
            digest: carried.digest,
            keep: carried.keep,
            recomputed,
        })
    }

    /// Solves the chunks of layer `sum` of `layers` from their requests and
    /// responses, indexes them, and frees the bundles no chunk still to solve
    /// reads (a group answers the two layers below it).
    async fn solve_layer(
        &mut self,
        sum: u32,
        layers: &BTreeMap<u32, Vec<ChunkRef>>,
        carried: &mut Carried,
    ) -> Result<(), CoordinatorError> {
        let chunks = layers.get(&sum).map_or(&[][..], Vec::as_slice);
        if chunks.is_empty() {
            return Ok(());
        }
        let below: u64 = (layers.range(..sum).flat_map(|(_, c)| c))
            .map(|c| c.count)
            .sum();
        self.scheduler.set_states_ahead(below);
        let solve = |c: &ChunkRef| Task::Solve {
            chunk: *c,
            requests: carried.requests.remove(&c.id).unwrap_or_default(),
            responses: carried.responses.remove(&c.id).unwrap_or_default(),
            pushes: Vec::new(),
            reference: Vec::new(),
        };
        let tasks: Vec<Task> = chunks
            .iter()
            .map(solve)
            .map(|t| self.with_evaluation(t))
            .collect();
        let read: Vec<String> = (tasks.iter())
            .flat_map(|t| match t {
                Task::Solve {
                    requests,
                    responses,
                    ..
                } => [requests.as_slice(), responses.as_slice()].concat(),
                _ => Vec::new(),
            })
            .map(|r| r.object)
            .collect();
        let mut refs = Vec::with_capacity(chunks.len());
        for (key, out) in self
            .stage(Phase::Solve, StageKind::Solve, sum, tasks)
            .await?
        {
            match out {
                TaskOutput::Solved {
                    solved,
                    digest,
                    evaluated,
                } => {
                    carried.digest = carried.digest.wrapping_add(digest);
                    refs.push(solved);
                    self.note_evaluated(&evaluated);
                }
                other => return Err(unexpected(&key, &other)),
            }
        }
        self.index_solved(sum, &refs).await?;
        let waiting = (carried.responses.values().chain(carried.requests.values()))
            .flatten()
            .map(|r| r.object.as_str());
        self.delete_unreferenced(read.iter().map(String::as_str), waiting)
            .await?;
        for r in &refs {
            carried.keep.insert(layout::states_of(&r.chunk));
            carried.keep.insert(layout::values_of(r));
            carried.keep.insert(layout::policy_of(r));
        }
        carried.solved.insert(sum, refs);
        Ok(())
    }

    /// Has the groups of layer `sum` answer the requests addressed to them,
    /// from its solved chunks, and files the responses by the chunk that
    /// asked.
    async fn gather_layer(
        &mut self,
        sum: u32,
        carried: &mut Carried,
    ) -> Result<(), CoordinatorError> {
        let asked = addressed_to(&carried.requests, sum);
        if asked.is_empty() {
            return Ok(());
        }
        let mut by_group: BTreeMap<(PartId, u32), Vec<SolvedRef>> = BTreeMap::new();
        for r in carried.solved.get(&sum).into_iter().flatten() {
            by_group
                .entry((r.chunk.id.part, r.chunk.id.group))
                .or_default()
                .push(*r);
        }
        let tasks = gather_tasks(asked, by_group, self.job.chunk_size)
            .into_iter()
            .map(|t| self.with_evaluation(t))
            .collect();
        for (key, out) in self
            .stage(Phase::Solve, StageKind::Gather, sum, tasks)
            .await?
        {
            match out {
                TaskOutput::Responses(answered) => {
                    for r in answered {
                        carried.responses.entry(r.source).or_default().push(r);
                    }
                }
                other => return Err(unexpected(&key, &other)),
            }
        }
        Ok(())
    }

    /// The start value, from the solved chunks of the start layers.
    async fn start_value(
        &mut self,
        solved: &BTreeMap<u32, Vec<SolvedRef>>,
    ) -> Result<f64, CoordinatorError> {
        let layer = |s: u32| solved.get(&s).cloned().unwrap_or_default();
        let starts = [layer(4), layer(6), layer(8)].concat();
        let task = Task::StartValue { layers: starts };
        let out = self
            .stage(Phase::Solve, StageKind::Start, 4, vec![task])
            .await?;
        match out.first() {
            Some((_, TaskOutput::StartValue(v))) => Ok(*v),
            Some((key, other)) => Err(unexpected(key, other)),
            None => Err(unexpected("start-value", &TaskOutput::Runs(Vec::new()))),
        }
    }

    /// The task that writes `chunk`'s requests, with the group counts of the
    /// parts its successors fall in (`sizes`: the states of every part, of
    /// which [`solve2048_core::space::parts::group_count`] reads the feeding ones,
    /// so the counts are the forward pass's).
    fn ask(&self, chunk: &ChunkRef, sizes: &BTreeMap<PartId, u64>) -> Task {
        Task::Ask {
            chunk: *chunk,
            targets: successor_parts(chunk.id.part)
                .into_iter()
                .map(|part| TargetGroups {
                    part,
                    groups: self.group_count(part, sizes),
                })
                .collect(),
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

/// The gather tasks of one layer. Consecutive small groups of a part share
/// a task while their states add up to at most a chunk and their request
/// keys to at most [`GATHER_ANSWER_CHUNKS`] chunks; a larger group is
/// gathered in pieces ([`gather_cuts`]): each slice for each share of its requests,
/// a task each. Every input is in a fixed order (groups in key order,
/// requests in the order their chunks were enumerated), so a rerun plans the
/// same tasks.
fn gather_tasks(
    asked: BTreeMap<(PartId, u32), Vec<RequestRef>>,
    mut chunks: BTreeMap<(PartId, u32), Vec<SolvedRef>>,
    chunk_size: u64,
) -> Vec<Task> {
    let max_keys = GATHER_ANSWER_CHUNKS * chunk_size;
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
        let (slices, shares) = gather_cuts(states, keys, chunk_size);
        if (slices, shares) != (1, 1) || keys > max_keys {
            flush(&mut batch, &mut tasks);
            let mut index = 0;
            for share in split_requests(requests, shares) {
                for slice in 0..slices {
                    tasks.push(Task::Gather {
                        part,
                        groups: vec![GatherGroup {
                            group,
                            chunks: solved.clone(),
                            requests: share.clone(),
                            reference: Vec::new(),
                        }],
                        piece: Some(GatherPiece {
                            slice,
                            slices,
                            index,
                        }),
                    });
                    index += 1;
                }
            }
            continue;
        }
        let g = GatherGroup {
            group,
            chunks: solved,
            requests,
            reference: Vec::new(),
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

/// `requests` in `shares` consecutive shares of whole requests, of about
/// equal keys (none empty).
fn split_requests(requests: Vec<RequestRef>, shares: u32) -> Vec<Vec<RequestRef>> {
    let total: u64 = requests.iter().map(|r| r.count).sum();
    let per_share = total.div_ceil(shares.max(1) as u64).max(1);
    let mut out: Vec<Vec<RequestRef>> = vec![Vec::new()];
    let mut filled = 0;
    for r in requests {
        if filled >= per_share {
            out.push(Vec::new());
            filled = 0;
        }
        filled += r.count;
        out.last_mut().expect("never empty").push(r);
    }
    out
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
            reference: false,
            slice: None,
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

    /// A gather task's groups, its piece (slice, slices, index) and its
    /// number of requests.
    type Shape = (Vec<u32>, Option<(u32, u32, u32)>, usize);

    fn shape(tasks: &[Task]) -> Vec<Shape> {
        tasks
            .iter()
            .map(|t| match t {
                Task::Gather { groups, piece, .. } => (
                    groups.iter().map(|g| g.group).collect(),
                    piece.map(|p| (p.slice, p.slices, p.index)),
                    groups.iter().map(|g| g.requests.len()).sum(),
                ),
                _ => unreachable!(),
            })
            .collect()
    }

    /// Small groups share tasks up to a chunk of states and two of request
    /// keys; a group of more than two chunks of states is gathered in slices,
    /// and one asked many keys in shares of whole requests, every slice of
    /// every share a task with all of the group's chunks.
    #[test]
    fn gathers_are_cut_by_states_and_request_keys() {
        let chunk = 100;
        let mut asked = BTreeMap::new();
        let mut chunks = BTreeMap::new();
        // Groups 0 and 1 fit one task; group 2 would pass a chunk of states;
        // group 3 two chunks of request keys.
        for (g, states, keys) in [(0, 40, 50), (1, 50, 50), (2, 30, 20), (3, 10, 150)] {
            asked.insert((part(12), g), vec![request(g, g, keys)]);
            chunks.insert((part(12), g), vec![solved(g, states)]);
        }
        asked
            .get_mut(&(part(12), 3))
            .unwrap()
            .push(request(3, 9, 60));
        // Group 4: 450 states (3 slices of at most 2 chunks) asked 40
        // requests of 70 keys (2800 keys: shares of at most 600, so 5
        // shares).
        asked.insert(
            (part(12), 4),
            (0..40).map(|i| request(4, 10 + i, 70)).collect(),
        );
        chunks.insert((part(12), 4), vec![solved(4, 400), solved(4, 50)]);
        let tasks = gather_tasks(asked, chunks, chunk);
        let got = shape(&tasks);
        assert_eq!(got[0], (vec![0, 1], None, 2));
        assert_eq!(got[1], (vec![2], None, 1));
        // Group 3: one slice, its 210 keys in 2 shares.
        assert_eq!(got[2], (vec![3], Some((0, 1, 0)), 1));
        assert_eq!(got[3], (vec![3], Some((0, 1, 1)), 1));
        let four: Vec<_> = got[4..].to_vec();
        assert_eq!(four.len(), 15, "{four:?}");
        for (i, (groups, piece, _)) in four.iter().enumerate() {
            assert_eq!(groups, &vec![4]);
            assert_eq!(*piece, Some(((i % 3) as u32, 3, i as u32)));
        }
        // Each share's requests are asked of all 3 slices; every request is
        // in exactly one share.
        let requests: usize = four.iter().map(|r| r.2).sum();
        assert_eq!(requests, 3 * 40);
        // Keys are distinct, and every piece reads all of its group's chunks.
        let keys: std::collections::BTreeSet<String> = tasks.iter().map(Task::key).collect();
        assert_eq!(keys.len(), tasks.len());
        for t in &tasks[4..] {
            if let Task::Gather { groups, .. } = t {
                assert_eq!(groups[0].chunks.len(), 2);
            }
        }
    }
}
