//! A coordinator and worker processes on loopback: the same results as the
//! embedded solve, surviving kill -9 of a worker and of the coordinator, and
//! refusing wrong tokens and a second coordinator.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{bin, chunk_objects, commits, free_port};
use crate::reference::solved;

const TOKEN: &str = "test-token-0123456789";
const GAME: [&str; 4] = ["--board", "3", "--target", "256"];
const CHUNKS: [&str; 2] = ["--chunk-size", "20000"];
/// A game a worker solves in a few seconds, for the tests whose job only
/// has to end.
const SMALL_GAME: [&str; 4] = ["--board", "3", "--target", "64"];
/// Short leases, so a killed worker's task is re-leased quickly.
const LEASES: [&str; 4] = ["--lease-seconds", "2", "--heartbeat-seconds", "0.4"];

fn with_token(mut c: Command, token: &str) -> Command {
    c.env("SOLVE2048_TOKEN", token).env_remove("SOLVE2048_LOG");
    c
}

/// A child process whose stdout and stderr are read as it writes them, so
/// it never blocks on a full pipe (a coordinator's `--json` summary alone
/// can exceed a pipe's buffer).
struct Proc {
    child: Child,
    out: std::thread::JoinHandle<String>,
    err: std::thread::JoinHandle<String>,
}

impl Proc {
    fn spawn(mut c: Command) -> Proc {
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let drain = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = r.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let out = drain(Box::new(child.stdout.take().unwrap()));
        let err = drain(Box::new(child.stderr.take().unwrap()));
        Proc { child, out, err }
    }

