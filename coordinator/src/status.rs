//! The job's status: per layer and part, tasks pending / leased / done /
//! failed, states done, rate and ETA; the workers with their last heartbeat
//! and tasks. The coordinator serves it live and keeps the same document in
//! the store (`status.json`, rewritten every few seconds), so `status --store`
//! works while the coordinator is down; `chunks` joins it with the layer
//! indexes, commit and failure records.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use solve2048_core::space::ids::PartId;
use solve2048_store::layout;

use crate::lock::{held_by_other, unix_ms, LockRecord};
use crate::records::{CoordinatorError, FailureRecord, Records};
use crate::scheduler::{
    Counters, OverallProgress, Snapshot, TaskEntry, TaskState, WorkerEntry, WorkerHealth,
};
use solve2048_core::task::{Phase, StageKind};

/// Where the job as a whole stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// The coordinator is working on it.
    Running,
    /// Solved.
    Done,
    /// Stopped on an error (see `error`).
    Failed,
    /// Not finished, and no coordinator works on it: stopped by a signal
    /// or a shutdown request, or killed (the same command resumes it).
    Stopped,
}

/// One stage of one part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartRow {
    /// The stage's kind.
    pub stage: StageKind,
    /// Tile sum.
    pub sum: u32,
    /// Max tile value.
    pub max_tile: u32,
    /// Tasks waiting for a worker.
    pub pending: u64,
    /// Tasks leased.
    pub leased: u64,
    /// Tasks committed.
    pub done: u64,
    /// Tasks failed for good.
    pub failed: u64,
    /// States of the committed tasks.
    pub states_done: u64,
    /// States of all its tasks (for merges: known once done).
    pub states_total: u64,
}

/// The status document.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobStatus {
    /// The game, e.g. "4x4-to-64".
    pub game: String,
    /// The store.
    pub store: String,
    /// Address the coordinator serves.
    pub coordinator: String,
    /// The coordinator's epoch (one more on every start).
    pub epoch: u32,
    /// When this was taken, Unix milliseconds.
    pub updated_unix_ms: u64,
    /// Running, done or failed.
    pub state: JobState,
    /// Why it failed.
    pub error: Option<String>,
    /// The current phase.
    pub phase: Phase,
    /// Value of the game, once solved.
    pub start_value: Option<f64>,
    /// Stages of parts, in the order they ran.
    pub parts: Vec<PartRow>,
    /// Workers.
    pub workers: Vec<WorkerEntry>,
    /// Counters since this coordinator started.
    pub counters: Counters,
    /// States per second over the last minute (enumerate and solve tasks).
    pub states_per_second: f64,
    /// Work left, in states to enumerate plus states to solve, over the
    /// whole job (estimated for layers not enumerated yet, from `plan`'s
    /// model), or in planned stages where no estimate is known.
    pub states_remaining: u64,
    /// Seconds left: the work left over the rate of the last minute, each
    /// state weighted by its pass's cost ([`OverallProgress`]); None while the
    /// job's size is unknown, no worker is heard from, or an estimate is
    /// used up with work left.
    pub eta_seconds: Option<f64>,
    /// The whole job's progress: work done and all its work, in states.
    #[serde(default)]
    pub progress: OverallProgress,
    /// Percent of the whole job done, when its size is known or estimated.
    #[serde(default)]
    pub percent_done: Option<f64>,
    /// Tasks not committed (pending, leased or failed), and committed ones
    /// that failed on some attempt.
    pub open_tasks: Vec<TaskEntry>,
}

/// What the coordinator knows besides the scheduler's snapshot.
#[derive(Clone, Debug)]
pub struct JobInfo {
    /// The game's name.
    pub game: String,
    /// The store.
    pub store: String,
    /// Address served.
    pub coordinator: String,
    /// Epoch.
    pub epoch: u32,
}

