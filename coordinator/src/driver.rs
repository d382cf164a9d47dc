//! The stage driver: the job as a sequence of stages over layers.
//!
//! Forward, for tile sum S = 4, 6, 8, ...: merge every group of every part of
//! layer S (its runs came from the seed and from enumerating layers S-2 and
//! S-4), then enumerate every chunk of layer S into runs for layers S+2 and
//! S+4. Backward, for S from the last layer down to 4: solve every chunk of
//! layer S against layers S+2 and S+4. Tasks within a stage are independent
//! and all go to the [`Scheduler`] at once, which leases them to workers;
//! each is skipped when its commit record exists.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures::{StreamExt, TryStreamExt};
use serde::Serialize;
use solve2048_core::layer::{group_count, start_parts, successor_parts};
use solve2048_core::part::PartId;
use solve2048_core::task::{
    ChunkRef, FailureKind, JobSpec, LayerIndex, PartIndex, Phase, RunRef, SolvedRef, SolvedSummary,
    TargetGroups, Task, TaskOutput,
};

use solve2048_store::layout;

use crate::records::{CoordinatorError, Records};
use crate::scheduler::Scheduler;

/// Most tasks of a stage submitted to the scheduler at once.
const MAX_IN_FLIGHT: usize = 1024;

/// What the job is doing, for progress displays.
#[derive(Clone, Debug)]
pub enum Progress {
    /// A phase begins.
    PhaseStart(Phase),
    /// A phase ended.
    PhaseEnd(Phase),
    /// A stage of tasks over one layer begins.
    Stage {
        /// Phase.
        phase: Phase,
        /// "merge", "enumerate" or "solve".
        stage: &'static str,
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
    /// Tasks run in this process.
    pub tasks_run: u64,
    /// Tasks skipped because already committed.
    pub tasks_skipped: u64,
    /// Outputs of uncommitted attempts deleted at the end.
    pub orphans_removed: u64,
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
}

/// Run `job` to completion on `records`' store, handing tasks to workers
/// through `scheduler` and calling `progress` as it goes. A failing task is
/// retried up to `max_attempts` times in all before the job stops.
pub async fn run(
    records: Records,
    job: JobSpec,
    scheduler: &Scheduler,
    max_attempts: u32,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<Summary, CoordinatorError> {
    records.open_job(&job).await?;
    let mut c = Driver {
        records,
        job,
        scheduler,
        max_attempts: max_attempts.max(1),
        progress,
        tasks_run: 0,
        tasks_skipped: 0,
    };
    c.run_job().await
}

impl Driver<'_> {
    async fn run_job(&mut self) -> Result<Summary, CoordinatorError> {
        let t0 = Instant::now();
        (self.progress)(&Progress::PhaseStart(Phase::Enumerate));
        let layers = self.forward().await?;
        (self.progress)(&Progress::PhaseEnd(Phase::Enumerate));
        let enumerate_seconds = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        (self.progress)(&Progress::PhaseStart(Phase::Solve));
        let (start_value, digest, keep) = self.backward(&layers).await?;
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
        };
        self.records.put_json(layout::SUMMARY, &solved).await?;
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
            tasks_run: self.tasks_run,
            tasks_skipped: self.tasks_skipped,
            orphans_removed,
        })
    }

    /// Run a stage's tasks (skipping committed ones); outputs in task order.
    async fn stage(
        &mut self,
        phase: Phase,
        stage: &'static str,
        sum: u32,
        tasks: Vec<Task>,
    ) -> Result<Vec<TaskOutput>, CoordinatorError> {
        (self.progress)(&Progress::Stage {
            phase,
            stage,
            sum,
            tasks: tasks.len(),
        });
        tracing::info!(?phase, stage, sum, tasks = tasks.len(), "stage");
        self.scheduler.track(phase, stage, &tasks);
        let records = &self.records;
        let scheduler = self.scheduler;
        let attempts = self.max_attempts;
        let progress = self.progress;
        let results: Vec<(TaskOutput, bool)> =
            futures::stream::iter(tasks.iter().map(|task| async move {
                let key = task.key();
                if let Some(out) = records.committed(task).await? {
                    let states = states_of(task, &out);
                    scheduler.done(&key, states, true);
                    progress(&Progress::TaskDone {
                        states,
                        skipped: true,
                    });
                    return Ok((out, true));
                }
                let mut last = String::new();
                for attempt in 1..=attempts {
                    match scheduler.attempt(task).await {
                        Ok(out) => {
                            records.commit(task, &out).await?;
                            let states = states_of(task, &out);
                            scheduler.done(&key, states, false);
                            progress(&Progress::TaskDone {
                                states,
                                skipped: false,
                            });
                            return Ok((out, false));
                        }
                        Err(failure) => {
                            tracing::warn!(task = %key, attempt, error = %failure, "task failed");
                            records
                                .record_failure(&key, attempt, &failure.message)
                                .await?;
                            if failure.kind == FailureKind::Fatal {
                                scheduler.failed(&key);
                                return Err(CoordinatorError::TaskFatal {
                                    task: key,
                                    error: failure.message,
                                });
                            }
                            last = failure.message;
                        }
                    }
                }
                scheduler.failed(&key);
                Err(CoordinatorError::TaskFailed {
                    task: key,
                    attempts,
                    error: last,
                })
            }))
            .buffered(MAX_IN_FLIGHT)
            .try_collect()
            .await?;
        let mut outputs = Vec::with_capacity(results.len());
        for (out, skipped) in results {
            if skipped {
                self.tasks_skipped += 1;
            } else {
                self.tasks_run += 1;
            }
            outputs.push(out);
        }
        Ok(outputs)
    }

    /// The forward pass; returns the chunks of every layer.
    async fn forward(&mut self) -> Result<BTreeMap<u32, Vec<ChunkRef>>, CoordinatorError> {
        let mut sizes: BTreeMap<PartId, u64> = BTreeMap::new();
        let mut layers: BTreeMap<u32, Vec<ChunkRef>> = BTreeMap::new();
        // Runs waiting to be merged: part -> group -> runs.
        let mut pending: BTreeMap<PartId, BTreeMap<u32, Vec<RunRef>>> = BTreeMap::new();
        let seed_targets = start_parts(self.job.game.size())
            .into_keys()
            .map(|part| TargetGroups {
                part,
                groups: group_count(part, &sizes, self.job.chunk_size),
            })
            .collect();
        let seed = self
            .stage(
                Phase::Enumerate,
                "seed",
                4,
                vec![Task::Seed {
                    targets: seed_targets,
                }],
            )
            .await?;
        add_runs(&mut pending, seed);
        let mut sum = 4;
        while pending.keys().any(|p| p.sum >= sum) {
            // Merge layer `sum`.
            let parts: Vec<PartId> = pending.keys().filter(|p| p.sum == sum).copied().collect();
            let mut merges = Vec::new();
            for part in &parts {
                for (group, runs) in pending.remove(part).unwrap() {
                    merges.push(Task::Merge {
                        part: *part,
                        group,
                        runs,
                    });
                }
            }
            let outputs = self
                .stage(Phase::Enumerate, "merge", sum, merges.clone())
                .await?;
            let mut chunks: Vec<ChunkRef> = Vec::new();
            for out in outputs {
                if let TaskOutput::Chunks(c) = out {
                    chunks.extend(c);
                }
            }
            chunks.sort_by_key(|c| c.id);
            let index = LayerIndex {
                sum,
                parts: parts
                    .iter()
                    .map(|&part| PartIndex {
                        part,
                        groups: group_count(part, &sizes, self.job.chunk_size),
                        chunks: chunks
                            .iter()
                            .filter(|c| c.id.part == part)
                            .copied()
                            .collect(),
                        solved: Vec::new(),
                    })
                    .collect(),
            };
            self.records
                .put_json(&layout::layer_index(sum), &index)
                .await?;
            for c in &chunks {
                *sizes.entry(c.id.part).or_default() += c.count;
            }
            // The runs are merged for good: free their space.
            for task in &merges {
                if let Task::Merge { runs, .. } = task {
                    for r in runs {
                        self.records.delete(&r.object).await?;
                    }
                }
            }
            // Enumerate layer `sum`.
            let enumerates: Vec<Task> = chunks
                .iter()
                .map(|c| Task::Enumerate {
                    chunk: *c,
                    targets: successor_parts(c.id.part)
                        .into_iter()
                        .map(|part| TargetGroups {
                            part,
                            groups: group_count(part, &sizes, self.job.chunk_size),
                        })
                        .collect(),
                })
                .collect();
            let outputs = self
                .stage(Phase::Enumerate, "enumerate", sum, enumerates)
                .await?;
            add_runs(&mut pending, outputs);
            if !chunks.is_empty() {
                layers.insert(sum, chunks);
            }
            sum += 2;
        }
        Ok(layers)
    }

    /// The backward pass; returns the start value, the result digest and
    /// every object the solved job keeps.
    async fn backward(
        &mut self,
        layers: &BTreeMap<u32, Vec<ChunkRef>>,
    ) -> Result<(f64, u64, BTreeSet<String>), CoordinatorError> {
        let mut solved: BTreeMap<u32, Vec<SolvedRef>> = BTreeMap::new();
        let mut digest = 0u64;
        let mut keep = BTreeSet::new();
        for (&sum, chunks) in layers.iter().rev() {
            let below: u64 = layers
                .range(..sum)
                .flat_map(|(_, c)| c)
                .map(|c| c.count)
                .sum();
            self.scheduler.set_states_ahead(below);
            let layer = |s: u32| solved.get(&s).cloned().unwrap_or_default();
            let next: Vec<SolvedRef> = [layer(sum + 2), layer(sum + 4)].concat();
            let tasks = chunks
                .iter()
                .map(|c| Task::Solve {
                    chunk: *c,
                    next: next.clone(),
                })
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
            // The layer index now says where its values and policy are.
            let object = layout::layer_index(sum);
            let mut index: LayerIndex = self.records.get_json(&object).await?;
            for part in &mut index.parts {
                part.solved = refs
                    .iter()
                    .filter(|r| r.chunk.id.part == part.part)
                    .copied()
                    .collect();
            }
            self.records.put_json(&object, &index).await?;
            for r in &refs {
                keep.insert(layout::states_of(&r.chunk));
                keep.insert(layout::values_of(r));
                keep.insert(layout::policy_of(r));
            }
            solved.insert(sum, refs);
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
}

/// A commit record whose output does not fit its task.
fn unexpected(task: &str, out: &TaskOutput) -> CoordinatorError {
    CoordinatorError::Damaged {
        object: layout::commit(task),
        reason: format!("unexpected output {out:?}"),
    }
}

fn add_runs(pending: &mut BTreeMap<PartId, BTreeMap<u32, Vec<RunRef>>>, outputs: Vec<TaskOutput>) {
    for out in outputs {
        if let TaskOutput::Runs(runs) = out {
            for r in runs {
                pending
                    .entry(r.part)
                    .or_default()
                    .entry(r.group)
                    .or_default()
                    .push(r);
            }
        }
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
