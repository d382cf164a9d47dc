//! The worker's connection to its coordinator: the URL checked before any
//! connection, the client with its token, and which failures are worth
//! retrying (the backoff while the coordinator is unreachable is in
//! `shared`).

use std::time::Duration;

use solve2048_proto as pb;
use solve2048_proto::coordinator_client::CoordinatorClient;
use tonic::codegen::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Code, Request, Status};

use super::config::AgentConfig;
use super::error::AgentError;

/// Adds the shared secret to every call (the token is never logged).
#[derive(Clone)]
pub struct AddToken(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl Interceptor for AddToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut().insert(pb::TOKEN_HEADER, self.0.clone());
        Ok(req)
    }
}

/// A client of the coordinator service.
pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// Check that `url` names a coordinator: `http://HOST:PORT` or
/// `https://HOST:PORT` (the port may be left out).
pub fn check_url(url: &str) -> Result<(), AgentError> {
    let err = |reason: &str| AgentError::Connect {
        url: url.to_string(),
        reason: format!("{reason}; use http://HOST:PORT, or https://HOST:PORT with TLS"),
    };
    let Some((scheme, _)) = url.split_once("://") else {
        return Err(err("not a URL"));
    };
    if scheme != "http" && scheme != "https" {
        return Err(err(&format!("the {scheme}:// scheme is not served")));
    }
    let uri: tonic::transport::Uri = url.parse().map_err(|_| err("not a URL"))?;
    match uri.host() {
        Some(h) if !h.is_empty() => {}
        _ => return Err(err("no host")),
    }
    if !matches!(uri.path(), "" | "/") {
        return Err(err("a coordinator URL has no path"));
    }
    Ok(())
}

/// Connect (lazily) to the coordinator at `url` with `token`.
pub fn connect(url: &str, token: &str, tls_ca: Option<&[u8]>) -> Result<Client, AgentError> {
    check_url(url)?;
    let err = |reason: String| AgentError::Connect {
        url: url.to_string(),
        reason,
    };
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| err(e.to_string()))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(60));
    if url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_native_roots();
        if let Some(ca) = tls_ca {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        endpoint = endpoint.tls_config(tls).map_err(|e| err(e.to_string()))?;
    }
    let value = format!("Bearer {token}")
        .parse()
        .map_err(|_| err("the token has characters not allowed in a header".into()))?;
    Ok(
        CoordinatorClient::with_interceptor(endpoint.connect_lazy(), AddToken(value))
            .max_decoding_message_size(256 << 20)
            .max_encoding_message_size(256 << 20),
    )
}

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
pub(super) fn refused(s: &Status) -> AgentError {
    let mut reason = describe_status(s);
    if tls_refused(s) {
        reason.push_str(
            "; the coordinator's TLS certificate is not trusted: pass the CA that signed it with --tls-ca",
        );
    }
    AgentError::Refused(reason)
}

/// A status as a person reads it: its message and the transport error
/// underneath (tonic's message alone is often just "transport error").
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
