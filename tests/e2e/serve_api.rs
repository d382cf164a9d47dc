//! Specifies the JSON API of `solve2048 serve`: `/api/query` answers exactly
//! what `query --json` prints (any orientation, hex form too); `/api/play`
//! plays the game `play` plays, and other players' games with each board's
//! value; `/api/step` replays a person's moves on the seed's tiles;
//! `/api/graph` is the 2x2 game's MDP (its values satisfy the Bellman
//! equation); every error is JSON naming the problem with a 4xx status
//! (never a 500 for a client's mistake); rate and body limits answer 429 and
//! 413; and the `serve` command listens on loopback, answers over TCP and
//! writes nothing to the store.
//!
//! The router is called in-process (no port) except in the command's test.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{json, Value};
use solve2048_serve::{AppState, Config, Limits};
use solve2048_solution::Solution;
use solve2048_store::{Access, Store};
use tower::ServiceExt;

use crate::cli::{bin, command_json};
use crate::reference::solved;

/// The reference stores these tests use.
pub fn store_2x2() -> &'static Path {
    &solved(&["--board", "2", "--target", "16"]).store
}
/// A 3x3 store, shared with the other tests.
pub fn store_3x3() -> &'static Path {
    &solved(&["--board", "3", "--target", "64"]).store
}

/// The server's state over `store` with `limits` and the default players.
async fn state(store: &Path, limits: Limits) -> Arc<AppState> {
    let solution = Solution::open(Store::open(store.to_str().unwrap(), Access::ReadOnly).unwrap())
        .await
        .unwrap();
    let n = solution.game().shape;
    let players: Vec<String> = solve2048_serve::config::DEFAULT_PLAYERS
        .iter()
        .map(|p| p.to_string())
        .collect();
    AppState::new(solution, Config::new(&players, limits, n).unwrap())
}

/// Limits with no rate limit (the tests make many requests at once).
fn unlimited() -> Limits {
    Limits {
        rate: 0.0,
        ..Limits::default()
    }
}

/// An answer: status, headers and body.
struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

async fn call(state: &Arc<AppState>, method: &str, uri: &str, body: Option<&str>) -> Answer {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .unwrap();
    let response = solve2048_serve::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

async fn get(state: &Arc<AppState>, uri: &str) -> Answer {
    call(state, "GET", uri, None).await
}

async fn post(state: &Arc<AppState>, uri: &str, body: &str) -> Answer {
    call(state, "POST", uri, Some(body)).await
}

/// URL-encode a query parameter's value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Expect an error: `status`, a JSON body whose message contains `needle`,
/// and the field named when `field` is given.
fn refused(a: &Answer, status: StatusCode, needle: &str, field: Option<&str>) {
    let body = a.json();
    assert_eq!(a.status, status, "{body}");
    let message = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {body}"));
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    assert!(body["code"].is_string(), "{body}");
    if let Some(field) = field {
        assert_eq!(body["field"], field, "{body}");
    }
}

#[tokio::test]
async fn query_answers_what_query_json_prints() {
    for (store, boards) in [
        (
            store_2x2(),
            &[
                "8 4 / 2 .",
                "8 2 / 4 .",
                "0x0000000000020031",
                "2 4 / 4 2",
                "16 . / . 2",
            ][..],
        ),
        (
            store_3x3(),
            &[
                "2 4 . / . 8 . / . . 2",
                ". . 2 / . 8 . / 2 4 .",
                "0x0000000002000031",
            ][..],
        ),
    ] {
        let s = state(store, unlimited()).await;
        for board in boards {
            let a = get(&s, &format!("/api/query?board={}", encode(board))).await;
            assert_eq!(a.status, StatusCode::OK, "{board}: {}", a.json());
            assert_eq!(a.headers["content-type"], "application/json", "{board}");
            let cli = command_json("query", store, &["--board", board]);
            assert_eq!(a.json(), cli, "{board}: the API and the command differ");
        }
    }
}

#[tokio::test]
async fn game_and_health_describe_the_store() {
    let reference = solved(&["--board", "3", "--target", "64"]);
    let s = state(&reference.store, Limits::default()).await;
    let health = get(&s, "/api/health").await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.json(), json!({"status": "ok", "game": "3x3-to-64"}));
    let g = get(&s, "/api/game").await.json();
    assert_eq!(g["game"], "3x3-to-64");
    assert_eq!(
        (
            g["board"].as_str(),
            g["rows"].as_u64(),
            g["columns"].as_u64(),
            g["target"].as_u64()
        ),
        (Some("3x3"), Some(3), Some(3), Some(64))
    );
    assert_eq!(g["states"], reference.summary["states"]);
    assert_eq!(g["start_value"], reference.summary["start_value"]);
    assert_eq!(g["players"][0], "optimal");
    assert_eq!(g["graph"], false);
    assert_eq!(g["limits"]["body_bytes"], 16384);
    assert_eq!(g["limits"]["max_seed"], 9007199254740991u64);
}

