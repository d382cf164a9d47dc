//! Specifies survival of random crashes: a coordinator and three workers on
//! loopback, with at least 10 kill -9 of any of them chosen by a seeded
//! random generator (the seed is printed; `SOLVE2048_TEST_SEED` replays
//! it), each killed process started again at once. The job then finishes
//! with the embedded run's digest and byte-identical chunks, one copy of
//! each, and leaves no run behind.

use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::cli::{bin, chunk_objects, commits, free_port};
use crate::reference::solved;

const TOKEN: &str = "chaos-token-0123456789";
const GAME: [&str; 6] = ["--board", "3", "--target", "256", "--chunk-size", "20000"];
const LEASES: [&str; 4] = ["--lease-seconds", "2", "--heartbeat-seconds", "0.4"];
const KILLS: usize = 12;

/// splitmix64, seeded.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The processes of the cluster and how to start each again.
struct Cluster {
    dir: PathBuf,
    store: PathBuf,
    port: u16,
    /// Index 0 is the coordinator, 1..=3 the workers.
    procs: Vec<Child>,
    starts: usize,
}

impl Cluster {
    fn start(&mut self, i: usize) -> Child {
        self.starts += 1;
        let log = |ext: &str| {
            std::fs::File::create(self.dir.join(format!("p{i}-{}.{ext}", self.starts))).unwrap()
        };
        let mut c = bin();
        c.env("SOLVE2048_TOKEN", TOKEN).env_remove("SOLVE2048_LOG");
        if i == 0 {
            c.arg("coordinator")
                .args(GAME)
                .args(LEASES)
                .args(["--listen", &format!("127.0.0.1:{}", self.port), "--json"])
                .arg("--store")
                .arg(&self.store);
        } else {
            c.arg("worker")
                .args(["--coordinator", &format!("http://127.0.0.1:{}", self.port)])
                .args(["--threads", "1", "--slots", "1", "--give-up-after", "120"]);
        }
        c.stdout(log("out")).stderr(log("err")).spawn().unwrap()
    }

    /// The coordinator's last stdout.
    fn coordinator_out(&self) -> PathBuf {
        let mut last = None;
        for e in std::fs::read_dir(&self.dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if let Some(n) = name
                .strip_prefix("p0-")
                .and_then(|s| s.strip_suffix(".out"))
            {
                let n: usize = n.parse().unwrap();
                if last.as_ref().is_none_or(|(m, _)| n > *m) {
                    last = Some((n, p));
                }
            }
        }
        last.unwrap().1
    }
}

#[test]
fn ten_random_kill_9s_of_coordinator_and_workers_change_nothing() {
    let seed = std::env::var("SOLVE2048_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7u64);
    eprintln!("chaos seed {seed} (SOLVE2048_TEST_SEED replays it)");
    let mut rng = Rng(seed);
    let clean = solved(&GAME);
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster {
        dir: dir.path().to_path_buf(),
        store: dir.path().join("store"),
        port: free_port(),
        procs: Vec::new(),
        starts: 0,
    };
    for i in 0..4 {
        let p = c.start(i);
        c.procs.push(p);
    }
    let t0 = Instant::now();
    while commits(&c.store, "") < 20 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut kills = Vec::new();
    while kills.len() < KILLS {
        // 0.2 to 1.5 s between kills.
        std::thread::sleep(Duration::from_millis(200 + rng.next() % 1300));
        if c.procs[0].try_wait().unwrap().is_some() {
            break; // the job ended before every kill landed
        }
        let i = (rng.next() % 4) as usize;
        if c.procs[i].try_wait().unwrap().is_none() {
            c.procs[i].kill().unwrap(); // SIGKILL
        }
        c.procs[i].wait().unwrap();
        kills.push(i);
        let p = c.start(i);
        c.procs[i] = p;
    }
    eprintln!("killed (0: coordinator, 1-3: workers): {kills:?}");
    assert!(
        kills.len() >= 10,
        "the job ended after {} kills",
        kills.len()
    );
    assert!(kills.contains(&0), "the coordinator was never killed");
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = c.procs[0].try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the job never finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(c.coordinator_out().with_extension("err")).unwrap();
    assert!(status.success(), "the last coordinator failed: {err}");
    for w in &mut c.procs[1..] {
        let t0 = Instant::now();
        while w.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = w.kill();
        let _ = w.wait();
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(c.coordinator_out()).unwrap()).unwrap();
    assert_eq!(summary["digest"], clean.summary["digest"]);
    assert_eq!(summary["states"], clean.summary["states"]);
    // chunk_objects fails on two copies of one output.
    let (a, b) = (chunk_objects(&clean.store), chunk_objects(&c.store));
    assert!(a.len() == b.len() && a.keys().eq(b.keys()));
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs");
    }
    for leftover in ["runs", "requests", "responses"] {
        assert!(!c.store.join(leftover).exists(), "{leftover}/ left behind");
    }
}
