//! The files under `deploy/` (Dockerfile, compose, Kubernetes, systemd, Slurm) start
//! the binary with flags that no compiler checks and no Docker engine or
//! cluster exists here to run. This test finds every `solve2048 SUBCOMMAND
//! --flag ...` in them and asks the binary's own `SUBCOMMAND --help` whether
//! it accepts each flag, and checks that no file holds something that looks
//! like a real secret.
//!
//! Where invocations are found:
//! - YAML (compose and Kubernetes), parsed: every mapping whose `image` names
//!   solve2048 is a service or container of ours; its argv is the image's
//!   entrypoint (`solve2048`, or compose `entrypoint` / Kubernetes `command`)
//!   followed by compose `command` / Kubernetes `args`.
//! - Every file as text (comments included), line by line, lines ending in
//!   `\` joined: the word `solve2048` (or a path ending in `/solve2048`)
//!   followed by a subcommand word, up to a shell separator. In comments and
//!   in Markdown prose only invocations that pass a `--flag` count, so prose
//!   such as "solve2048 on one host" is not read as a command.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

use crate::cli::bin;

/// One `solve2048 SUB ARGS...` found in a file.
#[derive(Debug, Clone, PartialEq)]
struct Invocation {
    /// File and line, or file and YAML position, for messages.
    at: String,
    sub: String,
    args: Vec<String>,
}

impl Invocation {
    /// The long flags it passes (`--name`, `--name=value` gives `--name`).
    fn flags(&self) -> impl Iterator<Item = &str> {
        self.args
            .iter()
            .filter(|a| a.starts_with("--") && a.len() > 2)
            .map(|a| a.split_once('=').map_or(a.as_str(), |(f, _)| f))
    }
}

/// What `solve2048 SUB --help` accepts, asked once per subcommand.
#[derive(Default)]
struct Accepted {
    by_sub: BTreeMap<String, Result<BTreeSet<String>, String>>,
}

impl Accepted {
    fn flags(&mut self, sub: &str) -> &Result<BTreeSet<String>, String> {
        self.by_sub.entry(sub.to_string()).or_insert_with(|| {
            let out = bin().args([sub, "--help"]).output().unwrap();
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
            }
            Ok(long_flags(&String::from_utf8_lossy(&out.stdout)))
        })
    }

    /// Every problem with `inv`: an unknown subcommand or flag.
    fn check(&mut self, inv: &Invocation) -> Vec<String> {
        match self.flags(&inv.sub) {
            Err(e) => vec![format!(
                "{}: `solve2048 {}` is not a subcommand: {e}",
                inv.at, inv.sub
            )],
            Ok(known) => inv
                .flags()
                .filter(|f| !known.contains(*f))
                .map(|f| {
                    format!(
                        "{}: `solve2048 {}` does not accept {f} (its --help lists {})",
                        inv.at,
                        inv.sub,
                        known.iter().cloned().collect::<Vec<_>>().join(" ")
                    )
                })
                .collect(),
        }
    }
}

/// The `--long` flags a help text lists: those that open an option line
/// (`      --store <STORE>`, `  -h, --help`), not those its prose mentions.
fn long_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = match line.strip_prefix('-') {
                Some(short) if !short.starts_with('-') => short.get(3..)?.trim_start(),
                _ => line,
            };
            let name: String = line
                .strip_prefix("--")?
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty()).then(|| format!("--{name}"))
        })
        .collect()
}

/// Whether `word` names the binary: `solve2048`, a path ending in it, or the
/// Slurm script's variable holding its path.
fn is_program(word: &str) -> bool {
    word.rsplit('/').next() == Some("solve2048")
        || matches!(word, "$SOLVE2048_BIN" | "${SOLVE2048_BIN}")
}

/// Whether `word` can be a subcommand name.
fn is_sub_word(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Words of a command line, with quotes, backticks and brackets around them
/// dropped (`["solve2048",` and `` `solve2048 `` both give `solve2048`).
fn words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| "`'\"()[]{},".contains(c))
                .to_string()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Invocations in `text`, read line by line (see the module doc). `markdown`
