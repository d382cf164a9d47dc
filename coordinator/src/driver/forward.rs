//! The forward pass: seed, then for each layer expand (each group's states
//! from the afterstates filed to it; a group too large to sort at once
//! comes out as sorted state runs), merge (groups of state runs only: the
//! start states, an evaluation's successors, and those large groups; a
//! larger one in key-range pieces) and enumerate.

use std::collections::BTreeMap;

use solve2048_core::space::ids::PartId;
use solve2048_core::space::parts::{start_parts, successor_parts};
use solve2048_core::task::{ChunkRef, Phase, StageKind, TargetGroups, Task, TaskOutput};
use solve2048_store::layout;

use super::stages::{
    expanded, file_enumerated, first_stages, layer_index, sorted_merges, unexpected, Pending,
    Requests,
};
use super::Driver;
use crate::records::CoordinatorError;

impl Driver<'_> {
    /// The forward pass; returns the chunks of every layer and the requests
    /// an evaluation's enumerate tasks made (a solve's chunks ask in the
    /// backward pass).
    pub(super) async fn forward(
        &mut self,
    ) -> Result<(BTreeMap<u32, Vec<ChunkRef>>, Requests), CoordinatorError> {
        let mut sizes: BTreeMap<PartId, u64> = BTreeMap::new();
        let mut layers: BTreeMap<u32, Vec<ChunkRef>> = BTreeMap::new();
        let mut requests = Requests::new();
        let mut pending = Pending::new();
        let seed = Task::Seed {
            targets: self.targets(start_parts(&self.job.game).into_keys(), &sizes),
        };
        let seed = self
            .stage(Phase::Enumerate, StageKind::Seed, 4, vec![seed])
            .await?;
        file_enumerated(&mut pending, &mut requests, seed)?;
        let mut sum = 4;
        while pending.keys().any(|p| p.sum >= sum) {
            let parts: Vec<PartId> = pending.keys().filter(|p| p.sum == sum).copied().collect();
            let (chunks, read) = self.expand_and_merge(sum, &parts, &mut pending).await?;
            self.index_layer(sum, parts, &chunks, &sizes).await?;
            for c in &chunks {
                *sizes.entry(c.id.part).or_default() += c.count;
            }
            self.scheduler
                .layer_counted(sum, chunks.iter().map(|c| c.count).sum(), false);
            // Free the run bundles no layer still waiting to expand reads.
            let waiting = (pending.values())
                .flat_map(|groups| groups.values().flatten())
                .map(|r| r.object.as_str());
            self.delete_unreferenced(read.iter().map(String::as_str), waiting)
                .await?;
            let enumerates = chunks.iter().map(|c| {
                self.with_evaluation(Task::Enumerate {
                    chunk: *c,
                    targets: self.targets(successor_parts(c.id.part), &sizes),
                    pushes: Vec::new(),
                    reference: Vec::new(),
                })
            });
            let outputs = self
                .forward_stage(StageKind::Enumerate, sum, enumerates.collect())
                .await?;
            self.keep_pushes(&outputs);
            file_enumerated(&mut pending, &mut requests, outputs)?;
            if !chunks.is_empty() {
                layers.insert(sum, chunks);
            }
            sum += 2;
        }
        // No layer above the last one: drop what the estimate put there.
        let last = layers.keys().next_back().copied().unwrap_or(4);
        let states = layers
            .get(&last)
            .map_or(0, |c| c.iter().map(|c| c.count).sum());
        self.scheduler.layer_counted(last, states, true);
        Ok((layers, requests))
    }

    /// The groups of each of `parts` a task files its runs to.
    fn targets(
        &self,
        parts: impl IntoIterator<Item = PartId>,
        sizes: &BTreeMap<PartId, u64>,
    ) -> Vec<TargetGroups> {
        (parts.into_iter())
            .map(|part| TargetGroups {
                part,
                groups: self.group_count(part, sizes),
            })
            .collect()
    }

    /// The outputs of the forward stage `kind` of layer `sum`; a stage of
    /// no task is not run (a layer has expands or merges or both: start
    /// layers, and a group expanded into runs).
    async fn forward_stage(
        &mut self,
        kind: StageKind,
        sum: u32,
        tasks: Vec<Task>,
    ) -> Result<Vec<(String, TaskOutput)>, CoordinatorError> {
        match tasks.is_empty() {
            true => Ok(Vec::new()),
            false => self.stage(Phase::Enumerate, kind, sum, tasks).await,
        }
    }

    /// Layer `sum`'s chunks (sorted), made from the runs `pending` holds for
    /// its `parts`: each group's expand, then the merge of the groups of
    /// state runs and of those expanded into sorted runs. Returns the run
    /// bundles they read beside them.
    async fn expand_and_merge(
        &mut self,
        sum: u32,
        parts: &[PartId],
        pending: &mut Pending,
    ) -> Result<(Vec<ChunkRef>, Vec<String>), CoordinatorError> {
        let chunk_size = self.job.chunk_size;
        let first = first_stages(parts, pending, chunk_size);
        let expands = self
            .forward_stage(StageKind::Expand, sum, first.expands)
            .await?;
        let (mut chunks, sorted) = expanded(expands)?;
        // Groups expanded into sorted runs are merged with the others.
        let (more, more_read) = sorted_merges(sorted, chunk_size);
        let merges = [first.merges, more].concat();
        for (key, out) in self.forward_stage(StageKind::Merge, sum, merges).await? {
            match out {
                TaskOutput::Chunks(c) => chunks.extend(c),
                other => return Err(unexpected(&key, &other)),
            }
        }
        chunks.sort_by_key(|c| c.id);
        Ok((chunks, [first.read, more_read].concat()))
    }

    /// Writes the index of layer `sum`: its `parts` that have chunks (a part
    /// whose afterstates' spawns are all lost has no states: it is no part
    /// of the layer, nor is a layer of such parts), with their chunks.
    async fn index_layer(
        &self,
        sum: u32,
        parts: Vec<PartId>,
        chunks: &[ChunkRef],
        sizes: &BTreeMap<PartId, u64>,
    ) -> Result<(), CoordinatorError> {
        let groups = |part: PartId| self.group_count(part, sizes);
        match layer_index(sum, parts, chunks, groups) {
            Some(index) => {
                self.records
                    .put_json(&layout::layer_index(sum), &index)
                    .await
            }
            None => Ok(()),
        }
    }
}
