//! The same jobs through a real S3 server on loopback (s3s-fs, installed by
//! `scripts/install-s3s-fs.sh`; `.ci/run` runs it): a coordinator with two
//! workers, a coordinator killed and restarted, and the server itself stopped
//! and restarted in the middle of a run. Results must equal a local solve
//! byte for byte (s3s-fs keeps each object as a file, so the chunks can be
//! compared directly).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{bin, chunk_objects, solve_json};

const KEY: &str = "solve2048-test-key";
const SECRET: &str = "solve2048-test-secret-do-not-log";
const BUCKET: &str = "jobs";
const TOKEN: &str = "s3-test-token-0123456789";
const GAME: [&str; 4] = ["--board", "3", "--target", "256"];
const CHUNKS: [&str; 2] = ["--chunk-size", "20000"];
const LEASES: [&str; 4] = ["--lease-seconds", "10", "--heartbeat-seconds", "0.5"];

/// An s3s-fs server on a loopback port, over a directory.
struct S3Server {
    root: PathBuf,
    port: u16,
    child: Option<Child>,
}

fn s3s_fs() -> String {
    std::env::var("S3S_FS").unwrap_or_else(|_| "s3s-fs".into())
}

impl S3Server {
    fn start(root: &Path) -> S3Server {
        std::fs::create_dir_all(root.join(BUCKET)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut s = S3Server {
            root: root.to_path_buf(),
            port,
            child: None,
        };
        s.resume();
        s
    }

    /// (Re)start the server on the same port and directory.
    fn resume(&mut self) {
        let child = Command::new(s3s_fs())
            .args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--access-key", KEY, "--secret-key", SECRET])
            .arg(&self.root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start s3s-fs ({e}): run scripts/install-s3s-fs.sh (or set S3S_FS)")
            });
        self.child = Some(child);
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "s3s-fs did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// A command with the standard AWS settings for this server.
    fn command(&self) -> Command {
        let mut c = bin();
        c.env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env("AWS_REGION", "us-east-1")
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "false")
            .env("SOLVE2048_TOKEN", TOKEN)
            .env("SOLVE2048_LOG", "info");
        c
    }

    /// Where the objects of `s3://jobs/<prefix>` lie on disk.
    fn dir(&self, prefix: &str) -> PathBuf {
        self.root.join(BUCKET).join(prefix)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn coordinator(s3: &S3Server, prefix: &str, port: u16) -> Child {
    s3.command()
        .arg("coordinator")
        .args(GAME)
        .args(CHUNKS)
        .args(LEASES)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--store", &format!("s3://{BUCKET}/{prefix}"), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn worker(s3: &S3Server, port: u16) -> Child {
    s3.command()
        .arg("worker")
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .args(["--threads", "1", "--give-up-after", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> (bool, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn commits(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("commits")).map_or(0, |r| r.count())
}

fn wait_for_commits(dir: &Path, n: usize) {
    let t0 = Instant::now();
    while commits(dir) < n {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn local_reference(dir: &Path) -> (serde_json::Value, PathBuf) {
    let store = dir.join("local");
    let args: Vec<&str> = GAME.iter().chain(CHUNKS.iter()).copied().collect();
    (solve_json(&store, &args), store)
}

fn assert_same(a: &serde_json::Value, a_dir: &Path, b: &serde_json::Value, b_dir: &Path) {
    assert_eq!(a["digest"], b["digest"]);
    assert_eq!(a["start_value"], b["start_value"]);
    let (x, y) = (chunk_objects(a_dir), chunk_objects(b_dir));
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
    for (k, v) in &x {
        assert!(v == &y[k], "{k} differs");
    }
}

/// Wait for the coordinator and workers; the secret must not be in any log.
fn run_job(workers: Vec<Child>, coord: Child) -> serde_json::Value {
    let (ok, stdout, stderr) = finish(coord);
    assert!(ok, "coordinator failed: {stderr}");
    assert!(
        !stderr.contains(SECRET),
        "the S3 secret leaked into the logs"
    );
    for w in workers {
        let (ok, _, stderr) = finish(w);
        assert!(ok, "worker failed: {stderr}");
        assert!(
            !stderr.contains(SECRET),
            "the S3 secret leaked into the logs"
        );
    }
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn two_workers_solve_through_s3_and_the_solution_answers_from_s3() {
    let dir = tempfile::tempdir().unwrap();
    let (local, local_dir) = local_reference(dir.path());
    let s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let coord = coordinator(&s3, "two-workers", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    let out = run_job(workers, coord);
    assert_same(&local, &local_dir, &out, &s3.dir("two-workers"));
    // The solution is read straight from S3.
    let q = s3
        .command()
        .args([
            "query",
            "--store",
            "s3://jobs/two-workers",
            "--board",
            "2 2 . / . . . / . . .",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stderr));
    let status = s3
        .command()
        .args(["status", "--store", "s3://jobs/two-workers"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&status.stdout).contains("done"));
}

#[test]
fn a_coordinator_killed_on_s3_resumes_without_recomputing() {
    let dir = tempfile::tempdir().unwrap();
    let (local, local_dir) = local_reference(dir.path());
    let s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let mut coord = coordinator(&s3, "resume", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    wait_for_commits(&s3.dir("resume"), 300);
    coord.kill().unwrap();
    coord.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let committed = commits(&s3.dir("resume")) as u64;
    let coord = coordinator(&s3, "resume", port);
    let out = run_job(workers, coord);
    assert_same(&local, &local_dir, &out, &s3.dir("resume"));
    assert_eq!(out["tasks_skipped"].as_u64().unwrap(), committed);
    assert_eq!(
        out["tasks_skipped"].as_u64().unwrap() + out["tasks_run"].as_u64().unwrap(),
        local["tasks_run"].as_u64().unwrap()
    );
}

#[test]
fn the_job_waits_out_an_s3_outage_and_finishes_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (local, local_dir) = local_reference(dir.path());
    let mut s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let coord = coordinator(&s3, "outage", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    wait_for_commits(&s3.dir("outage"), 300);
    s3.stop();
    std::thread::sleep(Duration::from_secs(3));
    s3.resume();
    let out = run_job(workers, coord);
    assert_same(&local, &local_dir, &out, &s3.dir("outage"));
}