impl JobStatus {
    /// Build the document from a scheduler snapshot.
    pub fn new(
        info: &JobInfo,
        snap: Snapshot,
        state: JobState,
        error: Option<String>,
        start_value: Option<f64>,
        states_ahead: u64,
        progress: OverallProgress,
    ) -> JobStatus {
        let (rows, remaining, phase) = part_rows(&snap.tasks, states_ahead);
        let rate = snap.states_per_second;
        let (remaining, percent_done) = if state == JobState::Done {
            (0, Some(100.0))
        } else if progress.total > 0 {
            (
                progress.total.saturating_sub(progress.done),
                progress.percent,
            )
        } else {
            (remaining, None)
        };
        // No ETA while the job's size is unknown (the work known so far is
        // not the job's), nor while no worker is heard from.
        let working = snap.workers.iter().any(|w| w.health != WorkerHealth::Lost);
        let eta_seconds = match state {
            JobState::Running if working => progress.eta_seconds(snap.work_per_second),
            _ => None,
        };
        JobStatus {
            game: info.game.clone(),
            store: info.store.clone(),
            coordinator: info.coordinator.clone(),
            epoch: info.epoch,
            updated_unix_ms: unix_ms(),
            state,
            error,
            phase,
            start_value,
            parts: rows,
            workers: snap.workers,
            counters: snap.counters,
            states_per_second: rate,
            states_remaining: remaining,
            eta_seconds,
            progress,
            percent_done,
            open_tasks: snap
                .tasks
                .into_iter()
                .filter(|t| t.state != TaskState::Done || t.last_error.is_some())
                .collect(),
        }
    }
}

/// A row for each stage's part of `tasks`, the states left to enumerate
/// and solve (`states_ahead` beyond them), and the phase the job is in.
fn part_rows(tasks: &[TaskEntry], states_ahead: u64) -> (Vec<PartRow>, u64, Phase) {
    let mut rows: Vec<PartRow> = Vec::new();
    let mut index: BTreeMap<(StageKind, u32, u8), usize> = BTreeMap::new();
    let mut remaining = states_ahead;
    let mut phase = Phase::Enumerate;
    for t in tasks {
        if t.phase == Phase::Solve {
            phase = Phase::Solve;
        }
        let Some(part) = t.part else { continue };
        let key = (t.stage, part.sum, part.max_exp);
        let i = *index.entry(key).or_insert_with(|| {
            rows.push(PartRow {
                stage: t.stage,
                sum: part.sum,
                max_tile: 1 << part.max_exp,
                pending: 0,
                leased: 0,
                done: 0,
                failed: 0,
                states_done: 0,
                states_total: 0,
            });
            rows.len() - 1
        });
        let row = &mut rows[i];
        row.states_total += t.states;
        match t.state {
            TaskState::Pending => row.pending += 1,
            TaskState::Leased { .. } => row.leased += 1,
            TaskState::Failed => row.failed += 1,
            TaskState::Done => {
                row.done += 1;
                row.states_done += t.states;
            }
        }
        if t.state != TaskState::Done && t.stage.counts_states() {
            remaining += t.states;
        }
    }
    (rows, remaining, phase)
}

/// What the store's lock says of the job's coordinator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    /// No coordinator has run the job.
    Never,
    /// One holds the lock and renews it (and, on this host, its process
    /// runs).
    Alive,
    /// The last one released the lock: it stopped cleanly.
    Stopped,
    /// The last one holds the lock but stopped renewing it, or its process
    /// is gone from this host: it was killed or crashed.
    Dead,
}

impl Liveness {
    /// Of the coordinator that holds or held `lock`.
    pub fn of(lock: Option<&LockRecord>) -> Liveness {
        match lock {
            None => Liveness::Never,
            Some(l) if !l.running => Liveness::Stopped,
            Some(l) if held_by_other(l) => Liveness::Alive,
            Some(_) => Liveness::Dead,
        }
    }
}

