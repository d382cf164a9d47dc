//! The task queue and its leases: the one place that decides who runs what.
//!
//! The plan submits one attempt at a task at a time ([`Scheduler::attempt`])
//! and awaits its outcome. Workers pull attempts as leases
//! ([`Scheduler::lease`]), keep them alive with heartbeats and report an
//! output or a failure. A lease that no heartbeat renews within its ttl
//! lapses: the attempt fails with "lease expired" and the plan retries the
//! task under a new lease. A result reported under a lease that is no longer
//! current (lapsed, or issued by a previous coordinator) is refused, so
//! exactly one attempt's output reaches the commit record.
//!
//! It also tracks every task of the job (pending, leased, done, failed) and
//! every worker, for `status`, `chunks` and the metrics ([`progress`]).

mod lease;
mod progress;
mod tracking;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use solve2048_core::task::{AttemptId, Failure, Task, TaskOutput};
use solve2048_store::RequestCounts;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

pub use lease::LeaseConfig;
use progress::Overall;
pub use progress::{
    Counters, OverallProgress, Snapshot, TaskEntry, TaskState, WorkerEntry, WorkerHealth,
};

/// How an attempt ended.
enum Outcome {
    /// Boxed: far larger than a failure (its request counts).
    Done(Box<(TaskOutput, Completed)>),
    Failed(Failure),
}

/// A result the scheduler refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Why.
    pub reason: String,
    /// No commit record can name the attempt's outputs, so its worker may
    /// delete them.
    pub outputs_unreferenced: bool,
}

/// What a committed attempt cost, as its worker reported it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Completed {
    /// Seconds from the lease to the report.
    pub seconds: f64,
    /// Bytes it read from the store.
    pub bytes_read: u64,
    /// Bytes it wrote.
    pub bytes_written: u64,
    /// Store requests it made, retries by cause.
    pub requests: RequestCounts,
}

/// A task waiting for a worker.
struct Queued {
    key: String,
    json: String,
    reply: oneshot::Sender<Outcome>,
}

struct Leased {
    queued: Queued,
    worker: String,
    deadline: Instant,
    started: Instant,
}

struct WorkerState {
    name: String,
    threads: u32,
    slots: u32,
    memory_bytes: u64,
    peak_rss_bytes: u64,
    last_seen: Instant,
    completed: u64,
}

/// A lease handed to a worker.
#[derive(Clone, Debug)]
pub struct LeaseGrant {
    /// The lease (= attempt) id.
    pub lease: AttemptId,
    /// The task's key.
    pub key: String,
    /// The task as JSON.
    pub task_json: String,
    /// How long the lease lives without a heartbeat.
    pub ttl: Duration,
}

/// What a lease call got.
pub enum LeaseAnswer {
    /// A task to run.
    Task(LeaseGrant),
    /// Nothing ready yet.
    Nothing,
    /// The job is over.
    Finished,
}

/// Calls from a worker the scheduler does not know (it registered with a
/// previous coordinator).
#[derive(Debug, thiserror::Error)]
#[error("unknown worker {0}: register again")]
pub struct UnknownWorker(pub String);

#[derive(Default)]
struct State {
    queue: VecDeque<Queued>,
    leases: HashMap<AttemptId, Leased>,
    workers: BTreeMap<String, WorkerState>,
    tasks: BTreeMap<String, TaskEntry>,
    next_seq: u32,
    next_worker: u64,
    finished: bool,
    finished_at: Option<Instant>,
    /// States of planned-but-not-staged work (for the ETA).
    states_ahead: u64,
    counters: Counters,
    /// Work of the tasks run by this coordinator ([`Overall::work`]).
    work_run: f64,
    /// (time, states_done, work_run) samples for the rates, oldest first.
    samples: VecDeque<(Instant, u64, f64)>,
    /// The whole job's work, for the overall percentage and ETA.
    overall: Overall,
    /// The last leases their workers ended (a result or a failure
    /// reported), newest last: a heartbeat sent before the report and read
    /// after it still names them, and they are not lost.
    ended: VecDeque<AttemptId>,
}

/// How many ended leases [`State::ended`] remembers.
const ENDED_REMEMBERED: usize = 1024;

/// The queue, the leases, the workers and the task table of one job.
pub struct Scheduler {
    // std Mutex: held only for short, synchronous updates, never across an await.
    state: Mutex<State>,
    wake: Notify,
    config: LeaseConfig,
    epoch: u32,
}

