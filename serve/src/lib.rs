//! `solve2048 serve`: a web page and a JSON API over a solved store, read-only.
//!
//! The page (plain HTML, CSS and JavaScript embedded in the binary) lets a
//! person play a seeded game against the optimum, watch a player play one,
//! see a 2x2 game's whole MDP graph and the state-space plot. The API answers
//! any board (`/api/query`, the same object as `query --json`), plays seeded
//! games (`/api/play`, `/api/step`) and describes the game (`/api/game`).
//! Nothing here writes to the store.
//!
//! Modules:
//! - [`config`]: what the server offers and its limits, validated.
//! - [`app`](mod@app): the router ([`app()`]) and the server loop ([`run`]).
//! - [`api`]: the JSON endpoints.
//! - [`games`]: seeded games: a player's, and a person's moves replayed.
//! - [`graph`]: the MDP graph of a 2x2 game.
//! - [`limits`]: per-client rates, requests at once, and time per request.
//! - [`assets`]: the page's files, embedded.
//! - [`error`]: [`ApiError`], every failure and its HTTP status, in one place.
#![deny(missing_docs)]

pub mod api;
pub mod app;
pub mod assets;
pub mod config;
pub mod error;
pub mod games;
pub mod graph;
pub mod limits;

pub use app::{app, run, AppState};
pub use config::{Config, ConfigError, Limits};
pub use error::ApiError;