/// The status as last written to the store, with the coordinator's lock.
#[derive(Clone, Debug, Serialize)]
pub struct StoredStatus {
    /// The document (None before a coordinator first wrote one). Its state
    /// is never `running` unless a coordinator is alive: a job whose
    /// coordinator died reads `stopped`.
    pub status: Option<JobStatus>,
    /// The coordinator lock.
    pub lock: Option<LockRecord>,
    /// What the lock says of the coordinator.
    pub coordinator: Liveness,
    /// Whether the lock looks held by a live coordinator.
    pub coordinator_alive: bool,
    /// Seconds since the document was written.
    pub age_seconds: Option<f64>,
}

/// Read the status from the store (works while the coordinator is down).
/// A store that holds no job is refused.
pub async fn read_stored(records: &Records) -> Result<StoredStatus, CoordinatorError> {
    if !records.store().exists(layout::JOB).await? {
        let location = records.location().to_string();
        return Err(CoordinatorError::NoJob { location });
    }
    let status: Option<JobStatus> = records.get_json_opt(layout::STATUS).await?;
    let lock: Option<LockRecord> = records.get_json_opt(layout::LOCK).await?;
    let now = unix_ms();
    let coordinator = Liveness::of(lock.as_ref());
    let mut status = status;
    if let Some(s) = status.as_mut().filter(|_| coordinator != Liveness::Alive) {
        // Workers are alive only while a coordinator hears from them, and a
        // job runs only while its coordinator does.
        for w in &mut s.workers {
            w.alive = false;
            w.tasks.clear();
        }
        if s.state == JobState::Running {
            s.state = JobState::Stopped;
            s.eta_seconds = None;
        }
    }
    Ok(StoredStatus {
        age_seconds: status
            .as_ref()
            .map(|s| now.saturating_sub(s.updated_unix_ms) as f64 / 1000.0),
        status,
        lock,
        coordinator,
        coordinator_alive: coordinator == Liveness::Alive,
    })
}

/// Where one stage of one chunk stands, for `chunks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkState {
    /// Not planned yet.
    Waiting,
    /// Waiting for a worker.
    Pending,
    /// Leased.
    Leased,
    /// Committed.
    Done,
    /// Failed for good.
    Failed,
}

impl ChunkState {
    /// Parse a `--state` filter.
    pub fn parse(s: &str) -> Option<ChunkState> {
        Some(match s {
            "waiting" => ChunkState::Waiting,
            "pending" => ChunkState::Pending,
            "leased" => ChunkState::Leased,
            "done" => ChunkState::Done,
            "failed" => ChunkState::Failed,
            _ => return None,
        })
    }
}

/// One task of the job as `chunks` lists it: a chunk's enumerate or solve
/// task, or a merge (which has no chunk yet).
#[derive(Clone, Debug, Serialize)]
pub struct ChunkRow {
    /// The task's key.
    pub task: String,
    /// Stage.
    pub stage: StageKind,
    /// Part.
    pub sum: u32,
    /// Max tile value.
    pub max_tile: u32,
    /// Hash group.
    pub group: Option<u32>,
    /// Chunk index in the group.
    pub index: Option<u32>,
    /// States.
    pub states: u64,
    /// Where it stands.
    pub state: ChunkState,
    /// Failed attempts recorded.
    pub failed_attempts: u32,
    /// The last error.
    pub last_error: Option<String>,
    /// The committed objects it reads or wrote.
    pub objects: Vec<String>,
}

/// What the store says of each task: committed, failed on some attempt,
/// or open in the last status a coordinator wrote.
struct Known {
    /// Keys of the committed tasks.
    committed: BTreeSet<String>,
    /// Failure records by task key.
    failures: BTreeMap<String, FailureRecord>,
    /// Open tasks of the stored status by key.
    live: BTreeMap<String, TaskEntry>,
}

