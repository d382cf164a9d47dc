//! An S3 bucket: how it is opened, and how its failing requests are
//! retried. Every request is retried here, in one place (object_store's own
//! retries are off), when it fails transiently: 503 `SlowDown`, other 5xx
//! answers, refused or reset connections, stalls past
//! `SOLVE2048_S3_STALL_TIMEOUT` seconds (default 20) without a byte, and
//! bodies cut short (a GET's bytes must number what was announced). Each
//! attempt backs off exponentially (0.2 s doubling to 15 s, jittered) for up
//! to `SOLVE2048_S3_RETRY_TIMEOUT` seconds (default 300), so a server restart
//! only pauses the job; past that the error names the store, the operation,
//! the object and the cause ([`StoreError::GaveUp`]).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ClientConfigKey, RetryConfig};

use crate::requests::{Cause, Op};
use crate::{Store, StoreError, Unopenable};

/// Seconds a failing S3 request is retried before the error stands.
pub const RETRY_TIMEOUT_VAR: &str = "SOLVE2048_S3_RETRY_TIMEOUT";

/// Seconds without a byte from S3 before a request is abandoned and retried.
pub const STALL_TIMEOUT_VAR: &str = "SOLVE2048_S3_STALL_TIMEOUT";

/// The first wait between attempts; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// The longest wait between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(15);

/// Seconds from the environment variable `var` (a positive number), or
/// `default`.
fn seconds_from_env(var: &'static str, default: f64) -> Result<Duration, Unopenable> {
    match std::env::var(var) {
        Err(_) => Ok(Duration::from_secs_f64(default)),
        Ok(value) => match value.trim().parse::<f64>() {
            Ok(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
            _ => Err(Unopenable::Seconds { var, value }),
        },
    }
}

/// An S3 bucket (and prefix), from `BUCKET/PREFIX` and the `AWS_*`
/// environment, and how long its failing requests are retried. object_store
/// retries nothing itself: [`Store`] does (see the module docs), and a
/// request that stalls [`STALL_TIMEOUT_VAR`] seconds fails so that it can.
pub(crate) fn open_s3(rest: &str) -> Result<(PrefixStore<AmazonS3>, Duration), Unopenable> {
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(Unopenable::NoBucket);
    }
    let retry_for = seconds_from_env(RETRY_TIMEOUT_VAR, 300.0)?;
    let stall = seconds_from_env(STALL_TIMEOUT_VAR, 20.0)?;
    let retry = RetryConfig {
        backoff: BackoffConfig::default(),
        max_retries: 0,
        retry_timeout: retry_for,
    };
    let s3 = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(retry)
        .with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::ReadTimeout),
            format!("{}ms", stall.as_millis().max(1)),
        )
        .build()
        .map_err(Unopenable::S3)?;
    Ok((
        PrefixStore::new(s3, prefix.trim_end_matches('/')),
        retry_for,
    ))
}

/// Why a transient failure is one: the cause of a failed attempt, or None
/// when retrying cannot help (missing object, refused credentials, a local
/// disk error...). `in_body`: it came while reading a response's body.
fn cause_of(e: &object_store::Error, in_body: bool) -> Option<Cause> {
    use object_store::client::{HttpError, HttpErrorKind};
    if !matches!(e, object_store::Error::Generic { .. }) {
        return None;
    }
    let mut text = String::new();
    let mut kind = None;
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(x) = cur {
        if let Some(h) = x.downcast_ref::<HttpError>() {
            kind.get_or_insert(h.kind());
        }
        text += &x.to_string();
        text.push('\n');
        cur = x.source();
    }
    // object_store names an error answer's status only in its message.
    let status = text
        .split("status code: ")
        .nth(1)
        .and_then(|t| t.get(..3))
        .and_then(|t| t.parse::<u16>().ok());
    match status {
        Some(503) => return Some(Cause::SlowDown),
        Some(500..=599) => return Some(Cause::ServerError),
        Some(_) => return None,
        None if text.contains("SlowDown") => return Some(Cause::SlowDown),
        None if text.contains("InternalError") => return Some(Cause::ServerError),
        None => {}
    }
    // reqwest's and hyper's words for a body that ended early (some
    // answers' bodies are read before object_store returns).
    let body = in_body
        || [
            "error reading a body from connection",
            "request or response body error",
            "error decoding response body",
        ]
        .iter()
        .any(|m| text.contains(m));
    match kind? {
        HttpErrorKind::Timeout => Some(Cause::Timeout),
        _ if body => Some(Cause::ShortBody),
        HttpErrorKind::Connect | HttpErrorKind::Request | HttpErrorKind::Interrupted => {
            Some(Cause::Reset)
        }
        _ => None,
    }
}

/// A failed attempt at a request.
pub(crate) struct Attempt {
    source: object_store::Error,
    /// Why it may succeed when tried again; None: it will not.
    cause: Option<Cause>,
}

impl Attempt {
    /// Failed before the answer's body.
    pub(crate) fn answer(source: object_store::Error) -> Attempt {
        let cause = cause_of(&source, false);
        Attempt { source, cause }
    }

    /// Failed while reading the answer's body.
    pub(crate) fn body(source: object_store::Error) -> Attempt {
        let cause = cause_of(&source, true);
        Attempt { source, cause }
    }

    /// A body of `got` bytes where `expected` were announced.
    pub(crate) fn short(got: u64, expected: u64) -> Attempt {
        Attempt {
            source: object_store::Error::Generic {
                store: "S3",
                source: format!("body of {got} bytes where {expected} were announced").into(),
            },
            cause: Some(Cause::ShortBody),
        }
    }
}

/// How a request finally failed: with an error retrying cannot help (the
/// caller names it), or after retrying until the deadline.
pub(crate) enum Failed {
    Final(object_store::Error),
    GaveUp(StoreError),
}

impl Failed {
    /// The error to report: `name` names a final one.
    pub(crate) fn or(self, name: impl FnOnce(object_store::Error) -> StoreError) -> StoreError {
        match self {
            Failed::Final(e) => name(e),
            Failed::GaveUp(e) => e,
        }
    }
}

/// A random factor in [0.5, 1.5) that spreads the retries of many clients.
fn jitter() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    static N: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(N.fetch_add(1, Ordering::Relaxed));
    0.5 + (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

impl Store {
    /// Run `attempt` (one request of `op` on `object`) until it succeeds,
    /// fails for good, or has failed transiently for the retry deadline,
    /// counting each request and retry.
    pub(crate) async fn retrying<T, F, Fut>(
        &self,
        op: Op,
        object: &str,
        mut attempt: F,
    ) -> Result<T, Failed>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Attempt>>,
    {
        let start = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0;
        loop {
            attempts += 1;
            self.requests.request(op, 1);
            let failed = match attempt().await {
                Ok(v) => return Ok(v),
                Err(f) => f,
            };
            let (Some(cause), Some(limit)) = (failed.cause, self.backend.retry_for()) else {
                return Err(Failed::Final(failed.source));
            };
            let wait = backoff.mul_f64(jitter());
            if start.elapsed() + wait > limit {
                return Err(Failed::GaveUp(StoreError::GaveUp {
                    location: self.location.clone(),
                    op,
                    object: object.to_string(),
                    attempts,
                    seconds: start.elapsed().as_secs_f64(),
                    cause,
                    limit: limit.as_secs_f64(),
                    error: Box::new(failed.source),
                }));
            }
            tracing::warn!(%op, object, %cause, error = %failed.source, ?wait, "store request failed; retrying");
            self.requests.retry(op, cause, wait);
            tokio::time::sleep(wait).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}
