//! The store requests of a job and what a bucket bills for them, from the
//! requests a chunk measured on real runs (README "A misbehaving S3").
//!
//! Requests follow the chunks, not the states: a chunk's tasks (merge and
//! enumerate forward, ask, gather and solve backward) and the coordinator's
//! commits, lists and deletes make about the same number of requests
//! whatever the chunk holds. Measured with the default chunk size on 3x3 to
//! 1024 (1347 chunks of 25.2 M states) and 4x4 to 16 (71 chunks of 23.5 M
//! states), within 3% of each other; the 3x3 figures are used.

use serde::Serialize;

use super::counts::PartCount;

/// Requests a chunk, per operation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PerChunk {
    /// GETs.
    pub get: f64,
    /// PUTs.
    pub put: f64,
    /// Lists.
    pub list: f64,
    /// DELETEs.
    pub delete: f64,
}

/// The forward pass (3x3 to 1024: 7857 gets, 6155 puts, 1339 deletes, one
/// head over 1347 chunks).
pub const FORWARD_PER_CHUNK: PerChunk = PerChunk {
    get: 5.83,
    put: 4.57,
    list: 0.0,
    delete: 0.99,
};

/// The backward pass, the ask tasks' requests included (3x3 to 1024: 17,893
/// gets, 10,265 puts, 9 lists, 2701 deletes over 1347 chunks).
pub const BACKWARD_PER_CHUNK: PerChunk = PerChunk {
    get: 13.28,
    put: 7.62,
    list: 0.01,
    delete: 2.01,
};

/// US dollars a 1000 PUT, COPY, POST or LIST requests (S3 Standard,
/// us-east-1 list price).
pub const PUT_LIST_PRICE_PER_1000: f64 = 0.005;

/// US dollars a 1000 GET requests (S3 Standard, us-east-1 list price;
/// DELETEs are free).
pub const GET_PRICE_PER_1000: f64 = 0.0004;

/// What the request figures rest on.
pub const REQUESTS_NOTE: &str =
    "store requests: measured requests a chunk (forward 11.4, backward \
     22.9, retries excluded; 3x3 to 1024 and 4x4 to 16 at the default chunk size), priced at S3 \
     Standard us-east-1 list prices ($0.005 a 1000 PUT/LIST, $0.0004 a 1000 GET, DELETE free); \
     a faulty store adds its retries";

/// Requests of one pass.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PassRequests {
    /// GETs.
    pub get: u64,
    /// PUTs.
    pub put: u64,
    /// Lists.
    pub list: u64,
    /// DELETEs.
    pub delete: u64,
    /// All of them.
    pub total: u64,
}

impl PassRequests {
    fn of(chunks: u64, per: PerChunk) -> PassRequests {
        let n = |r: f64| (chunks as f64 * r).round() as u64;
        let (get, put, list, delete) = (n(per.get), n(per.put), n(per.list), n(per.delete));
        PassRequests {
            get,
            put,
            list,
            delete,
            total: get + put + list + delete,
        }
    }

    fn price(&self) -> f64 {
        (self.put + self.list) as f64 / 1000.0 * PUT_LIST_PRICE_PER_1000
            + self.get as f64 / 1000.0 * GET_PRICE_PER_1000
    }
}

/// The store requests of a job and their price.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StoreRequests {
    /// Chunks the job writes (each part's states over the chunk size).
    pub chunks: u64,
    /// The forward pass.
    pub enumerate: PassRequests,
    /// The backward pass.
    pub solve: PassRequests,
    /// Both passes.
    pub total: u64,
    /// US dollars at S3 Standard list prices.
    pub price_usd: f64,
}

/// The store requests of a job over `parts` in chunks of `chunk_size`
/// states.
pub fn store_requests(parts: &[PartCount], chunk_size: u64) -> StoreRequests {
    let chunks = parts
        .iter()
        .filter(|p| p.states > 0)
        .map(|p| p.states.div_ceil(chunk_size.max(1)))
        .sum();
    let enumerate = PassRequests::of(chunks, FORWARD_PER_CHUNK);
    let solve = PassRequests::of(chunks, BACKWARD_PER_CHUNK);
    StoreRequests {
        chunks,
        enumerate,
        solve,
        total: enumerate.total + solve.total,
        price_usd: enumerate.price() + solve.price(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::counts::Source;

    #[test]
    fn requests_follow_the_chunks_and_match_the_measured_run() {
        // 3x3 to 1024's 1347 chunks give back its measured requests.
        let parts: Vec<PartCount> = (0..1347)
            .map(|i| PartCount {
                sum: 2 * i,
                max_exp: 1,
                states: 10,
                source: Source::Exact,
            })
            .collect();
        let r = store_requests(&parts, 4 << 20);
        assert_eq!(r.chunks, 1347);
        assert!((15_250..15_450).contains(&r.enumerate.total), "{r:?}");
        assert!((30_770..30_970).contains(&r.solve.total), "{r:?}");
        // A part of 2.5 chunks is 3 chunks; price: puts and lists at
        // 0.005, gets at 0.0004 a 1000.
        let one = [PartCount {
            sum: 4,
            max_exp: 1,
            states: 10,
            source: Source::Exact,
        }];
        let r = store_requests(&one, 4);
        assert_eq!(r.chunks, 3);
        let price = (r.enumerate.put + r.solve.put + r.solve.list) as f64 * 5e-6
            + (r.enumerate.get + r.solve.get) as f64 * 4e-7;
        assert!((r.price_usd - price).abs() < 1e-12);
    }
}
