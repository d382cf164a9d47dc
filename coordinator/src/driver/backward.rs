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
                let tasks = self.gather_tasks(asked, by_group);
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

    /// The gather tasks of one layer: consecutive groups of a part share a
    /// task while their states add up to at most a chunk, so small groups do
    /// not each cost a task; a large group has one of its own.
    fn gather_tasks(
        &self,
        asked: BTreeMap<(PartId, u32), Vec<RequestRef>>,
        mut chunks: BTreeMap<(PartId, u32), Vec<SolvedRef>>,
    ) -> Vec<Task> {
        let mut tasks = Vec::new();
        let mut batch: Option<(PartId, Vec<GatherGroup>, u64)> = None;
        for ((part, group), requests) in asked {
            let g = GatherGroup {
                group,
                chunks: chunks.remove(&(part, group)).unwrap_or_default(),
                requests,
            };
            let size: u64 = g.chunks.iter().map(|c| c.chunk.count).sum();
            match &mut batch {
                Some((p, groups, total)) if *p == part && *total + size <= self.job.chunk_size => {
                    groups.push(g);
                    *total += size;
                }
                _ => {
                    if let Some((p, groups, _)) = batch.take() {
                        tasks.push(Task::Gather { part: p, groups });
                    }
                    batch = Some((part, vec![g], size));
                }
            }
        }
        if let Some((p, groups, _)) = batch {
            tasks.push(Task::Gather { part: p, groups });
        }
        tasks
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
