//! Counting store requests: every request a [`crate::Store`] makes (each
//! attempt is one request, as a bucket bills it), by operation, and every
//! retry by operation and cause, with the time spent backing off. A task's
//! counts travel with its report to the coordinator, which sums them per
//! phase (`solve --json`, `status`, the metrics).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A kind of store request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read an object or a byte range of it (GET).
    Get,
    /// Write an object (PUT; a multipart upload counts its create, parts
    /// and completion).
    Put,
    /// List objects under a prefix (one request a page of 1000).
    List,
    /// Delete an object (DELETE).
    Delete,
    /// Ask whether an object exists (HEAD).
    Head,
}

impl Op {
    const ALL: [Op; 5] = [Op::Get, Op::Put, Op::List, Op::Delete, Op::Head];

    /// Its name in messages and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Put => "put",
            Op::List => "list",
            Op::Delete => "delete",
            Op::Head => "head",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a request was retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// 503, S3's `SlowDown` (throttling).
    SlowDown,
    /// Another 5xx answer (500 `InternalError` and friends).
    ServerError,
    /// The connection was refused, reset or closed without an answer.
    Reset,
    /// No byte came for the stall timeout (`SOLVE2048_S3_STALL_TIMEOUT`).
    Timeout,
    /// A body shorter than announced (the connection closed mid-body).
    ShortBody,
}

impl Cause {
    const ALL: [Cause; 5] = [
        Cause::SlowDown,
        Cause::ServerError,
        Cause::Reset,
        Cause::Timeout,
        Cause::ShortBody,
    ];
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cause::SlowDown => "503 SlowDown",
            Cause::ServerError => "5xx server error",
            Cause::Reset => "connection refused or reset",
            Cause::Timeout => "timeout (the server stalled)",
            Cause::ShortBody => "short body",
        })
    }
}

/// A count per operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpCounts {
    /// GETs (whole objects and ranges).
    pub get: u64,
    /// PUTs (and multipart requests).
    pub put: u64,
    /// List pages.
    pub list: u64,
    /// DELETEs.
    pub delete: u64,
    /// HEADs.
    pub head: u64,
}

impl OpCounts {
    fn slot(&mut self, op: Op) -> &mut u64 {
        match op {
            Op::Get => &mut self.get,
            Op::Put => &mut self.put,
            Op::List => &mut self.list,
            Op::Delete => &mut self.delete,
            Op::Head => &mut self.head,
        }
    }

    /// All operations together.
    pub fn total(&self) -> u64 {
        self.get + self.put + self.list + self.delete + self.head
    }

    fn add(&mut self, o: &OpCounts) {
        let mut o = *o;
        for op in Op::ALL {
            *self.slot(op) += *o.slot(op);
        }
    }
}

/// Retries per cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CauseCounts {
    /// 503 SlowDown.
    pub slow_down: u64,
    /// Other 5xx.
    pub server_error: u64,
    /// Refused, reset or closed connections.
    pub reset: u64,
    /// Stalls past the timeout.
    pub timeout: u64,
    /// Bodies cut short.
    pub short_body: u64,
}

impl CauseCounts {
    fn slot(&mut self, cause: Cause) -> &mut u64 {
        match cause {
            Cause::SlowDown => &mut self.slow_down,
            Cause::ServerError => &mut self.server_error,
            Cause::Reset => &mut self.reset,
            Cause::Timeout => &mut self.timeout,
            Cause::ShortBody => &mut self.short_body,
        }
    }

    /// All causes together.
    pub fn total(&self) -> u64 {
        self.slow_down + self.server_error + self.reset + self.timeout + self.short_body
    }

    fn add(&mut self, o: &CauseCounts) {
        let mut o = *o;
        for c in Cause::ALL {
            *self.slot(c) += *o.slot(c);
        }
    }
}

/// What a store (or one task's view of it) asked of the backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestCounts {
    /// Requests made, retries included, per operation.
    pub requests: OpCounts,
    /// Of those, retries, per operation.
    pub retries: OpCounts,
    /// Retries per cause.
    pub causes: CauseCounts,
    /// Seconds spent waiting between attempts.
    pub backoff_seconds: f64,
}

