//! The cluster a plan is for: its workers, their threads, memory and slots,
//! and the chunk size.

use serde::Serialize;

use crate::records::CoordinatorError;

/// The cluster a plan is for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cluster {
    /// Worker processes (machines).
    pub workers: u32,
    /// Kernel threads of each worker.
    pub threads_per_worker: u32,
    /// Memory of each worker, in bytes.
    pub worker_memory_bytes: u64,
    /// Tasks each worker runs at once (`worker --slots`).
    pub slots: u32,
    /// Largest number of states in one chunk (`--chunk-size`).
    pub chunk_size: u64,
}

impl Cluster {
    /// Reject settings no cluster can have.
    pub fn validate(&self) -> Result<(), CoordinatorError> {
        let bad = |setting: &str, reason: &str| {
            Err(CoordinatorError::BadSetting {
                setting: setting.to_string(),
                reason: reason.to_string(),
            })
        };
        if self.workers == 0 {
            return bad("--workers", "must be at least 1");
        }
        if self.threads_per_worker == 0 {
            return bad("--threads-per-worker", "must be at least 1");
        }
        if self.worker_memory_bytes == 0 {
            return bad("--worker-memory", "must be more than 0 GiB");
        }
        if self.slots == 0 {
            return bad("--slots", "must be at least 1");
        }
        if self.chunk_size == 0 {
            return bad("--chunk-size", "must be at least 1");
        }
        Ok(())
    }

    /// Cores in all.
    pub fn cores(&self) -> u64 {
        self.workers as u64 * self.threads_per_worker as u64
    }
}
