//! The driver's side of an evaluation job ([`solve2048_core::task::evaluation`]):
//! the same stages as the solve, with the solved store's structure and
//! chunks beside them.
//!
//! - Group counts come from the solved store's layer indexes, not from the
//!   job's own sizes: a part's group of a board is the group of its
//!   canonical form there (groups are a hash of the tiles), so a task of
//!   one group needs only the solved store's chunks of that same group.
//! - Enumerate and solve tasks name the pushes made to their chunk's group
//!   (kept from the forward pass until the solve), and the solved chunks of
//!   that group; gathers name them too.
//! - Each solve's cost and worst boards are added up, chunk by chunk in
//!   task order, into the job's [`EvaluationSummary`].

use std::collections::BTreeMap;

use solve2048_core::space::ids::PartId;
use solve2048_core::task::evaluation::{Evaluation, EvaluationSummary, WorstState};
use solve2048_core::task::{JobSpec, PartIndex, PushRef, SolvedRef};
use solve2048_store::{Access, Store};

use crate::records::{CoordinatorError, Records};

/// What an evaluation job's driver keeps.
pub(super) struct Evaluating {
    /// The player.
    pub(super) player: String,
    /// The solved store's parts: group counts and solved chunks.
    pub(super) parts: BTreeMap<PartId, PartIndex>,
    /// The solved store's start value.
    pub(super) optimal: f64,
    /// Pushes made so far, by the part and group they are addressed to, in
    /// the order the tasks that made them were planned.
    pub(super) pushes: BTreeMap<(PartId, u32), Vec<PushRef>>,
    /// The solves' costs added up so far, in order.
    pub(super) cost: f64,
    /// The boards of largest cost so far.
    pub(super) worst: Vec<WorstState>,
}

impl Evaluating {
    /// What the driver of `job` keeps: nothing for a solve, else the solved
    /// store its evaluation names, opened ([`Evaluating::open`]).
    pub(super) async fn of(job: &JobSpec) -> Result<Option<Evaluating>, CoordinatorError> {
        match &job.evaluate {
            Some(e) => Ok(Some(Evaluating::open(job, e).await?)),
            None => Ok(None),
        }
    }

    /// Open the solved store `e` names for `job`: it must be solved, of the
    /// same game, and hold the values the evaluation began with.
    async fn open(job: &JobSpec, e: &Evaluation) -> Result<Evaluating, CoordinatorError> {
        let refuse = |reason: String| CoordinatorError::Reference {
            location: e.reference.clone(),
            reason,
        };
        let records = Records::new(Store::open(&e.reference, Access::ReadOnly)?);
        let (solved, summary) = records.solved().await?;
        if solved.game != job.game {
            return Err(refuse(format!(
                "is of {}, not {}",
                solved.game.name(),
                job.game.name()
            )));
        }
        if summary.digest != e.reference_digest {
            return Err(refuse(format!(
                "now holds the values of digest {}, but this evaluation began with {}",
                summary.digest, e.reference_digest
            )));
        }
        let mut parts = BTreeMap::new();
        for index in records.layer_indexes().await? {
            for p in index.parts {
                parts.insert(p.part, p);
            }
        }
        Ok(Evaluating {
            player: e.player.clone(),
            parts,
            optimal: summary.start_value,
            pushes: BTreeMap::new(),
            cost: 0.0,
            worst: Vec::new(),
        })
    }

    /// The group count of `part`: the solved store's. A part it does not
    /// hold (a successor part the plan names, where no board lies) has one
    /// group: a board the player reached there would be missing from the
    /// solved store, and its tasks would say so.
    pub(super) fn groups(&self, part: PartId) -> u32 {
        self.parts.get(&part).map_or(1, |p| p.groups)
    }

    /// The solved chunks of group `group` of `part`.
    pub(super) fn reference(&self, part: PartId, group: u32) -> Vec<SolvedRef> {
        self.parts.get(&part).map_or(Vec::new(), |p| {
            p.solved
                .iter()
                .filter(|c| c.chunk.id.group == group)
                .copied()
                .collect()
        })
    }

    /// What the job found, once every chunk is solved.
    pub(super) fn summary(&self) -> EvaluationSummary {
        EvaluationSummary {
            player: self.player.clone(),
            optimal: self.optimal,
            cost: self.cost,
            worst: self.worst.clone(),
        }
    }
}
