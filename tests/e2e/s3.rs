//! The same jobs through a real S3 server on loopback: a coordinator with two
//! workers, a coordinator killed and restarted, and the server itself stopped
//! and restarted in the middle of a run. Results must equal a local solve
//! byte for byte.
//!
//! `SOLVE2048_S3_SERVER` picks the server: `s3s-fs` (the default, installed
//! by `scripts/install-s3s-fs.sh`; `.ci/run` runs it) or `garage` (Garage in
//! single-node mode; `scripts/s3-suite-garage.sh` runs it). The tests see the
//! server only through the S3 API, so one code path serves both.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{BackoffConfig, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};

use crate::cli::{bin, chunk_objects, command_json, free_port, logical_chunks};
use crate::reference::solved;

/// Credentials in the shape Garage requires (`GK` + 24 hex, 64 hex), which
/// s3s-fs accepts as well.
const KEY: &str = "GK2048a11ce5ec7e7000000001";
const SECRET: &str = "dd3238e70c2f459cd2de3d7499b3e2d248b60eccf552710325ca051fe132fc73";
const REGION: &str = "us-east-1";
pub(crate) const BUCKET: &str = "jobs";
const TOKEN: &str = "s3-test-token-0123456789";
/// The game the suite solves through S3: 3x3 to 128 at 20,000 states a
/// chunk, 2,102 tasks and some 20,000 requests (3x3 to 256, 4,923 tasks,
/// took each of the suite's slowest tests about five minutes of the CI
/// run's two cores).
const GAME: [&str; 4] = ["--board", "3", "--target", "128"];
pub(crate) const CHUNKS: [&str; 2] = ["--chunk-size", "20000"];
const LEASES: [&str; 4] = ["--lease-seconds", "10", "--heartbeat-seconds", "0.5"];

/// The S3 server implementations the suite runs against.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// s3s-fs: each object a file under a directory.
    S3sFs,
    /// Garage in single-node mode, with a default key and bucket.
    Garage,
}

impl Kind {
    fn from_env() -> Kind {
        match std::env::var("SOLVE2048_S3_SERVER").as_deref() {
            Err(_) | Ok("") | Ok("s3s-fs") => Kind::S3sFs,
            Ok("garage") => Kind::Garage,
            Ok(other) => panic!("SOLVE2048_S3_SERVER={other}: use s3s-fs or garage"),
        }
    }

    /// The program, overridable by `S3S_FS` or `GARAGE`.
    fn program(self) -> String {
        let (var, name) = match self {
            Kind::S3sFs => ("S3S_FS", "s3s-fs"),
            Kind::Garage => ("GARAGE", "garage"),
        };
        std::env::var(var).unwrap_or_else(|_| name.into())
    }

    fn install_hint(self) -> &'static str {
        match self {
            Kind::S3sFs => "run scripts/install-s3s-fs.sh (or set S3S_FS)",
            Kind::Garage => "run scripts/s3-suite-garage.sh (or set GARAGE)",
        }
    }
}

/// An S3 server on a loopback port, over a directory it owns, and a client
/// that reads back what the jobs wrote.
pub(crate) struct S3Server {
    kind: Kind,
    root: PathBuf,
    port: u16,
    child: Option<Child>,
    client: AmazonS3,
    runtime: tokio::runtime::Runtime,
}

impl S3Server {
    pub(crate) fn start(root: &Path) -> S3Server {
        let kind = Kind::from_env();
        let port = free_port();
        match kind {
            Kind::S3sFs => std::fs::create_dir_all(root.join("fs").join(BUCKET)).unwrap(),
            Kind::Garage => write_garage_config(root, port, free_port()),
        }
        // Few, short retries: a failure to read back should show, not hang.
        let retry = RetryConfig {
            backoff: BackoffConfig::default(),
            max_retries: 3,
            retry_timeout: Duration::from_secs(10),
        };
        let client = AmazonS3Builder::new()
            .with_endpoint(format!("http://127.0.0.1:{port}"))
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_region(REGION)
            .with_access_key_id(KEY)
            .with_secret_access_key(SECRET)
            .with_bucket_name(BUCKET)
            .with_retry(retry)
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut s = S3Server {
            kind,
            root: root.to_path_buf(),
            port,
            child: None,
            client,
            runtime,
        };
        s.resume();
        s
    }

