//! The JSON endpoints. Each reads its input strictly (unknown fields and
//! parameters are refused by name) and answers JSON; failures are
//! [`ApiError`]s.
//!
//! | endpoint | answers |
//! |---|---|
//! | `GET /api/health` | `{"status": "ok", "game": ...}` |
//! | `GET /api/game` | the game, its start value, the players offered, the limits |
//! | `GET /api/query?board=B` | the [`Report`] on a board, as `query --json` prints it |
//! | `POST /api/play` | a player's seeded game: `{"seed", "player"?, "moves"?}` |
//! | `POST /api/step` | a person's seeded game after their moves: `{"seed", "moves"?}` |
//! | `GET /api/graph` | the MDP graph of a 2x2 game |
//! | `GET /api/plot.svg` | the state-space figure |

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{FromRequest, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use solve2048_core::Shape;
use solve2048_players::PlayerSpec;
use solve2048_solution::Report;

use crate::config::MAX_SEED;
use crate::games::{self, PlayedGame, Spawn};
use crate::graph::Graph;
use crate::{ApiError, AppState};

/// Longest board text read, in bytes (a 4x4 board of 5-digit tiles with
/// spaces is under 100).
pub const MAX_BOARD_TEXT: usize = 200;

/// A JSON request body, bounded by the body limit, whatever its content
/// type (so that `curl -d` works); its faults are [`ApiError`]s naming the
/// field at fault.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        let limit = state.config.limits.body_bytes;
        let bytes = Bytes::from_request(req, state).await.map_err(|r| {
            if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge { limit }
            } else {
                ApiError::BadRequest {
                    field: None,
                    message: format!("the body could not be read: {r}"),
                }
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::BadRequest {
                field: None,
                message: "the body is empty: send a JSON object such as {\"seed\": 7}".into(),
            });
        }
        let de = &mut serde_json::Deserializer::from_slice(&bytes);
        serde_path_to_error::deserialize(de).map(Body).map_err(|e| {
            let path = e.path().to_string();
            let message = format!("the body is not the JSON expected: {e}");
            ApiError::BadRequest {
                field: (path != ".").then_some(path),
                message,
            }
        })
    }
}

/// `GET /api/health`: the server is up and has its store open.
pub async fn health(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok", "game": state.solution.game().name() }))
}

/// What `GET /api/game` answers.
#[derive(Clone, Debug, Serialize)]
pub struct GameInfo {
    /// The game's name (`3x3-to-1024`).
    pub game: String,
    /// The board's shape, as `--board` takes it (`3x3`, `2x3`).
    pub board: String,
    /// Rows.
    pub rows: usize,
    /// Columns: the cells of a row.
    pub columns: usize,
    /// Target tile (None: played until no move is left).
    pub target: Option<u64>,
    /// Discount per move.
    pub discount: f64,
    /// Probability that a spawned tile is a 4.
    pub four_probability: f64,
    /// What the values measure: `win` or `score`.
    pub objective: &'static str,
    /// The values in words (`win probability`, `expected score`, ...).
    pub value_name: String,
    /// Non-terminal canonical states.
    pub states: u64,
    /// The value from the random start under optimal play: the win
    /// probability or the expected score.
    pub start_value: f64,
    /// Number of layers (tile sums).
    pub layers: usize,
    /// Players `POST /api/play` accepts.
    pub players: Vec<String>,
    /// Whether `GET /api/graph` draws this game (2x2 games only).
    pub graph: bool,
    /// Bounds on requests.
    pub limits: LimitsInfo,
    /// The server's version.
    pub version: &'static str,
}

/// The limits, as clients see them.
#[derive(Clone, Debug, Serialize)]
pub struct LimitsInfo {
    /// Largest request body, in bytes.
    pub body_bytes: usize,
    /// Requests a second per client address (0: no limit).
    pub rate: f64,
    /// Requests a client may make at once after being idle.
    pub burst: u32,
    /// Most moves in a played or replayed game.
    pub moves: usize,
    /// Seconds a request may take.
    pub timeout_seconds: f64,
    /// Largest seed.
    pub max_seed: u64,
}

/// `GET /api/game`: the game, its start value, the players offered and the
/// limits.
pub async fn game(State(state): State<Arc<AppState>>) -> Json<GameInfo> {
    let g = state.solution.game();
    let summary = state.solution.summary();
    let l = &state.config.limits;
    Json(GameInfo {
        game: g.name(),
        board: g.shape.to_string(),
        rows: g.shape.rows(),
        columns: g.shape.cols(),
        target: g.target_tile(),
        discount: g.discount,
        four_probability: g.four_probability(),
        objective: g.objective.name(),
        value_name: g.value_name(),
        states: summary.states,
        start_value: summary.start_value,
        layers: summary.layers.len(),
        players: state.config.player_names(),
        graph: g.shape == Shape::square(2),
        limits: LimitsInfo {
            body_bytes: l.body_bytes,
            rate: l.rate,
            burst: l.burst,
            moves: l.moves,
            timeout_seconds: l.timeout.as_secs_f64(),
            max_seed: MAX_SEED,
        },
        version: env!("CARGO_PKG_VERSION"),
    })
}

/// The parameters of a query string, refusing any not in `known`.
fn params(
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
    known: &[&str],
) -> Result<HashMap<String, String>, ApiError> {
    let Query(params) = query.map_err(|e| ApiError::BadRequest {
        field: None,
        message: format!("the query string does not parse: {e}"),
    })?;
    if let Some(k) = params.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ApiError::field(
            &k.clone(),
            format!(
                "unknown parameter {k:?}: this endpoint takes {}",
                known.join(", ")
            ),
        ));
    }
    Ok(params)
}

