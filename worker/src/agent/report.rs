//! What a worker process did ([`AgentReport`]): tasks completed, failed,
//! abandoned and handed back, and its registrations.

/// What a worker process did.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct AgentReport {
    /// Tasks whose outputs the coordinator accepted.
    pub completed: u64,
    /// Tasks that failed here.
    pub failed: u64,
    /// Results refused (stale lease) or abandoned (lost lease).
    pub abandoned: u64,
    /// Leases handed back on shutdown.
    pub released: u64,
    /// Registrations (more than one after a coordinator restart).
    pub registrations: u64,
}