    fn id(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reap it.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

fn coordinator(store: &Path, port: u16, extra: &[&str]) -> Proc {
    coordinator_leasing(&GAME, store, port, &LEASES, extra)
}

/// A coordinator of `game` with lease timings `leases` (none: the
/// defaults).
fn coordinator_leasing(
    game: &[&str],
    store: &Path,
    port: u16,
    leases: &[&str],
    extra: &[&str],
) -> Proc {
    let mut c = with_token(bin(), TOKEN);
    c.arg("coordinator")
        .args(game)
        .args(CHUNKS)
        .args(leases)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--store")
        .arg(store)
        .arg("--json")
        .args(extra);
    Proc::spawn(c)
}

fn worker(port: u16, token: &str) -> Proc {
    let mut c = with_token(bin(), token);
    c.arg("worker")
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .args(["--threads", "1", "--slots", "1", "--give-up-after", "60"]);
    Proc::spawn(c)
}

/// `status --coordinator ... --json` against the coordinator on `port`.
fn live_status(port: u16) -> std::process::Output {
    with_token(bin(), TOKEN)
        .args([
            "status",
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
            "--json",
        ])
        .output()
        .unwrap()
}

/// Wait for a child with a deadline; returns (success, stdout, stderr).
fn finish(mut p: Proc, limit: Duration) -> (bool, String, String) {
    let t0 = Instant::now();
    loop {
        if let Some(status) = p.child.try_wait().unwrap() {
            let out = p.out.join().unwrap();
            let err = p.err.join().unwrap();
            return (status.success(), out, err);
        }
        if t0.elapsed() > limit {
            p.kill();
            let err = p.err.join().unwrap();
            panic!("process still running after {limit:?}; its stderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for_commits(store: &Path, n: usize) {
    let t0 = Instant::now();
    while commits(store, "") < n {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The record of the coordinator's last `status.json` (a checksummed
/// record: `{"xxh3": .., "record": ..}`).
fn status_json(store: &Path) -> serde_json::Value {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join("status.json")).unwrap()).unwrap();
    let record = doc["record"].clone();
    assert!(record.is_object(), "status.json holds no record: {doc}");
    record
}

/// The embedded solve of the same job, for reference (shared by the tests).
fn reference() -> (serde_json::Value, std::path::PathBuf) {
    let args: Vec<&str> = GAME.iter().chain(CHUNKS.iter()).copied().collect();
    let r = solved(&args);
    (r.summary.clone(), r.store.clone())
}

fn assert_same_results(
    a: &serde_json::Value,
    a_store: &Path,
    b: &serde_json::Value,
    b_store: &Path,
) {
    assert_eq!(a["digest"], b["digest"]);
    assert_eq!(a["states"], b["states"]);
    assert_eq!(a["start_value"], b["start_value"]);
    let (x, y) = (chunk_objects(a_store), chunk_objects(b_store));
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
    for (k, v) in &x {
        assert!(v == &y[k], "{k} differs");
    }
}

fn metrics(port: u16) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn three_workers_match_the_embedded_solve_and_report_status_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let (embedded, embedded_store) = reference();
    let store = dir.path().join("cluster");
    let (port, metrics_port) = (free_port(), free_port());
    let coord = coordinator(
        &store,
        port,
        &["--metrics", &format!("127.0.0.1:{metrics_port}")],
    );
    let workers: Vec<Proc> = (0..3).map(|_| worker(port, TOKEN)).collect();
    wait_for_commits(&store, 200);
    // Live status, while it runs.
    let out = live_status(port);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let live: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(live["game"], "3x3-to-256");
    assert_eq!(live["workers"].as_array().unwrap().len(), 3);
    let m = metrics(metrics_port);
    assert!(m.starts_with("HTTP/1.1 200"), "{m}");
    assert!(m.contains("solve2048_workers_alive 3"), "{m}");
    assert!(m.contains("solve2048_tasks{state=\"done\"}"), "{m}");
    let (ok, stdout, stderr) = finish(coord, Duration::from_secs(300));
    assert!(ok, "coordinator failed: {stderr}");
    for w in workers {
        let (ok, _, stderr) = finish(w, Duration::from_secs(30));
        assert!(ok, "worker failed: {stderr}");
    }
    let cluster: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_same_results(&embedded, &embedded_store, &cluster, &store);
    // Offline status and chunks, from the store alone.
    let out = bin()
        .args(["status", "--json", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let offline: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(offline["status"]["state"], "done", "{offline}");
    assert_eq!(offline["status"]["game"], "3x3-to-256");
    assert_eq!(offline["status"]["start_value"], cluster["start_value"]);
    assert_eq!(offline["coordinator_alive"], false, "{offline}");
    assert_eq!(
        offline["lock"]["running"], false,
        "stopped cleanly: {offline}"
    );
    let text = String::from_utf8_lossy(
        &bin()
            .args(["status", "--store"])
            .arg(&store)
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    assert!(text.contains("the job is finished"), "{text}");
    assert!(
        !text.contains(" yes "),
        "no worker of a finished job is alive: {text}"
    );
    let out = bin()
        .args(["chunks", "--store"])
        .arg(&store)
        .args(["--sum", "40", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["state"] == "done" && r["sum"] == 40));
}

/// With the default lease timings: a worker killed holding a task is
/// silent, then lost within a few seconds (not the 30 s leases once were),
/// its task going to another worker, and `status` says so.
#[test]
fn a_worker_killed_mid_task_is_lost_within_seconds_and_its_task_re_leased() {
    let dir = tempfile::tempdir().unwrap();
    let (embedded, embedded_store) = reference();
    let store = dir.path().join("cluster");
    let port = free_port();
    let coord = coordinator_leasing(&GAME, &store, port, &[], &[]);
    let mut victim = worker(port, TOKEN);
    // Let the victim alone run a few tasks, then freeze it (SIGSTOP) and ask
    // the coordinator whether it holds a lease: frozen, it cannot finish
    // one, so the answer stays true until the kill. Tasks take milliseconds,
    // so killing without freezing first could land between two leases.
    let signal = |sig: &str| {
        let ok = Command::new("kill")
            .args([sig, &victim.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig} failed");
    };
    let status_now = || -> Option<serde_json::Value> {
        let out = live_status(port);
        out.status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).unwrap())
    };
    let t0 = Instant::now();
    let victim_id = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the worker never held a task"
        );
        std::thread::sleep(Duration::from_millis(10));
        match status_now() {
            Some(s) if s["counters"]["tasks_run"].as_u64().unwrap() > 20 => {}
            _ => continue,
        }
        signal("-STOP");
        let holding = status_now().and_then(|s| {
            s["workers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| !w["tasks"].as_array().unwrap().is_empty())
                .map(|w| w["id"].as_str().unwrap().to_string())
        });
        if let Some(id) = holding {
            break id;
        }
        signal("-CONT");
    };
    victim.kill(); // SIGKILL
    let killed = Instant::now();
    let survivors: Vec<Proc> = (0..2).map(|_| worker(port, TOKEN)).collect();
    // Silent first (missed heartbeats), then lost: its lease lapsed.
    let mut seen = Vec::new();
    let lost_after = loop {
        let s = status_now().expect("the coordinator answers");
        let w = s["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == victim_id.as_str())
            .unwrap()
            .clone();
        let health = w["health"].as_str().unwrap().to_string();
        if seen.last() != Some(&health) {
            seen.push(health.clone());
        }
        if health == "lost" {
            assert!(w["tasks"].as_array().unwrap().is_empty(), "{w}");
            assert!(
                s["counters"]["leases_expired"].as_u64().unwrap() >= 1,
                "{s}"
            );
            break killed.elapsed();
        }
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "the killed worker is still {health}: {w}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    println!("the killed worker: {seen:?}, lost {lost_after:?} after the kill");
    assert!(seen.contains(&"silent".to_string()), "{seen:?}");
    assert!(
        lost_after < Duration::from_secs(7),
        "lost only after {lost_after:?}"
    );
    let out = with_token(bin(), TOKEN)
        .args([
            "status",
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(victim_id.as_str()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" lost "), "{line}");
    let (ok, stdout, stderr) = finish(coord, Duration::from_secs(300));
    assert!(ok, "coordinator failed: {stderr}");
    for w in survivors {
        assert!(finish(w, Duration::from_secs(30)).0);
    }
    let cluster: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_same_results(&embedded, &embedded_store, &cluster, &store);
    let counters = &status_json(&store)["counters"];
    assert!(
        counters["leases_expired"].as_u64().unwrap() >= 1,
        "{counters}"
    );
}

#[test]
fn a_coordinator_killed_and_restarted_recomputes_nothing_committed() {
    let dir = tempfile::tempdir().unwrap();
    let (embedded, embedded_store) = reference();
    let store = dir.path().join("cluster");
    let port = free_port();
    let mut coord = coordinator(&store, port, &[]);
    let workers: Vec<Proc> = (0..2).map(|_| worker(port, TOKEN)).collect();
    wait_for_commits(&store, 600);
    coord.kill(); // SIGKILL
                  // Workers cannot commit without a coordinator: this count is final.
    std::thread::sleep(Duration::from_millis(300));
    let committed = commits(&store, "") as u64;
    let coord = coordinator(&store, port, &[]);
    let (ok, stdout, stderr) = finish(coord, Duration::from_secs(300));
    assert!(ok, "restarted coordinator failed: {stderr}");
    for w in workers {
        let (ok, _, stderr) = finish(w, Duration::from_secs(30));
        assert!(ok, "worker failed: {stderr}");
    }
    let resumed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_same_results(&embedded, &embedded_store, &resumed, &store);
    assert_eq!(
        resumed["tasks_skipped"].as_u64().unwrap(),
        committed,
        "every committed task was skipped, none recomputed"
    );
    assert_eq!(
        resumed["tasks_skipped"].as_u64().unwrap() + resumed["tasks_run"].as_u64().unwrap(),
        embedded["tasks_run"].as_u64().unwrap()
    );
}

#[test]
fn wrong_tokens_and_a_second_coordinator_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("cluster");
    let port = free_port();
    let coord = coordinator_leasing(&SMALL_GAME, &store, port, &LEASES, &[]);
    // Wait until it serves.
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ok, _, stderr) = finish(worker(port, "wrong-token"), Duration::from_secs(30));
    assert!(!ok && stderr.contains("missing or wrong token"), "{stderr}");
    assert!(
        !stderr.contains("wrong-token"),
        "the token leaked: {stderr}"
    );
    let out = with_token(bin(), "wrong-token")
        .args([
            "status",
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing or wrong token"));
    let out = bin()
        .env_remove("SOLVE2048_TOKEN")
        .args([
            "worker",
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no token: set SOLVE2048_TOKEN"));
    // A second coordinator on the same store is refused while the first lives.
    let second = coordinator_leasing(&SMALL_GAME, &store, free_port(), &LEASES, &[]);
    let (ok, _, stderr) = finish(second, Duration::from_secs(30));
    assert!(
        !ok && stderr.contains("in use by a running coordinator"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("serving on"),
        "said it serves, then refused: {stderr}"
    );
    // The first still works: let one worker finish the job.
    assert!(finish(worker(port, TOKEN), Duration::from_secs(300)).0);
    let (ok, _, stderr) = finish(coord, Duration::from_secs(60));
    assert!(ok, "{stderr}");
}