/// `GET /api/query?board=B`: the value of a board and of each move, in the
/// orientation given (rows such as `2 4 / . 8`, or the hex form).
pub async fn query(
    State(state): State<Arc<AppState>>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<Report>, ApiError> {
    let params = params(query, &["board"])?;
    let board = params.get("board").ok_or_else(|| {
        ApiError::field(
            "board",
            "missing parameter board: give a board such as board=2 4 / . 8 (URL-encoded) or its hex form",
        )
    })?;
    if board.len() > MAX_BOARD_TEXT {
        return Err(ApiError::field(
            "board",
            format!(
                "the board is {} bytes long; a board is at most {MAX_BOARD_TEXT}",
                board.len()
            ),
        ));
    }
    Ok(Json(state.solution.query_text(board).await?))
}

fn optimal() -> String {
    "optimal".into()
}

/// The body of `POST /api/play`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayRequest {
    /// The seed of the tiles (0 to 2^53 - 1).
    pub seed: u64,
    /// The player, one of those `GET /api/game` lists [default: optimal].
    #[serde(default = "optimal")]
    pub player: String,
    /// Most moves to play [default: to the end of the game, within the
    /// server's move limit].
    pub moves: Option<usize>,
}

fn check_seed(seed: u64) -> Result<u64, ApiError> {
    if seed > MAX_SEED {
        return Err(ApiError::field(
            "seed",
            format!(
                "seed {seed} is larger than {MAX_SEED} (2^53 - 1, which JavaScript holds exactly)"
            ),
        ));
    }
    Ok(seed)
}

/// `POST /api/play`: a player's seeded game, each board with its win
/// probability and the value of the move played.
pub async fn play(
    State(state): State<Arc<AppState>>,
    Body(req): Body<PlayRequest>,
) -> Result<Json<PlayedGame>, ApiError> {
    let seed = check_seed(req.seed)?;
    let spec =
        PlayerSpec::parse(&req.player).map_err(|e| ApiError::field("player", e.to_string()))?;
    let offered = state.config.player_names();
    if spec != PlayerSpec::Optimal && !state.config.players.contains(&spec) {
        return Err(ApiError::field(
            "player",
            format!(
                "player {spec} is not offered here; offered: {}",
                offered.join(", ")
            ),
        ));
    }
    let max = state.config.limits.moves;
    let moves = req.moves.unwrap_or(max);
    if moves > max {
        return Err(ApiError::field(
            "moves",
            format!("{moves} moves is more than the {max} a game may have here"),
        ));
    }
    let played = games::play(&state.solution, &spec, seed, moves, &state.games).await?;
    Ok(Json(played))
}

/// The body of `POST /api/step`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    /// The seed of the tiles (0 to 2^53 - 1).
    pub seed: u64,
    /// The moves played so far, as letters L, R, U, D [default: none].
    #[serde(default)]
    pub moves: String,
}

/// What `POST /api/step` answers: the [`Report`] on the board the moves
/// lead to, and the game so far.
#[derive(Clone, Debug, Serialize)]
pub struct StepAnswer {
    /// The report on the board now (`game`, `board`, `hex`, `status`,
    /// `value`, `actions`, `best`).
    #[serde(flatten)]
    pub report: Report,
    /// The seed.
    pub seed: u64,
    /// The moves played, as letters.
    pub moves: String,
    /// The number of moves played.
    pub turn: usize,
    /// The sum of the moves' scores.
    pub score: u64,
    /// The tile that appeared after the last move.
    pub spawn: Option<Spawn>,
}

/// `POST /api/step`: a person's seeded game after their moves, and the
/// values of the moves they can play next.
pub async fn step(
    State(state): State<Arc<AppState>>,
    Body(req): Body<StepRequest>,
) -> Result<Json<StepAnswer>, ApiError> {
    let seed = check_seed(req.seed)?;
    let moves = games::parse_moves(&req.moves, state.config.limits.moves)?;
    let game = state.solution.game();
    let r = games::replay(
        game.shape,
        game.target_exp,
        &game.spawn_rule(),
        seed,
        &moves,
    )?;
    let report = state.solution.report(r.board, game.shape).await?;
    Ok(Json(StepAnswer {
        report,
        seed,
        moves: moves.iter().map(|&d| games::letter(d)).collect(),
        turn: r.moves,
        score: r.score,
        spawn: r.spawn,
    }))
}

/// `GET /api/graph`: the MDP graph of a 2x2 game (400 for other games).
pub async fn graph(State(state): State<Arc<AppState>>) -> Result<Json<Graph>, ApiError> {
    let g = state
        .graph
        .get_or_try_init(|| async { crate::graph::graph(&state.solution).await.map(Arc::new) })
        .await?;
    Ok(Json(Graph::clone(g)))
}

/// `GET /api/plot.svg`: the state-space figure of `solve2048 plot`, drawn
/// once (it reads every value of the store) and kept.
pub async fn plot(State(state): State<Arc<AppState>>) -> Result<impl IntoResponse, ApiError> {
    let svg = state
        .plot
        .get_or_try_init(|| async {
            let stats = state.solution.layer_stats().await?;
            Ok::<_, ApiError>(Arc::new(solve2048_solution::figure::svg(
                &state.solution.game().name(),
                &stats,
            )))
        })
        .await?;
    Ok((
        [(header::CONTENT_TYPE, "image/svg+xml")],
        String::clone(svg),
    ))
}
