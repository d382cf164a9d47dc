//! Why a worker process stopped with an error.

use solve2048_proto::client::ConnectError;
use solve2048_store::StoreError;

/// Why a worker process stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A bad coordinator URL or TLS setting.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The coordinator refused this worker for good.
    #[error("the coordinator refused this worker: {0}")]
    Refused(String),
    /// The coordinator stayed unreachable.
    #[error("the coordinator at {url} has been unreachable for {seconds} s; giving up (last error: {last})")]
    Unreachable {
        /// The URL.
        url: String,
        /// Seconds.
        seconds: u64,
        /// The last error.
        last: String,
    },
    /// The job or store the coordinator names cannot be used.
    #[error("the coordinator's job cannot be run here: {0}")]
    Job(String),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
}
