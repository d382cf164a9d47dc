//! Specifies how the binary behaves for the people who operate it:
//! - a worker refuses a malformed coordinator URL at once;
//! - a worker whose coordinator is unreachable logs each retry with the
//!   error, and stops at once on SIGTERM;
//! - output into a closed pipe (`play | head`, `status --json | head -c`)
//!   never panics;
//! - logs written to a file carry no ANSI colour codes;
//! - `status --store` tells a live coordinator from one stopped cleanly and
//!   from one killed, never shows a job without a coordinator as running,
//!   and refuses a directory that holds no job.

use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::cli::{bin, fails_with, free_port};
use crate::reference::solved;

#[test]
fn a_worker_refuses_a_bad_url_and_stops_on_sigterm_while_unreachable() {
    let out = bin()
        .env("SOLVE2048_TOKEN", "t0123456789")
        .args(["worker", "--coordinator", "not-a-url"])
        .output()
        .unwrap();
    fails_with(&out, "not a URL");
    fails_with(&out, "http://HOST:PORT");

    // Nothing listens on this port.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("worker.err");
    let mut child = bin()
        .env("SOLVE2048_TOKEN", "t0123456789")
        .env_remove("SOLVE2048_LOG")
        .args(["worker", "--give-up-after", "600", "--coordinator"])
        .arg(format!("http://127.0.0.1:{}", free_port()))
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if text.matches("coordinator unreachable").count() >= 2 {
            break text;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no retry logged: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        text.contains("refused"),
        "the retry does not say why: {text}"
    );
    assert!(
        !text.contains("\x1b["),
        "colour codes in a log file: {text:?}"
    );
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("the worker ignored SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}

/// `status --store`'s JSON and text.
fn stored_status(store: &std::path::Path) -> (serde_json::Value, String) {
    let run = |json: bool| {
        let mut c = bin();
        c.args(["status", "--store"]).arg(store);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    (serde_json::from_str(&run(true)).unwrap(), run(false))
}

/// Polls `status --store` until `done` holds of its JSON.
fn status_until(store: &std::path::Path, done: impl Fn(&serde_json::Value) -> bool) {
    let t0 = Instant::now();
    while !store.join("status.json").exists() || !done(&stored_status(store).0) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "{:?}",
            stored_status(store)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn status_from_the_store_tells_alive_from_stopped_from_dead() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    // A coordinator without workers: its job runs, and stays unfinished.
    let start = || {
        bin()
            .env("SOLVE2048_TOKEN", "t0123456789")
            .env_remove("SOLVE2048_LOG")
            .args(["coordinator", "--board", "3", "--target", "64", "--listen"])
            .arg(format!("127.0.0.1:{}", free_port()))
            .arg("--store")
            .arg(&store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut c = start();
    status_until(&store, |j| j["coordinator"] == "alive");
    let (j, text) = stored_status(&store);
    assert_eq!(j["status"]["state"], "running", "{j}");
    assert!(
        text.contains(&format!("coordinator alive: pid {}", c.id())),
        "{text}"
    );
    assert!(text.contains(": running, phase"), "{text}");

    let term = std::process::Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    c.wait().unwrap(); // interrupted: it exits with the signal's status
    let (j, text) = stored_status(&store);
    assert_eq!(
        (&j["coordinator"], &j["status"]["state"]),
        (&"stopped".into(), &"stopped".into()),
        "{j}"
    );
    assert!(text.contains("coordinator stopped cleanly"), "{text}");
    assert!(
        text.contains(": stopped, phase") && text.contains("ETA -"),
        "{text}"
    );

    let mut c = start();
    status_until(&store, |j| {
        j["coordinator"] == "alive" && j["status"]["state"] == "running"
    });
    c.kill().unwrap(); // SIGKILL: the lock stays taken
    c.wait().unwrap();
    let (j, text) = stored_status(&store);
    assert_eq!(
        (&j["coordinator"], &j["status"]["state"]),
        (&"dead".into(), &"stopped".into()),
        "{j}"
    );
    assert_eq!(j["lock"]["running"], true, "{j}");
    assert!(
        text.contains(&format!("coordinator dead: pid {}", c.id())),
        "{text}"
    );
    assert!(
        !text.contains("running,") && text.contains("ETA -"),
        "{text}"
    );

    // A directory that holds no job is no store.
    let out = bin()
        .args(["status", "--store"])
        .arg(dir.path())
        .output()
        .unwrap();
    fails_with(&out, "holds no solve2048 job");
}

#[test]
fn output_into_a_closed_pipe_never_panics() {
    let store = &solved(&["--board", "2", "--target", "16"]).store;
    let commands: [&[&str]; 4] = [
        &["play", "--seed", "1"],
        &["play", "--games", "200", "--json"],
        &["status", "--json"],
        &["chunks"],
    ];
    for args in commands {
        let mut child = bin()
            .args(args)
            .arg("--store")
            .arg(store)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command writes.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc_sigpipe()),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}

/// SIGPIPE's number on Linux.
fn libc_sigpipe() -> i32 {
    13
}
