//! The scheduler's tracking of the job for people: it enters each stage's
//! tasks, records them done or failed, counts layers and rates, and copies
//! it all out for `status`, `chunks` and the metrics (the records:
//! [`super::progress`]).

use std::collections::BTreeMap;
use std::time::Duration;

use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{Phase, StageKind, Task};
use tokio::time::Instant;

use super::progress::{
    Counters, OverallProgress, Snapshot, TaskEntry, TaskState, WorkerEntry, WorkerHealth,
};
use super::Scheduler;

/// Part, chunk and input states of a task.
fn describe(task: &Task) -> (Option<PartId>, Option<ChunkId>, u64) {
    match task {
        Task::Enumerate { chunk, .. } | Task::Solve { chunk, .. } => {
            (Some(chunk.id.part), Some(chunk.id), chunk.count)
        }
        // Runs beside a layer's solves: its states are not the job's work.
        Task::Ask { chunk, .. } => (Some(chunk.id.part), Some(chunk.id), 0),
        Task::Expand { part, .. } | Task::Merge { part, .. } => (Some(*part), None, 0),
        Task::Gather { part, groups, .. } => (
            Some(*part),
            None,
            groups
                .iter()
                .flat_map(|g| &g.chunks)
                .map(|c| c.chunk.count)
                .sum(),
        ),
        Task::Seed { .. } | Task::StartValue { .. } => (None, None, 0),
    }
}

/// Window of the states-per-second rate.
const RATE_WINDOW: Duration = Duration::from_secs(60);

