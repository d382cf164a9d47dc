//! What the stages of a job cost: each stage's tasks (how long they took,
//! what they read and wrote), and the stages summed by task kind, for
//! `solve --json`, `status` and the book's benchmarks.

use serde::Serialize;
use solve2048_core::task::{Phase, StageKind};
use solve2048_store::RequestCounts;

use crate::scheduler::Completed;

/// The tasks of one stage that ran in this process: how long they took and
/// what they read, to spot long tails and replicated reads.
#[derive(Clone, Debug, Serialize)]
pub struct StageStats {
    /// Forward or backward pass.
    pub phase: Phase,
    /// The kind of its tasks.
    pub stage: StageKind,
    /// Tile sum of the layer.
    pub sum: u32,
    /// Tasks run.
    pub tasks: usize,
    /// The median task's seconds, lease to report.
    pub median_seconds: f64,
    /// The longest task's seconds.
    pub longest_seconds: f64,
    /// The longest task.
    pub longest_task: String,
    /// Its tasks' seconds, lease to report, added up.
    pub task_seconds: f64,
    /// Bytes its tasks read from the store.
    pub bytes_read: u64,
    /// The most bytes one of its tasks read.
    pub max_task_bytes_read: u64,
    /// Bytes its tasks wrote.
    pub bytes_written: u64,
    /// Store requests its tasks made, retries by cause.
    pub store_requests: RequestCounts,
}

/// The stages of one kind (all layers' merges, say) summed: what `solve
/// --json` reports, a few lines whatever the number of layers.
#[derive(Clone, Debug, Serialize)]
pub struct StageKindStats {
    /// Forward or backward pass.
    pub phase: Phase,
    /// The kind of its tasks.
    pub stage: StageKind,
    /// Tasks run.
    pub tasks: usize,
    /// Its tasks' seconds, lease to report, added up (with one task at a
    /// time on one thread, about their core time).
    pub task_seconds: f64,
    /// Bytes its tasks read from the store.
    pub bytes_read: u64,
    /// The most bytes one task read.
    pub max_task_bytes_read: u64,
    /// Bytes its tasks wrote.
    pub bytes_written: u64,
    /// Store requests its tasks made, retries by cause.
    pub store_requests: RequestCounts,
    /// The layer (of at least [`TAIL_MIN_TASKS`] tasks) whose longest task
    /// was the most times its median: its tile sum, longest and median
    /// seconds, and that task.
    pub worst_tail: Option<StageStats>,
}

/// Tasks a stage needs for its longest-against-median ratio to mean
/// anything.
pub const TAIL_MIN_TASKS: usize = 8;

impl StageStats {
    /// The statistics of the tasks `ran` (None when none ran).
    pub(super) fn of(
        phase: Phase,
        stage: StageKind,
        sum: u32,
        mut ran: Vec<(Completed, String)>,
    ) -> Option<StageStats> {
        if ran.is_empty() {
            return None;
        }
        ran.sort_by(|a, b| a.0.seconds.total_cmp(&b.0.seconds));
        let (longest, key) = ran.last().cloned().expect("not empty");
        Some(StageStats {
            phase,
            stage,
            sum,
            tasks: ran.len(),
            median_seconds: ran[ran.len() / 2].0.seconds,
            longest_seconds: longest.seconds,
            longest_task: key,
            task_seconds: ran.iter().map(|r| r.0.seconds).sum(),
            bytes_read: ran.iter().map(|r| r.0.bytes_read).sum(),
            max_task_bytes_read: ran.iter().map(|r| r.0.bytes_read).max().unwrap_or(0),
            bytes_written: ran.iter().map(|r| r.0.bytes_written).sum(),
            store_requests: ran
                .iter()
                .fold(RequestCounts::default(), |a, r| a.plus(&r.0.requests)),
        })
    }
}

/// The stages `stages` summed by kind, in the order the job first ran
/// each kind.
pub(super) fn by_kind(stages: &[StageStats]) -> Vec<StageKindStats> {
    let ratio = |s: &StageStats| s.longest_seconds / s.median_seconds.max(1e-3);
    let mut kinds: Vec<StageKindStats> = Vec::new();
    for s in stages {
        let k = match kinds.iter_mut().find(|k| k.stage == s.stage) {
            Some(k) => k,
            None => {
                kinds.push(StageKindStats {
                    phase: s.phase,
                    stage: s.stage,
                    tasks: 0,
                    task_seconds: 0.0,
                    bytes_read: 0,
                    max_task_bytes_read: 0,
                    bytes_written: 0,
                    store_requests: RequestCounts::default(),
                    worst_tail: None,
                });
                kinds.last_mut().expect("just pushed")
            }
        };
        k.tasks += s.tasks;
        k.task_seconds += s.task_seconds;
        k.bytes_read += s.bytes_read;
        k.max_task_bytes_read = k.max_task_bytes_read.max(s.max_task_bytes_read);
        k.bytes_written += s.bytes_written;
        k.store_requests.add(&s.store_requests);
        if s.tasks >= TAIL_MIN_TASKS && k.worst_tail.as_ref().is_none_or(|w| ratio(s) > ratio(w)) {
            k.worst_tail = Some(s.clone());
        }
    }
    kinds
}
