//! A client of the `Coordinator` service, as workers and `status` make it:
//! the URL checked before any connection, the endpoint with its timeouts,
//! TLS and message size limits, and the token on every call.

use std::time::Duration;

use tonic::codegen::InterceptedService;
use tonic::service::Interceptor;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

use crate::coordinator_client::CoordinatorClient;
use crate::TOKEN_HEADER;

/// A coordinator URL or TLS setting that no client can be made from.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect to {url}")]
pub struct ConnectError {
    /// The URL.
    pub url: String,
    /// Why.
    #[source]
    pub cause: Unconnectable,
}

/// Why no client can be made for a URL.
#[derive(Debug, thiserror::Error)]
pub enum Unconnectable {
    /// Not a coordinator URL.
    #[error("{0}; use http://HOST:PORT, or https://HOST:PORT with TLS")]
    Url(&'static str),
    /// A scheme other than http and https.
    #[error(
        "the {0}:// scheme is not served; use http://HOST:PORT, or https://HOST:PORT with TLS"
    )]
    Scheme(String),
    /// The endpoint or its TLS cannot be set up.
    #[error(transparent)]
    Transport(#[from] tonic::transport::Error),
    /// A token that cannot travel in a header.
    #[error("the token has characters not allowed in a header")]
    Token,
}

/// Adds the shared secret to every call (the token is never logged).
#[derive(Clone)]
pub struct AddToken(tonic::metadata::MetadataValue<tonic::metadata::Ascii>);

impl Interceptor for AddToken {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        req.metadata_mut().insert(TOKEN_HEADER, self.0.clone());
        Ok(req)
    }
}

/// A client of the coordinator service.
pub type Client = CoordinatorClient<InterceptedService<Channel, AddToken>>;

/// Check that `url` names a coordinator: `http://HOST:PORT` or
/// `https://HOST:PORT` (the port may be left out).
pub fn check_url(url: &str) -> Result<(), ConnectError> {
    let err = |cause: Unconnectable| ConnectError {
        url: url.to_string(),
        cause,
    };
    let Some((scheme, _)) = url.split_once("://") else {
        return Err(err(Unconnectable::Url("not a URL")));
    };
    if scheme != "http" && scheme != "https" {
        return Err(err(Unconnectable::Scheme(scheme.to_string())));
    }
    let uri: tonic::transport::Uri =
        (url.parse()).map_err(|_| err(Unconnectable::Url("not a URL")))?;
    match uri.host() {
        Some(h) if !h.is_empty() => {}
        _ => return Err(err(Unconnectable::Url("no host"))),
    }
    if !matches!(uri.path(), "" | "/") {
        return Err(err(Unconnectable::Url("a coordinator URL has no path")));
    }
    Ok(())
}

/// Connect (lazily) to the coordinator at `url` with `token`, trusting
/// `tls_ca` (PEM) besides the system's roots for an `https://` URL. The
/// connection is spawned on the current tokio runtime.
pub fn connect(url: &str, token: &str, tls_ca: Option<&[u8]>) -> Result<Client, ConnectError> {
    check_url(url)?;
    let err = |cause: Unconnectable| ConnectError {
        url: url.to_string(),
        cause,
    };
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| err(e.into()))?
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(60));
    if url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_native_roots();
        if let Some(ca) = tls_ca {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        endpoint = endpoint.tls_config(tls).map_err(|e| err(e.into()))?;
    }
    let value = format!("Bearer {token}")
        .parse()
        .map_err(|_| err(Unconnectable::Token))?;
    Ok(
        CoordinatorClient::with_interceptor(endpoint.connect_lazy(), AddToken(value))
            .max_decoding_message_size(256 << 20)
            .max_encoding_message_size(256 << 20),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinator_urls_are_checked_before_any_connection() {
        for good in [
            "http://127.0.0.1:7480",
            "https://coord.example:7480/",
            "http://solve2048-coordinator:7480",
            "http://[::1]:7480",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for (bad, why) in [
            ("not-a-url", "not a URL"),
            ("127.0.0.1:7480", "not a URL"),
            ("ftp://host:1", "ftp:// scheme"),
            ("http://", "not a URL"),
            ("http://host:7480/some/path", "no path"),
        ] {
            let e = check_url(bad).unwrap_err();
            let e = format!("{e}: {}", e.cause);
            assert!(
                e.contains(why) && e.contains("http://HOST:PORT"),
                "{bad}: {e}"
            );
        }
    }
}
