//! Specifies the page of `solve2048 serve` in a real browser (headless
//! Chromium over the DevTools protocol): on 2x2, 3x3 and 4x4 stores a game
//! played with the arrow keys shows, after every key, the board, the win
//! probability, each move's value and the best move that `query --json`
//! gives for that board; a move that changes nothing is refused; the game's
//! link reloads the same game; a watched optimal game ends as `play` says;
//! a 2x2 game's MDP graph draws every state and the win and lose states. It
//! saves screenshots and prints their paths.
//!
//! Chromium comes from Debian (`apt-get install chromium`; `.ci/run`
//! installs it). Without it the test says so loudly and passes, unless
//! `SOLVE2048_REQUIRE_BROWSER` is set (CI sets it), when it fails.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::cli::command_json;
use crate::reference::solved;
use crate::serve_api::Server;

/// How long the page may take to show what a step expects (a failure
/// bound, not a measurement).
const PATIENCE: Duration = Duration::from_secs(60);

/// The Chromium binary: `SOLVE2048_CHROMIUM`, or `chromium` on the PATH.
fn chromium_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SOLVE2048_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    })
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A headless Chromium and one page of it, driven over the DevTools
/// protocol (commands on the browser's websocket, to the page's session).
struct Browser {
    child: Child,
    socket: Socket,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start Chromium on an empty profile and open a page; None (after a
    /// loud message) when there is no Chromium and none is required.
    async fn start() -> Option<Browser> {
        let Some(binary) = chromium_binary() else {
            assert!(
                std::env::var_os("SOLVE2048_REQUIRE_BROWSER").is_none(),
                "SOLVE2048_REQUIRE_BROWSER is set but there is no chromium on the PATH \
                 (apt-get install -y chromium)"
            );
            // Straight to stderr: the test harness captures eprintln! of a
            // passing test, and a skip must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: the browser test of `serve` needs Chromium \
                 (apt-get install -y chromium); set SOLVE2048_REQUIRE_BROWSER=1 to make \
                 this a failure ***\n"
            );
            return None;
        };
        let profile = tempfile::tempdir().unwrap();
        // Background networking and component updates off: this closed
        // network refuses Chromium's own connections.
        let mut child = Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--window-size=1000,1400",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", binary.display()));
        // Chromium prints its websocket address on stderr; the rest of
        // stderr is drained so that it never blocks on a full pipe.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx
            .recv_timeout(PATIENCE)
            .expect("chromium printed no DevTools address");
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .expect("connecting to chromium's DevTools websocket");
        let mut browser = Browser {
            child,
            socket,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let target = browser
            .call("Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = browser
            .call(
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser
            .call(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": 1000, "height": 1400, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await;
        Some(browser)
    }

    /// Send a command (to the page once attached) and wait for its result;
    /// events in between are skipped.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.socket
            .send(Message::Text(message.to_string().into()))
            .await
            .unwrap();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let next = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let Some(Ok(Message::Text(text))) = next else {
                continue;
            };
            let reply: Value = serde_json::from_str(&text).unwrap();
            if reply["id"] == id {
                assert!(reply["error"].is_null(), "{method} failed: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// Evaluate a JavaScript expression in the page; its value as JSON.
    async fn eval(&mut self, expression: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        assert!(
            r["exceptionDetails"].is_null(),
            "{expression} threw: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Wait until `expression` is truthy in the page, then give its value.
    async fn wait_for(&mut self, expression: &str) -> Value {
        let start = Instant::now();
        loop {
            let v = self.eval(expression).await;
            if !(v.is_null() || v == false || v == "" || v == 0) {
                return v;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "the page never showed {expression}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Load `url` afresh (by way of a blank page, so that a link that
    /// differs only after `#` loads the page again).
    async fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": "about:blank"}))
            .await;
        self.wait_for("location.href === 'about:blank'").await;
        self.call("Page.navigate", json!({"url": url})).await;
        // The page marks the body once its first game is shown.
        self.wait_for(
            "location.href.startsWith('http') && document.body && document.body.dataset.ready",
        )
        .await;
    }

    /// Press and release an arrow key, as a person does.
    async fn press(&mut self, key: &str) {
        let code = match key {
            "ArrowLeft" => 37,
            "ArrowUp" => 38,
            "ArrowRight" => 39,
            "ArrowDown" => 40,
            _ => panic!("no key {key}"),
        };
        for kind in ["rawKeyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "code": key,
                       "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}),
            )
            .await;
        }
    }

    /// Save a PNG of the page to `path`.
    async fn screenshot(&mut self, path: &Path) {
        // Let the new tile's 0.15 s animation end, for a picture of the
        // board at rest (nothing is asserted on time).
        tokio::time::sleep(Duration::from_millis(400)).await;
        let shot = self
            .call(
                "Page.captureScreenshot",
                json!({"format": "png", "captureBeyondViewport": false}),
            )
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 20_000, "a drawn page, not a blank one");
        std::fs::write(path, png).unwrap();
        println!("screenshot: {}", path.display());
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the page shows of the person's game.
const SHOWN: &str = r#"(() => {
  const board = document.getElementById('board');
  const n = Number(getComputedStyle(board).getPropertyValue('--n'));
  const cells = [...board.children].map((c) => c.textContent || '.');
  const rows = [];
  for (let r = 0; r < n; r++) rows.push(cells.slice(r * n, r * n + n).join(' '));
  const moves = {};
  for (const tr of document.querySelectorAll('#moves tbody tr')) {
    moves[tr.dataset.move] = tr.dataset.value === undefined ? null : Number(tr.dataset.value);
  }
  return {
    hex: board.dataset.hex,
    turn: Number(board.dataset.turn),
    board: rows.join(' / '),
    value: Number(document.getElementById('value').dataset.value),
    value_text: document.getElementById('value').textContent,
    best: document.getElementById('best').textContent,
    moves,
    status: document.getElementById('status').className,
    hash: location.hash,
  };
})()"#;

/// Check what the page shows against `query --json` on its board.
fn check_against_query(store: &Path, shown: &Value) -> Value {
    let q = command_json("query", store, &["--board", shown["hex"].as_str().unwrap()]);
    assert_eq!(shown["board"], q["board"], "the board drawn");
    // Numbers compare as f64, exactly: JSON writes 1 and 1.0 for the same one.
    let number = |v: &Value| v.as_f64();
    assert_eq!(
        number(&shown["value"]),
        number(&q["value"]),
        "the win probability"
    );
    let percent: f64 = shown["value_text"]
        .as_str()
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(
        (percent - 100.0 * q["value"].as_f64().unwrap()).abs() < 6e-4,
        "the win probability as written: {shown}"
    );
    assert_eq!(
        shown["best"],
        q["best"].as_str().unwrap_or(""),
        "the best move"
    );
    for m in ["left", "right", "up", "down"] {
        assert_eq!(
            number(&shown["moves"][m]),
            number(&q["actions"][m]),
            "the value of {m}: {shown}"
        );
    }
    assert_eq!(
        shown["status"],
        format!("status-{}", q["status"].as_str().unwrap())
    );
    q
}

/// Play `keys` moves of seed `seed` with the keyboard, checking the page
/// against `query` after each; every third move is a worse legal one when
/// there is one. Returns the moves' letters.
async fn play_with_keys(
    b: &mut Browser,
    addr: &str,
    store: &Path,
    seed: u64,
    keys: usize,
) -> String {
    b.open(&format!("http://{addr}/#seed={seed}")).await;
    let mut shown = b.eval(SHOWN).await;
    assert_eq!(shown["turn"], 0);
    let mut q = check_against_query(store, &shown);
    // A move that changes nothing is refused on the page.
    if let Some(stuck) = ["left", "right", "up", "down"]
        .into_iter()
        .find(|m| q["actions"][m].is_null())
    {
        b.press(&arrow(stuck)).await;
        b.wait_for("document.getElementById('message').textContent.includes('changes nothing')")
            .await;
        assert_eq!(b.eval(SHOWN).await["turn"], 0);
    }
    for k in 1..=keys {
        if q["status"] != "playing" {
            break;
        }
        let best = q["best"].as_str().unwrap();
        let worse = ["left", "right", "up", "down"]
            .into_iter()
            .find(|&m| m != best && !q["actions"][m].is_null());
        let m = match worse {
            Some(w) if k % 3 == 0 => w,
            _ => best,
        };
        b.press(&arrow(m)).await;
        b.wait_for(&format!(
            "Number(document.getElementById('board').dataset.turn) === {k}"
        ))
        .await;
        shown = b.eval(SHOWN).await;
        q = check_against_query(store, &shown);
    }
    let hash = shown["hash"].as_str().unwrap().to_string();
    let moves = hash.split("moves=").nth(1).unwrap_or("").to_string();
    // The link reloads the same game.
    b.open(&format!("http://{addr}/{hash}")).await;
    let again = b.eval(SHOWN).await;
    assert_eq!(again["hex"], shown["hex"], "the game's link");
    assert_eq!(again["turn"], shown["turn"]);
    moves
}

/// The cells of `#board` as drawn: each row's height, and each cell's
/// width and height in CSS pixels.
const CELLS: &str = r#"(() => {
  const board = document.getElementById('board');
  const n = Number(getComputedStyle(board).getPropertyValue('--n'));
  const rects = [...board.children].map((c) => c.getBoundingClientRect());
  return {
    n,
    empty: [...board.children].filter((c) => !c.textContent).length,
    rows: [...Array(n).keys()].map((r) => rects[r * n].height),
    cells: rects.map((r) => [r.width, r.height]),
  };
})()"#;

/// A start (mostly empty rows) at a desktop and a phone-sized viewport:
/// every row of the board as high as the others, every cell square. Empty
/// rows once collapsed to half height. Saves a screenshot of each.
async fn check_square_cells(b: &mut Browser, addr: &str, shots: &Path, name: &str) {
    for (viewport, width, height, mobile) in
        [("desktop", 1000, 1400, false), ("phone", 375, 740, true)]
    {
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await;
        b.open(&format!("http://{addr}/#seed=7")).await;
        let drawn = b.eval(CELLS).await;
        let n = drawn["n"].as_u64().unwrap() as usize;
        assert!(
            drawn["empty"].as_u64().unwrap() as usize >= n * n - 2,
            "a start: {drawn}"
        );
        let rows: Vec<f64> = drawn["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_f64().unwrap())
            .collect();
        assert_eq!(rows.len(), n);
        let (low, high) = rows
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
        assert!(
            high - low < 1.0,
            "{name} on a {viewport}: rows of {rows:?} px"
        );
        assert!(low > 40.0, "{name} on a {viewport}: cells of {low} px");
        for c in drawn["cells"].as_array().unwrap() {
            let (w, h) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap());
            assert!(
                (w - h).abs() < 1.0,
                "{name} on a {viewport}: a {w}x{h} cell"
            );
        }
        println!("{name} on a {viewport}: rows of {rows:?} px");
        b.screenshot(&shots.join(format!("serve-{name}-start-{viewport}.png")))
            .await;
    }
    b.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 1000, "height": 1400, "deviceScaleFactor": 1, "mobile": false}),
    )
    .await;
}

fn arrow(m: &str) -> String {
    let mut name = m.to_string();
    name[..1].make_ascii_uppercase();
    format!("Arrow{name}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_plays_with_the_keyboard_and_shows_what_query_gives() {
    let Some(mut b) = Browser::start().await else {
        return;
    };
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));

    // 3x3: a game with the keyboard, then a watched optimal game.
    let store = &solved(&["--board", "3", "--target", "64"]).store;
    let server = Server::start(store, &[]);
    check_square_cells(&mut b, &server.addr, shots, "3x3").await;
    let moves = play_with_keys(&mut b, &server.addr, store, 7, 12).await;
    assert_eq!(moves.len(), 12, "twelve moves made, in the link: {moves}");
    b.screenshot(&shots.join("serve-3x3-to-64.png")).await;
    let played = command_json("play", store, &["--seed", "5"])["games"][0].clone();
    b.eval(
        "document.getElementById('watch-seed').value = '5';
         document.getElementById('player').value = 'optimal';
         document.getElementById('speed').value = '60';
         document.getElementById('watch-start').click(); true",
    )
    .await;
    let end = b
        .wait_for("document.getElementById('watch-end').textContent.includes('after') && document.getElementById('watch-end').textContent")
        .await;
    let want = format!(
        "optimal {} after {} moves",
        if played["won"] == true { "won" } else { "lost" },
        played["steps"].as_array().unwrap().len()
    );
    assert!(end.as_str().unwrap().starts_with(&want), "{end} vs {want}");
    assert_eq!(
        b.eval("document.getElementById('watch-board').dataset.hex")
            .await,
        played["last"]
    );
    drop(server);

    // 2x2: the game, and the whole MDP drawn.
    let reference = solved(&["--board", "2", "--target", "16"]);
    let server = Server::start(&reference.store, &[]);
    play_with_keys(&mut b, &server.addr, &reference.store, 11, 4).await;
    let nodes = b
        .wait_for("document.getElementById('graph').dataset.nodes")
        .await;
    assert_eq!(
        nodes.as_str().unwrap(),
        reference.summary["states"].to_string()
    );
    let drawn = b
        .eval("[document.querySelectorAll('#graph g.node:not(.terminal)').length, document.querySelectorAll('#graph g.terminal.win').length, document.querySelectorAll('#graph g.terminal.lose').length, document.querySelectorAll('#graph path.edge').length]")
        .await;
    assert_eq!(drawn[0], reference.summary["states"]);
    assert_eq!((drawn[1].as_u64(), drawn[2].as_u64()), (Some(1), Some(1)));
    assert!(drawn[3].as_u64().unwrap() >= drawn[0].as_u64().unwrap());
    // The state-space plot loads.
    b.wait_for(
        "document.getElementById('plot').complete && document.getElementById('plot').naturalWidth",
    )
    .await;
    b.screenshot(&shots.join("serve-2x2-to-16.png")).await;
    drop(server);

    // 4x4 (to 16, discounted): the page works on the largest board too.
    let store = &solved(&["--board", "4", "--target", "16", "--discount", "0.99"]).store;
    let server = Server::start(store, &[]);
    check_square_cells(&mut b, &server.addr, shots, "4x4").await;
    play_with_keys(&mut b, &server.addr, store, 3, 6).await;
    b.screenshot(&shots.join("serve-4x4-to-16.png")).await;
}
