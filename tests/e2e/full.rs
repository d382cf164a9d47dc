//! Specifies a store that fills up mid-run (a full disk or an S3 quota):
//! - the job stops with an error naming the object it could not write and
//!   the cause;
//! - nothing committed is lost: `verify` finds every object sound;
//! - the same job once there is room again finishes with the digest and
//!   the chunks of an undisturbed run.
//!
//! The job runs in this process as `solve` runs it (a coordinator on a
//! loopback port and one worker sharing its store), on a store wrapped in
//! [`FillsUp`] when it is made: puts fail once half the bytes of a whole
//! solve were written.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use solve2048_coordinator::{
    serve_job, CoordinatorError, LeaseConfig, Progress, Records, ServerConfig, Summary,
};
use solve2048_core::task::JobSpec;
use solve2048_store::fault::FillsUp;
use solve2048_store::{Access, Store};
use solve2048_worker::{run_agent, AgentConfig};

use crate::cli::{bin, chunk_objects};
use crate::reference::solved;

const ARGS: [&str; 6] = ["--board", "3", "--target", "256", "--chunk-size", "20000"];

/// Bytes of every file under `dir`.
fn size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                total += e.metadata().unwrap().len();
            }
        }
    }
    total
}

/// The job a solved store holds.
fn job_of(store: &Path) -> JobSpec {
    let store = Store::open(store.to_str().unwrap(), Access::ReadOnly).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let manifest = rt.block_on(Records::new(store).manifest()).unwrap();
    manifest.expect("the reference holds a job").job
}

/// Run `job` on `store` as `solve` does: a coordinator on a loopback port
/// and one worker in this process, sharing `store`. The runtime ends with
/// the job, so nothing of it writes afterwards.
fn run(store: Store, job: JobSpec) -> Result<Summary, CoordinatorError> {
    const TOKEN: &str = "full-store-token-0123456789";
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let config = ServerConfig {
            job,
            store: store.shared_location(),
            lease: LeaseConfig {
                ttl: Duration::from_secs(5),
                heartbeat: Duration::from_secs(1),
            },
            max_attempts: 3,
            token: TOKEN.into(),
            tls: None,
            take_over: false,
            repair: false,
            status_every: Duration::from_secs(5),
        };
        let agent = AgentConfig {
            coordinator: url,
            token: TOKEN.into(),
            tls_ca: None,
            threads: 2,
            slots: 2,
            name: "full-store-test".into(),
            cache: None,
            give_up_after: Duration::from_secs(30),
            drain: Duration::ZERO,
            task_budget: 1 << 30,
            store: Some(store.clone()),
        };
        let worker = tokio::spawn(run_agent(agent, std::future::pending()));
        let records = Records::new(store);
        let result = serve_job(
            records,
            listener,
            None,
            config,
            &|_: &Progress| {},
            std::future::pending(),
        );
        let result = result.await;
        worker.abort();
        result
    })
}

/// `e` and its causes, one after another.
fn chain(e: &dyn Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text += &format!(": {c}");
        cause = c.source();
    }
    text
}

#[test]
fn a_store_that_fills_up_stops_the_job_cleanly_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let clean = solved(&ARGS);
    let job = job_of(&clean.store);
    let path = dir.path().join("full");
    let location = path.to_str().unwrap();
    let quota = size(&clean.store) / 2;
    let full = Store::open(location, Access::ReadWrite)
        .unwrap()
        .wrapped(|inner| Arc::new(FillsUp::new(inner, quota)));
    let err = run(full, job.clone()).expect_err("a full store stops the job");
    let err = chain(&err);
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("cannot write "), "{err}");
    assert!(
        err.contains(".chunk") || err.contains(".json") || err.contains(".runs"),
        "the object is not named: {err}"
    );
    assert!(!path.join("summary.json").exists());
    // What was committed is whole.
    let v = bin()
        .args(["verify", "--json", "--store"])
        .arg(&path)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(report["ok"], true, "{report}");
    assert!(report["committed_tasks"].as_u64().unwrap() > 0, "{report}");
    // Room again: the same job finishes.
    let roomy = Store::open(location, Access::ReadWrite).unwrap();
    let resumed = run(roomy, job).unwrap();
    assert_eq!(resumed.digest, clean.summary["digest"].as_str().unwrap());
    assert!(resumed.tasks_skipped > 0);
    let (a, b) = (chunk_objects(&clean.store), chunk_objects(&path));
    assert!(a.len() == b.len() && a.keys().eq(b.keys()));
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs after the resume");
    }
}
