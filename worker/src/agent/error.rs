//! Why a worker process stopped with an error ([`AgentError`]), and a failed
//! call to the coordinator as an error ([`CallError`]).
//!
//! Each error either prints its cause or exposes it as its source, never
//! both: the binary prints the chain, and words its hints (the flags that
//! mend it) itself.

use std::path::PathBuf;

use solve2048_proto::client::ConnectError;
use solve2048_store::StoreError;

/// Why a worker process stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A bad coordinator URL or TLS setting.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The coordinator refused this worker for good; its reason is the
    /// call's message.
    #[error("the coordinator refused this worker")]
    Refused {
        /// The refused call.
        #[source]
        call: CallError,
    },
    /// The coordinator's TLS certificate is not one this worker trusts.
    #[error("the coordinator's TLS certificate is not trusted")]
    UntrustedCertificate {
        /// The call the TLS handshake failed.
        #[source]
        call: CallError,
    },
    /// A plain-HTTP worker reached a coordinator that serves TLS: its
    /// exchanges were dropped or garbled once connected, several times in
    /// a row.
    #[error("the coordinator at {url} answers like a TLS server")]
    ServesTls {
        /// The plain-HTTP URL.
        url: String,
        /// The last garbled call.
        #[source]
        call: CallError,
    },
    /// The coordinator stayed unreachable.
    #[error("the coordinator at {url} has been unreachable for {seconds} s; giving up")]
    Unreachable {
        /// The URL.
        url: String,
        /// Seconds.
        seconds: u64,
        /// The last failed call.
        #[source]
        last: CallError,
    },
    /// The job the coordinator sent does not parse.
    #[error("the coordinator's job cannot be read")]
    UnreadableJob {
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// The coordinator this worker registered with again runs another job
    /// or store than the one the worker opened.
    #[error("the coordinator now runs another job or store than the one this worker joined")]
    JobChanged,
    /// The chunk cache cannot be opened.
    #[error("cannot open the chunk cache {}", dir.display())]
    Cache {
        /// Its directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A call to the coordinator that failed. It reads as the status's message
/// (the coordinator's reason, text that crossed the wire), or its code's
/// description when there is none; the transport error underneath, if any,
/// is its source. (A [`tonic::Status`] itself prints its source too.)
#[derive(Debug)]
pub struct CallError(tonic::Status);

impl CallError {
    /// The status the call ended with.
    pub fn status(&self) -> &tonic::Status {
        &self.0
    }
}

impl From<tonic::Status> for CallError {
    fn from(status: tonic::Status) -> CallError {
        CallError(status)
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.message() {
            "" => f.write_str(self.0.code().description()),
            message => f.write_str(message),
        }
    }
}

impl std::error::Error for CallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}
