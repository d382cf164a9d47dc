//! `deploy/slurm/solve2048.sbatch` on a real Slurm: a one-node cluster on
//! loopback (munged, slurmctld and slurmd from Debian's `slurm-wlm` and
//! `munge`, with a configuration generated in a temporary folder), the script
//! submitted for 3x3 to 512 with two worker steps, one worker step cancelled
//! mid-run with `scancel JOB.STEP`, and the job's end checked: it completes
//! with exit code 0 and the coordinator's summary holds the embedded run's
//! digest.
//!
//! The daemons run as root. Without Slurm (or as another user) the test says
//! so loudly and passes, unless `SOLVE2048_REQUIRE_SLURM` is set (`.ci/run`
//! installs Slurm and sets it), when it fails. Whatever happens, the guard
//! cancels the job and stops the daemons by their pid files.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::cli::{bin, free_port};
use crate::reference::solved;

/// The batch script under test.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/slurm/solve2048.sbatch")
}

/// The programs the test needs.
const PROGRAMS: [&str; 8] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "scancel",
    "scontrol",
    "sinfo",
];

/// `name` on the PATH or in the system's sbin folders (daemons live there
/// and a user's PATH may lack them).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why Slurm cannot run here, if it cannot.
fn missing() -> Option<String> {
    let absent: Vec<&str> = PROGRAMS
        .into_iter()
        .filter(|p| program(p).is_none())
        .collect();
    if !absent.is_empty() {
        return Some(format!(
            "{} not installed (apt-get install -y slurm-wlm munge)",
            absent.join(", ")
        ));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("the Slurm daemons of this test run as root".into());
    }
    None
}

/// Run `c`; its output, with a panic naming `what` unless it succeeds.
fn ok(mut c: Command, what: &str) -> Output {
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The contents of a file, or a note that it cannot be read (for messages).
fn file_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("({}: {e})", p.display()))
}

/// A one-node Slurm on loopback in a temporary folder. Dropping it cancels
/// the jobs it submitted and stops its daemons.
struct Slurm {
    dir: tempfile::TempDir,
    conf: PathBuf,
    jobs: Vec<String>,
}

