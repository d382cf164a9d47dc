//! The driver's steps of an evaluation job: group counts from the solved
//! store, the pushes and solved chunks each task names, and the solves'
//! costs added up in task order (what it keeps: [`super::evaluating`]).

use std::collections::BTreeMap;

use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::evaluation::{keep_worst, ChunkEvaluation};
use solve2048_core::task::{Task, TaskOutput};

use super::Driver;

impl Driver<'_> {
    /// The group count of `part`: the solved store's in an evaluation,
    /// else from the parts that feed it ([`solve2048_core::space::parts::group_count`]).
    pub(super) fn group_count(&self, part: PartId, sizes: &BTreeMap<PartId, u64>) -> u32 {
        match &self.evaluating {
            Some(e) => e.groups(part),
            None => solve2048_core::space::parts::group_count(part, sizes, self.job.chunk_size),
        }
    }

    /// Keep the pushes that enumerate outputs made, for the tasks of the
    /// groups they are addressed to.
    pub(super) fn keep_pushes(&mut self, outputs: &[(String, TaskOutput)]) {
        let Some(e) = &mut self.evaluating else {
            return;
        };
        for (_, out) in outputs {
            if let TaskOutput::Enumerated { pushes, .. } = out {
                for p in pushes {
                    e.pushes
                        .entry((p.part, p.group))
                        .or_default()
                        .push(p.clone());
                }
            }
        }
    }

    /// An enumerate or solve task of `chunk` with its evaluation inputs: the
    /// pushes to its group, and the solved chunks of its group (for an
    /// enumerate, only when the player plays them: `optimal`).
    pub(super) fn with_evaluation(&self, mut task: Task) -> Task {
        let Some(e) = &self.evaluating else {
            return task;
        };
        let of = |id: &ChunkId| {
            (
                e.pushes
                    .get(&(id.part, id.group))
                    .cloned()
                    .unwrap_or_default(),
                e.reference(id.part, id.group),
            )
        };
        match &mut task {
            Task::Enumerate {
                chunk,
                pushes,
                reference,
                ..
            } => {
                let (p, r) = of(&chunk.id);
                *pushes = p;
                if e.player == "optimal" {
                    *reference = r;
                }
            }
            Task::Solve {
                chunk,
                pushes,
                reference,
                ..
            } => (*pushes, *reference) = of(&chunk.id),
            Task::Gather { part, groups, .. } => {
                for g in groups {
                    g.reference = e.reference(*part, g.group);
                }
            }
            _ => {}
        }
        task
    }

    /// Add up what solve outputs found, in task order.
    pub(super) fn note_evaluated(&mut self, evaluated: &Option<ChunkEvaluation>) {
        if let (Some(e), Some(c)) = (&mut self.evaluating, evaluated) {
            e.cost += c.cost;
            keep_worst(&mut e.worst, c.worst.iter().cloned());
        }
    }
}
