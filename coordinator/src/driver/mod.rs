//! The stage driver: the job as a sequence of stages over layers.
//!
//! Forward ([`forward`]), for tile sum S = 4, 6, 8, ...: merge every group of
//! every part of layer S (its runs came from the seed and from enumerating
//! layers S-2 and S-4; a large group in key-range pieces), then enumerate
//! every chunk of layer S into runs for layers S+2 and S+4. Backward
//! ([`backward`]), for S from the top down to 4: solve every chunk of layer S
//! from its responses while every chunk of layer S-4 writes its requests
//! (ask), then let every group of layer S answer the requests addressed to
//! it (gather). Tasks within a stage are
//! independent and all go to the [`Scheduler`] at once, which leases them to
//! workers; each is skipped when its commit record exists.

mod backward;
mod evaluate;
mod evaluating;
mod forward;
pub mod repair;
mod stages;
mod stats;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use solve2048_core::space::ids::PartId;
use solve2048_core::task::evaluation::EvaluationSummary;
use solve2048_core::task::{
    FailureKind, JobSpec, Phase, SolvedSummary, StageKind, Task, TaskOutput,
};

use solve2048_store::{layout, RequestCounts};

use crate::records::{CoordinatorError, Records};
use crate::scheduler::{Completed, OverallProgress, Scheduler};
use repair::Repair;
pub use stats::{StageKindStats, StageStats, TAIL_MIN_TASKS};

/// Most tasks of a stage submitted to the scheduler at once.
const MAX_IN_FLIGHT: usize = 1024;

/// What the job is doing, for progress displays.
#[derive(Clone, Debug)]
pub enum Progress {
    /// The store is accepted (the job is its job, the lock taken) and
    /// workers are served.
    Serving,
    /// A phase begins.
    PhaseStart(Phase),
    /// A phase ended.
    PhaseEnd(Phase),
    /// A stage of tasks over one layer begins.
    Stage {
        /// Phase.
        phase: Phase,
        /// Its kind.
        stage: StageKind,
        /// Tile sum of the layer.
        sum: u32,
        /// Tasks in the stage.
        tasks: usize,
    },
    /// A task finished (or was found already committed).
    TaskDone {
        /// States the task produced or processed.
        states: u64,
        /// True when skipped because already committed.
        skipped: bool,
        /// The whole job's progress after it.
        overall: OverallProgress,
    },
}

/// One part of the state space in the summary.
#[derive(Clone, Debug, Serialize)]
pub struct PartSummary {
    /// Tile sum.
    pub sum: u32,
    /// Max tile value.
    pub max_tile: u32,
    /// Non-terminal canonical states.
    pub states: u64,
    /// Chunks it is stored in.
    pub chunks: usize,
}

/// The outcome of a job.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Every part, in (sum, max tile) order.
    pub parts: Vec<PartSummary>,
    /// Total non-terminal canonical states.
    pub states: u64,
    /// Value of the game from the random start.
    pub start_value: f64,
    /// Order-independent digest of every (state, value, action), as hex:
    /// equal digests mean bit-identical results whatever the chunking.
    pub digest: String,
    /// Wall time of the forward pass.
    pub enumerate_seconds: f64,
    /// Wall time of the backward pass.
    pub solve_seconds: f64,
    /// Tasks run in this process (a repair's runs again included).
    pub tasks_run: u64,
    /// Tasks skipped because already committed (a committed task a repair
    /// ran again counts here and in `tasks_run`).
    pub tasks_skipped: u64,
    /// Outputs of uncommitted attempts deleted at the end.
    pub orphans_removed: u64,
    /// Every stage that ran tasks in this process.
    pub stages: Vec<StageStats>,
    /// The largest peak resident memory a worker reported.
    pub workers_peak_rss_bytes: u64,
    /// Evaluation jobs: the player's loss against the optimal value.
    pub evaluation: Option<EvaluationSummary>,
    /// Store requests this process made itself (records, commits, lists),
    /// in the forward and the backward pass.
    pub coordinator_requests: [RequestCounts; 2],
}

impl Summary {
    /// Bytes the tasks of `phase` that ran here read from the store.
    pub fn bytes_read(&self, phase: Phase) -> u64 {
        self.stages
            .iter()
            .filter(|s| s.phase == phase)
            .map(|s| s.bytes_read)
            .sum()
    }