impl Scheduler {
    /// The largest peak resident memory any worker reported.
    pub fn workers_peak_rss(&self) -> u64 {
        let st = self.state.lock().unwrap();
        st.workers
            .values()
            .map(|w| w.peak_rss_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Enter the tasks of a stage in the task table as pending.
    pub fn track(&self, phase: Phase, stage: StageKind, tasks: &[Task]) {
        let mut st = self.state.lock().unwrap();
        for task in tasks {
            let (part, chunk, states) = describe(task);
            st.tasks.insert(
                task.key(),
                TaskEntry {
                    key: task.key(),
                    phase,
                    stage,
                    part,
                    chunk,
                    states,
                    state: TaskState::Pending,
                    attempts: 0,
                    last_error: None,
                },
            );
        }
    }

    /// Set the plan's estimate of every layer's states (tile sum -> states).
    pub fn set_estimate(&self, layers: BTreeMap<u32, u64>) {
        self.state.lock().unwrap().overall.estimate(layers);
    }

    /// Weight each state's work by what its pass costs at `rates` (the
    /// board's, from `plan`), for the percentage and the ETA.
    pub fn set_rates(&self, rates: solve2048_plan::Rates) {
        self.state.lock().unwrap().overall.set_rates(rates);
    }

    /// Layer `sum` is merged and holds `states`: its real count replaces the
    /// estimate. `last`: no layer above it exists.
    pub fn layer_counted(&self, sum: u32, states: u64, last: bool) {
        let mut st = self.state.lock().unwrap();
        st.overall.counted(sum, states, last);
    }

    /// The job's progress as a whole. Without an estimate, the layers
    /// counted so far are no total: the job's size stays unknown (0) until
    /// the last layer is counted.
    pub fn overall(&self) -> OverallProgress {
        let mut st = self.state.lock().unwrap();
        let o = &mut st.overall;
        let (total, work_total) = match o.estimated || o.complete {
            true => {
                let (states, work) = o.totals();
                (2 * states, work)
            }
            false => (0, 0.0),
        };
        let done = if total > 0 { o.done.min(total) } else { o.done };
        let percent = (total > 0).then(|| {
            // An estimate used up is not the end: 100% waits for the real size.
            let cap = if o.complete { 100.0 } else { 99.9 };
            let share = if total > done {
                o.work_done / work_total
            } else {
                1.0
            };
            o.shown = (100.0 * share).min(cap).max(o.shown);
            o.shown
        });
        OverallProgress {
            done,
            total,
            work_done: o.work_done.min(work_total),
            work_total,
            estimated: o.estimated,
            percent,
        }
    }

    /// Record a task as committed (`skipped`: found committed by an earlier run).
    pub fn done(&self, key: &str, states: u64, skipped: bool) {
        let mut st = self.state.lock().unwrap();
        let counted = match st.tasks.get_mut(key) {
            Some(e) if e.state != TaskState::Done => {
                e.state = TaskState::Done;
                e.states = states;
                (e.stage.counts_states()).then(|| (e.phase, e.part.map_or(0, |p| p.sum)))
            }
            _ => None,
        };
        // The work of an enumerate or solve task's states; None for others.
        let work = counted.map(|(phase, sum)| st.overall.work(phase, sum, states));
        if let Some(work) = work {
            st.overall.done += states;
            st.overall.work_done += work;
        }
        if skipped {
            st.counters.tasks_skipped += 1;
        } else {
            st.counters.tasks_run += 1;
            if let Some(work) = work {
                st.counters.states_done += states;
                st.work_run += work;
                let now = Instant::now();
                let (done, work_run) = (st.counters.states_done, st.work_run);
                st.samples.push_back((now, done, work_run));
                while st.samples.len() > 2 && now - st.samples[0].0 > RATE_WINDOW {
                    st.samples.pop_front();
                }
            }
        }
    }

    /// Record a task as failed for good.
    pub fn failed(&self, key: &str) {
        if let Some(e) = self.state.lock().unwrap().tasks.get_mut(key) {
            e.state = TaskState::Failed;
        }
    }

    /// Set the states of work planned beyond the tracked tasks.
    pub fn set_states_ahead(&self, states: u64) {
        self.state.lock().unwrap().states_ahead = states;
    }

    /// States of work planned beyond the tracked tasks.
    pub fn states_ahead(&self) -> u64 {
        self.state.lock().unwrap().states_ahead
    }

    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.state.lock().unwrap().counters
    }

    /// Workers that were heard from since `since` ago.
    pub fn workers_seen_within(&self, since: Duration) -> usize {
        let now = Instant::now();
        let st = self.state.lock().unwrap();
        st.workers
            .values()
            .filter(|w| now - w.last_seen <= since)
            .count()
    }

    /// A snapshot of the task table, the workers, the counters and the rate.
    pub fn snapshot(&self) -> Snapshot {
        let now = Instant::now();
        let st = self.state.lock().unwrap();
        let mut holding: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for l in st.leases.values() {
            holding
                .entry(l.worker.as_str())
                .or_default()
                .push(l.queued.key.clone());
        }
        let workers = st
            .workers
            .iter()
            .map(|(id, w)| WorkerEntry {
                id: id.clone(),
                name: w.name.clone(),
                threads: w.threads,
                slots: w.slots,
                last_seen_seconds: (now - w.last_seen).as_secs_f64(),
                // Lost once its leases have lapsed (the expiry runs every
                // quarter second), so a lost worker never holds a task.
                health: match now - w.last_seen {
                    d if d > self.config.ttl && !holding.contains_key(id.as_str()) => {
                        WorkerHealth::Lost
                    }
                    d if d > self.config.heartbeat * 2 => WorkerHealth::Silent,
                    _ => WorkerHealth::Alive,
                },
                tasks: holding.get(id.as_str()).cloned().unwrap_or_default(),
                completed: w.completed,
                alive: now - w.last_seen <= self.config.ttl,
                memory_bytes: w.memory_bytes,
                peak_rss_bytes: w.peak_rss_bytes,
            })
            .collect();
        // Up to now, not to the last completion: a job that stalls (its
        // worker gone) sees its rate fall and its ETA grow.
        let (rate, work_rate) = match (st.samples.front(), st.samples.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                let seconds = (now - a.0).as_secs_f64();
                ((b.1 - a.1) as f64 / seconds, (b.2 - a.2) / seconds)
            }
            _ => (0.0, 0.0),
        };
        Snapshot {
            tasks: st.tasks.values().cloned().collect(),
            workers,
            counters: st.counters,
            states_per_second: rate,
            work_per_second: work_rate,
            queued: st.queue.len(),
            leased: st.leases.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::LeaseConfig;

    /// A committed enumerate or solve task of `states` states, of the
    /// layer its key ends with.
    fn commit(s: &Scheduler, key: &str, stage: StageKind, states: u64) {
        let sum = key.rsplit('-').next().unwrap().parse().unwrap();
        s.state.lock().unwrap().tasks.insert(
            key.to_string(),
            TaskEntry {
                key: key.to_string(),
                phase: if stage == StageKind::Solve {
                    Phase::Solve
                } else {
                    Phase::Enumerate
                },
                stage,
                part: Some(PartId { sum, max_exp: 1 }),
                chunk: None,
                states,
                state: TaskState::Pending,
                attempts: 1,
                last_error: None,
            },
        );
        s.done(key, states, false);
    }

    /// Play `layers` (tile sum -> real states) forward, counting each layer
    /// once enumerated, then backward; every snapshot's percentage as
    /// printed (one decimal) and its ETA at 1000 states/s.
    fn run(s: &Scheduler, layers: &[(u32, u64)]) -> Vec<(Option<String>, Option<f64>, u64)> {
        let mut seen = Vec::new();
        let mut look = |s: &Scheduler| {
            let o = s.overall();
            let left = o.total.saturating_sub(o.done);
            seen.push((
                o.percent.map(|p| format!("{p:.1}")),
                o.eta_seconds(1000.0),
                left,
            ));
        };
        for (i, &(sum, states)) in layers.iter().enumerate() {
            commit(s, &format!("enumerate-{sum}"), StageKind::Enumerate, states);
            look(s);
            s.layer_counted(sum, states, i + 1 == layers.len());
            look(s);
        }
        for &(sum, states) in layers.iter().rev() {
            commit(s, &format!("solve-{sum}"), StageKind::Solve, states);
            look(s);
        }
        seen
    }

    fn never_back_and_no_false_zero(seen: &[(Option<String>, Option<f64>, u64)]) {
        let shown: Vec<f64> = seen
            .iter()
            .filter_map(|(p, _, _)| p.as_ref().map(|p| p.parse().unwrap()))
            .collect();
        for w in shown.windows(2) {
            assert!(w[0] <= w[1], "the percentage went back: {seen:?}");
        }
        for (p, eta, _) in seen {
            assert!(
                eta.is_none_or(|e| e > 0.0),
                "an ETA of 0 with work left: {seen:?}"
            );
            assert!(eta.is_none() || p.is_some(), "an ETA of an unknown size");
        }
        assert_eq!(shown.last(), Some(&100.0));
    }

    /// Larger 3x3 games have no estimate: in the forward pass the layers
    /// counted so far are no total, so no percentage and no ETA (once they
    /// showed ~50% going back and forth, and an ETA of 0 s with the
    /// forward pass half done).
    #[tokio::test(start_paused = true)]
    async fn without_an_estimate_the_size_is_unknown_until_the_last_layer() {
        let s = Scheduler::new(LeaseConfig::default(), 1);
        let layers = [(4, 10), (6, 30), (8, 90), (10, 60)];
        let seen = run(&s, &layers);
        let forward = &seen[..2 * layers.len() - 1];
        assert!(
            forward
                .iter()
                .all(|(p, eta, _)| p.is_none() && eta.is_none()),
            "{forward:?}"
        );
        // Once the last layer is counted: 190 of 380, then up to the end.
        assert_eq!(seen[2 * layers.len() - 1].0.as_deref(), Some("50.0"));
        assert_eq!(seen[2 * layers.len() - 1].1, Some(0.19));
        never_back_and_no_false_zero(&seen);
    }

    /// An estimate below the real counts: each layer counted raises the
    /// total, and the percentage holds instead of going back; with the
    /// estimate used up and work left, the ETA is unknown, not 0.
    #[tokio::test(start_paused = true)]
    async fn a_low_estimate_never_sends_the_percentage_back() {
        let s = Scheduler::new(LeaseConfig::default(), 1);
        s.set_estimate([(4, 10), (6, 10), (8, 10)].into_iter().collect());
        let seen = run(&s, &[(4, 10), (6, 60), (8, 50)]);
        never_back_and_no_false_zero(&seen);
        assert_eq!(seen[0].0.as_deref(), Some("16.7"));
        // The second layer's 60 states use the estimate up (70 of 60 done):
        // 99.9% (never 100 before the end) and no ETA, not "ETA 0s".
        assert_eq!(seen[2], (Some("99.9".into()), None, 0));
        // Counted, they raise the total to 160: raw, 43.8%; shown, held.
        assert_eq!(seen[3].0.as_deref(), Some("99.9"));
        assert_eq!(seen[3].2, 90, "work is left");
        assert_eq!(seen[3].1, Some(0.09));
        assert!(
            seen.iter()
                .any(|(_, eta, left)| eta.is_none() && *left == 0),
            "the estimate used up with work left: {seen:?}"
        );
    }

    /// With the board's rates a solved state weighs what it costs: here
    /// twice an enumerated one, so the forward pass is a third of the job,
    /// not half, and the ETA counts the backward pass at its own rate.
    #[tokio::test(start_paused = true)]
    async fn work_is_weighted_by_each_pass_s_cost() {
        let s = Scheduler::new(LeaseConfig::default(), 1);
        s.set_rates(solve2048_plan::Rates {
            enumerate_per_core: 2.0,
            solve_per_core: 1.0,
            enumerate_cached_per_core: 4.0,
            solve_cached_per_core: 2.0,
            cached_layer_states: 50,
            enumerate_parallel: 0.0,
            solve_parallel: 0.0,
            source: "test",
        });
        s.set_estimate([(4, 40), (6, 100)].into_iter().collect());
        // Layer 4 at the cached rates: 40 / 4 + 40 / 2 = 30; layer 6:
        // 100 / 2 + 100 / 1 = 150.
        assert_eq!(s.overall().work_total, 180.0);
        commit(&s, "enumerate-4", StageKind::Enumerate, 40);
        commit(&s, "enumerate-6", StageKind::Enumerate, 100);
        let o = s.overall();
        assert_eq!((o.done, o.total, o.work_done), (140, 280, 60.0));
        assert_eq!(
            o.percent.map(|p| format!("{p:.1}")).as_deref(),
            Some("33.3")
        );
        // 120 left at 2 a second.
        assert_eq!(o.eta_seconds(2.0), Some(60.0));
        // A real count replaces the estimate in both totals: layer 6 at
        // 200 / 2 + 200 / 1 = 300.
        s.layer_counted(6, 200, true);
        let o = s.overall();
        assert_eq!((o.total, o.work_total), (480, 330.0));
    }
}