#[tokio::test]
async fn play_plays_the_game_play_plays() {
    let store = store_3x3();
    let s = state(store, unlimited()).await;
    for seed in [1u64, 42] {
        let a = post(&s, "/api/play", &format!(r#"{{"seed": {seed}}}"#)).await;
        assert_eq!(a.status, StatusCode::OK);
        let api = a.json();
        let cli = &command_json("play", store, &["--seed", &seed.to_string()])["games"][0];
        let (steps, want) = (
            api["steps"].as_array().unwrap(),
            cli["steps"].as_array().unwrap(),
        );
        assert_eq!(steps.len(), want.len(), "seed {seed}");
        for (got, want) in steps.iter().zip(want) {
            assert_eq!(got["board"], want["board"]);
            assert_eq!(got["value"], want["value"]);
            assert_eq!(got["move"], want["action"]);
            assert_eq!(got["best"], want["action"], "optimal plays its best move");
            assert_eq!(got["move_value"], got["value"]);
        }
        assert_eq!(api["last"]["hex"], cli["last"]);
        assert_eq!(api["end"], if cli["won"] == true { "won" } else { "lost" });
        assert_eq!(api["player"], "optimal");
        // A person who plays the optimal moves sees the same game.
        let letters: String = steps
            .iter()
            .map(|s| s["move"].as_str().unwrap()[..1].to_ascii_uppercase())
            .collect();
        let step = post(
            &s,
            "/api/step",
            &json!({"seed": seed, "moves": letters}).to_string(),
        )
        .await
        .json();
        assert_eq!(step["hex"], cli["last"]);
        assert_eq!(step["turn"], steps.len());
        assert_eq!(step["score"], api["score"]);
        assert_eq!(step["status"], api["last"]["status"]);
    }
    // Another player: its own moves, every board valued by the store.
    let a = post(
        &s,
        "/api/play",
        r#"{"seed": 3, "player": "greedy", "moves": 5}"#,
    )
    .await;
    let greedy = a.json();
    assert_eq!(a.status, StatusCode::OK, "{greedy}");
    assert_eq!(greedy["player"], "greedy");
    assert_eq!(greedy["end"], "stopped");
    let steps = greedy["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 5);
    for st in steps {
        let q = command_json("query", store, &["--board", st["board"].as_str().unwrap()]);
        assert_eq!(st["value"], q["value"]);
        assert_eq!(st["best"], q["best"]);
        assert_eq!(st["move_value"], q["actions"][st["move"].as_str().unwrap()]);
    }
    // Same seed, same game.
    let again = post(
        &s,
        "/api/play",
        r#"{"seed": 3, "player": "greedy", "moves": 5}"#,
    )
    .await;
    assert_eq!(again.json(), greedy);
    // The start board alone.
    let none = post(&s, "/api/play", r#"{"seed": 3, "moves": 0}"#)
        .await
        .json();
    assert_eq!(none["steps"], json!([]));
    assert_eq!(none["last"]["hex"], steps[0]["board"]);
}

#[tokio::test]
async fn step_replays_a_persons_moves() {
    let s = state(store_2x2(), unlimited()).await;
    let start = post(&s, "/api/step", r#"{"seed": 7}"#).await.json();
    assert_eq!(
        (start["turn"].as_u64(), start["moves"].as_str()),
        (Some(0), Some(""))
    );
    assert!(start["spawn"].is_null());
    let best = start["best"].as_str().unwrap();
    let letter = best[..1].to_ascii_uppercase();
    let next = post(
        &s,
        "/api/step",
        &json!({"seed": 7, "moves": letter.to_lowercase()}).to_string(),
    )
    .await;
    let next = next.json();
    assert_eq!(next["turn"], 1);
    assert_eq!(next["moves"], letter, "moves come back as capitals");
    assert!(
        next["spawn"]["tile"] == 2 || next["spawn"]["tile"] == 4,
        "{next}"
    );
    // The board's report is the query's.
    let q = command_json(
        "query",
        store_2x2(),
        &["--board", next["hex"].as_str().unwrap()],
    );
    for k in ["game", "board", "hex", "status", "value", "actions", "best"] {
        assert_eq!(next[k], q[k], "{k}");
    }
    // A move that changes nothing is refused by number, and so is one after
    // the end.
    let stuck = ["left", "right", "up", "down"]
        .into_iter()
        .find(|m| start["actions"][m].is_null())
        .unwrap();
    let a = post(
        &s,
        "/api/step",
        &json!({"seed": 7, "moves": stuck[..1].to_string()}).to_string(),
    )
    .await;
    refused(&a, StatusCode::BAD_REQUEST, "move 1 (", Some("moves"));
    let over = post(&s, "/api/play", r#"{"seed": 7}"#).await.json();
    let mut letters: String = over["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["move"].as_str().unwrap()[..1].to_ascii_uppercase())
        .collect();
    let played = letters.len();
    letters.push('L');
    let a = post(
        &s,
        "/api/step",
        &json!({"seed": 7, "moves": letters}).to_string(),
    )
    .await;
    refused(
        &a,
        StatusCode::BAD_REQUEST,
        &format!(
            "the game is over ({}) after move {played}",
            over["end"].as_str().unwrap()
        ),
        Some("moves"),
    );
}

#[tokio::test]
async fn graph_is_the_2x2_mdp_and_other_games_are_refused() {
    let reference = solved(&["--board", "2", "--target", "16"]);
    let s = state(&reference.store, unlimited()).await;
    let g = get(&s, "/api/graph").await.json();
    let nodes = g["nodes"].as_array().unwrap();
    assert_eq!(
        nodes.len() as u64,
        reference.summary["states"].as_u64().unwrap()
    );
    let value = |id: &str| -> f64 {
        match id {
            "win" => 1.0,
            "lose" => 0.0,
            _ => nodes
                .iter()
                .find(|n| n["id"] == id)
                .unwrap_or_else(|| panic!("edge to unknown node {id}"))["value"]
                .as_f64()
                .unwrap(),
        }
    };
    let edges = g["edges"].as_array().unwrap();
    let (mut starts, mut start_value) = (0.0, 0.0);
    for n in nodes {
        let out: Vec<&Value> = edges.iter().filter(|e| e["from"] == n["id"]).collect();
        let total: f64 = out.iter().map(|e| e["probability"].as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-12, "{n}: outcomes sum to {total}");
        // Bellman: a state's value is its optimal action's expected value.
        let expected: f64 = out
            .iter()
            .map(|e| e["probability"].as_f64().unwrap() * value(e["to"].as_str().unwrap()))
            .sum();
        assert!(
            (expected - n["value"].as_f64().unwrap()).abs() < 1e-12,
            "{n}"
        );
        starts += n["start"].as_f64().unwrap();
        start_value += n["start"].as_f64().unwrap() * n["value"].as_f64().unwrap();
    }
    assert!((starts - 1.0).abs() < 1e-12);
    let want = reference.summary["start_value"].as_f64().unwrap();
    assert!(
        (start_value - want).abs() < 1e-12,
        "{start_value} vs {want}"
    );
    assert!(edges.iter().any(|e| e["to"] == "win") && edges.iter().any(|e| e["to"] == "lose"));

    let s3 = state(store_3x3(), unlimited()).await;
    refused(
        &get(&s3, "/api/graph").await,
        StatusCode::BAD_REQUEST,
        "2x2 games only",
        None,
    );
}

#[tokio::test]
async fn plot_is_the_figure_plot_draws() {
    let s = state(store_2x2(), unlimited()).await;
    let a = get(&s, "/api/plot.svg").await;
    assert_eq!(a.status, StatusCode::OK);
    assert_eq!(a.headers["content-type"], "image/svg+xml");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.svg");
    let out = bin()
        .args(["plot", "--store"])
        .arg(store_2x2())
        .arg("--out")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(a.body, std::fs::read(&file).unwrap());
    // The page and its files are served, with no outside source.
    for (path, kind) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
    ] {
        let a = get(&s, path).await;
        assert_eq!(a.status, StatusCode::OK, "{path}");
        assert!(a.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with(kind));
        assert!(a.headers["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'"));
        let text = String::from_utf8(a.body).unwrap();
        assert!(
            !text.contains("http://") || path != "/",
            "no outside URL in the page"
        );
        assert!(
            !text.contains("https://"),
            "{path} refers outside the server"
        );
    }
}

#[tokio::test]
async fn every_mistake_gets_a_json_4xx_naming_it() {
    let s = state(store_3x3(), unlimited()).await;
    let q = |board: &str| format!("/api/query?board={}", encode(board));
    let bad = StatusCode::BAD_REQUEST;
    refused(
        &get(&s, "/api/query").await,
        bad,
        "missing parameter board",
        Some("board"),
    );
    refused(
        &get(&s, &q("")).await,
        bad,
        "expected 2 to 4 rows of 2 to 4 cells each",
        Some("board"),
    );
    refused(
        &get(&s, &q("2 4 / 8")).await,
        bad,
        "expected 2 to 4 rows of 2 to 4 cells",
        Some("board"),
    );
    refused(
        &get(&s, &q("2 3 . / . . . / . . .")).await,
        bad,
        "cell \"3\" is not a tile",
        Some("board"),
    );
    refused(
        &get(&s, &q("0xZZ")).await,
        bad,
        "is not 16 hex digits",
        Some("board"),
    );
    refused(
        &get(&s, &q("2 . / . 2")).await,
        bad,
        "the board is 2x2 but the store solves 3x3-to-64",
        Some("board"),
    );
    refused(
        &get(&s, &q(&"2 ".repeat(150))).await,
        bad,
        "a board is at most 200",
        Some("board"),
    );
    refused(
        &get(&s, "/api/query?board=2&extra=1").await,
        bad,
        "unknown parameter \"extra\"",
        Some("extra"),
    );
    refused(
        &get(&s, "/api/query?board=%FF%FE").await,
        bad,
        "expected 2 to 4 rows",
        Some("board"),
    );
    refused(
        // Every board after a move holds the 2 or 4 that just appeared.
        &get(&s, &q("8 . . / . 16 . / . . .")).await,
        StatusCode::NOT_FOUND,
        "is not reachable in 3x3-to-64",
        None,
    );
    refused(
        &get(&s, "/api/nothing").await,
        StatusCode::NOT_FOUND,
        "no such endpoint: /api/nothing",
        None,
    );
    refused(
        &post(&s, "/api/query", "{}").await,
        StatusCode::METHOD_NOT_ALLOWED,
        "does not answer POST",
        None,
    );
    refused(
        &get(&s, "/api/play").await,
        StatusCode::METHOD_NOT_ALLOWED,
        "does not answer GET",
        None,
    );

    for (body, needle, field) in [
        ("", "the body is empty", None),
        ("{", "not the JSON expected", None),
        ("[1]", "not the JSON expected", None),
        ("{}", "missing field `seed`", None),
        (r#"{"seed": "x"}"#, "invalid type", Some("seed")),
        (r#"{"seed": -1}"#, "invalid value", Some("seed")),
        (r#"{"seed": 1.5}"#, "invalid type", Some("seed")),
        (
            r#"{"seed": 9007199254740992}"#,
            "is larger than 9007199254740991",
            Some("seed"),
        ),
        (
            r#"{"seed": 1, "sede": 2}"#,
            "unknown field `sede`",
            Some("sede"),
        ),
        (
            r#"{"seed": 1, "player": "minimax"}"#,
            "unknown player",
            Some("player"),
        ),
        (
            r#"{"seed": 1, "player": "mc:1000000"}"#,
            "is not offered here",
            Some("player"),
        ),
        (
            r#"{"seed": 1, "player": "ntuple:/etc/passwd"}"#,
            "is not offered here",
            Some("player"),
        ),
        (
            r#"{"seed": 1, "moves": 20001}"#,
            "more than the 20000",
            Some("moves"),
        ),
        (
            r#"{"seed": 1, "moves": -3}"#,
            "invalid value",
            Some("moves"),
        ),
    ] {
        refused(&post(&s, "/api/play", body).await, bad, needle, field);
    }
    for (body, needle) in [
        (r#"{"seed": 1, "moves": "LX"}"#, "move 2 is 'X'"),
        (r#"{"seed": 1, "moves": 12}"#, "invalid type"),
    ] {
        refused(
            &post(&s, "/api/step", body).await,
            bad,
            needle,
            Some("moves"),
        );
    }
    let short = state(
        store_3x3(),
        Limits {
            moves: 10,
            ..unlimited()
        },
    )
    .await;
    let eleven = json!({"seed": 1, "moves": "L".repeat(11)}).to_string();
    refused(
        &post(&short, "/api/step", &eleven).await,
        bad,
        "11 moves is more than the 10",
        Some("moves"),
    );
    // A body over the limit is refused before it is read whole.
    let huge = format!(r#"{{"seed": 1, "moves": "{}"}}"#, "L".repeat(20_000));
    refused(
        &post(&s, "/api/step", &huge).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "larger than 16384 bytes",
        None,
    );
    refused(
        &post(&s, "/api/play", &huge).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "larger than 16384 bytes",
        None,
    );
}

#[tokio::test]
async fn a_client_over_its_rate_waits_and_a_slow_request_times_out() {
    let limits = Limits {
        rate: 1.0,
        burst: 2,
        ..Limits::default()
    };
    let s = state(store_2x2(), limits).await;
    assert_eq!(get(&s, "/api/health").await.status, StatusCode::OK);
    assert_eq!(get(&s, "/api/health").await.status, StatusCode::OK);
    let a = get(&s, "/api/health").await;
    refused(
        &a,
        StatusCode::TOO_MANY_REQUESTS,
        "at most 1 a second",
        None,
    );
    assert_eq!(a.headers["retry-after"], "1");

    // The figure reads the store (on other threads): under a limit that
    // has already passed it cannot finish.
    let limits = Limits {
        rate: 0.0,
        timeout: Duration::from_nanos(1),
        ..Limits::default()
    };
    let s = state(store_3x3(), limits).await;
    refused(
        &get(&s, "/api/plot.svg").await,
        StatusCode::SERVICE_UNAVAILABLE,
        "took longer than",
        None,
    );
}

/// Every file under `dir` with its length and modification time.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), m.len(), m.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// `GET path` over TCP: the status code and the body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
}

/// A running `serve`, stopped when dropped.
pub struct Server {
    child: Child,
    /// Its address, `127.0.0.1:PORT`.
    pub addr: String,
}

impl Server {
    /// Start `serve --store STORE --listen 127.0.0.1:0 ARGS` and read its
    /// address from its first line.
    pub fn start(store: &Path, args: &[&str]) -> Server {
        let mut child = bin()
            .arg("serve")
            .arg("--store")
            .arg(store)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim()
            .trim_end_matches('/')
            .to_string();
        assert!(addr.starts_with("127.0.0.1:"), "{line}");
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_serve_command_answers_over_tcp_and_writes_nothing() {
    let store = store_2x2();
    let before = listing(store);
    {
        let server = Server::start(store, &[]);
        let (status, body) = http_get(&server.addr, "/api/health");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("\"ok\""));
        let (status, page) = http_get(&server.addr, "/");
        assert_eq!(status, 200);
        assert!(page.contains("<script src=\"/app.js\""));
        for path in [
            "/api/graph",
            "/api/plot.svg",
            "/api/query?board=2%202%20/%20.%20.",
        ] {
            assert_eq!(http_get(&server.addr, path).0, 200, "{path}");
        }
    }
    assert_eq!(listing(store), before, "serve wrote to the store");

    // Bad settings are refused before it listens.
    for (args, needle) in [
        (&["--player", "minimax"][..], "--player minimax"),
        (
            &["--player", "ntuple:/nonexistent.weights"],
            "cannot play this game",
        ),
        (&["--burst", "0"], "a burst of 0"),
        (
            &["--timeout-seconds", "0"],
            "--timeout-seconds must be positive",
        ),
        (&["--listen", "nowhere"], "listening on nowhere"),
    ] {
        let out = bin()
            .arg("serve")
            .arg("--store")
            .arg(store)
            .args(args)
            .output()
            .unwrap();
        crate::cli::fails_with(&out, needle);
    }
    let out = bin()
        .args(["serve", "--store", "/nonexistent/store"])
        .output()
        .unwrap();
    crate::cli::fails_with(&out, "does not exist");
}
