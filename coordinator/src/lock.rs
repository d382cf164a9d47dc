//! The coordinator's lock (`coordinator.json`): which coordinator runs the
//! job now, renewed every few seconds.
//!
//! A coordinator refuses to start on a store whose lock was renewed recently
//! by another one, unless told to take over. A lock left by a process that
//! is gone from this very host (or is a zombie not reaped yet) is stale at
//! once, so a coordinator killed with kill -9 restarts without waiting. Each start takes the next epoch; attempt
//! ids carry it, so leases from a previous coordinator are never mistaken for
//! current ones. A coordinator that finds its lock taken over stops.
//!
//! On a local store two coordinators of one host are also kept apart by an
//! exclusive lock of the operating system on the store's directory
//! ([`HostLock`], held until the process ends), taken before the job's
//! manifest is read or written: two `solve`s started at the same instant on
//! one fresh directory cannot both create their job there.
//!
//! Across hosts (an S3 store) this uses plain puts and reads, not
//! conditional writes (some S3 servers ignore them): two coordinators
//! started within the same instant could both pass the check, and the one
//! whose lock is overwritten stops at its next renewal, before it commits
//! much. Commits are idempotent, so even then no committed output is lost or
//! duplicated.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use solve2048_core::chain::Chain;
use solve2048_store::layout;

use crate::records::{CoordinatorError, Records};

/// How often the lock is renewed.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);

/// A lock not renewed for this long belongs to a dead coordinator.
pub const STALE_AFTER: Duration = Duration::from_secs(20);

/// The lock record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockRecord {
    /// Unique id of the coordinator process.
    pub owner: String,
    /// Its host.
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// The address it serves.
    pub listen: String,
    /// Its epoch: one more than the previous coordinator's.
    pub epoch: u32,
    /// Last renewal, Unix milliseconds.
    pub renewed_unix_ms: u64,
    /// False once it stopped cleanly.
    pub running: bool,
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// This machine's host name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// Whether `lock` belongs to a live coordinator other than us: it holds
/// the lock and renewed it lately, and (on this very host) its process is
/// alive.
pub fn held_by_other(lock: &LockRecord) -> bool {
    if !lock.running {
        return false;
    }
    let age = unix_ms().saturating_sub(lock.renewed_unix_ms);
    if age > STALE_AFTER.as_millis() as u64 {
        return false;
    }
    if lock.host == host_name() {
        // Same host: alive exactly when its process is. Our own pid means a
        // dead predecessor whose pid we reuse (a restarted container, where
        // the coordinator is pid 1 every time): this is only called before
        // we hold the lock.
        return lock.pid != std::process::id() && process_alive(lock.pid);
    }
    true
}

