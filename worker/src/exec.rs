//! Running one task: read inputs from the store, run the kernel on rayon (off
//! the async runtime, so a long chunk never starves I/O), write outputs.
//!
//! Every kernel is a pure function of its inputs, so any attempt at a task
//! writes the same bytes; each attempt writes them under names of its own
//! (they carry its [`AttemptId`]), and the coordinator's commit decides which
//! attempt's outputs count.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use solve2048_core::chunk::{self, file_checksum, ChunkHeader, ChunkKind};
use solve2048_core::kernel::{self, GroupedSuccessors, SolveError};
use solve2048_core::layer::start_parts;
use solve2048_core::part::{group_of, ChunkId, PartId};
use solve2048_core::spawn::Starts;
use solve2048_core::table::{ValueTable, LOAD_IN_FLIGHT};
use solve2048_core::task::{
    result_digest, AttemptId, ChunkRef, Failure, FailureKind, JobSpec, RunRef, SolvedRef,
    TargetGroups, Task, TaskOutput,
};
use solve2048_core::Board;
use tokio::sync::OnceCell;

use solve2048_store::{layout, Store, StoreError};

/// Why a task failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// Reading or writing the store failed, or an input was rejected.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The solve kernel found its inputs inconsistent.
    #[error("solving {chunk}: {source}")]
    Solve {
        /// The chunk being solved.
        chunk: ChunkId,
        /// What was inconsistent.
        source: SolveError,
    },
    /// The task does not fit the job (a planner bug or a foreign task).
    #[error("invalid task {task}: {reason}")]
    InvalidTask {
        /// Task key.
        task: String,
        /// Why.
        reason: String,
    },
    /// A kernel thread panicked.
    #[error("kernel of task {task} panicked")]
    Panic {
        /// Task key.
        task: String,
    },
}

impl WorkerError {
    /// What the failure means for the task: a damaged or missing input, an
    /// inconsistent one, or a task that does not fit the job can never
    /// succeed, so the job stops at once; anything else is worth retrying.
    pub fn kind(&self) -> FailureKind {
        match self {
            WorkerError::Store(
                StoreError::Rejected { .. }
                | StoreError::Missing { .. }
                | StoreError::Damaged { .. }
                | StoreError::ReadOnly { .. },
            )
            | WorkerError::Solve { .. }
            | WorkerError::InvalidTask { .. } => FailureKind::Fatal,
            WorkerError::Store(_) | WorkerError::Panic { .. } => FailureKind::Retry,
        }
    }

    /// The failure to report.
    pub fn failure(&self) -> Failure {
        Failure {
            kind: self.kind(),
            message: self.to_string(),
        }
    }
}

/// The group count the task gives successor part `part`, if any.
fn group_count(targets: &[TargetGroups], part: PartId) -> Option<u32> {
    targets.iter().find(|t| t.part == part).map(|t| t.groups)
}

/// Highest zstd level for runs: they live only until their merge, and at
/// the job's level (3 by default) compressing them took a tenth of the
/// forward pass.
const RUN_ZSTD_LEVEL: i32 = 1;

/// Loaded value tables of layers, shared by concurrent solve tasks; each
/// layer is loaded once.
type LayerCache = BTreeMap<u32, Arc<OnceCell<Arc<ValueTable>>>>;

/// Runs tasks of one job against one store.
pub struct Worker {
    store: Store,
    job: JobSpec,
    // std Mutex: held only to look up or insert a cell, never across an await.
    layers: Mutex<LayerCache>,
}

impl Worker {
    /// A worker for `job` on `store`.
    pub fn new(store: Store, job: JobSpec) -> Worker {
        Worker {
            store,
            job,
            layers: Mutex::new(BTreeMap::new()),
        }
    }

    fn header(&self, kind: ChunkKind, id: ChunkId, count: u64) -> ChunkHeader {
        ChunkHeader {
            kind,
            game: self.job.game,
            id,
            count,
        }
    }

    /// The job it runs tasks of.
    pub fn job(&self) -> &JobSpec {
        &self.job
    }

