//! The cluster a plan is for: its workers, their threads, memory and slots,
//! and the chunk size.

use serde::Serialize;

use crate::error::{PlanError, Setting};

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
    /// Whether the solved store keeps the values of only two layers in five
    /// (`--recompute-values`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recompute_values: bool,
}

impl Cluster {
    /// Reject settings no cluster can have: each must be at least 1.
    pub fn validate(&self) -> Result<(), PlanError> {
        for (setting, value) in [
            (Setting::Workers, u64::from(self.workers)),
            (
                Setting::ThreadsPerWorker,
                u64::from(self.threads_per_worker),
            ),
            (Setting::WorkerMemory, self.worker_memory_bytes),
            (Setting::Slots, u64::from(self.slots)),
            (Setting::ChunkSize, self.chunk_size),
        ] {
            if value == 0 {
                return Err(PlanError::TooSmall {
                    setting,
                    value,
                    least: 1,
                });
            }
        }
        Ok(())
    }

    /// Cores in all.
    pub fn cores(&self) -> u64 {
        self.workers as u64 * self.threads_per_worker as u64
    }
}
