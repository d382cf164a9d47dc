//! The live status of a running coordinator, asked for over gRPC: what
//! `solve2048 status --coordinator` shows.

use solve2048_proto as pb;
use solve2048_proto::client::{connect, ConnectError};

use crate::status::JobStatus;

/// Why the live status could not be had.
#[derive(Debug, thiserror::Error)]
pub enum StatusClientError {
    /// A bad coordinator URL, TLS setting or token.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The call failed: unreachable, refused, or a wrong token.
    #[error("coordinator at {url}: {message}")]
    Call {
        /// The coordinator's URL.
        url: String,
        /// The status message of the failed call.
        message: String,
    },
    /// The coordinator answered with a document this build cannot read.
    #[error("the coordinator sent an unreadable status")]
    Unreadable(#[source] serde_json::Error),
}

/// The status of the job the coordinator at `url` runs, asked with `token`
/// and trusting `tls_ca` (PEM) for an `https://` URL. Runs on a tokio
/// runtime (the connection is spawned on it).
pub async fn live_status(
    url: &str,
    token: &str,
    tls_ca: Option<&[u8]>,
) -> Result<JobStatus, StatusClientError> {
    let mut client = connect(url, token, tls_ca)?;
    let reply = client
        .status(pb::StatusRequest {})
        .await
        .map_err(|s| StatusClientError::Call {
            url: url.to_string(),
            message: s.message().to_string(),
        })?;
    serde_json::from_str(&reply.into_inner().status_json).map_err(StatusClientError::Unreadable)
}