    /// Store requests of `phase`: its tasks' that ran here and this
    /// process's own.
    pub fn store_requests(&self, phase: Phase) -> RequestCounts {
        self.stages
            .iter()
            .filter(|s| s.phase == phase)
            .fold(self.coordinator_requests[phase_index(phase)], |a, s| {
                a.plus(&s.store_requests)
            })
    }

    /// Every stage kind that ran tasks here, summed over its layers, in the
    /// order the job first ran them.
    pub fn stage_kinds(&self) -> Vec<StageKindStats> {
        stats::by_kind(&self.stages)
    }
}

/// Drives one job to the end, stage by stage.
pub struct Driver<'a> {
    records: Records,
    job: JobSpec,
    scheduler: &'a Scheduler,
    max_attempts: u32,
    progress: &'a (dyn Fn(&Progress) + Sync),
    tasks_run: u64,
    tasks_skipped: u64,
    stages: Vec<StageStats>,
    repair: Option<&'a Repair>,
    evaluating: Option<evaluating::Evaluating>,
    /// Store requests of this process, per phase.
    own_requests: [RequestCounts; 2],
}

/// Where `phase` is in per-phase arrays.
fn phase_index(phase: Phase) -> usize {
    match phase {
        Phase::Enumerate => 0,
        Phase::Solve => 1,
    }
}

/// Run `job` to completion on `records`' store, handing tasks to workers
/// through `scheduler` and calling `progress` as it goes. A failing task is
/// retried up to `max_attempts` times in all before the job stops. With
/// `repair`, committed tasks whose outputs were damaged run again (see
/// [`repair`]).
pub async fn run(
    records: Records,
    job: JobSpec,
    scheduler: &Scheduler,
    max_attempts: u32,
    progress: &(dyn Fn(&Progress) + Sync),
    repair: Option<&Repair>,
) -> Result<Summary, CoordinatorError> {
    records.open_job(&job).await?;
    let evaluating = evaluating::Evaluating::of(&job).await?;
    let mut c = Driver {
        records,
        job,
        scheduler,
        max_attempts: max_attempts.max(1),
        progress,
        tasks_run: 0,
        tasks_skipped: 0,
        stages: Vec::new(),
        repair,
        evaluating,
        own_requests: Default::default(),
    };
    c.run_job().await
}

/// What the backward pass found: the start value, the result digest, every
/// object the solved job keeps, and of those the values a store with
/// recomputed values deletes once solved
/// ([`solve2048_core::task::JobSpec::stores_values`]).
pub(super) struct Solved {
    pub(super) start_value: f64,
    pub(super) digest: u64,
    pub(super) keep: BTreeSet<String>,
    pub(super) recomputed: Vec<String>,
}

