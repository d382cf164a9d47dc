//! What the scheduler tracks for people: every task of the job (pending,
//! leased, done, failed), every worker, the counters, the rate and the
//! whole job's progress, for `status`, `chunks` and the metrics.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{AttemptId, Phase, StageKind};
use solve2048_plan::Rates;
use solve2048_store::RequestCounts;

/// Where a task stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum TaskState {
    /// Waiting for a worker.
    Pending,
    /// Leased to a worker.
    Leased {
        /// The worker.
        worker: String,
        /// The lease (= the attempt).
        lease: AttemptId,
    },
    /// Committed.
    Done,
    /// Failed on every attempt; the job stopped.
    Failed,
}

/// One task of the job, as `status` and `chunks` show it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskEntry {
    /// The task's key.
    pub key: String,
    /// Forward or backward pass.
    pub phase: Phase,
    /// The kind of its stage.
    pub stage: StageKind,
    /// The part it works on, if one.
    pub part: Option<PartId>,
    /// The chunk it reads, if one.
    pub chunk: Option<ChunkId>,
    /// States it handles (known once done for a merge).
    pub states: u64,
    /// Where it stands.
    #[serde(flatten)]
    pub state: TaskState,
    /// Attempts made by this coordinator.
    pub attempts: u32,
    /// The last failure, if any.
    pub last_error: Option<String>,
}

/// What the scheduler knows of a worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerEntry {
    /// Its id.
    pub id: String,
    /// Host and process, for people.
    pub name: String,
    /// Kernel threads.
    pub threads: u32,
    /// Tasks it runs at once.
    pub slots: u32,
    /// Seconds since its last call, when the snapshot was taken.
    pub last_seen_seconds: f64,
    /// Heard from lately, silent (missed heartbeats) or lost (its leases
    /// lapsed and went back to the queue).
    #[serde(default)]
    pub health: WorkerHealth,
    /// Keys of the tasks it holds.
    pub tasks: Vec<String>,
    /// Tasks it completed.
    pub completed: u64,
    /// Alive: heard from within the lease ttl.
    pub alive: bool,
    /// Bytes its tasks may hold at once (its `--memory`, less the process).
    #[serde(default)]
    pub memory_bytes: u64,
    /// Its peak resident memory so far, as it last reported.
    #[serde(default)]
    pub peak_rss_bytes: u64,
}

/// Whether a worker is heard from, as `status` shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkerHealth {
    /// Heard from within two heartbeat intervals.
    #[default]
    Alive,
    /// Missed heartbeats, but not yet for the lease ttl.
    Silent,
    /// Silent for the lease ttl or longer: its leases lapsed and its tasks
    /// went to other workers.
    Lost,
}

/// Counters since the coordinator started.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Counters {
    /// Tasks run and committed.
    pub tasks_run: u64,
    /// Tasks found already committed.
    pub tasks_skipped: u64,
    /// Attempts that failed (reported, or lease expired).
    pub attempts_failed: u64,
    /// Leases that lapsed.
    pub leases_expired: u64,
    /// Results refused because their lease was no longer current.
    pub results_discarded: u64,
    /// Bytes workers reported writing.
    pub bytes_written: u64,
    /// Bytes workers reported reading from the store.
    #[serde(default)]
    pub bytes_read: u64,
    /// Store requests (retries included) the workers' tasks reported and
    /// the coordinator made, retries by cause.
    #[serde(default)]
    pub store_requests: RequestCounts,
    /// States handled by committed enumerate and solve tasks.
    pub states_done: u64,
}

/// The whole job's work: every state is enumerated once and solved once.
/// Layers not merged yet count with the plan's estimate
/// ([`solve2048_plan::part_counts`]), merged ones with their real counts.
/// Each state's work is weighted by what its pass costs in a layer of its
/// size at `plan`'s measured rates ([`solve2048_plan::Rates`]): a solved
/// state costs two to three enumerated ones, so counting states alone
/// made the forward pass's ETA about half the truth.
#[derive(Default)]
pub(super) struct Overall {
    /// Tile sum -> states (estimated, or real once merged).
    layers: BTreeMap<u32, u64>,
    /// Whether any layer is still an estimate.
    pub(super) estimated: bool,
    /// States of committed (or found committed) enumerate and solve tasks.
    pub(super) done: u64,
    /// Their work ([`Overall::work`]).
    pub(super) work_done: f64,
    /// The board's rates; without them every state's work is 1.
    rates: Option<Rates>,
    /// Whether the last layer is counted (the total is exact).
    pub(super) complete: bool,
    /// The highest percentage shown so far: what is shown never goes back
    /// when a layer turns out larger than its estimate.
    pub(super) shown: f64,
    /// The states of `layers` and their work ([`Overall::totals`]), kept
    /// until a layer or the rates change: summed at every task instead, over
    /// the thousand layers of 3x3 to 1024, they took 1.3% of its core time.
    totals: Option<(u64, f64)>,
}

