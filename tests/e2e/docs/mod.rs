//! Specifies the book (`docs/`) and the README: every relative link leads
//! to a file and heading that exist ([`links`]), the command blocks the
//! book marks as tested still print what it shows ([`blocks`]), and the
//! reference pages are the binary's own words ([`reference`]).

mod blocks;
mod links;
mod reference;

use std::path::{Path, PathBuf};

/// The repository's root.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The book's pages: every `.md` file under `docs/src`, sorted.
fn pages() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![repo().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to the repository, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A page's lines with a flag for each: whether it lies in a fenced code
/// block (the fences included).
fn lines_in_code(text: &str) -> Vec<(&str, bool)> {
    // The open fence's character and length: a run of at least as many
    // closes it.
    let mut fence: Option<(char, usize)> = None;
    text.lines()
        .map(|line| {
            let t = line.trim();
            let run = |c: char| t.len() - t.trim_start_matches(c).len();
            match fence {
                None => match ['`', '~'].into_iter().find(|&c| run(c) >= 3) {
                    Some(c) => {
                        fence = Some((c, run(c)));
                        (line, true)
                    }
                    None => (line, false),
                },
                Some((c, n)) => {
                    if run(c) >= n && t.chars().all(|x| x == c) {
                        fence = None;
                    }
                    (line, true)
                }
            }
        })
        .collect()
}
