//! How a worker process runs ([`AgentConfig`]): its coordinator, threads,
//! slots, cache, task budget and the waits it gives up or drains after.

use std::time::Duration;

use solve2048_store::Store;

/// How a worker process runs.
#[derive(Clone)]
pub struct AgentConfig {
    /// The coordinator's URL: `http://HOST:PORT`, or `https://` with TLS.
    pub coordinator: String,
    /// The shared secret.
    pub token: String,
    /// CA certificate (PEM) to trust for `https://`.
    pub tls_ca: Option<Vec<u8>>,
    /// Kernel threads (reported to the coordinator).
    pub threads: u32,
    /// Tasks run at once.
    pub slots: u32,
    /// For people: host and process.
    pub name: String,
    /// Local cache of fetched chunks: directory and budget in bytes.
    pub cache: Option<(std::path::PathBuf, u64)>,
    /// Give up after the coordinator has been unreachable this long.
    pub give_up_after: Duration,
    /// On shutdown, how long running tasks may finish before their leases
    /// are handed back.
    pub drain: Duration,
    /// Bytes the worker's tasks may hold at once: `--memory` less the
    /// process (see [`crate::budget`]).
    pub task_budget: u64,
    /// The job's store, already open: an in-process worker shares its
    /// coordinator's (and whatever the store was made with, such as a
    /// test's fault injection). None: the worker opens the store the
    /// coordinator names.
    pub store: Option<Store>,
}
