//! The command line's words for the library crates' errors. The libraries
//! state what went wrong in their own terms; the flags and commands that
//! mend it are this binary's, so it words them here, by error variant.

use std::error::Error;

use solve2048_coordinator::CoordinatorError;
use solve2048_plan::{PlanError, Setting};
use solve2048_serve::ConfigError;
use solve2048_worker::budget::BudgetError;
use solve2048_worker::{AgentError, WorkerError};

/// `cause`'s message in the command line's words, where they differ from
/// its own: the flag it is about named.
pub fn message(cause: &(dyn Error + 'static)) -> Option<String> {
    if let Some(PlanError::TooSmall { setting, least, .. }) = cause.downcast_ref::<PlanError>() {
        let flag = match setting {
            Setting::Workers => "--workers",
            Setting::ThreadsPerWorker => "--threads-per-worker",
            Setting::WorkerMemory => "--worker-memory",
            Setting::Slots => "--slots",
            Setting::ChunkSize => "--chunk-size",
        };
        return Some(match setting {
            Setting::WorkerMemory => format!("{flag} must be more than 0 GiB"),
            _ => format!("{flag} must be at least {least}"),
        });
    }
    if let Some(e) = cause.downcast_ref::<ConfigError>() {
        return match e {
            ConfigError::Player { player, .. } => Some(format!("--player {player}")),
            ConfigError::Unplayable { player, .. } => {
                Some(format!("--player {player} cannot play this game"))
            }
            ConfigError::Limits(_) => None,
        };
    }
    Some(match cause.downcast_ref::<BudgetError>()? {
        BudgetError::NotPositive { gib } => format!("--memory {gib} must be more than 0 GiB"),
        BudgetError::UnknownMachine => {
            "cannot tell this machine's memory: pass --memory GiB".into()
        }
        BudgetError::NoRoomForProcess { process_mib } => {
            format!("--memory must leave room for the process itself ({process_mib} MiB)")
        }
    })
}

/// What to do about `cause`, to follow the whole error chain.
pub fn hint(cause: &(dyn Error + 'static)) -> Option<String> {
    coordinator_hint(cause).or_else(|| worker_hint(cause))
}

/// What to do about a coordinator's error.
fn coordinator_hint(cause: &(dyn Error + 'static)) -> Option<String> {
    Some(match cause.downcast_ref::<CoordinatorError>()? {
        // A worker's failure arrives as text: its own error's words tell
        // a task too large for the workers' memory.
        CoordinatorError::TaskFailed { error, .. } if WorkerError::is_too_large(error) => {
            " (--memory); give workers more memory (`solve2048 plan` says how much)".into()
        }
        CoordinatorError::ForeignJob { .. } => {
            ". Use another --store, or the same settings to resume".into()
        }
        CoordinatorError::Locked { .. } => {
            "; wait for it or stop it (a coordinator can replace it deliberately with \
             --take-over)"
                .into()
        }
        CoordinatorError::StoreDamaged { location, .. } => format!(
            "\n`solve2048 verify --store {location}` lists every damaged object; rerun this same \
             command with --repair to set them aside in quarantine/ and redo the tasks that \
             wrote them"
        ),
        _ => return None,
    })
}

/// What to do about a worker process's error.
fn worker_hint(cause: &(dyn Error + 'static)) -> Option<String> {
    Some(match cause.downcast_ref::<AgentError>()? {
        AgentError::UntrustedCertificate { .. } => {
            "; pass the CA that signed it with --tls-ca".into()
        }
        AgentError::ServesTls { .. } => {
            "; use an https:// URL for --coordinator (and --tls-ca with its CA)".into()
        }
        _ => return None,
    })
}