impl Driver<'_> {
    /// Count the store requests this process made since the last call in
    /// `phase` (and in the scheduler's counters, for `status`).
    fn count_own_requests(&mut self, phase: Phase) {
        let r = self.records.store().take_requests();
        self.scheduler.count_requests(&r);
        self.own_requests[phase_index(phase)].add(&r);
    }

    async fn run_job(&mut self) -> Result<Summary, CoordinatorError> {
        let t0 = Instant::now();
        (self.progress)(&Progress::PhaseStart(Phase::Enumerate));
        let (layers, requests) = self.forward().await?;
        (self.progress)(&Progress::PhaseEnd(Phase::Enumerate));
        let enumerate_seconds = t0.elapsed().as_secs_f64();
        self.count_own_requests(Phase::Enumerate);
        let t1 = Instant::now();
        (self.progress)(&Progress::PhaseStart(Phase::Solve));
        let Solved {
            start_value,
            digest,
            keep,
            recomputed,
        } = self.backward(&layers, requests).await?;
        (self.progress)(&Progress::PhaseEnd(Phase::Solve));
        let solve_seconds = t1.elapsed().as_secs_f64();
        let orphans_removed = self.records.sweep(&keep).await?;
        if orphans_removed > 0 {
            tracing::info!(orphans_removed, "deleted outputs of uncommitted attempts");
        }
        let solved = SolvedSummary {
            states: layers.values().flatten().map(|c| c.count).sum(),
            start_value,
            digest: format!("{digest:016x}"),
            layers: layers.keys().copied().collect(),
            evaluation: self.evaluating.as_ref().map(|e| e.summary()),
        };
        self.records.put_json(layout::SUMMARY, &solved).await?;
        // Values left to be recomputed go once the summary says so: until
        // then a reader reads them, and a rerun deletes what a crash left.
        for object in &recomputed {
            self.records.delete(object).await?;
        }
        self.count_own_requests(Phase::Solve);
        let mut parts: BTreeMap<PartId, (u64, usize)> = BTreeMap::new();
        for c in layers.values().flatten() {
            let e = parts.entry(c.id.part).or_default();
            e.0 += c.count;
            e.1 += 1;
        }
        let parts: Vec<PartSummary> = parts
            .into_iter()
            .map(|(p, (states, chunks))| PartSummary {
                sum: p.sum,
                max_tile: 1 << p.max_exp,
                states,
                chunks,
            })
            .collect();
        Ok(Summary {
            states: parts.iter().map(|p| p.states).sum(),
            parts,
            start_value,
            digest: format!("{digest:016x}"),
            enumerate_seconds,
            solve_seconds,
            tasks_run: self.tasks_run + self.repair.map_or(0, Repair::ran),
            tasks_skipped: self.tasks_skipped,
            orphans_removed,
            stages: std::mem::take(&mut self.stages),
            workers_peak_rss_bytes: self.scheduler.workers_peak_rss(),
            evaluation: solved.evaluation,
            coordinator_requests: self.own_requests,
        })
    }

    /// Delete each bundle of `read` (task outputs a stage has consumed) that
    /// none of `waiting` (what later stages will read) names. Every stage
    /// that read it has committed, so nothing needs it again, and a rerun
    /// skips those stages.
    async fn delete_unreferenced<'a>(
        &self,
        read: impl IntoIterator<Item = &'a str>,
        waiting: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), CoordinatorError> {
        let waiting: std::collections::BTreeSet<&str> = waiting.into_iter().collect();
        let done: std::collections::BTreeSet<&str> =
            read.into_iter().filter(|o| !waiting.contains(o)).collect();
        for object in done {
            self.records.delete(object).await?;
        }
        Ok(())
    }

    /// Run a stage's tasks (skipping committed ones); each task's key and
    /// output, in task order.
    async fn stage(
        &mut self,
        phase: Phase,
        stage: StageKind,
        sum: u32,
        tasks: Vec<Task>,
    ) -> Result<Vec<(String, TaskOutput)>, CoordinatorError> {
        (self.progress)(&Progress::Stage {
            phase,
            stage,
            sum,
            tasks: tasks.len(),
        });
        tracing::info!(?phase, %stage, sum, tasks = tasks.len(), "stage");
        self.scheduler.track(phase, stage, &tasks);
        let runner = TaskRunner {
            records: &self.records,
            scheduler: self.scheduler,
            attempts: self.max_attempts,
            progress: self.progress,
            repair: self.repair,
        };
        let results: Vec<(TaskOutput, Option<Completed>)> =
            futures::stream::iter(tasks.iter().map(|task| runner.run(task)))
                .buffered(MAX_IN_FLIGHT)
                .try_collect()
                .await?;
        if let Some(r) = self.repair {
            for (task, (out, _)) in tasks.iter().zip(&results) {
                r.note(task, out);
            }
        }
        let outputs = self.count_run(phase, sum, &tasks, results);
        self.count_own_requests(phase);
        Ok(outputs)
    }

    /// Counts a stage's tasks run and skipped, and records the statistics
    /// of those run by task kind (a backward stage runs solves and asks), in
    /// the order the kinds first appear; returns the tasks' keys and outputs.
    fn count_run(
        &mut self,
        phase: Phase,
        sum: u32,
        tasks: &[Task],
        results: Vec<(TaskOutput, Option<Completed>)>,
    ) -> Vec<(String, TaskOutput)> {
        let mut outputs = Vec::with_capacity(results.len());
        let mut ran: Vec<(StageKind, Vec<(Completed, String)>)> = Vec::new();
        for ((out, done), task) in results.into_iter().zip(tasks) {
            let key = task.key();
            match done {
                None => self.tasks_skipped += 1,
                Some(done) => {
                    self.tasks_run += 1;
                    let kind = task.kind();
                    match ran.iter_mut().find(|(k, _)| *k == kind) {
                        Some((_, of_kind)) => of_kind.push((done, key.clone())),
                        None => ran.push((kind, vec![(done, key.clone())])),
                    }
                }
            }
            outputs.push((key, out));
        }
        for (kind, of_kind) in ran {
            self.stages
                .extend(StageStats::of(phase, kind, sum, of_kind));
        }
        outputs
    }
}

