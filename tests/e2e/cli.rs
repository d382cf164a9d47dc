//! Running the binary and reading its JSON; and specifies: bad input, a
//! foreign store and a damaged chunk get clear errors and exit status 1.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_solve2048"))
}

/// Run `solve2048 solve` with `args` on `store`; panics unless it succeeds.
pub fn solve_json(store: &Path, args: &[&str]) -> serde_json::Value {
    let out = solve(store, args);
    assert!(
        out.status.success(),
        "solve {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("exactly one JSON object on stdout")
}

/// Run `solve2048 SUB --store STORE ARGS`; panics unless it succeeds.
pub fn command_ok(sub: &str, store: &Path, args: &[&OsStr]) -> Output {
    let out = bin()
        .arg(sub)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{sub} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run `solve2048 SUB --store STORE ARGS --json` and parse its one JSON object.
pub fn command_json(sub: &str, store: &Path, args: &[&str]) -> serde_json::Value {
    let mut args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    args.push(OsStr::new("--json"));
    let out = command_ok(sub, store, &args);
    serde_json::from_slice(&out.stdout).expect("exactly one JSON object on stdout")
}

/// The commit records in `store` whose task key starts with `prefix`: its
/// `commits/*.json` files, not the staging file of a write a kill
/// interrupted.
pub fn commits(store: &Path, prefix: &str) -> usize {
    std::fs::read_dir(store.join("commits")).map_or(0, |r| {
        r.flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(prefix) && n.ends_with(".json"))
            .count()
    })
}

/// A free loopback port below Linux's ephemeral range (32768 and up), so no
/// connection or `srun`'s I/O listener can take it between this check and
/// the server's bind; no two calls in one run get the same port.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id() % SPAN;
    for _ in 0..SPAN {
        let i = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = u16::try_from(LOW + (start + i) % SPAN).unwrap();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {LOW}..{}", LOW + SPAN);
}

/// Run `solve2048 solve --json` with `args` on `store`.
pub fn solve(store: &Path, args: &[&str]) -> Output {
    bin()
        .arg("solve")
        .args(args)
        .arg("--store")
        .arg(store)
        .arg("--json")
        .output()
        .unwrap()
}

/// Every chunk object under `dir` by its name without the attempt tag
/// (`-a` and 16 hex digits), which differs between runs. Panics if one
/// output exists in two copies (an uncommitted attempt left behind).
pub fn chunk_objects(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            if rel.ends_with(".chunk") {
                files.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    logical_chunks(files)
}

/// The chunk objects among `objects` (name relative to the store root,
/// bytes) by their names without the attempt tag, as `chunk_objects` gives
/// them; other objects are skipped. Panics on two copies of one output.
pub fn logical_chunks(
    objects: impl IntoIterator<Item = (String, Vec<u8>)>,
) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for (rel, bytes) in objects {
        let Some(stem) = rel.strip_suffix(".chunk") else {
            continue;
        };
        let logical = match stem.rfind("-a") {
            Some(i) if stem.len() - i == 18 => format!("{}.chunk", &stem[..i]),
            _ => panic!("{rel} has no attempt tag"),
        };
        let old = out.insert(logical, bytes);
        assert!(old.is_none(), "two copies of the output {rel}");
    }
    out
}

/// The path of the one committed object whose name starts with `prefix`.
pub fn object_named(dir: &Path, prefix: &str) -> PathBuf {
    let (parent, stem) = prefix.rsplit_once('/').unwrap();
    let found: Vec<PathBuf> = std::fs::read_dir(dir.join(parent))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(stem))
        .collect();
    assert_eq!(found.len(), 1, "objects named {prefix}*: {found:?}");
    found.into_iter().next().unwrap()
}