/// treats lines outside ``` fences as prose.
fn text_invocations(name: &str, text: &str, markdown: bool) -> Vec<Invocation> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let first = i + 1;
        let mut line = lines[i].trim_end().to_string();
        if markdown && line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            i += 1;
            continue;
        }
        // Markdown outside fences, and comment lines anywhere, are prose.
        let prose = (markdown && !in_fence) || line.trim_start().starts_with('#');
        // A continued line goes on in the next, whose comment mark is dropped.
        while line.ends_with('\\') && i + 1 < lines.len() {
            line.pop();
            i += 1;
            let next = lines[i].trim();
            line.push(' ');
            line.push_str(next.strip_prefix('#').unwrap_or(next).trim_end());
        }
        i += 1;
        let w = words(&line);
        // Words after a ` # ` comment mark are prose too.
        let comment = w.iter().position(|x| x == "#").unwrap_or(w.len());
        for (k, word) in w.iter().enumerate() {
            // `kubectl -n solve2048 ...` names a namespace, not the binary.
            let a_value = k > 0 && matches!(w[k - 1].as_str(), "-n" | "--namespace");
            if !is_program(word) || a_value {
                continue;
            }
            let Some(sub) = w.get(k + 1).filter(|s| is_sub_word(s)) else {
                continue;
            };
            let args: Vec<String> = w[k + 2..]
                .iter()
                .take_while(|a| !matches!(a.as_str(), "&&" | "||" | "|" | ";" | "#" | "\\"))
                .cloned()
                .collect();
            let inv = Invocation {
                at: format!("{name}:{first}"),
                sub: sub.clone(),
                args,
            };
            if !(prose || k > comment) || inv.flags().next().is_some() {
                out.push(inv);
            }
        }
    }
    out
}

/// Which YAML dialect a file is: it decides what `command` means.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Dialect {
    /// `entrypoint` replaces the image's ENTRYPOINT, `command` its CMD.
    Compose,
    /// `command` replaces the image's ENTRYPOINT, `args` its CMD.
    Kubernetes,
}

/// A YAML scalar as the string a container would see.
fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A command as a list, or as a string compose splits at spaces.
fn argv(y: &Yaml) -> Result<Vec<String>, String> {
    match y {
        Yaml::Array(items) => items
            .iter()
            .map(|i| scalar(i).ok_or_else(|| format!("{i:?} is not a scalar")))
            .collect(),
        Yaml::String(s) => Ok(s.split_whitespace().map(str::to_string).collect()),
        other => Err(format!("{other:?} is not a command")),
    }
}

/// Invocations of the solve2048 services or containers in the YAML
/// documents of `text`; an `Err` for a file that does not parse or a
/// solve2048 container whose argv cannot be read.
fn yaml_invocations(name: &str, text: &str, dialect: Dialect) -> Result<Vec<Invocation>, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| format!("{name}: {e}"))?;
    let mut out = Vec::new();
    for (d, doc) in docs.iter().enumerate() {
        walk_yaml(
            &format!("{name} (document {})", d + 1),
            doc,
            dialect,
            &mut out,
        )?;
    }
    Ok(out)
}

fn walk_yaml(
    at: &str,
    y: &Yaml,
    dialect: Dialect,
    out: &mut Vec<Invocation>,
) -> Result<(), String> {
    match y {
        Yaml::Array(items) => {
            for item in items {
                walk_yaml(at, item, dialect, out)?;
            }
        }
        Yaml::Hash(map) => {
            let ours = y["image"].as_str().is_some_and(|i| i.contains("solve2048"));
            if ours {
                let label = y["name"]
                    .as_str()
                    .map_or(String::new(), |n| format!(" {n}"));
                let at = format!("{at}, container{label}");
                let (entry_key, args_key) = match dialect {
                    Dialect::Compose => ("entrypoint", "command"),
                    Dialect::Kubernetes => ("command", "args"),
                };
                let mut full = match &y[entry_key] {
                    Yaml::BadValue => vec!["solve2048".to_string()],
                    e => argv(e).map_err(|e| format!("{at}: {entry_key}: {e}"))?,
                };
                if !matches!(y[args_key], Yaml::BadValue) {
                    full.extend(argv(&y[args_key]).map_err(|e| format!("{at}: {args_key}: {e}"))?);
                }
                if !full.first().is_some_and(|p| is_program(p)) {
                    return Err(format!("{at}: runs {full:?}, not solve2048"));
                }
                let Some(sub) = full.get(1) else {
                    return Err(format!("{at}: runs solve2048 with no subcommand"));
                };
                out.push(Invocation {
                    at,
                    sub: sub.clone(),
                    args: full[2..].to_vec(),
                });
            }
            for (k, v) in map {
                let key = scalar(k).unwrap_or_default();
                walk_yaml(&format!("{at} {key}"), v, dialect, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every file under `deploy/`, sorted, with its path relative to the
/// repository root.
fn deploy_files() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("deploy")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, p));
            }
        }
    }
    out.sort();
    out
}

