//! What a job costs to run: its machines by the core-hour, its store by the
//! GiB-month while it runs, and its store requests ([`crate::requests`]),
//! at prices the user can override.

use serde::Serialize;

use crate::cluster::Cluster;
use crate::span::Span;

/// The prices a cost is reckoned at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prices {
    /// US dollars a core (vCPU) an hour, memory included.
    pub core_hour_usd: f64,
    /// US dollars a GiB of store a month.
    pub gib_month_usd: f64,
}

/// List prices, the default: AWS EC2 on-demand m7i.4xlarge in us-east-1
/// ($0.8064 an hour for 16 vCPUs and 64 GiB, so $0.0504 a vCPU-hour) and
/// S3 Standard's first 50 TB ($0.023 a GB-month, taken a GiB-month).
pub const LIST_PRICES: Prices = Prices {
    core_hour_usd: 0.0504,
    gib_month_usd: 0.023,
};

/// Where [`LIST_PRICES`] come from, for the plan's notes.
pub const LIST_PRICES_SOURCE: &str =
    "AWS EC2 on-demand m7i.4xlarge in us-east-1 ($0.8064 an hour for 16 vCPUs and 64 GiB) and \
     S3 Standard's first 50 TB ($0.023 a GB-month)";

/// Hours in a month, as clouds bill storage (730).
const HOURS_A_MONTH: f64 = 730.0;

/// What a job costs on a cluster, in US dollars.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cost {
    /// The prices reckoned at.
    pub prices: Prices,
    /// Every worker's cores for the job's duration range.
    pub machines_usd: Span,
    /// The store at its peak for the job's duration range (an upper bound:
    /// it is smaller most of the time).
    pub store_usd: Span,
    /// The store requests ([`crate::requests`]).
    pub requests_usd: f64,
    /// All three.
    pub total_usd: Span,
    /// Keeping the solved store, a month.
    pub keep_usd_a_month: Span,
}

/// The cost of a job lasting `seconds` on `cluster`, whose store peaks at
/// `peak_bytes` and ends at `final_bytes` (each a range: the low duration
/// goes with the low bytes), with `requests_usd` of requests.
pub fn cost(
    cluster: &Cluster,
    seconds: Span,
    peak_bytes: Span,
    final_bytes: Span,
    requests_usd: f64,
    prices: Prices,
) -> Cost {
    let hours = seconds.times(1.0 / 3600.0);
    let machines_usd = hours.times(cluster.cores() as f64 * prices.core_hour_usd);
    let gib_months = |bytes: Span| bytes.times(prices.gib_month_usd / (1u64 << 30) as f64);
    let peak = gib_months(peak_bytes);
    let store_usd = Span {
        low: hours.low * peak.low / HOURS_A_MONTH,
        high: hours.high * peak.high / HOURS_A_MONTH,
    };
    Cost {
        prices,
        machines_usd,
        store_usd,
        requests_usd,
        total_usd: Span {
            low: machines_usd.low + store_usd.low + requests_usd,
            high: machines_usd.high + store_usd.high + requests_usd,
        },
        keep_usd_a_month: gib_months(final_bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_hours_and_gib_months() {
        let cluster = Cluster {
            workers: 2,
            threads_per_worker: 8,
            worker_memory_bytes: 1 << 34,
            slots: 2,
            chunk_size: 1 << 22,
            recompute_values: false,
        };
        let prices = Prices {
            core_hour_usd: 0.5,
            gib_month_usd: 73.0,
        };
        let c = cost(
            &cluster,
            Span {
                low: 3600.0,
                high: 7200.0,
            },
            Span::exactly((10u64 << 30) as f64),
            Span {
                low: (1u64 << 30) as f64,
                high: (2u64 << 30) as f64,
            },
            1.25,
            prices,
        );
        // 16 cores for 1 to 2 hours at $0.5; 10 GiB for 1 to 2 hours at
        // $73 a month of 730 hours.
        assert_eq!(
            c.machines_usd,
            Span {
                low: 8.0,
                high: 16.0
            }
        );
        assert!((c.store_usd.low - 1.0).abs() < 1e-12, "{c:?}");
        assert!((c.total_usd.high - (16.0 + 2.0 + 1.25)).abs() < 1e-12);
        assert_eq!(
            c.keep_usd_a_month,
            Span {
                low: 73.0,
                high: 146.0
            }
        );
    }
}