/// Expect a clean failure whose message contains `needle`.
pub fn fails_with(out: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected failure, got success");
    assert!(
        stderr.contains(needle),
        "stderr {stderr:?} lacks {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "panicked: {stderr}");
}

#[test]
fn bad_input_gets_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    // Argument errors exit with status 1 like any other error; help is no
    // error.
    for args in [
        &["solve", "--board"][..],
        &["solve", "--bord", "3"],
        &["frobnicate"],
    ] {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
    let help = bin().args(["solve", "--help"]).output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--board"));
    fails_with(
        &solve(&s, &["--board", "5", "--target", "64"]),
        "board \"5\" is not supported",
    );
    fails_with(
        &solve(&s, &["--board", "1", "--target", "64"]),
        "board \"1\" is not supported",
    );
    fails_with(
        &solve(&s, &["--board", "4", "--target", "100"]),
        "target 100 is not a power of two",
    );
    fails_with(
        &solve(&s, &["--board", "4", "--target", "65536"]),
        "out of range",
    );
    fails_with(
        &solve(&s, &["--board", "2", "--target", "128"]),
        "out of range for 2x2",
    );
    fails_with(
        &solve(&s, &["--board", "3", "--target", "64", "--discount", "0"]),
        "discount 0 is outside (0, 1]",
    );
    fails_with(
        &solve(&s, &["--board", "3", "--target", "64", "--discount", "1.5"]),
        "outside (0, 1]",
    );
    fails_with(
        &solve(
            Path::new("/proc/solve2048-cannot-write"),
            &["--board", "2", "--target", "8"],
        ),
        "cannot open store",
    );
    fails_with(
        &solve(
            Path::new("gs://bucket/x"),
            &["--board", "2", "--target", "8"],
        ),
        "the gs:// scheme is not supported",
    );
}

#[test]
fn store_of_another_game_or_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    solve_json(&s, &["--board", "2", "--target", "16"]);
    fails_with(
        &solve(&s, &["--board", "2", "--target", "32"]),
        "holds a different job (2x2-to-16",
    );
    fails_with(
        &solve(&s, &["--board", "2", "--target", "16", "--chunk-size", "3"]),
        "holds a different job",
    );
    // A store of format version 3 wrote job.json as plain JSON, with no
    // checksum: it gets the version message, not "damaged".
    let job = s.join("job.json");
    let original = std::fs::read_to_string(&job).unwrap();
    let record: serde_json::Value = serde_json::from_str(&original).unwrap();
    let mut old = record["record"].clone();
    old["format_version"] = 3.into();
    std::fs::write(&job, serde_json::to_vec_pretty(&old).unwrap()).unwrap();
    fails_with(
        &solve(&s, &["--board", "2", "--target", "16"]),
        "uses chunk format version 3",
    );
    // The manifest with one more digit in a number still parses, but its
    // checksum refuses it.
    let damaged = original.replacen("\"chunk_size\": ", "\"chunk_size\": 1", 1);
    assert_ne!(damaged, original);
    std::fs::write(&job, damaged).unwrap();
    fails_with(
        &solve(&s, &["--board", "2", "--target", "16"]),
        "record job.json is damaged",
    );
}

#[test]
fn damaged_chunk_is_detected_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    solve_json(&s, &["--board", "3", "--target", "16"]);
    // Damage one states chunk and forget the solve of that chunk: the rerun
    // must read it again and reject it by name.
    let path = object_named(&s, "states/s00030/m03/g0000-c0000-a");
    let chunk = path.strip_prefix(&s).unwrap().to_string_lossy().to_string();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    std::fs::remove_file(s.join("commits/solve-s00030-m03-g0000-c0000.json")).unwrap();
    // The store is solved, so the rerun checks it whole first: refused,
    // the chunk named, and how to repair it said.
    let out = solve(&s, &["--board", "3", "--target", "16"]);
    fails_with(&out, &format!("{chunk}: payload checksum mismatch"));
    fails_with(&out, "is damaged");
    fails_with(&out, "--repair");
    // Each cause once: no error both says its cause and hands it on.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("payload checksum mismatch").count(),
        1,
        "{stderr}"
    );
}

/// A coordinator of this host keeps its store's directory locked (the
/// test holds that lock here): a solve on it is refused, then runs once the
/// lock is released. Two solves of different games started at the same
/// instant on one fresh store: each answers for its own game or is refused
/// (the store in use, or holding the other game), and at least one
/// answers; never does one print the other's result.
#[test]
fn two_solves_at_once_on_one_store_never_mix() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    std::fs::create_dir(&s).unwrap();
    let held = std::fs::File::open(&s).unwrap();
    held.try_lock().unwrap();
    fails_with(
        &solve(&s, &["--board", "2", "--target", "8"]),
        "is in use by a running coordinator (another process of this host",
    );
    drop(held);
    solve_json(&s, &["--board", "2", "--target", "8"]);
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s");
        let spawn = |target: &str| {
            bin()
                .args(["solve", "--board", "3", "--target", target, "--json"])
                .arg("--store")
                .arg(&s)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let children = [(spawn("16"), 16), (spawn("32"), 32)];
        let mut answered = 0;
        for (child, target) in children {
            let out = child.wait_with_output().unwrap();
            if out.status.success() {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(v["target"], target, "{v}");
                answered += 1;
            } else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    stderr.contains("is in use by a running coordinator")
                        || stderr.contains("holds a different job"),
                    "{stderr}"
                );
            }
        }
        assert!(answered >= 1, "both solves refused");
    }
}