/// Whether process `pid` of this host is alive: it exists and is not a
/// zombie (killed, but not reaped yet by its parent: it still answers
/// `kill(pid, 0)` and still has a `/proc` entry, yet runs nothing).
pub fn process_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (command) state ...`: the command may hold spaces and parentheses,
    // so the state is the first field after the last ')'.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x"))
}

/// An exclusive lock of this host's operating system on a local store's
/// directory (`flock`), held by one coordinator process at a time; released
/// when dropped or when the process ends, however it ends.
pub struct HostLock {
    _dir: Option<std::fs::File>,
}

impl HostLock {
    /// Take the lock of `records`' directory, if the store is local.
    /// Refused while another process holds it, unless `take_over` (then this
    /// coordinator runs without it, and the other one stops at its next
    /// renewal of the lock record). A file system that has no such locks
    /// (some network ones) is only warned about.
    pub async fn take(records: &Records, take_over: bool) -> Result<HostLock, CoordinatorError> {
        let Some(root) = records.store().backend().local_root() else {
            return Ok(HostLock { _dir: None });
        };
        let dir = match std::fs::File::open(root) {
            Ok(dir) => dir,
            Err(e) => return Ok(HostLock::without(root, &e.to_string())),
        };
        match dir.try_lock() {
            Ok(()) => Ok(HostLock { _dir: Some(dir) }),
            Err(std::fs::TryLockError::WouldBlock) if take_over => {
                tracing::warn!("taking the job over from a coordinator of this host still running");
                Ok(HostLock { _dir: None })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = records.get_json_opt::<LockRecord>(layout::LOCK).await;
                let (holder, age_seconds) = match holder {
                    Ok(Some(p)) if p.running => (
                        format!("pid {} on {}, serving {}", p.pid, p.host, p.listen),
                        unix_ms().saturating_sub(p.renewed_unix_ms) as f64 / 1000.0,
                    ),
                    _ => ("another process of this host, starting".to_string(), 0.0),
                };
                Err(CoordinatorError::Locked {
                    location: records.location().to_string(),
                    holder,
                    age_seconds,
                })
            }
            Err(std::fs::TryLockError::Error(e)) => Ok(HostLock::without(root, &e.to_string())),
        }
    }

    /// No lock: `root` could not be locked, for `why`.
    fn without(root: &std::path::Path, why: &str) -> HostLock {
        tracing::warn!(
            store = %root.display(),
            error = why,
            "cannot lock the store's directory; only the lock record keeps coordinators apart"
        );
        HostLock { _dir: None }
    }
}

/// A held lock.
pub struct Lock {
    records: Records,
    record: LockRecord,
    _host: Option<HostLock>,
}

impl Lock {
    /// Take the lock of `records`' job for a coordinator serving `listen`.
    /// Refused while another coordinator holds it, unless `take_over`.
    pub async fn acquire(
        records: &Records,
        listen: &str,
        take_over: bool,
    ) -> Result<Lock, CoordinatorError> {
        let previous: Option<LockRecord> = records.get_json_opt(layout::LOCK).await?;
        if let Some(p) = &previous {
            if held_by_other(p) && !take_over {
                return Err(CoordinatorError::Locked {
                    location: records.location().to_string(),
                    holder: format!("pid {} on {}, serving {}", p.pid, p.host, p.listen),
                    age_seconds: unix_ms().saturating_sub(p.renewed_unix_ms) as f64 / 1000.0,
                });
            }
        }
        let epoch = previous.map_or(1, |p| p.epoch + 1);
        let record = LockRecord {
            owner: format!("{}-{}-{}", host_name(), std::process::id(), unix_ms()),
            host: host_name(),
            pid: std::process::id(),
            listen: listen.to_string(),
            epoch,
            renewed_unix_ms: unix_ms(),
            running: true,
        };
        records.put_json(layout::LOCK, &record).await?;
        tracing::info!(epoch, "coordinator lock taken");
        Ok(Lock {
            records: records.clone(),
            record,
            _host: None,
        })
    }

    /// Keep `host` (the directory's lock) as long as this lock.
    pub fn keep(&mut self, host: HostLock) {
        self._host = Some(host);
    }

    /// Make this coordinator's epoch at least `min` (a repair that lost the
    /// previous lock starts after every attempt it finds in the store).
    pub async fn raise_epoch(&mut self, min: u32) -> Result<(), CoordinatorError> {
        if self.record.epoch < min {
            self.record.epoch = min;
            self.records.put_json(layout::LOCK, &self.record).await?;
        }
        Ok(())
    }

    /// The epoch of this coordinator.
    pub fn epoch(&self) -> u32 {
        self.record.epoch
    }

    /// Renew the lock; fails when another coordinator took it over.
    pub async fn renew(&mut self) -> Result<(), CoordinatorError> {
        let now: Option<LockRecord> = self.records.get_json_opt(layout::LOCK).await?;
        if let Some(found) = now {
            if found.owner != self.record.owner {
                return Err(CoordinatorError::TakenOver {
                    holder: format!(
                        "pid {} on {}, serving {}",
                        found.pid, found.host, found.listen
                    ),
                });
            }
        }
        self.record.renewed_unix_ms = unix_ms();
        self.records.put_json(layout::LOCK, &self.record).await
    }

    /// Renew every [`RENEW_EVERY`] until an error (taken over, or the store
    /// failing for longer than the lock stays fresh).
    pub async fn renew_loop(&mut self) -> CoordinatorError {
        let mut failing_since: Option<tokio::time::Instant> = None;
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            match self.renew().await {
                Ok(()) => failing_since = None,
                Err(e @ CoordinatorError::TakenOver { .. }) => return e,
                Err(e) => {
                    let since = *failing_since.get_or_insert_with(tokio::time::Instant::now);
                    tracing::warn!(error = %Chain(&e), "cannot renew the coordinator lock");
                    if since.elapsed() > STALE_AFTER / 2 {
                        return e;
                    }
                }
            }
        }
    }

    /// Mark the lock released (the job stopped cleanly).
    pub async fn release(mut self) -> Result<(), CoordinatorError> {
        self.record.running = false;
        self.record.renewed_unix_ms = unix_ms();
        self.records.put_json(layout::LOCK, &self.record).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: u32, host: &str, age_ms: u64) -> LockRecord {
        LockRecord {
            owner: "x".into(),
            host: host.into(),
            pid,
            listen: "127.0.0.1:1".into(),
            epoch: 3,
            renewed_unix_ms: unix_ms() - age_ms,
            running: true,
        }
    }

    #[test]
    fn live_fresh_locks_hold_and_dead_or_stale_ones_do_not() {
        // pid 1 exists on every Linux host.
        assert!(held_by_other(&record(1, &host_name(), 0)));
        assert!(held_by_other(&record(1, "some-other-host", 0)));
        assert!(!held_by_other(&record(1, "some-other-host", 60_000)));
        // A pid beyond the kernel's limit is never alive.
        assert!(!held_by_other(&record(u32::MAX - 1, &host_name(), 0)));
        // Our own pid on our host: a predecessor that had the same pid.
        assert!(!held_by_other(&record(std::process::id(), &host_name(), 0)));
        // A zombie: a child killed and not reaped yet.
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(held_by_other(&record(pid, &host_name(), 0)));
        child.kill().unwrap();
        // Wait until the kernel has made it a zombie (no wait() yet).
        let t0 = std::time::Instant::now();
        while process_alive(pid) {
            assert!(t0.elapsed() < Duration::from_secs(10), "never a zombie");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        assert!(!held_by_other(&record(pid, &host_name(), 0)));
        child.wait().unwrap();
        let mut stopped = record(1, "some-other-host", 0);
        stopped.running = false;
        assert!(!held_by_other(&stopped));
    }
}
