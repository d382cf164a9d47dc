//! The router and the server loop. [`app`] builds the whole application
//! (tests call it in-process); [`run`] serves it on a bound listener until a
//! shutdown future resolves.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::routing::{get, post};
use axum::Router;
use solve2048_solution::Solution;
use tokio::net::TcpListener;
use tokio::sync::{OnceCell, Semaphore};

use crate::graph::Graph;
use crate::limits::RateLimiter;
use crate::{api, assets, limits, ApiError, Config};

/// What every request sees: the solved store, the settings, and what is
/// computed once and kept.
pub struct AppState {
    /// The solved store, read-only.
    pub solution: Arc<Solution>,
    /// Players and limits.
    pub config: Config,
    pub(crate) rate: RateLimiter,
    pub(crate) in_flight: Semaphore,
    pub(crate) games: Arc<Semaphore>,
    pub(crate) plot: OnceCell<Arc<String>>,
    pub(crate) graph: OnceCell<Arc<Graph>>,
}

impl AppState {
    /// The state of a server over `solution` with `config`.
    pub fn new(solution: Solution, config: Config) -> Arc<AppState> {
        let solution = Arc::new(solution);
        let l = &config.limits;
        Arc::new(AppState {
            rate: RateLimiter::new(l.rate, l.burst),
            in_flight: Semaphore::new(l.in_flight),
            games: Arc::new(Semaphore::new(l.games_at_once)),
            plot: OnceCell::new(),
            graph: OnceCell::new(),
            solution,
            config,
        })
    }
}

/// The application: the page, its files, the API, and the limits around
/// them all. Every route only reads.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/app.js", get(assets::script))
        .route("/style.css", get(assets::style))
        .route("/api/health", get(api::health))
        .route("/api/game", get(api::game))
        .route("/api/query", get(api::query))
        .route("/api/play", post(api::play))
        .route("/api/step", post(api::step))
        .route("/api/graph", get(api::graph))
        .route("/api/plot.svg", get(api::plot))
        .fallback(no_endpoint)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(state.config.limits.body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            limits::limit,
        ))
        .with_state(state)
}

async fn no_endpoint(uri: Uri) -> ApiError {
    ApiError::NoEndpoint {
        path: uri.path().to_string(),
    }
}

async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    ApiError::Method {
        method: method.to_string(),
        path: uri.path().to_string(),
    }
}

/// Serve [`app`] on `listener` until `shutdown` resolves, then finish the
/// requests under way and return.
pub async fn run(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