impl Known {
    /// Reads the commits, failures and stored status of `records`.
    async fn read(records: &Records) -> Result<Known, CoordinatorError> {
        let committed: BTreeSet<String> = (records.store().list("commits").await?)
            .into_iter()
            .filter_map(|o| {
                o.strip_prefix("commits/")
                    .and_then(|k| k.strip_suffix(".json"))
                    .map(str::to_string)
            })
            .collect();
        let mut failures: BTreeMap<String, FailureRecord> = BTreeMap::new();
        for object in records.store().list("failures").await? {
            if let Some(f) = records.get_json_opt::<FailureRecord>(&object).await? {
                failures.insert(f.task.clone(), f);
            }
        }
        let stored = read_stored(records).await?;
        let live = (stored.status.map(|s| s.open_tasks).unwrap_or_default())
            .into_iter()
            .map(|t| (t.key.clone(), t))
            .collect();
        Ok(Known {
            committed,
            failures,
            live,
        })
    }

    /// Where the task `key` stands.
    fn state_of(&self, key: &str) -> ChunkState {
        if self.committed.contains(key) {
            return ChunkState::Done;
        }
        match self.live.get(key).map(|t| &t.state) {
            Some(TaskState::Pending) => ChunkState::Pending,
            Some(TaskState::Leased { .. }) => ChunkState::Leased,
            Some(TaskState::Failed) => ChunkState::Failed,
            Some(TaskState::Done) => ChunkState::Done,
            None => ChunkState::Waiting,
        }
    }

    /// The row of task `key` of `stage` on `part` (and chunk (group,
    /// index)), of `states` states, with no objects yet.
    fn row(
        &self,
        key: String,
        stage: StageKind,
        part: PartId,
        chunk: Option<(u32, u32)>,
        states: u64,
    ) -> ChunkRow {
        let f = self.failures.get(&key);
        ChunkRow {
            state: self.state_of(&key),
            failed_attempts: f.map_or(0, |f| f.attempts),
            last_error: f.map(|f| f.last_error.clone()),
            stage,
            sum: part.sum,
            max_tile: 1 << part.max_exp,
            group: chunk.map(|c| c.0),
            index: chunk.map(|c| c.1),
            states,
            objects: Vec::new(),
            task: key,
        }
    }
}

/// Every chunk task and every unfinished task, from the store alone.
pub async fn chunk_rows(records: &Records) -> Result<Vec<ChunkRow>, CoordinatorError> {
    let known = Known::read(records).await?;
    // A solved store with recomputed values holds only some layers' values.
    let job = records.manifest().await?.map(|m| m.job);
    let solved = records.store().exists(layout::SUMMARY).await?;
    let held = |sum| job.as_ref().is_none_or(|j| j.holds_values(sum, solved));
    let mut rows = Vec::new();
    let mut listed = BTreeSet::new();
    for index in records.layer_indexes().await? {
        for part in &index.parts {
            for c in &part.chunks {
                let id = c.id;
                let name = id.name();
                for stage in [StageKind::Enumerate, StageKind::Solve] {
                    let key = format!("{stage}-{name}");
                    let mut r = known.row(
                        key.clone(),
                        stage,
                        id.part,
                        Some((id.group, id.index)),
                        c.count,
                    );
                    r.objects.push(layout::states_of(c));
                    if stage == StageKind::Solve {
                        if let Some(s) = part.solved.iter().find(|s| s.chunk.id == id) {
                            if held(id.part.sum) {
                                r.objects.push(layout::values_of(s));
                            }
                            r.objects.push(layout::policy_of(s));
                        }
                    }
                    listed.insert(key);
                    rows.push(r);
                }
            }
        }
    }
    // Tasks with no chunk in an index yet: merges, and tasks the status knows.
    for (key, t) in &known.live {
        if listed.contains(key) {
            continue;
        }
        let part = t.part.unwrap_or(PartId { sum: 0, max_exp: 0 });
        let chunk = t.chunk.map(|c| (c.group, c.index));
        rows.push(known.row(key.clone(), t.stage, part, chunk, t.states));
    }
    Ok(rows)
}
