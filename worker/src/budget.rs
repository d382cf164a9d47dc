//! The task budget: the bytes a worker's tasks may hold at once, which
//! [`crate::Worker`] grants them from. It is the memory the worker may use
//! in all (`--memory`; by default the machine's or its container's less
//! 10%, at least 1 GiB less but at most half) less what the process itself
//! holds ([`footprint::PROCESS_BYTES`]).

use solve2048_core::task::footprint;

/// Why no task budget can be had.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    /// A memory of 0 GiB or less, or not a number.
    #[error("a memory of {gib} GiB: it must be more than 0 GiB")]
    NotPositive {
        /// The GiB given.
        gib: f64,
    },
    /// No memory given, and the machine's cannot be read.
    #[error("cannot tell this machine's memory; give the memory to use")]
    UnknownMachine,
    /// The memory does not exceed what the process itself holds.
    #[error("the memory must leave room for the process itself ({process_mib} MiB)")]
    NoRoomForProcess {
        /// What the process itself holds, MiB.
        process_mib: u64,
    },
}

/// The bytes the tasks of a worker that may use `memory_gib` GiB in all
/// may hold: that memory (by default [`default_memory`] of
/// [`machine_memory`]) less [`footprint::PROCESS_BYTES`].
pub fn task_budget(memory_gib: Option<f64>) -> Result<u64, BudgetError> {
    let total = match memory_gib {
        Some(gib) => {
            if !(gib.is_finite() && gib > 0.0) {
                return Err(BudgetError::NotPositive { gib });
            }
            (gib * (1u64 << 30) as f64) as u64
        }
        None => default_memory(machine_memory().ok_or(BudgetError::UnknownMachine)?),
    };
    total
        .checked_sub(footprint::PROCESS_BYTES)
        .filter(|&left| left > 0)
        .ok_or(BudgetError::NoRoomForProcess {
            process_mib: footprint::PROCESS_BYTES >> 20,
        })
}

/// The memory a worker uses in all by default on a machine of `machine`
/// bytes: 10% less, at least 1 GiB less but at most half less.
pub fn default_memory(machine: u64) -> u64 {
    machine - (machine / 10).max(1 << 30).min(machine / 2)
}

/// The memory this process may use: the machine's (`MemTotal`), or its
/// container's limit (cgroup v2 `memory.max`) when lower; None where
/// neither can be read.
pub fn machine_memory() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .map(|kb| kb * 1024)
        })?;
    let limit = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    Some(limit.map_or(total, |l| l.min(total)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn the_default_leaves_a_tenth_at_least_a_gib_at_most_half() {
        assert_eq!(default_memory(100 * GIB), 90 * GIB);
        assert_eq!(default_memory(4 * GIB), 3 * GIB);
        assert_eq!(default_memory(GIB), GIB / 2);
    }

    #[test]
    fn the_budget_is_the_memory_less_the_process() {
        assert_eq!(
            task_budget(Some(2.0)).unwrap(),
            2 * GIB - footprint::PROCESS_BYTES
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = task_budget(Some(bad)).unwrap_err().to_string();
            assert!(e.contains("must be more than 0 GiB"), "{bad}: {e}");
        }
        let process_gib = footprint::PROCESS_BYTES as f64 / GIB as f64;
        assert_eq!(
            task_budget(Some(process_gib)).unwrap_err().to_string(),
            format!(
                "the memory must leave room for the process itself ({} MiB)",
                footprint::PROCESS_BYTES >> 20
            )
        );
    }
}
