//! A misbehaving S3: a fault-injecting HTTP/1.1 proxy on loopback between a
//! job and the S3 server of `s3.rs`, and the tests that solve through it.
//!
//! The proxy answers a seeded fraction of the requests it reads with a
//! fault, drawn uniformly among the kinds asked for: 503 `SlowDown`, 500
//! `InternalError`, a reset connection (no answer), a stall (the answer
//! held for seconds), or a short body (the answer's `Content-Length` larger
//! than the bytes sent, then the connection closed). It listens on
//! 127.0.0.1 only and forwards only to the server's loopback port.
//!
//! The first test solves through it at 10% faults of every kind and must
//! get the clean digest and the same chunk objects, with each cause of
//! retry counted; the second points a job at a store that always fails and
//! must see it stop in bounded time, the message naming the store, the
//! operation, the object and the cause, with nothing committed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use solve2048_core::rules::rng::SeededRng;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::s3::{assert_same, reference_of, S3Server, BUCKET, CHUNKS};

/// A kind of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// 503 with S3's `SlowDown` error body.
    SlowDown,
    /// 500 with S3's `InternalError` error body.
    ServerError,
    /// The connection closed (reset) without an answer.
    Reset,
    /// The answer held back for the stall time.
    Stall,
    /// Half the answer's body, then the connection closed.
    ShortBody,
}

impl Fault {
    /// Every kind.
    pub(crate) const ALL: [Fault; 5] = [
        Fault::SlowDown,
        Fault::ServerError,
        Fault::Reset,
        Fault::Stall,
        Fault::ShortBody,
    ];

    fn index(self) -> usize {
        Fault::ALL.iter().position(|&f| f == self).unwrap()
    }
}

/// What the proxy does, shared by its connections.
struct Plan {
    upstream: u16,
    /// Faults per million requests.
    per_million: u64,
    kinds: Vec<Fault>,
    stall: Duration,
    rng: Mutex<SeededRng>,
    requests: AtomicU64,
    injected: [AtomicU64; 5],
}

impl Plan {
    /// The fault for the next request, if any (seeded draws, in the order
    /// requests arrive).
    fn draw(&self) -> Option<Fault> {
        let mut rng = self.rng.lock().unwrap();
        if rng.below(1_000_000) >= self.per_million {
            return None;
        }
        let f = self.kinds[rng.below(self.kinds.len() as u64) as usize];
        self.injected[f.index()].fetch_add(1, Ordering::Relaxed);
        Some(f)
    }
}

/// The proxy, serving on its own threads until dropped.
pub(crate) struct FaultyProxy {
    port: u16,
    plan: Arc<Plan>,
    _runtime: tokio::runtime::Runtime,
}

impl FaultyProxy {
    /// A proxy on a free loopback port in front of the server on `upstream`
    /// (loopback), faulting `fraction` of the requests with one of `kinds`
    /// drawn from `seed`; a stall holds the answer `stall`.
    pub(crate) fn start(
        upstream: u16,
        seed: u64,
        fraction: f64,
        kinds: &[Fault],
        stall: Duration,
    ) -> FaultyProxy {
        assert!(!kinds.is_empty() && (0.0..=1.0).contains(&fraction));
        let plan = Arc::new(Plan {
            upstream,
            per_million: (fraction * 1e6).round() as u64,
            kinds: kinds.to_vec(),
            stall,
            rng: Mutex::new(SeededRng::new(seed)),
            requests: AtomicU64::new(0),
            injected: Default::default(),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let p = plan.clone();
        runtime.spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(serve(conn, p.clone()));
            }
        });
        FaultyProxy {
            port,
            plan,
            _runtime: runtime,
        }
    }

    /// Its port on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Requests it has read.
    pub(crate) fn requests(&self) -> u64 {
        self.plan.requests.load(Ordering::Relaxed)
    }

    /// Faults of `kind` it has injected.
    pub(crate) fn injected(&self, kind: Fault) -> u64 {
        self.plan.injected[kind.index()].load(Ordering::Relaxed)
    }
}