impl Scheduler {
    /// A scheduler issuing attempt ids of coordinator epoch `epoch`.
    pub fn new(config: LeaseConfig, epoch: u32) -> Scheduler {
        Scheduler {
            state: Mutex::new(State::default()),
            wake: Notify::new(),
            config,
            epoch,
        }
    }

    /// Lease timing.
    pub fn config(&self) -> LeaseConfig {
        self.config
    }

    /// Run one attempt at `task` on some worker and wait for its outcome.
    pub async fn attempt(&self, task: &Task) -> Result<(TaskOutput, Completed), Failure> {
        let (tx, rx) = oneshot::channel();
        let key = task.key();
        {
            let mut st = self.state.lock().unwrap();
            if let Some(e) = st.tasks.get_mut(&key) {
                e.state = TaskState::Pending;
            }
            st.queue.push_back(Queued {
                key,
                json: serde_json::to_string(task).expect("tasks serialize"),
                reply: tx,
            });
        }
        self.wake.notify_one();
        let outcome = match rx.await {
            Ok(Outcome::Done(done)) => Ok(*done),
            Ok(Outcome::Failed(e)) => Err(e),
            Err(_) => Err(Failure::retry("the scheduler dropped the attempt")),
        };
        if let Err(e) = &outcome {
            let mut st = self.state.lock().unwrap();
            st.counters.attempts_failed += 1;
            if let Some(entry) = st.tasks.get_mut(&task.key()) {
                entry.last_error = Some(e.message.clone());
            }
        }
        outcome
    }

    /// A worker joins; returns its id.
    pub fn register(&self, name: &str, threads: u32, slots: u32, memory_bytes: u64) -> String {
        let mut st = self.state.lock().unwrap();
        st.next_worker += 1;
        let id = format!("w{}-{}", self.epoch, st.next_worker);
        st.workers.insert(
            id.clone(),
            WorkerState {
                name: name.to_string(),
                threads,
                slots,
                memory_bytes,
                peak_rss_bytes: 0,
                last_seen: Instant::now(),
                completed: 0,
            },
        );
        tracing::info!(worker = %id, name, threads, slots, memory_bytes, "worker registered");
        id
    }

    fn touch(st: &mut State, worker: &str) -> Result<(), UnknownWorker> {
        match st.workers.get_mut(worker) {
            Some(w) => {
                w.last_seen = Instant::now();
                Ok(())
            }
            None => Err(UnknownWorker(worker.to_string())),
        }
    }