/// Every invocation in the file `name` holding `text`.
fn file_invocations(name: &str, text: &str) -> Result<Vec<Invocation>, String> {
    let mut out = text_invocations(name, text, name.ends_with(".md"));
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        let dialect = if name.contains("/k8s/") {
            Dialect::Kubernetes
        } else {
            Dialect::Compose
        };
        out.extend(yaml_invocations(name, text, dialect)?);
    }
    Ok(out)
}

/// Setting names whose values are secrets.
fn secret_name(name: &str) -> bool {
    ["TOKEN", "SECRET", "PASSWORD", "ACCESS_KEY"]
        .iter()
        .any(|s| name.contains(s))
}

/// Whether a secret setting's value is a placeholder or a reference, not a
/// secret.
fn placeholder(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    v.is_empty() || v.contains("CHANGE_ME") || v.starts_with('$') || v == "..."
}

/// What in `line` looks like a real secret, if anything: a secret setting
/// (`NAME=value`, `NAME: value`) with a value that is not a placeholder, a
/// long hex or base64 run, an AWS key id or a private key.
fn secret_in(line: &str) -> Option<String> {
    if line.contains("PRIVATE KEY-----") {
        return Some("a private key".into());
    }
    // Settings: an upper-case name run, then `=` or `: `.
    let b = line.as_bytes();
    let name_char = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if !name_char(b[i]) || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && name_char(b[i]) {
            i += 1;
        }
        let name = &line[start..i];
        let value = match &line[i..] {
            r if r.starts_with('=') => r[1..].split_whitespace().next().unwrap_or(""),
            r if r.starts_with(": ") => r[2..].trim(),
            _ => continue,
        };
        if secret_name(name) && !placeholder(value) {
            return Some(format!("{name} has a value that is not a placeholder"));
        }
    }
    // Runs that look like key material: hex, or base64 (padding aside) mixing
    // cases and digits. A run that starts with `/` is a path.
    for run in line.split(|c: char| !(c.is_ascii_alphanumeric() || "+/".contains(c))) {
        let hex = run.chars().filter(char::is_ascii_hexdigit).count() == run.len();
        let mixed = !run.starts_with('/')
            && run.chars().any(|c| c.is_ascii_uppercase())
            && run.chars().any(|c| c.is_ascii_lowercase())
            && run.chars().any(|c| c.is_ascii_digit());
        if (hex && run.len() >= 20) || (mixed && run.len() >= 32) {
            return Some(format!("{run:?} looks like key material"));
        }
        if run.len() == 20
            && (run.starts_with("AKIA") || run.starts_with("ASIA"))
            && run[4..]
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            return Some(format!("{run:?} looks like an AWS access key id"));
        }
    }
    None
}

