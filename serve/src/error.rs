//! Every way a request fails, and its HTTP status, decided in one place
//! ([`ApiError::status`]). A client's mistake is a 4xx naming what is
//! wrong; only a fault of the server or its store is a 500.
//!
//! Errors go out as JSON: `{"error": "what is wrong", "code": "bad_request",
//! "field": "board"}` (`field` only where one field of the request is at
//! fault).

use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use solve2048_core::chain::Chain;
use solve2048_solution::QueryError;

/// Why a request was not answered.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A request with a wrong or missing field, or a body that is not the
    /// JSON expected.
    #[error("{message}")]
    BadRequest {
        /// The field at fault, if one is.
        field: Option<String>,
        /// What is wrong, for a person.
        message: String,
    },
    /// A well-formed board that no play of this game reaches.
    #[error("board {board} is not reachable in {game}: no play of this game reaches it")]
    Unreachable {
        /// The board as text.
        board: String,
        /// The game.
        game: String,
    },
    /// A path the server does not serve.
    #[error("no such endpoint: {path} (see GET /api/game and the book's page on the API)")]
    NoEndpoint {
        /// The path asked for.
        path: String,
    },
    /// A known path asked with another method.
    #[error("{path} does not answer {method}")]
    Method {
        /// The method used.
        method: String,
        /// The path.
        path: String,
    },
    /// A body over the limit.
    #[error("the request body is larger than {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// A client over its rate.
    #[error("too many requests: at most {rate} a second from one address; retry in {} ms", retry_after.as_millis())]
    RateLimited {
        /// The rate, per second.
        rate: f64,
        /// When a request will be admitted again.
        retry_after: Duration,
    },
    /// Every request slot stayed taken for the whole timeout.
    #[error("the server is busy: {in_flight} requests are being answered; try again")]
    Busy {
        /// Requests handled at once.
        in_flight: usize,
    },
    /// A request that ran past the time limit.
    #[error("the request took longer than {} s and was stopped", limit.as_secs_f64())]
    Timeout {
        /// The limit.
        limit: Duration,
    },
    /// Reading the store failed, or something else that is no fault of the
    /// client's.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// A bad request naming `field`.
    pub fn field(field: &str, message: impl Into<String>) -> ApiError {
        ApiError::BadRequest {
            field: Some(field.to_string()),
            message: message.into(),
        }
    }

    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unreachable { .. } | ApiError::NoEndpoint { .. } => StatusCode::NOT_FOUND,
            ApiError::Method { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Busy { .. } | ApiError::Timeout { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A short, stable name of the kind of error, for programs.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { .. } => "bad_request",
            ApiError::Unreachable { .. } => "unreachable",
            ApiError::NoEndpoint { .. } => "no_endpoint",
            ApiError::Method { .. } => "method_not_allowed",
            ApiError::TooLarge { .. } => "too_large",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::Busy { .. } => "busy",
            ApiError::Timeout { .. } => "timeout",
            ApiError::Internal(_) => "internal",
        }
    }
}

impl From<QueryError> for ApiError {
    /// A board written wrong or of the wrong size is the client's mistake
    /// (400) and an unreachable one is not found (404); anything else is a
    /// fault of the store.
    fn from(e: QueryError) -> ApiError {
        match e {
            QueryError::BadBoard(_) | QueryError::WrongSize { .. } => {
                ApiError::field("board", e.to_string())
            }
            QueryError::Unreachable { board, game } => ApiError::Unreachable { board, game },
            other => ApiError::Internal(Chain(&other).to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(error = %self, "request failed");
        }
        let mut body = serde_json::json!({ "error": self.to_string(), "code": self.code() });
        if let ApiError::BadRequest {
            field: Some(field), ..
        } = &self
        {
            body["field"] = serde_json::json!(field);
        }
        let mut response = (status, axum::Json(body)).into_response();
        if let ApiError::RateLimited { retry_after, .. } = &self {
            let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        response
    }
}