    /// The store it reads and writes.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Run one attempt at a task to completion, naming its outputs after
    /// `attempt`.
    pub async fn run(&self, task: &Task, attempt: AttemptId) -> Result<TaskOutput, WorkerError> {
        match task {
            Task::Seed { targets } => {
                let mut by_part = GroupedSuccessors::new();
                for (part, states) in start_parts(self.job.game.size()) {
                    let groups =
                        group_count(targets, part).ok_or_else(|| WorkerError::InvalidTask {
                            task: task.key(),
                            reason: kernel::UnplannedPart(part).to_string(),
                        })?;
                    // Each part's start states are sorted: each group stays sorted.
                    let mut split = vec![Vec::new(); groups as usize];
                    for s in states {
                        split[group_of(s, groups) as usize].push(s);
                    }
                    by_part.insert(part, split);
                }
                self.write_runs(attempt, None, by_part).await
            }
            Task::Enumerate { chunk, targets } => {
                let states = self.read_states(chunk).await?;
                let (game, part) = (self.job.game, chunk.id.part);
                let groups: Vec<TargetGroups> = targets.clone();
                let succ = self
                    .blocking(task, move || {
                        kernel::enumerate(&game, part, &states, |p| group_count(&groups, p))
                    })
                    .await?
                    .map_err(|e| WorkerError::InvalidTask {
                        task: task.key(),
                        reason: e.to_string(),
                    })?;
                self.write_runs(attempt, Some(&chunk.id), succ).await
            }
            Task::Merge { part, group, runs } => {
                self.merge(task, attempt, *part, *group, runs).await
            }
            Task::Solve { chunk, next } => self.solve(task, attempt, chunk, next).await,
            Task::StartValue { layers } => {
                let tables = self.tables(layers).await?;
                let starts = Starts::new(self.job.game.size());
                let mut missing = None;
                let v = starts.expect(|s| {
                    let table = tables.get(&Board(s).tile_sum());
                    table.and_then(|t| t.get(s)).unwrap_or_else(|| {
                        missing = Some(s);
                        0.0
                    })
                });
                if let Some(s) = missing {
                    return Err(WorkerError::InvalidTask {
                        task: task.key(),
                        reason: format!("start state {s:#018x} has no stored value"),
                    });
                }
                Ok(TaskOutput::StartValue(v))
            }
        }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        task: &Task,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, WorkerError> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|_| WorkerError::Panic { task: task.key() })
    }

    async fn read_solved(&self, c: SolvedRef) -> Result<(Vec<u64>, Vec<f64>), WorkerError> {
        let states = self.read_states(&c.chunk).await?;
        let h = self.header(ChunkKind::Values, c.chunk.id, c.chunk.count);
        let values = self.store.read_values(&layout::values_of(&c), &h).await?;
        Ok((states, values))
    }

    async fn read_states(&self, chunk: &ChunkRef) -> Result<Vec<u64>, WorkerError> {
        let h = self.header(ChunkKind::States, chunk.id, chunk.count);
        Ok(self.store.read_keys(&layout::states_of(chunk), &h).await?)
    }

    /// Write one run per non-empty hash group of each successor part.
    async fn write_runs(
        &self,
        attempt: AttemptId,
        source: Option<&ChunkId>,
        by_part: GroupedSuccessors,
    ) -> Result<TaskOutput, WorkerError> {
        let mut runs = Vec::new();
        for (part, groups) in by_part {
            for (group, keys) in groups.into_iter().enumerate() {
                if keys.is_empty() {
                    continue;
                }
                let group = group as u32;
                let object = layout::run(&part, group, source, attempt);
                // A run's header carries its target part and group; the index
                // field is unused (0).
                let id = ChunkId {
                    part,
                    group,
                    index: 0,
                };
                let bytes = chunk::encode_keys(
                    &self.header(ChunkKind::Run, id, keys.len() as u64),
                    &keys,
                    self.job.zstd_level.min(RUN_ZSTD_LEVEL),
                );
                let checksum = self.put_chunk(&object, bytes).await?;
                runs.push(RunRef {
                    part,
                    group,
                    object,
                    count: keys.len() as u64,
                    checksum,
                });
            }
        }
        Ok(TaskOutput::Runs(runs))
    }

    async fn merge(
        &self,
        task: &Task,
        attempt: AttemptId,
        part: PartId,
        group: u32,
        runs: &[RunRef],
    ) -> Result<TaskOutput, WorkerError> {
        // The runs stay compressed in memory and are decoded as the merge
        // reads them.
        let mut reads = Vec::with_capacity(runs.len());
        let mut headers = Vec::with_capacity(runs.len());
        for r in runs {
            let h = self.header(
                ChunkKind::Run,
                ChunkId {
                    part,
                    group,
                    index: 0,
                },
                r.count,
            );
            headers.push(h);
            reads.push(self.store.read_key_bytes_owned(r.object.clone(), h));
        }
        let loaded: Vec<Vec<u8>> = futures::stream::iter(reads)
            .buffered(8)
            .try_collect()
            .await?;
        let merged = self
            .blocking(task, move || {
                let streams = loaded
                    .iter()
                    .zip(&headers)
                    .enumerate()
                    .map(|(i, (bytes, h))| chunk::stream_keys(bytes, h).map_err(|e| (i, e)))
                    .collect::<Result<Vec<_>, _>>()?;
                kernel::merge(streams)
            })
            .await?;
        let states = merged.map_err(|(i, source)| StoreError::Rejected {
            object: runs[i].object.clone(),
            source,
        })?;
        let mut out = Vec::new();
        for (index, range) in kernel::balanced_splits(states.len(), self.job.chunk_size as usize)
            .into_iter()
            .enumerate()
        {
            let id = ChunkId {
                part,
                group,
                index: index as u32,
            };
            let keys = &states[range];
            let bytes = chunk::encode_keys(
                &self.header(ChunkKind::States, id, keys.len() as u64),
                keys,
                self.job.zstd_level,
            );
            let object = layout::states(&id, attempt);
            let checksum = self.put_chunk(&object, bytes).await?;
            out.push(ChunkRef {
                id,
                count: keys.len() as u64,
                checksum,
                attempt,
            });
        }
        Ok(TaskOutput::Chunks(out))
    }

    async fn solve(
        &self,
        task: &Task,
        attempt: AttemptId,
        chunk: &ChunkRef,
        next: &[SolvedRef],
    ) -> Result<TaskOutput, WorkerError> {
        let sum = chunk.id.part.sum;
        // Drop layer S+6 before loading S+2: stages run one layer at a time,
        // so no task of this worker needs S+6 again, and holding it while
        // S+2 loads would add a whole table to the peak.
        self.evict_above(sum + 4);
        let tables = self.tables(next).await?;
        let empty = Arc::new(ValueTable::with_capacity(1));
        let plus2 = tables
            .get(&(sum + 2))
            .cloned()
            .unwrap_or_else(|| empty.clone());
        let plus4 = tables.get(&(sum + 4)).cloned().unwrap_or(empty);
        let states = self.read_states(chunk).await?;
        let game = self.job.game;
        let (values, actions, digest) = self
            .blocking(task, move || {
                kernel::solve(&game, sum, &states, &plus2, &plus4).map(|(v, a)| {
                    let d = result_digest(&states, &v, &a);
                    (v, a, d)
                })
            })
            .await?
            .map_err(|source| WorkerError::Solve {
                chunk: chunk.id,
                source,
            })?;
        let level = self.job.zstd_level;
        let vbytes = chunk::encode_values(
            &self.header(ChunkKind::Values, chunk.id, chunk.count),
            &values,
            level,
        );
        let pbytes = chunk::encode_policy(
            &self.header(ChunkKind::Policy, chunk.id, chunk.count),
            &actions,
            level,
        );
        let values_checksum = self
            .put_chunk(&layout::values(&chunk.id, attempt), vbytes)
            .await?;
        let policy_checksum = self
            .put_chunk(&layout::policy(&chunk.id, attempt), pbytes)
            .await?;
        Ok(TaskOutput::Solved {
            solved: SolvedRef {
                chunk: *chunk,
                attempt,
                values_checksum,
                policy_checksum,
            },
            digest,
        })
    }

    /// Write an encoded chunk; returns its payload checksum for the commit record.
    async fn put_chunk(&self, object: &str, bytes: Vec<u8>) -> Result<u64, WorkerError> {
        let checksum = file_checksum(&bytes);
        self.store.put(object, bytes).await?;
        Ok(checksum)
    }

    /// Value tables of every layer `chunks` belong to, loading each at most once.
    async fn tables(
        &self,
        chunks: &[SolvedRef],
    ) -> Result<BTreeMap<u32, Arc<ValueTable>>, WorkerError> {
        let mut by_layer: BTreeMap<u32, Vec<SolvedRef>> = BTreeMap::new();
        for c in chunks {
            by_layer.entry(c.chunk.id.part.sum).or_default().push(*c);
        }
        let mut out = BTreeMap::new();
        for (sum, layer) in by_layer {
            let cell = self.layers.lock().unwrap().entry(sum).or_default().clone();
            let table = cell.get_or_try_init(|| self.load_layer(layer)).await?;
            out.insert(sum, table.clone());
        }
        Ok(out)
    }

    fn evict_above(&self, sum: u32) {
        self.layers.lock().unwrap().retain(|&s, _| s <= sum);
    }

    async fn load_layer(&self, chunks: Vec<SolvedRef>) -> Result<Arc<ValueTable>, WorkerError> {
        let total: u64 = chunks.iter().map(|c| c.chunk.count).sum();
        let mut reads = Vec::with_capacity(chunks.len());
        for c in &chunks {
            reads.push(self.read_solved(*c));
        }
        // Insert each chunk as it arrives, so that besides the table only
        // the chunks in flight are held (not a second copy of the layer).
        let mut pieces = futures::stream::iter(reads).buffered(LOAD_IN_FLIGHT);
        let table = Arc::new(ValueTable::with_capacity(total as usize));
        while let Some((states, values)) = pieces.try_next().await? {
            let table = table.clone();
            tokio::task::spawn_blocking(move || table.insert_many(&states, &values))
                .await
                .map_err(|_| WorkerError::Panic {
                    task: "load layer".into(),
                })?;
        }
        Ok(table)
    }
}
