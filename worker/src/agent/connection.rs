//! The worker's connection to its coordinator: which failures are worth
//! retrying (the backoff while the coordinator is unreachable is in
//! `shared`), and which error a refusal stops the worker with. The client
//! itself, with its URL check and token, is `solve2048_proto::client`'s,
//! shared with `status`.

use tonic::{Code, Status};

use super::config::AgentConfig;
use super::error::AgentError;

/// Whether an error means "try again later" rather than "stop". A TLS
/// certificate the worker does not trust is no passing trouble: it stops
/// at once, saying so.
pub(super) fn transient(s: &Status) -> bool {
    matches!(
        s.code(),
        Code::Unavailable
            | Code::DeadlineExceeded
            | Code::Unknown
            | Code::Internal
            | Code::Cancelled
    ) && !tls_refused(s)
}

/// Whether the TLS handshake failed on the coordinator's certificate.
pub(super) fn tls_refused(s: &Status) -> bool {
    let text = describe_status(s);
    text.contains("invalid peer certificate") || text.contains("certificate verify failed")
}

/// The error a refused call stops the worker with.
pub(super) fn refused(s: Status) -> AgentError {
    if tls_refused(&s) {
        AgentError::UntrustedCertificate { call: s.into() }
    } else {
        AgentError::Refused { call: s.into() }
    }
}

/// A status as a person reads it, for logs and for telling failures apart:
/// its message and the transport error underneath (tonic's message alone
/// is often just "transport error").
pub(super) fn describe_status(status: &Status) -> String {
    let mut out = status.message().to_string();
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        let text = e.to_string();
        if !out.contains(&text) {
            out = format!("{out}: {text}");
        }
        source = e.source();
    }
    out
}

/// Registrations in a row that a plain-HTTP worker sees dropped or garbled
/// once connected before it concludes the coordinator serves TLS (a
/// restarting coordinator refuses connections instead).
pub(super) const PLAIN_TO_TLS_AFTER: u32 = 3;

/// Whether a plain-HTTP call reached a server that then dropped or garbled
/// the HTTP/2 exchange.
pub(super) fn plain_to_tls(c: &AgentConfig, s: &Status) -> bool {
    if !c.coordinator.starts_with("http://") {
        return false;
    }
    let text = describe_status(s);
    [
        "broken pipe",
        "connection closed",
        "frame with invalid size",
        "h2 protocol error",
    ]
    .iter()
    .any(|t| text.contains(t))
}
