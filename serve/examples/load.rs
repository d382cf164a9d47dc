//! A small load generator for `solve2048 serve`: the answer time of
//! `GET /api/query` under a number of concurrent clients, on loopback.
//!
//! ```text
//! solve2048 serve --store STORE --rate 0 &
//! cargo run --release -p solve2048-serve --example load -- 127.0.0.1:8048 100 20000
//! ```
//!
//! It collects the boards of seeded optimal games (`POST /api/play`, seeds
//! 1, 2, ...) until it has 2,000, each in a random one of its 8 orientations,
//! then sends `requests` queries (the boards in turn) from `clients`
//! keep-alive connections, each connection one request at a time: once to
//! warm up, then again, measured. It prints the median and 99th percentile
//! of the time from sending a request to having its whole answer, and the
//! requests per second. Playing the games has already read the store chunks
//! these boards need, so the numbers are those of a warm server. It only
//! ever connects to a loopback address and stops by itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A keep-alive HTTP/1.1 connection.
struct Connection {
    stream: BufReader<TcpStream>,
    host: String,
}

impl Connection {
    async fn open(addr: &str) -> std::io::Result<Connection> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection {
            stream: BufReader::new(stream),
            host: addr.to_string(),
        })
    }

    /// Send a request and read its whole answer: (status, body).
    async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: &str,
    ) -> std::io::Result<(u16, Vec<u8>)> {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.stream.get_mut().write_all(request.as_bytes()).await?;
        let mut line = String::new();
        self.stream.read_line(&mut line).await?;
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
        let mut length = 0usize;
        loop {
            line.clear();
            self.stream.read_line(&mut line).await?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(std::io::Error::other)?;
                }
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body).await?;
        Ok((status, body))
    }
}

/// The 8 orientations of a board of side `n` (transpose, then mirror).
fn orient(x: u64, n: usize, g: usize) -> u64 {
    let cell = |x: u64, r: usize, c: usize| (x >> (16 * r + 4 * c)) & 0xF;
    let mut out = 0;
    for r in 0..n {
        for c in 0..n {
            let (mut rr, mut cc) = if g & 1 == 1 { (c, r) } else { (r, c) };
            if g & 2 == 2 {
                cc = n - 1 - cc;
            }
            if g & 4 == 4 {
                rr = n - 1 - rr;
            }
            out |= cell(x, r, c) << (16 * rr + 4 * cc);
        }
    }
    out
}

/// Median and 99th percentile of `times`, in milliseconds.
fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    (at(0.5).as_secs_f64() * 1e3, at(0.99).as_secs_f64() * 1e3)
}

/// Send every query once from `clients` connections; the time of each.
async fn pass(addr: &str, clients: usize, paths: Arc<Vec<String>>, total: usize) -> Vec<Duration> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (addr, paths, next) = (addr.to_string(), paths.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut conn = Connection::open(&addr).await.expect("connecting");
            let mut times = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let path = &paths[i % paths.len()];
                let start = Instant::now();
                let (status, body) = conn.request("GET", path, "").await.expect("a request");
                times.push(start.elapsed());
                assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
            }
            times
        }));
    }
    let mut times = Vec::new();
    for t in tasks {
        times.extend(t.await.expect("a client"));
    }
    times
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args
        .get(1)
        .map_or("127.0.0.1:8048", String::as_str)
        .to_string();
    let clients: usize = args.get(2).map_or(100, |s| s.parse().expect("clients"));
    let total: usize = args.get(3).map_or(20_000, |s| s.parse().expect("requests"));
    let ip: std::net::SocketAddr = addr.parse().expect("an address such as 127.0.0.1:8048");
    assert!(
        ip.ip().is_loopback(),
        "this generator only loads loopback servers"
    );

    let mut conn = Connection::open(&addr).await.expect("connecting");
    let (_, game) = conn
        .request("GET", "/api/game", "")
        .await
        .expect("GET /api/game");
    let game: serde_json::Value = serde_json::from_slice(&game).expect("JSON");
    let n = game["rows"].as_u64().expect("rows") as usize;
    // A rectangle is asked about as it lies; a square in any orientation.
    let orientations = if game["columns"] == game["rows"] {
        8
    } else {
        1
    };
    let mut boards = Vec::new();
    let mut seed = 1u64;
    let mut mix = 0x2545_F491_4F6C_DD1Du64;
    while boards.len() < 2_000 {
        let (status, played) = conn
            .request("POST", "/api/play", &format!(r#"{{"seed": {seed}}}"#))
            .await
            .expect("POST /api/play");
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&played));
        let played: serde_json::Value = serde_json::from_slice(&played).expect("JSON");
        for step in played["steps"].as_array().expect("steps") {
            let hex = step["board"].as_str().expect("board");
            let x = u64::from_str_radix(hex.trim_start_matches("0x"), 16).expect("hex");
            mix ^= mix << 13;
            mix ^= mix >> 7;
            mix ^= mix << 17;
            boards.push(format!(
                "/api/query?board={:#018x}",
                orient(x, n, (mix % orientations) as usize)
            ));
        }
        seed += 1;
    }
    boards.truncate(2_000);
    let paths = Arc::new(boards);
    println!(
        "{}: {} boards from {} optimal games, {clients} clients, {total} requests a pass",
        game["game"].as_str().unwrap_or("?"),
        paths.len(),
        seed - 1
    );
    pass(&addr, clients, paths.clone(), total).await;
    let start = Instant::now();
    let times = pass(&addr, clients, paths.clone(), total).await;
    let seconds = start.elapsed().as_secs_f64();
    let (median, p99) = summary(times);
    println!(
        "GET /api/query: median {median:.2} ms, p99 {p99:.2} ms, {:.0} requests/s",
        total as f64 / seconds
    );
}
