//! What a plan refuses: settings no cluster can have. The errors carry the
//! setting and its value, not how a command line spells them; the command
//! that asks for the plan words them for its own flags.

use std::fmt;

/// A setting of the cluster planned for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Worker processes (machines).
    Workers,
    /// Kernel threads of each worker.
    ThreadsPerWorker,
    /// Memory of each worker, in bytes.
    WorkerMemory,
    /// Tasks each worker runs at once.
    Slots,
    /// Largest number of states in one chunk.
    ChunkSize,
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Setting::Workers => "workers",
            Setting::ThreadsPerWorker => "threads per worker",
            Setting::WorkerMemory => "worker memory in bytes",
            Setting::Slots => "slots per worker",
            Setting::ChunkSize => "chunk size",
        })
    }
}

/// Errors planning a job.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A cluster setting below the least any cluster can have.
    #[error("{setting} is {value}; a cluster needs at least {least}")]
    TooSmall {
        /// Which setting.
        setting: Setting,
        /// Its value.
        value: u64,
        /// The least it may be.
        least: u64,
    },
}