/// One HTTP/1.1 message: the start line, the headers, the body (decoded
/// from chunked framing when it was chunked).
struct Message {
    start: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    chunked: bool,
}

impl Message {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The head as sent, without the framing headers.
    fn head_without_framing(&self) -> String {
        let mut head = format!("{}\r\n", self.start);
        for (k, v) in &self.headers {
            let framing = [
                "connection",
                "content-length",
                "transfer-encoding",
                "keep-alive",
            ];
            if !framing.iter().any(|f| k.eq_ignore_ascii_case(f)) {
                head += &format!("{k}: {v}\r\n");
            }
        }
        head
    }
}

/// Read one message; `Ok(None)` at a clean end of the connection.
/// `bodyless`: a response that has no body whatever its headers (to a
/// HEAD); `to_eof`: a response whose body runs to the end of the
/// connection when it has no framing.
async fn read_message<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    bodyless: bool,
    to_eof: bool,
) -> std::io::Result<Option<Message>> {
    let mut line = String::new();
    if r.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let start = line.trim_end().to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut m = Message {
        start,
        headers,
        body: Vec::new(),
        chunked: false,
    };
    let status = m
        .start
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok());
    if bodyless || matches!(status, Some(100..=199 | 204 | 304)) && m.start.starts_with("HTTP/") {
        return Ok(Some(m));
    }
    if m.header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        m.chunked = true;
        loop {
            line.clear();
            r.read_line(&mut line).await?;
            let size = line.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| std::io::Error::other(format!("bad chunk size {line:?}")))?;
            if size == 0 {
                // Trailers, then the blank line.
                loop {
                    line.clear();
                    if r.read_line(&mut line).await? == 0 || line.trim_end().is_empty() {
                        break;
                    }
                }
                break;
            }
            let at = m.body.len();
            m.body.resize(at + size, 0);
            r.read_exact(&mut m.body[at..]).await?;
            line.clear();
            r.read_line(&mut line).await?;
        }
    } else if let Some(n) = m.header("content-length") {
        let n: usize = n
            .parse()
            .map_err(|_| std::io::Error::other("bad content-length"))?;
        m.body.resize(n, 0);
        r.read_exact(&mut m.body).await?;
    } else if to_eof {
        r.read_to_end(&mut m.body).await?;
    }
    Ok(Some(m))
}

