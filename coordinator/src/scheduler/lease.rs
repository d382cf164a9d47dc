//! How long a lease lives without a heartbeat, and how often workers send
//! one.

use std::time::Duration;

/// Lease timing.
#[derive(Clone, Copy, Debug)]
pub struct LeaseConfig {
    /// A lease lapses when no heartbeat renews it for this long.
    pub ttl: Duration,
    /// How often workers heartbeat.
    pub heartbeat: Duration,
}

impl LeaseConfig {
    /// Reject timings under which live workers would lose their leases.
    pub fn validate(&self) -> Result<(), String> {
        if self.heartbeat.is_zero() {
            return Err("the heartbeat interval must be positive".into());
        }
        if self.ttl < self.heartbeat * 2 {
            return Err(format!(
                "the lease ttl ({:?}) must be at least twice the heartbeat interval ({:?})",
                self.ttl, self.heartbeat
            ));
        }
        Ok(())
    }
}

impl Default for LeaseConfig {
    fn default() -> LeaseConfig {
        LeaseConfig {
            ttl: Duration::from_secs(5),
            heartbeat: Duration::from_secs(1),
        }
    }
}