/// Every problem in the Kubernetes Secrets of a YAML file: each value must
/// be a placeholder.
fn secret_manifest_problems(name: &str, text: &str) -> Vec<String> {
    let docs = YamlLoader::load_from_str(text).unwrap_or_default();
    let mut out = Vec::new();
    for doc in docs.iter().filter(|d| d["kind"].as_str() == Some("Secret")) {
        for field in ["stringData", "data"] {
            let Some(map) = doc[field].as_hash() else {
                continue;
            };
            for (k, v) in map {
                let value = scalar(v).unwrap_or_default();
                if !value.contains("CHANGE_ME") {
                    out.push(format!(
                        "{name}: Secret {field}.{} is not a CHANGE_ME placeholder",
                        scalar(k).unwrap_or_default()
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn deploy_files_pass_only_flags_the_binary_accepts() {
    let mut accepted = Accepted::default();
    let mut problems = Vec::new();
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, path) in deploy_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        match file_invocations(&name, &text) {
            Err(e) => problems.push(e),
            Ok(invs) => {
                for inv in invs {
                    problems.extend(accepted.check(&inv));
                    found.entry(name.clone()).or_default().insert(inv.sub);
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The checker must have seen the commands it is here for.
    for (file, subs) in [
        ("deploy/compose.yaml", &["coordinator", "worker"][..]),
        ("deploy/k8s/coordinator.yaml", &["coordinator"]),
        ("deploy/k8s/worker.yaml", &["worker"]),
        (
            "deploy/systemd/solve2048-coordinator.service",
            &["coordinator"],
        ),
        ("deploy/systemd/solve2048-worker@.service", &["worker"]),
        (
            "deploy/slurm/solve2048.sbatch",
            &["coordinator", "worker", "status", "chunks"],
        ),
    ] {
        for sub in subs {
            assert!(
                found.get(file).is_some_and(|s| s.contains(*sub)),
                "no `solve2048 {sub}` found in {file}; found {found:?}"
            );
        }
    }
}

#[test]
fn deploy_files_hold_no_secrets() {
    let mut problems = Vec::new();
    for (name, path) in deploy_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some(why) = secret_in(line) {
                problems.push(format!("{name}:{}: {why}", i + 1));
            }
        }
        if name.ends_with(".yaml") {
            problems.extend(secret_manifest_problems(&name, &text));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn deploy_checker_reports_unknown_flags_and_subcommands() {
    let mut accepted = Accepted::default();
    let inv = |sub: &str, args: &[&str]| Invocation {
        at: "test".into(),
        sub: sub.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    let good = inv(
        "worker",
        &["--coordinator", "http://c:7480", "--drain-seconds=60"],
    );
    assert_eq!(accepted.check(&good), Vec::<String>::new());
    let bad = accepted.check(&inv("worker", &["--threads", "4", "--no-such-flag"]));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("does not accept --no-such-flag"), "{bad:?}");
    // The token is never a flag.
    assert_eq!(
        accepted.check(&inv("coordinator", &["--token", "x"])).len(),
        1
    );
    let bad = accepted.check(&inv("no-such-subcommand", &["--store", "s"]));
    assert!(bad[0].contains("is not a subcommand"), "{bad:?}");
    let help = "      --store <STORE>  The store (see --in-prose)\n  -h, --help  Print help\n";
    assert_eq!(
        long_flags(help).into_iter().collect::<Vec<_>>(),
        ["--help", "--store"]
    );
}

#[test]
fn deploy_checker_finds_invocations_in_text_and_yaml() {
    let unit = "ExecStart=/usr/local/bin/solve2048 worker --threads 8 \\\n    --cache-gib 4\n\
                # the solve2048 binary, run by hand\n\
                # e.g. solve2048 status --coordinator http://c:7480 && echo ok\n";
    let found = text_invocations("u", unit, false);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].sub, "worker");
    assert_eq!(found[0].args, ["--threads", "8", "--cache-gib", "4"]);
    assert_eq!(found[1].args, ["--coordinator", "http://c:7480"]);

    let md = "Run solve2048 status --all in prose.\n```sh\nsolve2048 chunks\n\
              # the bucket must exist (solve2048 creates none)\n\
              kubectl apply -k k8s   # creates the solve2048 namespace\n\
              kubectl -n solve2048 exec job/c -- solve2048 status --all\n```\n";
    let found = text_invocations("m", md, true);
    assert_eq!(
        found.iter().map(|f| f.sub.as_str()).collect::<Vec<_>>(),
        ["status", "chunks", "status"]
    );

    let k8s = "spec:\n  containers:\n    - name: w\n      image: reg/solve2048:1\n      \
               args: [worker, --no-such-flag, \"4\"]\n    - name: other\n      image: busybox\n      \
               args: [--ignored]\n";
    let found = yaml_invocations("k", k8s, Dialect::Kubernetes).unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].args, ["--no-such-flag", "4"]);
    let mut accepted = Accepted::default();
    assert_eq!(accepted.check(&found[0]).len(), 1);

    let compose = "services:\n  c:\n    image: solve2048\n    command: status --store s --all\n";
    let found = yaml_invocations("c", compose, Dialect::Compose).unwrap();
    assert_eq!(found[0].sub, "status");
    let shell = "services:\n  c:\n    image: solve2048\n    entrypoint: [sh, -c]\n";
    assert!(yaml_invocations("c", shell, Dialect::Compose).is_err());
    assert!(yaml_invocations("c", "a: [b", Dialect::Compose).is_err());
}

#[test]
fn deploy_secret_check_flags_real_looking_values() {
    for line in [
        "SOLVE2048_TOKEN=3f1c0a9be27d45c8a16e0b2f9d7c4e51",
        "  AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
        "GARAGE_DEFAULT_ACCESS_KEY: GK31c2f218a2e44f485b94239e",
        "-----BEGIN PRIVATE KEY-----",
    ] {
        assert!(secret_in(line).is_some(), "{line}");
    }
    for line in [
        "SOLVE2048_TOKEN=CHANGE_ME",
        "  AWS_SECRET_ACCESS_KEY: ${S3_SECRET_ACCESS_KEY:?set it}",
        "  --from-literal=SOLVE2048_TOKEN=\"$(head -c 16 /dev/urandom | xxd -p)\"",
        "  --from-literal=AWS_ACCESS_KEY_ID=... --from-literal=AWS_SECRET_ACCESS_KEY=...",
        "# SOLVE2048_TOKEN, the AWS_* settings of an S3 store, SOLVE2048_STORE.",
        "AWS_REGION=garage",
        "ExecStart=/usr/local/bin/solve2048 worker --coordinator ${SOLVE2048_COORDINATOR}",
    ] {
        assert_eq!(secret_in(line), None, "{line}");
    }
    let secret = "kind: Secret\nstringData:\n  SOLVE2048_TOKEN: hunter2\n  A: CHANGE_ME\n";
    assert_eq!(secret_manifest_problems("s", secret).len(), 1);
}

/// Bytes in a Kubernetes quantity such as `52Gi`, `500Mi` or `15`.
fn quantity(q: &str) -> f64 {
    let units = [
        ("Ki", 1u64 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
    ];
    for (suffix, scale) in units {
        if let Some(n) = q.strip_suffix(suffix) {
            return n.parse::<f64>().unwrap() * scale as f64;
        }
    }
    q.strip_suffix('m')
        .map(|m| m.parse::<f64>().unwrap() / 1000.0)
        .unwrap_or_else(|| q.parse().unwrap())
}

#[test]
fn kubernetes_manifests_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k8s");
    let load = |f: &str| {
        YamlLoader::load_from_str(&std::fs::read_to_string(root.join(f)).unwrap()).unwrap()
    };
    let kustomization = &load("kustomization.yaml")[0];
    let namespace = kustomization["namespace"].as_str().expect("a namespace");
    let resources: Vec<&str> = kustomization["resources"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    // The namespace is created, not assumed.
    let created = resources.iter().flat_map(|f| load(f)).any(|d| {
        d["kind"].as_str() == Some("Namespace") && d["metadata"]["name"].as_str() == Some(namespace)
    });
    assert!(created, "namespace {namespace} is never created");
    // The coordinator is a Job: once solved it completes, nothing restarts it.
    let coordinator = load("coordinator.yaml");
    let job = coordinator
        .iter()
        .find(|d| {
            d["metadata"]["name"].as_str() == Some("solve2048-coordinator")
                && d["kind"].as_str() != Some("Service")
        })
        .unwrap();
    assert_eq!(job["kind"].as_str(), Some("Job"));
    assert_eq!(
        job["spec"]["template"]["spec"]["restartPolicy"].as_str(),
        Some("OnFailure")
    );
    // A worker's requests fit what a 16-CPU, 64-GiB node offers (its
    // allocatable is below its capacity), and its limit is above them.
    let worker = &load("worker.yaml")[0];
    let res = &worker["spec"]["template"]["spec"]["containers"][0]["resources"];
    let cpu = quantity(res["requests"]["cpu"].as_str().unwrap());
    let memory = quantity(res["requests"]["memory"].as_str().unwrap());
    let limit = quantity(res["limits"]["memory"].as_str().unwrap());
    assert!(cpu < 16.0, "{cpu} CPUs leave nothing for the node");
    assert!(
        memory <= 0.9 * 64.0 * (1u64 << 30) as f64,
        "{memory} bytes exceed a 64 GiB node's allocatable"
    );
    assert!(limit >= memory && limit < 64.0 * (1u64 << 30) as f64);
    // The store and the S3 endpoint are settings, not a compose-only host.
    let config = &load("configmap.yaml")[0]["data"];
    assert!(config["SOLVE2048_STORE"]
        .as_str()
        .unwrap()
        .starts_with("s3://"));
    let endpoint = config["AWS_ENDPOINT_URL"].as_str().unwrap();
    assert!(
        !endpoint.contains("garage:3900"),
        "{endpoint} exists only in compose"
    );
    let text = std::fs::read_to_string(root.join("configmap.yaml")).unwrap();
    assert!(
        text.contains("bucket must exist"),
        "the bucket's creation is not documented"
    );
}