/// S3's error document.
fn s3_error(status: &str, code: &str, message: &str) -> Vec<u8> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message><RequestId>faulty-s3</RequestId></Error>"
    );
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/xml\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Forward `req` to the server on a connection of its own, and read the
/// whole answer.
async fn forward(plan: &Plan, req: &Message) -> std::io::Result<Message> {
    let up = TcpStream::connect(("127.0.0.1", plan.upstream)).await?;
    let (read, mut write) = up.into_split();
    let mut out = req.head_without_framing().into_bytes();
    out.extend_from_slice(b"connection: close\r\n");
    if req.chunked {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
        if !req.body.is_empty() {
            out.extend_from_slice(format!("{:x}\r\n", req.body.len()).as_bytes());
            out.extend_from_slice(&req.body);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        if let Some(n) = req.header("content-length") {
            out.extend_from_slice(format!("content-length: {n}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&req.body);
    }
    write.write_all(&out).await?;
    let head = req.start.starts_with("HEAD ");
    read_message(&mut BufReader::new(read), head, true)
        .await?
        .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

/// Serve one client connection, a request at a time.
async fn serve(conn: TcpStream, plan: Arc<Plan>) {
    let (read, mut write) = conn.into_split();
    let mut read = BufReader::new(read);
    loop {
        let req = match read_message(&mut read, false, false).await {
            Ok(Some(r)) => r,
            _ => return,
        };
        plan.requests.fetch_add(1, Ordering::Relaxed);
        let head_request = req.start.starts_with("HEAD ");
        let fault = plan.draw();
        let answer = match fault {
            Some(Fault::SlowDown) => {
                let e = s3_error(
                    "503 Slow Down",
                    "SlowDown",
                    "Please reduce your request rate.",
                );
                if write.write_all(&e).await.is_err() {
                    return;
                }
                continue;
            }
            Some(Fault::ServerError) => {
                let e = s3_error(
                    "500 Internal Server Error",
                    "InternalError",
                    "We encountered an internal error. Please try again.",
                );
                if write.write_all(&e).await.is_err() {
                    return;
                }
                continue;
            }
            Some(Fault::Reset) => {
                let conn = read.into_inner().reunite(write).unwrap();
                let _ = conn.set_zero_linger();
                return;
            }
            _ => match forward(&plan, &req).await {
                Ok(a) => a,
                Err(_) => return,
            },
        };
        if fault == Some(Fault::Stall) {
            tokio::time::sleep(plan.stall).await;
        }
        let mut out = answer.head_without_framing().into_bytes();
        if fault == Some(Fault::ShortBody) && (head_request || answer.body.is_empty()) {
            // Nothing to cut short (S3 answers a PUT or a DELETE with an
            // empty body): no fault after all.
            plan.injected[Fault::ShortBody.index()].fetch_sub(1, Ordering::Relaxed);
        } else if fault == Some(Fault::ShortBody) {
            // Announce the whole body, send half of it, and close.
            let announced = answer.body.len();
            out.extend_from_slice(format!("content-length: {announced}\r\n\r\n").as_bytes());
            out.extend_from_slice(&answer.body[..answer.body.len() / 2]);
            let _ = write.write_all(&out).await;
            let _ = write.shutdown().await;
            return;
        }
        if head_request {
            if let Some(n) = answer.header("content-length") {
                out.extend_from_slice(format!("content-length: {n}\r\n").as_bytes());
            }
        } else {
            out.extend_from_slice(format!("content-length: {}\r\n", answer.body.len()).as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&answer.body);
        if write.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// The game solved through the proxy: smaller than 3x3 to 256 (3878
/// tasks, some 17,000 requests, over ten minutes at 10% faults on two
/// cores), 337 tasks and some 2,600 requests.
const GAME: [&str; 4] = ["--board", "3", "--target", "32"];

/// How long a stalled answer is held, and the job's stall timeout.
const STALL: Duration = Duration::from_secs(2);
const STALL_TIMEOUT: &str = "0.5";

/// `solve --json` of [`GAME`] through `proxy` into `s3://jobs/<prefix>`,
/// with a short stall timeout and `retry_timeout`; its exit status, JSON
/// (if any), stderr and wall time.
fn solve_through(
    s3: &S3Server,
    proxy: &FaultyProxy,
    prefix: &str,
    retry_timeout: &str,
) -> (bool, Option<serde_json::Value>, String, Duration) {
    let t0 = Instant::now();
    let out = s3
        .command_via(proxy.port())
        .arg("solve")
        .args(GAME)
        .args(CHUNKS)
        .args(["--threads", "2"])
        .args(["--store", &format!("s3://{BUCKET}/{prefix}"), "--json"])
        .env("SOLVE2048_S3_STALL_TIMEOUT", STALL_TIMEOUT)
        .env("SOLVE2048_S3_RETRY_TIMEOUT", retry_timeout)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).ok();
    (out.status.success(), json, stderr, t0.elapsed())
}

#[test]
fn a_solve_through_a_faulty_s3_gets_the_clean_digest_and_counts_its_retries() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&str> = GAME.iter().chain(CHUNKS.iter()).copied().collect();
    let local = reference_of(&args);
    let s3 = S3Server::start(&dir.path().join("s3"));
    let proxy = FaultyProxy::start(s3.port(), 2048, 0.10, &Fault::ALL, STALL);
    let (ok, out, stderr, took) = solve_through(&s3, &proxy, "faulty", "120");
    assert!(ok, "solve through the faulty proxy failed: {stderr}");
    let out = out.expect("solve --json prints JSON");
    assert_same(&local, &out, &s3, "faulty");
    let injected: Vec<u64> = Fault::ALL.iter().map(|&f| proxy.injected(f)).collect();
    let r = &out["store_requests"]["total"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    let causes = &r["causes"];
    let retries: u64 = [
        "slow_down",
        "server_error",
        "reset",
        "timeout",
        "short_body",
    ]
    .iter()
    .map(|c| n(&causes[c]))
    .sum();
    let requests: u64 = ["get", "put", "list", "delete", "head"]
        .iter()
        .map(|op| n(&r["requests"][op]))
        .sum();
    eprintln!(
        "faulty S3: {} requests through the proxy, {requests} counted by the job, injected \
         [slow_down, server_error, reset, stall, short_body] = {injected:?}, retries {causes} \
         ({retries} in all, {:.1} s backing off), {:.1} s",
        proxy.requests(),
        r["backoff_seconds"].as_f64().unwrap(),
        took.as_secs_f64()
    );
    // Every fault was seen, and each cause was retried.
    for (f, &k) in Fault::ALL.iter().zip(&injected) {
        assert!(k > 0, "no {f:?} injected: {injected:?}");
    }
    for c in [
        "slow_down",
        "server_error",
        "reset",
        "timeout",
        "short_body",
    ] {
        assert!(n(&causes[c]) > 0, "no retry for {c}: {r}");
    }
    // The job counted every request the proxy saw but the last few, made
    // after its summary (the final status record, the lock's release).
    assert!(
        requests <= proxy.requests() && proxy.requests() <= requests + 5,
        "the job counted {requests} requests, the proxy saw {}",
        proxy.requests()
    );
    // Each fault costs a retry of its cause (a slow machine may add stalls
    // of its own), but for faults on those last requests, which the job's
    // counts cannot hold: at most one uncounted fault an uncounted request.
    let uncounted = proxy.requests() - requests;
    let retried = [
        n(&causes["slow_down"]),
        n(&causes["server_error"]),
        n(&causes["reset"]),
        n(&causes["timeout"]),
        n(&causes["short_body"]),
    ];
    let missing: u64 = (0..Fault::ALL.len())
        .map(|i| injected[i].saturating_sub(retried[i]))
        .sum();
    assert!(
        missing <= uncounted,
        "{missing} injected faults not retried ({retried:?} retried, {injected:?} injected \
         in the order of {:?}), more than the {uncounted} requests after the job's summary",
        Fault::ALL
    );
    assert!(r["backoff_seconds"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(
        n(&r["retries"]["get"])
            + n(&r["retries"]["put"])
            + n(&r["retries"]["list"])
            + n(&r["retries"]["delete"])
            + n(&r["retries"]["head"]),
        retries
    );
}

#[test]
fn a_store_that_keeps_failing_stops_the_job_naming_the_store_operation_and_cause() {
    let dir = tempfile::tempdir().unwrap();
    let s3 = S3Server::start(&dir.path().join("s3"));
    let proxy = FaultyProxy::start(s3.port(), 7, 1.0, &[Fault::SlowDown], Duration::ZERO);
    let (ok, _, stderr, took) = solve_through(&s3, &proxy, "dead", "3");
    assert!(!ok, "a job on a store that always fails succeeded");
    assert!(took < Duration::from_secs(60), "took {took:?} to give up");
    let line = stderr
        .lines()
        .find(|l| l.contains("failed") && l.contains("503 SlowDown") && !l.contains(" WARN "))
        .unwrap_or_else(|| panic!("no line names the cause: {stderr}"));
    eprintln!("the job stopped after {:.1} s: {line}", took.as_secs_f64());
    assert!(line.contains("store s3://jobs/dead:"), "{line}");
    assert!(
        [" get ", " put ", " list ", " head ", " delete "]
            .iter()
            .any(|op| line.contains(op)),
        "no operation named: {line}"
    );
    assert!(line.contains("SOLVE2048_S3_RETRY_TIMEOUT=3 s"), "{line}");
    // Every attempt failed: the job committed (and wrote) nothing.
    assert!(proxy.requests() >= 2, "{}", proxy.requests());
    assert_eq!(s3.commits("dead"), 0);
    assert!(s3.list("dead").is_empty(), "{:?}", s3.list("dead"));
}