impl Overall {
    /// The plan's estimate of every layer's states (tile sum -> states),
    /// where no real count is known.
    pub(super) fn estimate(&mut self, layers: BTreeMap<u32, u64>) {
        for (sum, states) in layers {
            self.layers.entry(sum).or_insert(states);
        }
        self.estimated = true;
        self.totals = None;
    }

    /// Weight each state's work by what its pass costs at `rates`.
    pub(super) fn set_rates(&mut self, rates: Rates) {
        self.rates = Some(rates);
        self.totals = None;
    }

    /// Layer `sum` holds `states` (its real count); `last`: no layer above
    /// it exists, so the estimates above it go and the total is exact.
    pub(super) fn counted(&mut self, sum: u32, states: u64, last: bool) {
        self.layers.insert(sum, states);
        if last {
            self.layers.retain(|&s, _| s <= sum);
            self.estimated = false;
            self.complete = true;
        }
        self.totals = None;
    }

    /// The work of `states` states of layer `sum` in `phase`: seconds of
    /// one core at the rates, or the states themselves without rates.
    pub(super) fn work(&self, phase: Phase, sum: u32, states: u64) -> f64 {
        let Some(rates) = &self.rates else {
            return states as f64;
        };
        let layer = self.layers.get(&sum).copied().unwrap_or(states);
        let (enumerate, solve) = rates.per_core(layer as f64);
        let rate = if phase == Phase::Enumerate {
            enumerate
        } else {
            solve
        };
        states as f64 / rate
    }

    /// The states of every layer, and the work of both passes on them.
    pub(super) fn totals(&mut self) -> (u64, f64) {
        if let Some(totals) = self.totals {
            return totals;
        }
        let states = self.layers.values().sum();
        let work = (self.layers.iter())
            .map(|(&sum, &n)| self.work(Phase::Enumerate, sum, n) + self.work(Phase::Solve, sum, n))
            .sum();
        *self.totals.insert((states, work))
    }
}

/// The job's progress as a whole.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct OverallProgress {
    /// States done: states enumerated plus states solved.
    pub done: u64,
    /// All the job's states to handle: twice its states (estimated for
    /// layers not enumerated yet); 0 while neither known nor estimated.
    pub total: u64,
    /// Work done, in seconds of one core at `plan`'s rates for the board
    /// (a state weighted by its pass's cost in a layer of its size).
    #[serde(default)]
    pub work_done: f64,
    /// All the job's work in the same unit; 0 while its size is unknown.
    #[serde(default)]
    pub work_total: f64,
    /// Whether `total` still holds estimates.
    pub estimated: bool,
    /// Percent of the whole job's work done, never lower than an earlier
    /// figure; None while the job's size is neither known nor estimated
    /// (larger 3x3 games in their forward pass).
    #[serde(default)]
    pub percent: Option<f64>,
}

impl OverallProgress {
    /// Seconds left at `work_rate` (of `work_done`'s unit a second); None
    /// ("unknown") while the job's size is unknown, at no rate, or when
    /// the estimate is used up with work still left (a layer larger than
    /// estimated): an ETA of zero would then be a lie.
    pub fn eta_seconds(&self, work_rate: f64) -> Option<f64> {
        self.total.checked_sub(self.done).filter(|&l| l > 0)?;
        let left = self.work_total - self.work_done;
        (self.percent.is_some() && work_rate > 0.0 && left > 0.0).then(|| left / work_rate)
    }
}

/// A copy of the scheduler's state at one instant.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Every task tracked so far.
    pub tasks: Vec<TaskEntry>,
    /// Every worker.
    pub workers: Vec<WorkerEntry>,
    /// Counters.
    pub counters: Counters,
    /// States per second over the last minute.
    pub states_per_second: f64,
    /// Work ([`OverallProgress::work_done`]'s unit) a second over the
    /// last minute, for the ETA.
    pub work_per_second: f64,
    /// Tasks waiting for a worker.
    pub queued: usize,
    /// Tasks leased.
    pub leased: usize,
}
