//! Bounds on what clients may ask, as one middleware around every route:
//! a token bucket per client address (requests per second, with a burst),
//! a cap on requests handled at once (more wait for a slot), and a time
//! limit on each request, waiting included. Body sizes are bounded where
//! bodies are read ([`crate::api::Body`]).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiError, AppState};

/// Most client addresses whose buckets are kept; past this, idle ones are
/// forgotten (a forgotten client starts again with a full bucket).
const MAX_CLIENTS: usize = 10_000;

/// Per-client token buckets: each address has `burst` tokens, refilled at
/// `rate` a second; a request takes one.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    burst: f64,
    // A std Mutex: held for a map look-up, never across an await.
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// Buckets of `burst` tokens refilled at `rate` a second (0: no limit).
    pub fn new(rate: f64, burst: u32) -> RateLimiter {
        RateLimiter {
            rate,
            burst: f64::from(burst),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Admit one request from `client` at `now`, or say how long until one
    /// would be.
    pub fn admit(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.rate == 0.0 {
            return Ok(());
        }
        let mut buckets = self.buckets.lock().unwrap();
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(&client) {
            let (rate, burst) = (self.rate, self.burst);
            buckets.retain(|_, b| refill(b, now, rate, burst).tokens < burst);
            if buckets.len() >= MAX_CLIENTS {
                buckets.clear();
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        *bucket = refill(bucket, now, self.rate, self.burst);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / self.rate))
        }
    }
}

fn refill(b: &Bucket, now: Instant, rate: f64, burst: f64) -> Bucket {
    let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
    Bucket {
        tokens: (b.tokens + elapsed * rate).min(burst),
        at: now.max(b.at),
    }
}

/// The middleware: rate, then a slot, then the request under the time limit.
pub async fn limit(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let limits = &state.config.limits;
    // In-process tests call the router without a connection: one client.
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
    if let Err(retry_after) = state.rate.admit(client, Instant::now()) {
        return ApiError::RateLimited {
            rate: limits.rate,
            retry_after,
        }
        .into_response();
    }
    let deadline = tokio::time::Instant::now() + limits.timeout;
    let Ok(Ok(_slot)) = tokio::time::timeout_at(deadline, state.in_flight.acquire()).await else {
        return ApiError::Busy {
            in_flight: limits.in_flight,
        }
        .into_response();
    };
    match tokio::time::timeout_at(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Timeout {
            limit: limits.timeout,
        }
        .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    #[test]
    fn a_client_gets_its_burst_then_its_rate() {
        let limiter = RateLimiter::new(10.0, 3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.admit(ip(1), t0), Ok(()));
        }
        let wait = limiter.admit(ip(1), t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // Another client has its own bucket.
        assert_eq!(limiter.admit(ip(2), t0), Ok(()));
        // A tenth of a second later one more token has come, not two.
        let t1 = t0 + Duration::from_millis(100);
        assert_eq!(limiter.admit(ip(1), t1), Ok(()));
        assert!(limiter.admit(ip(1), t1).is_err());
        // Idle for long, the bucket is full again but no fuller.
        let t2 = t1 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert_eq!(limiter.admit(ip(1), t2), Ok(()));
        }
        assert!(limiter.admit(ip(1), t2).is_err());
    }

    #[test]
    fn rate_zero_admits_everything() {
        let limiter = RateLimiter::new(0.0, 0);
        let t0 = Instant::now();
        for _ in 0..10_000 {
            assert_eq!(limiter.admit(ip(1), t0), Ok(()));
        }
    }

    #[test]
    fn the_client_map_stays_bounded_and_keeps_busy_clients() {
        let limiter = RateLimiter::new(1.0, 2);
        let len = || limiter.buckets.lock().unwrap().len();
        let client = |i: usize| IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i as u32));
        let t0 = Instant::now();
        for i in 0..MAX_CLIENTS - 1 {
            limiter.admit(client(i), t0).unwrap();
        }
        // Ten seconds on, those buckets are full again (idle); one client
        // empties its bucket.
        let t1 = t0 + Duration::from_secs(10);
        let busy = IpAddr::V4(Ipv4Addr::new(192, 168, 0, 1));
        limiter.admit(busy, t1).unwrap();
        limiter.admit(busy, t1).unwrap();
        assert_eq!(len(), MAX_CLIENTS);
        // A new client makes room by forgetting the idle ones only.
        limiter
            .admit(IpAddr::V4(Ipv4Addr::new(172, 16, 0, 1)), t1)
            .unwrap();
        assert_eq!(len(), 2);
        assert!(
            limiter.admit(busy, t1).is_err(),
            "the busy client is remembered"
        );
        // However many clients come at once, the map stays bounded.
        for i in 0..2 * MAX_CLIENTS {
            limiter.admit(client(i), t1).unwrap();
            assert!(len() <= MAX_CLIENTS);
        }
    }
}
