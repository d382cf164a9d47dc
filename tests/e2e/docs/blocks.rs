//! Specifies: every command block the book marks as tested still prints
//! what the book shows. A ```` ```console ```` block right after a
//! `<!-- tested -->` line holds commands (`$ ` lines) and what each prints
//! (stdout and stderr together); `...` alone on a line stands for any
//! number of lines, `...` in a line for any text. A page's tested blocks
//! run in order, in one empty folder, by one bash with `solve2048` on its
//! `PATH`; the loopback port 7480 becomes a free one.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{lines_in_code, pages, shown};
use crate::cli::free_port;

/// The line that marks the next console block as tested.
const MARK: &str = "<!-- tested -->";

/// How long a page's blocks may take in all.
const PAGE_LIMIT: Duration = Duration::from_secs(300);

/// Separates the output of one command from the next.
const SEPARATOR: char = '\u{1e}';

/// A command of a tested block and the lines it must print.
#[derive(Debug, PartialEq)]
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The steps of the tested blocks of a page, in order.
fn steps(text: &str) -> Vec<Step> {
    let lines = lines_in_code(text);
    let mut out: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line, code) = lines[i];
        i += 1;
        if code || line.trim() != MARK {
            continue;
        }
        assert!(
            lines.get(i).is_some_and(|(l, _)| l.trim() == "```console"),
            "{MARK} must come right before a ```console block"
        );
        i += 1;
        while i < lines.len() && lines[i].0.trim() != "```" {
            let line = lines[i].0;
            match line.strip_prefix("$ ") {
                Some(command) => out.push(Step {
                    command: command.to_string(),
                    expected: Vec::new(),
                }),
                None => out
                    .last_mut()
                    .expect("a tested block starts with a command")
                    .expected
                    .push(line.trim_end().to_string()),
            }
            i += 1;
        }
    }
    out
}

/// Whether `line` matches `pattern`, whose every `...` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let (first, rest) = parts.split_first().unwrap();
    let Some(mut left) = line.strip_prefix(first) else {
        return false;
    };
    for (k, part) in rest.iter().enumerate() {
        if k + 1 == rest.len() {
            return left.ends_with(part);
        }
        match left.find(part) {
            Some(j) => left = &left[j + part.len()..],
            None => return false,
        }
    }
    left.is_empty()
}

/// Whether `lines` match `expected`, whose `...` lines stand for any
/// number of lines.
fn lines_match(expected: &[String], lines: &[&str]) -> bool {
    match expected.split_first() {
        None => lines.is_empty(),
        Some((e, rest)) if e == "..." => {
            (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..]))
        }
        Some((e, rest)) => {
            lines.first().is_some_and(|l| line_matches(e, l)) && lines_match(rest, &lines[1..])
        }
    }
}

/// The bash script that runs `steps`, each command's output after a
/// separator line.
fn script(steps: &[Step], port: u16) -> String {
    let mut s = String::from("exec 2>&1\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n");
    for step in steps {
        s.push_str(&format!("printf '\\n{SEPARATOR}\\n'\n"));
        s.push_str(&step.command.replace("7480", &port.to_string()));
        s.push('\n');
    }
    s
}

/// Run a page's steps in an empty folder; the output of each command.
fn run(steps: &[Step]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_solve2048"), bin.join("solve2048")).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-c", &script(steps, free_port())])
        .current_dir(&work)
        .env("PATH", path)
        .env_remove("SOLVE2048_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        text
    });
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > PAGE_LIMIT {
            let _ = child.kill();
            panic!("the tested blocks took over {PAGE_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = reader.join().unwrap();
    // Each separator follows a newline of its own: the one before it ends
    // the previous command's last line, or is the empty line printed when
    // that command printed nothing or ended its output with one.
    text.split(&format!("\n{SEPARATOR}\n"))
        .skip(1)
        .map(|s| s.strip_suffix('\n').unwrap_or(s).to_string())
        .collect()
}

/// Whether `line` is a log line (a UTC timestamp, two spaces, a level):
/// logs say what happened on the way (a lease lost under load), not what a
/// command prints, so the book's blocks leave them out.
fn is_log_line(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 30
        && b[..4].iter().all(u8::is_ascii_digit)
        && (b[4], b[7], b[10], b[13]) == (b'-', b'-', b'T', b':')
        && line[..32].contains("Z  ")
}

#[test]
fn tested_blocks_print_what_the_book_shows() {
    let mut wrong = Vec::new();
    let mut ran = 0;
    for page in pages() {
        let steps = steps(&std::fs::read_to_string(&page).unwrap());
        if steps.is_empty() {
            continue;
        }
        let outputs = run(&steps);
        assert_eq!(outputs.len(), steps.len(), "{}: {outputs:?}", shown(&page));
        for (step, out) in steps.iter().zip(&outputs) {
            ran += 1;
            let lines: Vec<&str> = out
                .lines()
                .map(str::trim_end)
                .filter(|l| !is_log_line(l))
                .collect();
            if !lines_match(&step.expected, &lines) {
                wrong.push(format!(
                    "{}: $ {}\nexpected:\n{}\nprinted:\n{out}",
                    shown(&page),
                    step.command,
                    step.expected.join("\n"),
                ));
            }
        }
    }
    assert!(ran >= 3, "only {ran} tested commands");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn log_lines_are_told_from_output() {
    assert!(is_log_line(
        "2026-11-28T12:19:02.159930Z  WARN solve2048_worker::agent::session: lease lost"
    ));
    assert!(!is_log_line("  result digest: 08a471951f4c9393"));
    assert!(!is_log_line(
        "solved 3x3-to-64 in store solve2048-store/3x3-to-64"
    ));
}

#[test]
fn the_matcher_takes_ellipses() {
    assert!(line_matches(
        "moves: 8.2 a game, ... moves/s",
        "moves: 8.2 a game, 1.1 M moves/s"
    ));
    assert!(line_matches("a...b...c", "a1b2c"));
    assert!(!line_matches("a...b", "a1c"));
    assert!(line_matches("exact", "exact"));
    assert!(!line_matches("exact", "exactly"));
    let lines = ["one", "two", "three"];
    let exp = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&exp(&["one", "...", "three"]), &lines));
    assert!(lines_match(&exp(&["...", "two", "three"]), &lines));
    assert!(lines_match(&exp(&["one", "two", "three", "..."]), &lines));
    assert!(!lines_match(&exp(&["one", "three"]), &lines));
    let page = "text\n<!-- tested -->\n```console\n$ a\nout\n...\n$ b\n```\n```console\n$ c\n```\n";
    assert_eq!(
        steps(page),
        [
            Step {
                command: "a".into(),
                expected: exp(&["out", "..."])
            },
            Step {
                command: "b".into(),
                expected: vec![]
            },
        ]
    );
}