impl Slurm {
    /// The daemons' pid files, in the order they are stopped.
    const PID_FILES: [&'static str; 3] = ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"];

    /// Start munged, slurmctld and slurmd; panics (with their logs) if the
    /// node does not come up idle.
    fn start() -> Slurm {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["munge", "spool", "state", "log"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let conf = d.join("slurm.conf");
        let slurm = Slurm {
            dir,
            conf,
            jobs: Vec::new(),
        };
        let d = slurm.dir.path().to_path_buf();
        // munged: its own key (1024 random bytes, mode 0400), socket and pid.
        let key = d.join("munge/munge.key");
        let mut bytes = vec![0u8; 1024];
        std::io::Read::read_exact(
            &mut std::fs::File::open("/dev/urandom").unwrap(),
            &mut bytes,
        )
        .unwrap();
        std::fs::write(&key, bytes).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let socket = d.join("munge/munge.socket");
        let mut munged = Command::new(program("munged").unwrap());
        munged
            .arg("--force")
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!(
                "--pid-file={}",
                d.join("munge/munged.pid").display()
            ))
            .arg(format!(
                "--log-file={}",
                d.join("munge/munged.log").display()
            ))
            .arg(format!(
                "--seed-file={}",
                d.join("munge/munged.seed").display()
            ));
        ok(munged, "munged");
        slurm.wait_for("munged's socket", Duration::from_secs(20), |_| {
            socket.exists()
        });

        let host = text(&ok(
            {
                let mut c = Command::new("hostname");
                c.arg("-s");
                c
            },
            "hostname -s",
        ))
        .trim()
        .to_string();
        let (ctld_port, slurmd_port) = (free_port(), free_port());
        let p = |name: &str| d.join(name).display().to_string();
        let config = format!(
            "ClusterName=s2048test\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={socket}\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             StateSaveLocation={state}\n\
             SlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\n\
             SlurmdPidFile={slurmd_pid}\n\
             SlurmctldLogFile={ctld_log}\n\
             SlurmdLogFile={slurmd_log}\n\
             SchedulerType=sched/backfill\n\
             ReturnToService=2\n\
             MpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=20000 State=UNKNOWN\n\
             PartitionName=solve Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("log/slurmctld.log"),
            slurmd_log = p("log/slurmd.log"),
        );
        std::fs::write(&slurm.conf, config).unwrap();
        for daemon in ["slurmctld", "slurmd"] {
            let mut c = Command::new(program(daemon).unwrap());
            c.arg("-f").arg(&slurm.conf).env("SLURM_CONF", &slurm.conf);
            let out = c.output().unwrap();
            assert!(
                out.status.success(),
                "{daemon} did not start: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                slurm.logs()
            );
        }
        slurm.wait_for("the node to be idle", Duration::from_secs(60), |s| {
            let out = s.cmd("sinfo").args(["-h", "-o", "%t"]).output().unwrap();
            out.status.success() && text(&out).trim() == "idle"
        });
        slurm
    }

    /// A Slurm client command of this cluster.
    fn cmd(&self, name: &str) -> Command {
        let mut c = Command::new(program(name).unwrap());
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// The daemons' logs, for failure messages.
    fn logs(&self) -> String {
        let d = self.dir.path();
        ["log/slurmctld.log", "log/slurmd.log", "munge/munged.log"]
            .iter()
            .map(|f| {
                format!(
                    "--- {f} (last lines):\n{}",
                    tail(&file_text(&d.join(f)), 30)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Poll `ready` every 200 ms; panics with the logs after `limit`.
    fn wait_for(&self, what: &str, limit: Duration, mut ready: impl FnMut(&Slurm) -> bool) {
        let t0 = Instant::now();
        while !ready(self) {
            assert!(
                t0.elapsed() < limit,
                "waited {limit:?} for {what}\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A job's fields from `scontrol show job -o` (`JobState`, `ExitCode`...).
    fn job(&self, id: &str) -> std::collections::BTreeMap<String, String> {
        let out = ok(
            {
                let mut c = self.cmd("scontrol");
                c.args(["show", "job", "-o", id]);
                c
            },
            "scontrol show job",
        );
        text(&out)
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// The job's steps as (step id, name), from `squeue --steps`.
    fn steps(&self, id: &str) -> Vec<(String, String)> {
        let out = self
            .cmd("squeue")
            .args(["--steps", "-h", "-j", id, "-o", "%i %j"])
            .output()
            .unwrap();
        text(&out)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(a, b)| (a.to_string(), b.trim().to_string()))
            .collect()
    }
}

/// The last `n` lines of `s`.
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether process `pid` still exists.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // The jobs first: slurmstepd outlives slurmd, so cancel them while
        // slurmctld still runs, and give their steps a moment to go.
        for id in &self.jobs {
            let _ = self.cmd("scancel").arg(id).output();
        }
        let t0 = Instant::now();
        while self
            .jobs
            .iter()
            .any(|id| !self.steps(id).is_empty() && t0.elapsed() < Duration::from_secs(15))
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        for file in Self::PID_FILES {
            let Some(pid) = std::fs::read_to_string(self.dir.path().join(file))
                .ok()
                .and_then(|s| s.trim().parse::<i32>().ok())
                .filter(|&p| p > 1)
            else {
                continue;
            };
            // SAFETY: kill has no memory preconditions; the pid is our daemon's.
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let t0 = Instant::now();
            while alive(pid) && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if alive(pid) {
                // SAFETY: as above.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Whether to run: false (after a loud message) when Slurm cannot run here
/// and none is required; panics when it is required.
fn slurm_available() -> bool {
    let Some(why) = missing() else {
        return true;
    };
    assert!(
        std::env::var_os("SOLVE2048_REQUIRE_SLURM").is_none(),
        "SOLVE2048_REQUIRE_SLURM is set but Slurm cannot run here: {why}"
    );
    // Straight to stderr: the harness captures eprintln! of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED: the Slurm test needs Slurm: {why}; set SOLVE2048_REQUIRE_SLURM=1 \
         to make this a failure ***\n"
    );
    false
}

/// A token file with `mode`.
fn token_file(dir: &Path, mode: u32) -> PathBuf {
    let f = dir.join(format!("token-{mode:o}"));
    std::fs::write(&f, "slurm-test-token-0123456789\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
    f
}

#[test]
fn sbatch_script_refuses_a_token_file_others_can_read() {
    // The checks come before any srun, so no Slurm is needed.
    let dir = tempfile::tempdir().unwrap();
    let run = |token: &Path| {
        Command::new("bash")
            .arg(script())
            .env("SLURM_JOB_ID", "7")
            .env("SOLVE2048_BIN", env!("CARGO_BIN_EXE_solve2048"))
            .env("SOLVE2048_TOKEN_FILE", token)
            .env("SOLVE2048_STORE", dir.path().join("store"))
            .output()
            .unwrap()
    };
    for mode in [0o644, 0o640, 0o604] {
        let out = run(&token_file(dir.path(), mode));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "mode {mode:o}: {err}");
        assert!(
            err.contains(&format!(
                "has mode 0{mode:o}; it must be readable by its owner only (chmod 600"
            )),
            "mode {mode:o}: {err}"
        );
    }
    let out = run(&dir.path().join("absent"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist or cannot be read"));
    // Outside a job it says so.
    let out = Command::new("bash")
        .arg(script())
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run it with sbatch"));
    assert!(!dir.path().join("store").exists(), "nothing ran");
}

#[test]
fn sbatch_job_survives_a_cancelled_worker_step_and_matches_the_embedded_solve() {
    if !slurm_available() {
        return;
    }
    let t_start = Instant::now();
    let mut slurm = Slurm::start();
    let d = slurm.dir.path().to_path_buf();
    let store = d.join("store");
    let summary = d.join("summary.json");
    let token = token_file(&d, 0o600);
    let port = free_port();
    let out = ok(
        {
            let mut c = slurm.cmd("sbatch");
            c.args(["--parsable", "--ntasks=2", "--cpus-per-task=1"])
                .arg(format!("--output={}", d.join("job-%j.out").display()))
                .arg(script())
                .current_dir(&d)
                .env_remove("SOLVE2048_LOG")
                .env("SOLVE2048_BIN", env!("CARGO_BIN_EXE_solve2048"))
                .env("SOLVE2048_STORE", &store)
                .env("SOLVE2048_BOARD", "3")
                .env("SOLVE2048_TARGET", "512")
                .env("SOLVE2048_TOKEN_FILE", &token)
                .env("SOLVE2048_PORT", port.to_string())
                .env("SOLVE2048_LISTEN_HOST", "127.0.0.1")
                .env("SOLVE2048_COORDINATOR_HOST", "127.0.0.1")
                .env("SOLVE2048_SUMMARY", &summary)
                // Short leases: the cancelled worker's tasks come back fast.
                .env(
                    "SOLVE2048_COORDINATOR_ARGS",
                    "--lease-seconds 2 --heartbeat-seconds 0.4",
                )
                .env("SOLVE2048_WORKER_ARGS", "--slots 1");
            c
        },
        "sbatch",
    );
    let job = text(&out).trim().split(';').next().unwrap().to_string();
    slurm.jobs.push(job.clone());
    let job_out = d.join(format!("job-{job}.out"));
    let state = |s: &Slurm| s.job(&job).get("JobState").cloned().unwrap_or_default();

    // Under way: the coordinator has committed tasks of both workers.
    let commits = || std::fs::read_dir(store.join("commits")).map_or(0, |r| r.count());
    let t0 = Instant::now();
    while commits() < 400 {
        let st = state(&slurm);
        assert!(
            matches!(st.as_str(), "PENDING" | "CONFIGURING" | "RUNNING"),
            "job {job} is {st} before the run got going:\n{}\n{}",
            file_text(&job_out),
            slurm.logs()
        );
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no progress:\n{}",
            file_text(&job_out)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let steps = slurm.steps(&job);
    let names: Vec<&str> = steps.iter().map(|(_, n)| n.as_str()).collect();
    for name in [
        "solve2048-coordinator",
        "solve2048-worker-1",
        "solve2048-worker-2",
    ] {
        assert!(names.contains(&name), "no step {name}: {steps:?}");
    }
    let (cancelled, _) = steps
        .iter()
        .find(|(_, n)| n == "solve2048-worker-2")
        .unwrap()
        .clone();
    ok(
        {
            let mut c = slurm.cmd("scancel");
            c.arg(&cancelled);
            c
        },
        "scancel of a worker step",
    );
    let at_cancel = commits();

    // Watched from outside the job, as from a login node: the store's
    // status (the lock at once, the progress record once it is written).
    let store_status = || {
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
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let t0 = Instant::now();
    let mut status = store_status();
    assert_eq!(status["lock"]["running"], true, "{status}");
    while status["status"].is_null() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(500));
        status = store_status();
    }
    assert_eq!(status["status"]["game"], "3x3-to-512", "{status}");

    // The script relaunches the worker as a new step while the job runs.
    let mut relaunched = None;
    let t0 = Instant::now();
    loop {
        let st = state(&slurm);
        if relaunched.is_none() {
            relaunched = slurm
                .steps(&job)
                .into_iter()
                .find(|(id, n)| n == "solve2048-worker-2" && *id != cancelled)
                .map(|(id, _)| id);
        }
        if !matches!(
            st.as_str(),
            "PENDING" | "CONFIGURING" | "RUNNING" | "COMPLETING"
        ) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "job {job} still {st} after 300 s:\n{}",
            tail(&file_text(&job_out), 40)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = file_text(&job_out);
    let fields = slurm.job(&job);
    assert_eq!(
        (fields["JobState"].as_str(), fields["ExitCode"].as_str()),
        ("COMPLETED", "0:0"),
        "{}\n{}",
        tail(&log, 40),
        slurm.logs()
    );
    assert!(
        relaunched.is_some(),
        "no new solve2048-worker-2 step after {cancelled} was cancelled:\n{log}"
    );
    assert!(log.contains("worker 2: relaunching (run 2)"), "{log}");
    assert!(
        log.contains("the coordinator exited with status 0"),
        "{log}"
    );
    assert!(
        !log.contains("worker 1: relaunching"),
        "worker 1 was not touched:\n{log}"
    );
    let elapsed = t_start.elapsed();

    // The coordinator's summary: the embedded run's results.
    let cluster: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap())
            .unwrap_or_else(|e| panic!("summary: {e}:\n{log}"));
    let embedded = &solved(&["--board", "3", "--target", "512"]).summary;
    assert_eq!(cluster["digest"], embedded["digest"], "{cluster}");
    assert_eq!(cluster["states"], embedded["states"]);
    assert_eq!(cluster["start_value"], embedded["start_value"]);
    assert!(
        commits() > at_cancel,
        "work went on after the cancel ({at_cancel} commits then)"
    );
    let status = store_status();
    assert_eq!(status["status"]["state"], "done", "{status}");
    let _ = writeln!(
        std::io::stderr(),
        "slurm: job {job} (3x3 to 512) done in {:.1} s with digest {}; step {cancelled} \
         cancelled at {at_cancel} commits, relaunched as {}",
        elapsed.as_secs_f64(),
        cluster["digest"],
        relaunched.unwrap()
    );
}