    /// (Re)start the server on the same port and directory, and wait until
    /// the bucket takes a write.
    fn resume(&mut self) {
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.root.join("server.log"))
            .unwrap();
        let mut c = Command::new(self.kind.program());
        match self.kind {
            Kind::S3sFs => {
                c.args(["--host", "127.0.0.1", "--port", &self.port.to_string()])
                    .args(["--access-key", KEY, "--secret-key", SECRET])
                    .arg(self.root.join("fs"));
            }
            Kind::Garage => {
                c.arg("-c")
                    .arg(self.root.join("garage.toml"))
                    .args(["server", "--single-node", "--default-bucket"])
                    .env("GARAGE_DEFAULT_ACCESS_KEY", KEY)
                    .env("GARAGE_DEFAULT_SECRET_KEY", SECRET)
                    .env("GARAGE_DEFAULT_BUCKET", BUCKET)
                    .env("RUST_LOG", "garage=info");
            }
        }
        let child = c
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {} ({e}): {}",
                    self.kind.program(),
                    self.kind.install_hint()
                )
            });
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let probe = ObjectPath::from("ready-probe");
        let t0 = Instant::now();
        loop {
            let put = self
                .client
                .put(&probe, PutPayload::from_static(b"ok".as_slice()));
            let err = match self.runtime.block_on(put) {
                Ok(_) => return,
                Err(e) => e,
            };
            let exited = self.child.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && t0.elapsed() < Duration::from_secs(60),
                "{:?} did not become ready ({exited:?}; last error {err}); its log:\n{}",
                self.kind,
                std::fs::read_to_string(self.root.join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// Its port on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// A command with the standard AWS settings for this server.
    fn command(&self) -> Command {
        self.command_via(self.port)
    }

    /// A command with the standard AWS settings for this server, reaching
    /// it through `port` on loopback (a proxy in front of it).
    pub(crate) fn command_via(&self, port: u16) -> Command {
        let mut c = bin();
        c.env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env("AWS_REGION", REGION)
            .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "false")
            .env("SOLVE2048_TOKEN", TOKEN)
            .env("SOLVE2048_LOG", "info");
        c
    }

    /// The names (relative to `prefix`) of the objects under `prefix`.
    pub(crate) fn list(&self, prefix: &str) -> Vec<String> {
        let base = ObjectPath::from(prefix);
        let metas: Vec<_> = self
            .runtime
            .block_on(self.client.list(Some(&base)).try_collect::<Vec<_>>())
            .unwrap();
        metas
            .into_iter()
            .map(|m| {
                let name = m.location.as_ref();
                name.strip_prefix(&format!("{prefix}/"))
                    .unwrap_or_else(|| panic!("{name} is not under {prefix}"))
                    .to_string()
            })
            .collect()
    }

    /// The commit records under `prefix`.
    pub(crate) fn commits(&self, prefix: &str) -> usize {
        self.list(&format!("{prefix}/commits")).len()
    }

    fn wait_for_commits(&self, prefix: &str, n: usize) {
        let t0 = Instant::now();
        while self.commits(prefix) < n {
            assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The chunk objects under `prefix`, downloaded, named as
    /// `cli::chunk_objects` names a local store's.
    fn chunk_objects(&self, prefix: &str) -> BTreeMap<String, Vec<u8>> {
        let names = self.list(prefix);
        let objects = names
            .into_iter()
            .filter(|n| n.ends_with(".chunk"))
            .map(|name| {
                let path = ObjectPath::from(format!("{prefix}/{name}"));
                let bytes = self.runtime.block_on(async {
                    self.client.get(&path).await.unwrap().bytes().await.unwrap()
                });
                (name, bytes.to_vec())
            });
        logical_chunks(objects)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A one-node Garage configuration under `root`: S3 on `port`, RPC on
/// `rpc_port`, both on loopback.
fn write_garage_config(root: &Path, port: u16, rpc_port: u16) {
    std::fs::create_dir_all(root).unwrap();
    let config = format!(
        r#"metadata_dir = "{meta}"
data_dir = "{data}"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc_port}"
rpc_public_addr = "127.0.0.1:{rpc_port}"
rpc_secret = "572c84a8b5ec03471c0c105985064d4e61d2046f9c614d62400329a5b9c7830f"

[s3_api]
s3_region = "{REGION}"
api_bind_addr = "127.0.0.1:{port}"
"#,
        meta = root.join("meta").display(),
        data = root.join("data").display(),
    );
    std::fs::write(root.join("garage.toml"), config).unwrap();
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

/// The embedded solve on a local store (shared by the tests): the reference
/// every S3 run must equal.
fn local_reference() -> (serde_json::Value, BTreeMap<String, Vec<u8>>) {
    let args: Vec<&str> = GAME.iter().chain(CHUNKS.iter()).copied().collect();
    reference_of(&args)
}

/// The embedded solve of `args` on a local store: its summary and chunk
/// objects.
pub(crate) fn reference_of(args: &[&str]) -> (serde_json::Value, BTreeMap<String, Vec<u8>>) {
    let r = solved(args);
    (r.summary.clone(), chunk_objects(&r.store))
}

/// The store of the local reference.
fn local_store() -> &'static Path {
    let args: Vec<&str> = GAME.iter().chain(CHUNKS.iter()).copied().collect();
    &solved(&args).store
}

/// Same digest, value and chunk objects, byte for byte.
pub(crate) fn assert_same(
    local: &(serde_json::Value, BTreeMap<String, Vec<u8>>),
    out: &serde_json::Value,
    s3: &S3Server,
    prefix: &str,
) {
    let (a, x) = local;
    assert_eq!(a["digest"], out["digest"]);
    assert_eq!(a["start_value"], out["start_value"]);
    let y = s3.chunk_objects(prefix);
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
    for (k, v) in x {
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
    let local = local_reference();
    let s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let coord = coordinator(&s3, "two-workers", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    let out = run_job(workers, coord);
    assert_same(&local, &out, &s3, "two-workers");
    // The solution is read straight from S3, and answers as the local one.
    let board = "2 2 . / . 4 . / . . .";
    let q = s3
        .command()
        .args([
            "query",
            "--store",
            "s3://jobs/two-workers",
            "--board",
            board,
            "--json",
        ])
        .output()
        .unwrap();
    assert!(q.status.success(), "{}", String::from_utf8_lossy(&q.stderr));
    let from_s3: serde_json::Value = serde_json::from_slice(&q.stdout).unwrap();
    let local_answer = command_json("query", local_store(), &["--board", board]);
    assert_eq!(from_s3, local_answer);
    assert!(from_s3["value"].as_f64().unwrap() > 0.0, "{from_s3}");
    let status = s3
        .command()
        .args(["status", "--store", "s3://jobs/two-workers", "--json"])
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["status"]["state"], "done", "{status}");
    assert_eq!(status["status"]["start_value"], out["start_value"]);
}

#[test]
fn a_coordinator_killed_on_s3_resumes_without_recomputing() {
    let dir = tempfile::tempdir().unwrap();
    let local = local_reference();
    let s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let mut coord = coordinator(&s3, "resume", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    s3.wait_for_commits("resume", 300);
    coord.kill().unwrap();
    coord.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let committed = s3.commits("resume") as u64;
    let coord = coordinator(&s3, "resume", port);
    let out = run_job(workers, coord);
    assert_same(&local, &out, &s3, "resume");
    assert_eq!(out["tasks_skipped"].as_u64().unwrap(), committed);
    assert_eq!(
        out["tasks_skipped"].as_u64().unwrap() + out["tasks_run"].as_u64().unwrap(),
        local.0["tasks_run"].as_u64().unwrap()
    );
}

#[test]
fn the_job_waits_out_an_s3_outage_and_finishes_identically() {
    let dir = tempfile::tempdir().unwrap();
    let local = local_reference();
    let mut s3 = S3Server::start(&dir.path().join("s3"));
    let port = free_port();
    let coord = coordinator(&s3, "outage", port);
    let workers = vec![worker(&s3, port), worker(&s3, port)];
    s3.wait_for_commits("outage", 300);
    s3.stop();
    std::thread::sleep(Duration::from_secs(3));
    s3.resume();
    let out = run_job(workers, coord);
    assert_same(&local, &out, &s3, "outage");
}
