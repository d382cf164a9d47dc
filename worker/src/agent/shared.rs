//! What a worker process's loops share ([`Shared`]): its client,
//! configuration and report, the tokens that stop it and the tracker of
//! the tasks it drains, and the backoff while the coordinator is
//! unreachable (each failure logged with its error, at a decreasing rate).

use std::sync::Mutex;
use std::time::Duration;

use solve2048_proto::client::Client;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tonic::Status;

use super::config::AgentConfig;
use super::connection::describe_status;
use super::error::AgentError;
use super::report::AgentReport;

/// What a worker process's registrations, slots and heartbeats share.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) config: AgentConfig,
    /// A std mutex: never held across an `.await`.
    report: Mutex<AgentReport>,
    /// Cancelled on shutdown: lease nothing more.
    pub(super) stop: CancellationToken,
    /// Cancelled once the drain time is over: hand the leases of tasks
    /// still running back now.
    pub(super) hand_back: CancellationToken,
    /// The leases being run or reported now, which a stop drains.
    pub(super) running: TaskTracker,
    /// Tracks unreachability for giving up, and when it was last logged
    /// with the wait until the next log line. A std mutex: never held
    /// across an `.await`.
    unreachable: Mutex<Unreachable>,
}

/// Since when the coordinator has been unreachable, and the log's pace.
#[derive(Default)]
struct Unreachable {
    since: Option<tokio::time::Instant>,
    logged: Option<tokio::time::Instant>,
    log_every: Duration,
    /// When a call last reached the coordinator.
    reached: Option<tokio::time::Instant>,
}

/// A call that fails this soon after another reached the coordinator (one
/// sent before that success, or a blip) begins no unreachable spell: the
/// log does not say "reachable again" and "unreachable" in one breath.
const BLIP: Duration = Duration::from_secs(1);

impl Shared {
    /// Loops of a worker process talking to the coordinator through
    /// `client`, as `config` says.
    pub(super) fn new(client: Client, config: AgentConfig) -> Shared {
        Shared {
            client,
            config,
            report: Mutex::new(AgentReport::default()),
            stop: CancellationToken::new(),
            hand_back: CancellationToken::new(),
            running: TaskTracker::new(),
            unreachable: Mutex::new(Unreachable::default()),
        }
    }

    /// Count something in the report.
    pub(super) fn count(&self, what: impl FnOnce(&mut AgentReport)) {
        what(&mut self.report.lock().unwrap());
    }

    /// What the process has done so far.
    pub(super) fn report(&self) -> AgentReport {
        *self.report.lock().unwrap()
    }

    /// Note a transient failure, `status`, and wait before the next try;
    /// Err once the coordinator has been unreachable for too long.
    pub(super) async fn backoff(
        &self,
        status: Status,
        attempt: &mut u32,
    ) -> Result<(), AgentError> {
        let now = tokio::time::Instant::now();
        let blip = {
            let u = self.unreachable.lock().unwrap();
            u.since.is_none() && u.reached.is_some_and(|t| now - t < BLIP)
        };
        if blip {
            tokio::time::sleep(FIRST_RETRY).await;
            return Ok(());
        }
        let (since, log) = {
            let mut u = self.unreachable.lock().unwrap();
            let since = *u.since.get_or_insert(now);
            let due = u.logged.is_none_or(|t| now - t >= u.log_every);
            if due {
                u.logged = Some(now);
                u.log_every = (u.log_every * 2).clamp(Duration::from_secs(1), LOG_AT_MOST);
            }
            (since, due)
        };
        if since.elapsed() > self.config.give_up_after {
            return Err(AgentError::Unreachable {
                url: self.config.coordinator.clone(),
                seconds: since.elapsed().as_secs(),
                last: status.into(),
            });
        }
        if log {
            tracing::warn!(
                coordinator = %self.config.coordinator,
                error = %describe_status(&status),
                unreachable_for = %format!("{:.0} s", since.elapsed().as_secs_f64()),
                gives_up_in = %format!("{:.0} s", self.config.give_up_after.saturating_sub(since.elapsed()).as_secs_f64()),
                "coordinator unreachable; retrying"
            );
        }
        *attempt = (*attempt + 1).min(6);
        let delay = Duration::from_millis(100 << *attempt);
        tokio::time::sleep(delay).await;
        Ok(())
    }

    /// Note that a call reached the coordinator.
    pub(super) fn reachable(&self) {
        let mut u = self.unreachable.lock().unwrap();
        if let Some(since) = u.since.take() {
            if u.logged.is_some() {
                tracing::warn!(
                    coordinator = %self.config.coordinator,
                    after = %format!("{:.0} s", since.elapsed().as_secs_f64()),
                    "coordinator reachable again"
                );
            }
        }
        *u = Unreachable {
            reached: Some(tokio::time::Instant::now()),
            ..Unreachable::default()
        };
    }
}

/// The wait before retrying a call that failed in a blip.
const FIRST_RETRY: Duration = Duration::from_millis(200);

/// Longest wait between two log lines about an unreachable coordinator.
const LOG_AT_MOST: Duration = Duration::from_secs(60);