impl RequestCounts {
    /// Add `other` to these.
    pub fn add(&mut self, other: &RequestCounts) {
        self.requests.add(&other.requests);
        self.retries.add(&other.retries);
        self.causes.add(&other.causes);
        self.backoff_seconds += other.backoff_seconds;
    }

    /// The sum of `self` and `other`.
    pub fn plus(mut self, other: &RequestCounts) -> RequestCounts {
        self.add(other);
        self
    }

    /// One line for people: requests per operation, then the retries by
    /// cause when there were any.
    pub fn line(&self) -> String {
        let r = &self.requests;
        let mut s = format!(
            "{} requests ({} get, {} put, {} list, {} delete, {} head)",
            r.total(),
            r.get,
            r.put,
            r.list,
            r.delete,
            r.head
        );
        let c = &self.causes;
        if c.total() > 0 {
            s += &format!(
                ", {} retries ({} 503 SlowDown, {} 5xx, {} reset, {} timeout, {} short body; {:.1} s backing off)",
                c.total(),
                c.slow_down,
                c.server_error,
                c.reset,
                c.timeout,
                c.short_body,
                self.backoff_seconds
            );
        }
        s
    }
}

/// The live counters behind [`RequestCounts`].
#[derive(Debug, Default)]
pub(crate) struct Counters {
    requests: [AtomicU64; 5],
    retries: [AtomicU64; 5],
    causes: [AtomicU64; 5],
    backoff_micros: AtomicU64,
}

fn op_index(op: Op) -> usize {
    Op::ALL.iter().position(|&o| o == op).expect("listed")
}

impl Counters {
    /// `n` requests of `op`.
    pub fn request(&self, op: Op, n: u64) {
        self.requests[op_index(op)].fetch_add(n, Ordering::Relaxed);
    }

    /// A retry of `op` for `cause` after waiting `backoff`.
    pub fn retry(&self, op: Op, cause: Cause, backoff: Duration) {
        self.retries[op_index(op)].fetch_add(1, Ordering::Relaxed);
        let c = Cause::ALL.iter().position(|&c| c == cause).expect("listed");
        self.causes[c].fetch_add(1, Ordering::Relaxed);
        self.backoff_micros
            .fetch_add(backoff.as_micros() as u64, Ordering::Relaxed);
    }

    /// The counts so far, and start again from zero.
    pub fn take(&self) -> RequestCounts {
        let mut out = RequestCounts::default();
        for (i, op) in Op::ALL.into_iter().enumerate() {
            *out.requests.slot(op) = self.requests[i].swap(0, Ordering::Relaxed);
            *out.retries.slot(op) = self.retries[i].swap(0, Ordering::Relaxed);
        }
        for (i, c) in Cause::ALL.into_iter().enumerate() {
            *out.causes.slot(c) = self.causes[i].swap(0, Ordering::Relaxed);
        }
        out.backoff_seconds = self.backoff_micros.swap(0, Ordering::Relaxed) as f64 / 1e6;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_and_reset_when_taken() {
        let c = Counters::default();
        c.request(Op::Get, 3);
        c.request(Op::Put, 1);
        c.retry(Op::Get, Cause::SlowDown, Duration::from_millis(200));
        c.retry(Op::Put, Cause::ShortBody, Duration::from_millis(300));
        let t = c.take();
        assert_eq!(
            (t.requests.get, t.requests.put, t.requests.total()),
            (3, 1, 4)
        );
        assert_eq!((t.retries.get, t.retries.put), (1, 1));
        assert_eq!(
            (t.causes.slow_down, t.causes.short_body, t.causes.total()),
            (1, 1, 2)
        );
        assert!((t.backoff_seconds - 0.5).abs() < 1e-9);
        assert_eq!(c.take(), RequestCounts::default());
        let sum = t.plus(&t);
        assert_eq!((sum.requests.total(), sum.causes.total()), (8, 4));
        assert!(
            sum.line().contains("8 requests (6 get, 2 put"),
            "{}",
            sum.line()
        );
        assert!(
            sum.line().contains("4 retries (2 503 SlowDown"),
            "{}",
            sum.line()
        );
    }
}