    /// Lease a task to `worker`, waiting up to `wait` for one.
    pub async fn lease(&self, worker: &str, wait: Duration) -> Result<LeaseAnswer, UnknownWorker> {
        let until = Instant::now() + wait;
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = self.state.lock().unwrap();
                Self::touch(&mut st, worker)?;
                if st.finished {
                    return Ok(LeaseAnswer::Finished);
                }
                if let Some(queued) = st.queue.pop_front() {
                    st.next_seq += 1;
                    let lease = AttemptId::new(self.epoch, st.next_seq);
                    let grant = LeaseGrant {
                        lease,
                        key: queued.key.clone(),
                        task_json: queued.json.clone(),
                        ttl: self.config.ttl,
                    };
                    if let Some(e) = st.tasks.get_mut(&queued.key) {
                        e.state = TaskState::Leased {
                            worker: worker.to_string(),
                            lease,
                        };
                        e.attempts += 1;
                    }
                    tracing::debug!(task = %queued.key, %lease, worker, "leased");
                    st.leases.insert(
                        lease,
                        Leased {
                            queued,
                            worker: worker.to_string(),
                            deadline: Instant::now() + self.config.ttl,
                            started: Instant::now(),
                        },
                    );
                    return Ok(LeaseAnswer::Task(grant));
                }
            }
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return Ok(LeaseAnswer::Nothing);
            }
        }
    }

    /// Renew `worker`'s leases; returns those it no longer holds.
    pub fn heartbeat(
        &self,
        worker: &str,
        leases: &[AttemptId],
        peak_rss_bytes: u64,
    ) -> Result<(Vec<AttemptId>, bool), UnknownWorker> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        Self::touch(st, worker)?;
        if let Some(w) = st.workers.get_mut(worker) {
            w.peak_rss_bytes = w.peak_rss_bytes.max(peak_rss_bytes);
        }
        let deadline = Instant::now() + self.config.ttl;
        let mut lost = Vec::new();
        for id in leases {
            match st.leases.get_mut(id) {
                Some(l) if l.worker == worker => l.deadline = deadline,
                None if st.ended.contains(id) => {}
                _ => lost.push(*id),
            }
        }
        Ok((lost, st.finished))
    }

    /// Take `lease` off `worker`, if it holds it.
    fn take(st: &mut State, worker: &str, lease: AttemptId) -> Option<Leased> {
        match st.leases.get(&lease) {
            Some(l) if l.worker == worker => {
                if st.ended.len() == ENDED_REMEMBERED {
                    st.ended.pop_front();
                }
                st.ended.push_back(lease);
                st.leases.remove(&lease)
            }
            _ => None,
        }
    }

    /// A worker reports an output; refused when the lease is not current.
    pub fn complete(
        &self,
        worker: &str,
        lease: AttemptId,
        output: TaskOutput,
        bytes_read: u64,
        bytes_written: u64,
        requests: RequestCounts,
    ) -> Result<(), Refused> {
        let mut st = self.state.lock().unwrap();
        let _ = Self::touch(&mut st, worker);
        st.counters.bytes_written += bytes_written;
        st.counters.bytes_read += bytes_read;
        st.counters.store_requests.add(&requests);
        let Some(leased) = Self::take(&mut st, worker, lease) else {
            st.counters.results_discarded += 1;
            tracing::warn!(%lease, worker, "result under a stale lease discarded");
            return Err(Refused {
                reason: format!(
                    "lease {lease} is not current (it expired, or a previous coordinator issued it)"
                ),
                // This scheduler commits only what it accepted, so an attempt
                // it issued and refuses is committed nowhere. One a previous
                // coordinator issued may have been committed just before it
                // died (its reply lost): its outputs stay, and the end of the
                // job sweeps them if no record names them.
                outputs_unreferenced: lease.epoch() == self.epoch,
            });
        };
        if let Some(w) = st.workers.get_mut(worker) {
            w.completed += 1;
        }
        let done = Completed {
            seconds: leased.started.elapsed().as_secs_f64(),
            bytes_read,
            bytes_written,
            requests,
        };
        // The plan may have stopped waiting (the job failed): nothing to do then.
        let _ = leased
            .queued
            .reply
            .send(Outcome::Done(Box::new((output, done))));
        Ok(())
    }

    /// Count store requests made outside tasks (the coordinator's own).
    pub fn count_requests(&self, requests: &RequestCounts) {
        self.state
            .lock()
            .unwrap()
            .counters
            .store_requests
            .add(requests);
    }

    /// A worker reports a failure.
    pub fn fail(&self, worker: &str, lease: AttemptId, failure: Failure) {
        let mut st = self.state.lock().unwrap();
        let _ = Self::touch(&mut st, worker);
        if let Some(leased) = Self::take(&mut st, worker, lease) {
            tracing::warn!(task = %leased.queued.key, %lease, worker, error = %failure, "attempt failed");
            let failure = Failure {
                kind: failure.kind,
                message: format!("on worker {worker}: {}", failure.message),
            };
            let _ = leased.queued.reply.send(Outcome::Failed(failure));
        }
    }

    /// A worker hands a lease back unfinished: the task goes to the front of
    /// the queue, and the attempt does not count as a failure.
    pub fn release(&self, worker: &str, lease: AttemptId) {
        let mut st = self.state.lock().unwrap();
        let _ = Self::touch(&mut st, worker);
        if let Some(leased) = Self::take(&mut st, worker, lease) {
            tracing::info!(task = %leased.queued.key, %lease, worker, "lease handed back");
            if let Some(e) = st.tasks.get_mut(&leased.queued.key) {
                e.state = TaskState::Pending;
                e.attempts = e.attempts.saturating_sub(1);
            }
            st.queue.push_front(leased.queued);
            drop(st);
            self.wake.notify_one();
        }
    }

    /// Fail every lease past its deadline; returns how many lapsed.
    pub fn expire(&self) -> usize {
        let now = Instant::now();
        let mut st = self.state.lock().unwrap();
        let expired: Vec<AttemptId> = st
            .leases
            .iter()
            .filter(|(_, l)| l.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            let leased = st.leases.remove(id).unwrap();
            st.counters.leases_expired += 1;
            tracing::warn!(task = %leased.queued.key, lease = %id, worker = %leased.worker, "lease expired");
            let _ = leased
                .queued
                .reply
                .send(Outcome::Failed(Failure::retry(format!(
                    "lease {id} expired: worker {} sent no heartbeat for {:?}",
                    leased.worker, self.config.ttl
                ))));
        }
        expired.len()
    }

    /// Check leases every `period` until the job is finished. A check that
    /// comes late by more than a heartbeat means this process itself was
    /// stalled (swapping, suspended, a blocked runtime): the heartbeats it
    /// could not hear are not the workers' fault, so every lease and worker
    /// is given the stalled time back instead of being declared lost.
    pub async fn expire_loop(&self, period: Duration) {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last = Instant::now();
        while !self.is_finished() {
            tick.tick().await;
            let now = Instant::now();
            let late = (now - last).saturating_sub(period);
            last = now;
            if late > self.config.heartbeat {
                tracing::warn!(stalled = ?late, "the coordinator was stalled; leases extended");
                self.pardon(late);
                continue;
            }
            self.expire();
        }
    }

    /// Give every lease and worker `stalled` more time.
    fn pardon(&self, stalled: Duration) {
        let now = Instant::now();
        let mut st = self.state.lock().unwrap();
        for l in st.leases.values_mut() {
            l.deadline += stalled;
        }
        for w in st.workers.values_mut() {
            w.last_seen = (w.last_seen + stalled).min(now);
        }
    }

    /// The job is over: every lease call answers "finished" from now on.
    pub fn finish(&self) {
        let mut st = self.state.lock().unwrap();
        st.finished = true;
        st.finished_at = Some(Instant::now());
        drop(st);
        self.wake.notify_waiters();
    }

    /// Live workers not heard from since the job finished.
    pub fn workers_not_told(&self) -> usize {
        let st = self.state.lock().unwrap();
        let Some(at) = st.finished_at else {
            return st.workers.len();
        };
        st.workers
            .values()
            .filter(|w| at - w.last_seen <= self.config.ttl && w.last_seen <= at)
            .count()
    }

    /// Whether [`Scheduler::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.state.lock().unwrap().finished
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::space::ids::PartId;
    use solve2048_core::task::TargetGroups;

    fn seed() -> Task {
        Task::Seed {
            targets: vec![TargetGroups {
                part: PartId { sum: 4, max_exp: 1 },
                groups: 1,
            }],
        }
    }

    fn config() -> LeaseConfig {
        LeaseConfig {
            ttl: Duration::from_secs(10),
            heartbeat: Duration::from_secs(1),
        }
    }

    async fn grant(s: &Scheduler, w: &str) -> LeaseGrant {
        match s.lease(w, Duration::from_secs(5)).await.unwrap() {
            LeaseAnswer::Task(g) => g,
            _ => panic!("no task leased"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_lapsed_lease_fails_the_attempt_and_its_late_result_is_refused() {
        let s = std::sync::Arc::new(Scheduler::new(config(), 7));
        let w = s.register("test", 1, 1, 1 << 30);
        let task = seed();
        let attempt = {
            let s = s.clone();
            let task = task.clone();
            tokio::spawn(async move { s.attempt(&task).await })
        };
        let g = grant(&s, &w).await;
        assert_eq!(g.lease.epoch(), 7);
        // Heartbeats keep it alive past the ttl...
        for _ in 0..3 {
            tokio::time::advance(Duration::from_secs(6)).await;
            assert_eq!(s.heartbeat(&w, &[g.lease], 0).unwrap().0, vec![]);
            assert_eq!(s.expire(), 0);
        }
        // ...and silence lets it lapse.
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(s.expire(), 1);
        let err = attempt.await.unwrap().unwrap_err();
        assert!(err.message.contains("expired"), "{err}");
        assert_eq!(s.heartbeat(&w, &[g.lease], 0).unwrap().0, vec![g.lease]);
        let late = s.complete(
            &w,
            g.lease,
            TaskOutput::StartValue(0.5),
            0,
            0,
            RequestCounts::default(),
        );
        let refused = late.unwrap_err();
        assert!(refused.reason.contains("not current"), "{refused:?}");
        assert!(refused.outputs_unreferenced);
        assert_eq!(s.counters().results_discarded, 1);
        assert_eq!(s.counters().leases_expired, 1);
    }

    /// A previous coordinator may have committed an attempt just before it
    /// died, its reply lost: its worker then reports the result here, which
    /// is refused, and its outputs must stay (the records name them).
    #[tokio::test(start_paused = true)]
    async fn a_result_under_a_previous_coordinators_lease_keeps_its_outputs() {
        let s = Scheduler::new(config(), 8);
        let w = s.register("test", 1, 1, 1 << 30);
        let old = AttemptId::new(7, 3);
        let refused = s
            .complete(
                &w,
                old,
                TaskOutput::StartValue(0.5),
                0,
                0,
                RequestCounts::default(),
            )
            .unwrap_err();
        assert!(refused.reason.contains("not current"), "{refused:?}");
        assert!(!refused.outputs_unreferenced);
    }

    #[tokio::test(start_paused = true)]
    async fn a_released_lease_goes_back_to_the_front_and_a_new_lease_completes() {
        let s = std::sync::Arc::new(Scheduler::new(config(), 1));
        let (a, b) = (
            s.register("a", 1, 1, 1 << 30),
            s.register("b", 1, 1, 1 << 30),
        );
        let attempt = {
            let s = s.clone();
            tokio::spawn(async move { s.attempt(&seed()).await })
        };
        let first = grant(&s, &a).await;
        // Another worker cannot complete a lease it does not hold.
        assert!(s
            .complete(
                &b,
                first.lease,
                TaskOutput::StartValue(0.0),
                0,
                0,
                RequestCounts::default()
            )
            .is_err());
        s.release(&a, first.lease);
        let second = grant(&s, &b).await;
        assert_ne!(first.lease, second.lease);
        assert_eq!(first.key, second.key);
        s.complete(
            &b,
            second.lease,
            TaskOutput::StartValue(0.25),
            5,
            10,
            RequestCounts::default(),
        )
        .unwrap();
        // A heartbeat sent before the result and read after it names a
        // lease its worker ended: not lost. One the scheduler never issued
        // (or let expire) is.
        let stranger = AttemptId(second.lease.0 + 1000);
        assert_eq!(
            s.heartbeat(&b, &[second.lease, stranger], 0).unwrap().0,
            vec![stranger]
        );
        let (out, done) = attempt.await.unwrap().unwrap();
        assert_eq!(out, TaskOutput::StartValue(0.25));
        assert_eq!((done.bytes_read, done.bytes_written), (5, 10));
        assert_eq!(s.counters().bytes_written, 10);
        assert_eq!(s.counters().bytes_read, 5);
        // Nothing left: a lease call waits, then answers nothing; after
        // finish() it answers finished.
        assert!(matches!(
            s.lease(&a, Duration::from_secs(1)).await.unwrap(),
            LeaseAnswer::Nothing
        ));
        s.finish();
        assert!(matches!(
            s.lease(&a, Duration::from_secs(1)).await.unwrap(),
            LeaseAnswer::Finished
        ));
        assert!(s.lease("stranger", Duration::ZERO).await.is_err());
    }

    /// A coordinator stalled longer than the lease ttl does not blame its
    /// workers for the heartbeats it could not hear; silence it does hear
    /// still loses them.
    #[tokio::test(start_paused = true)]
    async fn a_stalled_coordinator_does_not_lose_its_workers() {
        let s = std::sync::Arc::new(Scheduler::new(config(), 1));
        let w = s.register("test", 1, 1, 1 << 30);
        let attempt = {
            let s = s.clone();
            tokio::spawn(async move { s.attempt(&seed()).await })
        };
        let g = grant(&s, &w).await;
        let expiring = {
            let s = s.clone();
            tokio::spawn(async move { s.expire_loop(Duration::from_millis(250)).await })
        };
        tokio::task::yield_now().await;
        // A stall of 12 s (the ttl is 10 s): time jumps, no tick between.
        tokio::time::advance(Duration::from_secs(12)).await;
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert_eq!(s.counters().leases_expired, 0, "lost to a stall");
        assert_eq!(s.heartbeat(&w, &[g.lease], 0).unwrap().0, vec![]);
        // Silence heard as it passes: the lease lapses.
        for _ in 0..48 {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert_eq!(s.counters().leases_expired, 1);
        assert!(attempt.await.unwrap().is_err());
        s.finish();
        expiring.await.unwrap();
    }

    #[test]
    fn lease_timing_is_validated() {
        let mut c = config();
        assert!(c.validate().is_ok());
        c.ttl = Duration::from_millis(1500);
        assert!(c.validate().unwrap_err().contains("twice"));
    }
}
