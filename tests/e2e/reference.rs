//! Reference solves shared by the tests of this binary: each game is solved
//! once per run, on first use, and only read afterwards (a test that damages
//! or extends a store works on its own copy, [`copy_store`]).
//!
//! They live under cargo's scratch folder for integration tests
//! (`CARGO_TARGET_TMPDIR`), one folder per test process; folders of
//! processes that are gone are removed on first use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::cli::solve_json;

/// A solved store and the JSON summary of its solve.
pub struct Reference {
    /// The store.
    pub store: PathBuf,
    /// What `solve --json` printed.
    pub summary: serde_json::Value,
}

/// This process's scratch folder, made on first use.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
        if let Ok(entries) = std::fs::read_dir(root) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let Some(pid) = name.strip_prefix("e2e-reference-") else {
                    continue;
                };
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = root.join(format!("e2e-reference-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// The store `solve --json ARGS` makes, solved once per test run.
pub fn solved(args: &[&str]) -> &'static Reference {
    type Cells = HashMap<String, &'static OnceLock<Reference>>;
    static CELLS: OnceLock<Mutex<Cells>> = OnceLock::new();
    let key = args.join(" ");
    let cell: &'static OnceLock<Reference> = {
        let mut cells = CELLS.get_or_init(Default::default).lock().unwrap();
        let entry = cells
            .entry(key.clone())
            .or_insert_with(|| Box::leak(Box::new(OnceLock::new())));
        entry.to_owned()
    };
    cell.get_or_init(|| {
        let name: String = key
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let store = scratch().join(name);
        let _ = std::fs::remove_dir_all(&store);
        let summary = solve_json(&store, args);
        Reference { store, summary }
    })
}

/// A copy of a store's files at `to`, to damage or extend.
pub fn copy_store(from: &Path, to: &Path) {
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -r {} {}", from.display(), to.display());
}
