//! Specifies: every relative link of the book's pages and of README.md
//! leads to a file that exists (for the book, one inside `docs/src`, which
//! is all that mdBook publishes), and every `#anchor` to a heading of its
//! page, by mdBook's rule for heading ids; every page is in SUMMARY.md.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::{lines_in_code, pages, repo, shown};

/// The id mdBook gives a heading: its text without markup, lowercased,
/// whitespace to `-`, other characters but letters, digits, `-` and `_`
/// dropped.
fn heading_id(text: &str) -> String {
    plain(text)
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// Markdown inline text as it reads: links by their text, no code marks
/// or emphasis stars.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let end = rest[i..].find(')').map_or(rest.len(), |j| i + j + 1);
        out.push_str(&rest[..i]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out.replace(['`', '*', '['], "")
}

/// The heading ids of a page, duplicates numbered as mdBook numbers them.
fn heading_ids(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids = Vec::new();
    for (line, code) in lines_in_code(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if code || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let id = heading_id(line[hashes..].trim().trim_end_matches('#').trim());
        let n = seen.entry(id.clone()).or_insert(0);
        ids.push(if *n == 0 { id } else { format!("{id}-{n}") });
        *n += 1;
    }
    ids
}

/// The targets of a page's links and images, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (line, code) in lines_in_code(text) {
        if code {
            continue;
        }
        // Code spans hold no links: drop what lies between backticks.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            out.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
    }
    out
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// What is wrong with the link `target` of the page `page`, if anything.
fn broken(page: &Path, target: &str, in_book: bool) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        normal(&page.parent().unwrap().join(path))
    };
    if !file.exists() {
        return Some(format!("{target}: no file {}", shown(&file)));
    }
    if in_book && !file.starts_with(repo().join("docs/src")) {
        return Some(format!("{target}: outside docs/src, not in the book"));
    }
    if anchor.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    if heading_ids(&text).iter().any(|id| id == anchor) {
        None
    } else {
        Some(format!(
            "{target}: no heading #{anchor} in {}",
            shown(&file)
        ))
    }
}

#[test]
fn every_relative_link_leads_to_a_file_and_heading() {
    let mut files: Vec<(PathBuf, bool)> = pages().into_iter().map(|p| (p, true)).collect();
    files.push((repo().join("README.md"), false));
    let mut wrong = Vec::new();
    for (page, in_book) in &files {
        let text = std::fs::read_to_string(page).unwrap();
        for target in link_targets(&text) {
            if let Some(why) = broken(page, &target, *in_book) {
                wrong.push(format!("{}: {why}", shown(page)));
            }
        }
    }
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn every_page_is_in_the_summary() {
    let src = repo().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<PathBuf> = link_targets(&summary)
        .iter()
        .map(|t| normal(&src.join(t)))
        .collect();
    for page in pages() {
        if page != src.join("SUMMARY.md") {
            assert!(
                listed.contains(&page),
                "{} is not in SUMMARY.md",
                shown(&page)
            );
        }
    }
}

#[test]
fn heading_ids_follow_mdbook() {
    let page = "# The chance of a 4: `--four-probability P`\n\
                ```\n# not a heading\n```\n\
                ## [Using a solution](x.md) *now*\n## Notes\n## Notes\n#no\n";
    assert_eq!(
        heading_ids(page),
        [
            "the-chance-of-a-4---four-probability-p",
            "using-a-solution-now",
            "notes",
            "notes-1",
        ]
    );
    let links = link_targets("[a](b.md#c) `[x](y)` ![i](img.svg)\n```\n[z](w)\n```\n");
    assert_eq!(links, ["b.md#c", "img.svg"]);
}