/// What running one task of a stage needs from the driver.
#[derive(Clone, Copy)]
struct TaskRunner<'a> {
    records: &'a Records,
    scheduler: &'a Scheduler,
    attempts: u32,
    progress: &'a (dyn Fn(&Progress) + Sync),
    repair: Option<&'a Repair>,
}

impl TaskRunner<'_> {
    /// One task's output: its committed one (redone first where a repair
    /// found what it names damaged), with no completion; else run on the
    /// workers, with its inputs restored by a repair, and committed.
    async fn run(self, task: &Task) -> Result<(TaskOutput, Option<Completed>), CoordinatorError> {
        let ctx = self.repair.map(|repair| repair::Ctx {
            records: self.records,
            scheduler: self.scheduler,
            attempts: self.attempts,
            repair,
        });
        if let Some(out) = self.committed(task).await? {
            if let Some(ctx) = ctx.filter(|c| c.repair.names_damaged(&out)) {
                repair::redo_committed(ctx, task, &out).await?;
            }
            self.done(task, &out, true);
            return Ok((out, None));
        }
        let (out, done) = match ctx {
            Some(ctx) => {
                self.attempt(&repair::with_inputs(ctx, task.clone()).await?)
                    .await?
            }
            None => self.attempt(task).await?,
        };
        Ok((out, Some(done)))
    }

    /// The committed output of `task`, if any; a solve's under the names a
    /// merge run again gave its states (None if they cannot be renamed).
    async fn committed(self, task: &Task) -> Result<Option<TaskOutput>, CoordinatorError> {
        Ok(match (self.records.committed(task).await?, task) {
            (Some(out), Task::Solve { chunk, .. }) => match repair::rebased(chunk, &out) {
                None => Some(out),
                Some(Some(rebased)) => {
                    self.records.commit(task, &rebased).await?;
                    Some(rebased)
                }
                Some(None) => None,
            },
            (committed, _) => committed,
        })
    }

    /// Runs `task` on the workers until an attempt succeeds (then commits
    /// its output) or fails fatally, at most `attempts` times; records
    /// each failure.
    async fn attempt(self, task: &Task) -> Result<(TaskOutput, Completed), CoordinatorError> {
        let key = task.key();
        let mut last = String::new();
        for attempt in 1..=self.attempts {
            let failure = match self.scheduler.attempt(task).await {
                Ok((out, done)) => {
                    self.records.commit(task, &out).await?;
                    self.done(task, &out, false);
                    return Ok((out, done));
                }
                Err(failure) => failure,
            };
            tracing::warn!(task = %key, attempt, error = %failure, "task failed");
            (self.records)
                .record_failure(&key, attempt, &failure.message)
                .await?;
            if failure.kind != FailureKind::Retry {
                self.scheduler.failed(&key);
                return Err(CoordinatorError::TaskFatal { task: key, failure });
            }
            last = failure.message;
        }
        self.scheduler.failed(&key);
        Err(CoordinatorError::TaskFailed {
            task: key,
            attempts: self.attempts,
            error: last,
        })
    }

    /// Marks `task` done with output `out` (`skipped`: committed before).
    fn done(self, task: &Task, out: &TaskOutput, skipped: bool) {
        let states = states_of(task, out);
        self.scheduler.done(&task.key(), states, skipped);
        (self.progress)(&Progress::TaskDone {
            states,
            skipped,
            overall: self.scheduler.overall(),
        });
    }
}

/// States a task handled, for progress rates.
fn states_of(task: &Task, out: &TaskOutput) -> u64 {
    match (task, out) {
        (Task::Enumerate { chunk, .. }, _) | (Task::Solve { chunk, .. }, _) => chunk.count,
        (_, TaskOutput::Chunks(c)) => c.iter().map(|c| c.count).sum(),
        _ => 0,
    }
}
