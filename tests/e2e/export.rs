//! Specifies: `export --format parquet` writes one file per layer, one row
//! per stored state in the store's order and one row group per chunk; read
//! back with the parquet crate's reader, its counts are the solve's, its
//! cells and sums are the board's, and its values and moves are `query`'s;
//! a rerun gives the same bytes, `--layers` picks layers, bad input gets a
//! one-line error, and DuckDB (installed with pip when it can be) reads the
//! files too. Also `completions` and `man`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::cli::{bin, command_json, command_ok, fails_with, solve_json};

/// One row read back, by column name.
type Row = BTreeMap<String, Field>;

/// The rows of each row group of a Parquet file.
fn read_groups(path: &Path) -> Vec<Vec<Row>> {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..reader.num_row_groups())
        .map(|g| {
            let group = reader.get_row_group(g).unwrap();
            group
                .get_row_iter(None)
                .unwrap()
                .map(|row| {
                    row.unwrap()
                        .get_column_iter()
                        .map(|(name, field)| (name.clone(), field.clone()))
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// Every row of a Parquet file, and its number of row groups.
fn read_rows(path: &Path) -> (Vec<Row>, usize) {
    let groups = read_groups(path);
    let n = groups.len();
    (groups.into_iter().flatten().collect(), n)
}

fn u64_of(row: &Row, name: &str) -> u64 {
    match &row[name] {
        Field::ULong(v) => *v,
        other => panic!("{name} is {other:?}, not a UINT64"),
    }
}

fn int_of(row: &Row, name: &str) -> i64 {
    match &row[name] {
        Field::UShort(v) => *v as i64,
        Field::Int(v) => *v as i64,
        other => panic!("{name} is {other:?}, not an integer"),
    }
}

fn f64_of(row: &Row, name: &str) -> Option<f64> {
    match &row[name] {
        Field::Double(v) => Some(*v),
        Field::Null => None,
        other => panic!("{name} is {other:?}, not a DOUBLE"),
    }
}

fn str_of<'a>(row: &'a Row, name: &str) -> &'a str {
    match &row[name] {
        Field::Str(v) => v,
        other => panic!("{name} is {other:?}, not a string"),
    }
}

/// Run `export --format parquet --out OUT ARGS` on `store`.
fn export(store: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    let mut all: Vec<&OsStr> = vec!["--format".as_ref(), "parquet".as_ref()];
    all.extend(["--out".as_ref(), out.as_os_str()]);
    all.extend(args.iter().map(OsStr::new));
    command_ok("export", store, &all)
}

/// The `.parquet` files of a directory, by name.
fn files(dir: &Path) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), p))
        .collect()
}

const MOVES: [&str; 4] = ["left", "right", "up", "down"];

#[test]
fn parquet_export_agrees_with_the_solve_and_query() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    // Small chunks, so that layers have several chunks (row groups).
    let solved = solve_json(
        &store,
        &["--board", "3", "--target", "32", "--chunk-size", "2000"],
    );
    // States and chunks per layer, and states per (layer, max tile), as the
    // solve reports them.
    let mut want: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    let mut want_parts: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    for p in solved["parts"].as_array().unwrap() {
        let (sum, max) = (p["sum"].as_u64().unwrap(), p["max_tile"].as_u64().unwrap());
        let states = p["states"].as_u64().unwrap();
        let e = want.entry(sum).or_default();
        e.0 += states;
        e.1 += p["chunks"].as_u64().unwrap() as usize;
        *want_parts.entry((sum, max)).or_default() += states;
    }
    assert_eq!(want.len(), 49, "3x3 to 32 has 49 layers");
    assert_eq!(want.keys().next(), Some(&4));
    assert!(want.values().any(|&(_, chunks)| chunks >= 3));

    let out = dir.path().join("out");
    let o = export(&store, &out, &["--with-moves"]);
    let total: u64 = want.values().map(|&(states, _)| states).sum();
    assert_eq!(total, solved["states"].as_u64().unwrap());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.starts_with(&format!("wrote {total} states in 49 files")),
        "{stdout}"
    );
    let written = files(&out);
    let names: Vec<String> = want.keys().map(|s| format!("s{s:05}.parquet")).collect();
    assert_eq!(written.keys().cloned().collect::<Vec<_>>(), names);

    let mut sampled = 0;
    let mut legal_moves = [0u64; 4];
    for (&sum, &(states, chunks)) in &want {
        let path = &written[&format!("s{sum:05}.parquet")];
        // Store order: parts by max tile; a row group (chunk) by board.
        let groups = read_groups(path);
        assert_eq!(groups.len(), chunks, "row groups of layer {sum}");
        let mut last_max = 0;
        for group in &groups {
            let max = int_of(&group[0], "max_tile");
            assert!(max >= last_max, "parts of layer {sum} out of order");
            last_max = max;
            let boards: Vec<u64> = group.iter().map(|r| u64_of(r, "board")).collect();
            assert!(boards.is_sorted_by(|a, b| a < b), "a chunk of layer {sum}");
            assert!(group.iter().all(|r| int_of(r, "max_tile") == max));
        }
        let rows: Vec<Row> = groups.into_iter().flatten().collect();
        assert_eq!(rows.len() as u64, states, "rows of layer {sum}");
        let mut per_max: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for (i, row) in rows.iter().enumerate() {
            let board = u64_of(row, "board");
            // The cells are the board, row-major, tile values (0 empty).
            let mut from_cells = 0u64;
            let mut cells = Vec::new();
            for r in 0..3 {
                for c in 0..3 {
                    let tile = int_of(row, &format!("c{r}{c}")) as u64;
                    assert!(tile == 0 || tile.is_power_of_two(), "{row:?}");
                    let e = if tile == 0 {
                        0
                    } else {
                        tile.trailing_zeros() as u64
                    };
                    from_cells |= e << (16 * r + 4 * c);
                    cells.push(tile);
                }
            }
            assert_eq!(from_cells, board, "cells of {board:#018x}");
            assert_eq!(int_of(row, "tile_sum") as u64, sum);
            assert_eq!(cells.iter().sum::<u64>(), sum);
            let max = int_of(row, "max_tile") as u64;
            assert_eq!(max, *cells.iter().max().unwrap());
            *per_max.entry((sum, max)).or_default() += 1;
            // The best move's value is the state's value (no discount).
            let value = f64_of(row, "value").unwrap();
            let best = str_of(row, "best_move");
            assert_eq!(f64_of(row, &format!("value_{best}")), Some(value));
            for (k, m) in MOVES.iter().enumerate() {
                let v = f64_of(row, &format!("value_{m}"));
                legal_moves[k] += v.is_some() as u64;
                assert!(v.is_none_or(|v| v <= value), "{row:?}");
            }
            // A sample (each layer's first and middle row) agrees with
            // `query --json`, bit for bit.
            if i == 0 || i == rows.len() / 2 {
                let q = command_json("query", &store, &["--board", &format!("{board:#018x}")]);
                assert_eq!(q["value"].as_f64(), Some(value), "{q}");
                assert_eq!(q["best"], best, "{q}");
                for m in MOVES {
                    assert_eq!(q["actions"][m].as_f64(), f64_of(row, &format!("value_{m}")));
                }
                sampled += 1;
            }
        }
        for (key, count) in per_max {
            assert_eq!(want_parts[&key], count, "states of (sum, max tile) {key:?}");
        }
    }
    assert!(
        sampled >= 2 * 49 - 2,
        "{sampled} rows checked against query"
    );
    // Some moves are illegal somewhere (nulls), none everywhere.
    assert!(
        legal_moves.iter().all(|&n| n > 0 && n < total),
        "{legal_moves:?}"
    );

    // A rerun gives the same bytes; --layers picks layers (both ends in),
    // and without --with-moves the move columns are absent.
    let again = dir.path().join("again");
    export(&store, &again, &["--with-moves", "--layers", "10..14"]);
    let picked = files(&again);
    assert_eq!(
        picked.keys().cloned().collect::<Vec<_>>(),
        ["s00010.parquet", "s00012.parquet", "s00014.parquet"]
    );
    for (name, path) in &picked {
        assert_eq!(
            std::fs::read(path).unwrap(),
            std::fs::read(&written[name]).unwrap()
        );
    }
    let plain = dir.path().join("plain");
    export(&store, &plain, &["--layers", "20"]);
    let (rows, _) = read_rows(&plain.join("s00020.parquet"));
    assert_eq!(rows.len() as u64, want[&20].0);
    assert_eq!(
        rows[0].len(),
        1 + 9 + 4,
        "board, 9 cells, sum, max, value, best"
    );

    duckdb_reads_the_files(&out, total);
}

/// DuckDB's Python package reads the files: its count and value total
/// agree with the rows read back here. Skips, saying so, where Python or
/// pip is missing or the package cannot be installed.
fn duckdb_reads_the_files(out: &Path, total: u64) {
    let python = |args: &[&OsStr]| std::process::Command::new("python3").args(args).output();
    if !python(&["-m".as_ref(), "pip".as_ref(), "--version".as_ref()])
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIPPED: DuckDB check (no python3 with pip); the Rust reader check ran");
        return;
    }
    // Installed once into cargo's scratch folder, then reused.
    let site = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-duckdb");
    if !site.join("duckdb").exists() {
        let installed = python(&[
            "-m".as_ref(),
            "pip".as_ref(),
            "install".as_ref(),
            "--quiet".as_ref(),
            "--disable-pip-version-check".as_ref(),
            "--target".as_ref(),
            site.as_os_str(),
            "duckdb".as_ref(),
        ]);
        if !installed.as_ref().is_ok_and(|o| o.status.success()) {
            eprintln!("SKIPPED: DuckDB check (pip install duckdb failed); the Rust reader ran");
            return;
        }
    }
    let script = "import duckdb, sys\n\
        print(duckdb.sql(f\"SELECT count(*), sum(value), count(value_up) \
        FROM '{sys.argv[1]}/*.parquet'\").fetchall()[0])";
    let o = std::process::Command::new("python3")
        .env("PYTHONPATH", &site)
        .args(["-c".as_ref(), script.as_ref(), out.as_os_str()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout).trim().to_string();
    // The same figures from the parquet crate's reader.
    let (mut sum, mut up) = (0.0, 0u64);
    for path in files(out).values() {
        for row in read_rows(path).0 {
            sum += f64_of(&row, "value").unwrap();
            up += f64_of(&row, "value_up").is_some() as u64;
        }
    }
    let fields: Vec<&str> = printed
        .trim_matches(|c| c == '(' || c == ')')
        .split(", ")
        .collect();
    assert_eq!(fields.len(), 3, "{printed}");
    assert_eq!(fields[0].parse::<u64>().unwrap(), total, "{printed}");
    let duck_sum: f64 = fields[1].parse().unwrap();
    assert!(
        (duck_sum - sum).abs() < 1e-9 * sum,
        "{printed} against {sum}"
    );
    assert_eq!(fields[2].parse::<u64>().unwrap(), up, "{printed}");
}

#[test]
fn export_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s");
    solve_json(&store, &["--board", "2", "--target", "16"]);
    let out = dir.path().join("out");
    let run = |store: &Path, args: &[&str]| {
        bin()
            .arg("export")
            .arg("--store")
            .arg(store)
            .arg("--out")
            .arg(&out)
            .args(args)
            .output()
            .unwrap()
    };
    let one_line = |o: &std::process::Output, needle: &str| {
        fails_with(o, needle);
        assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    };
    one_line(
        &run(&store, &["--format", "csv"]),
        "--format csv is not supported (formats: parquet)",
    );
    one_line(
        &run(&store, &["--format", "parquet", "--layers", "1000..2000"]),
        "has a tile sum in 1000..2000 (its layers: 4 to ",
    );
    one_line(
        &run(&store, &["--format", "parquet", "--layers", "9..3"]),
        "is empty (9 > 3)",
    );
    one_line(
        &run(&dir.path().join("none"), &["--format", "parquet"]),
        "does not exist",
    );
    std::fs::remove_file(store.join("summary.json")).unwrap();
    one_line(&run(&store, &["--format", "parquet"]), "is not solved yet");
    assert!(!out.exists(), "nothing written on bad input");
}

#[test]
fn completions_and_man_pages_name_the_subcommands() {
    let run = |args: &[&str]| {
        let o = bin().args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("_solve2048()"), "a bash completion function");
    for sub in ["solve", "query", "export", "completions", "man"] {
        assert!(
            bash.contains(&format!("solve2048,{sub})")),
            "bash lacks {sub}"
        );
    }
    assert!(bash.contains("--with-moves"));
    assert!(run(&["completions", "zsh"]).starts_with("#compdef solve2048"));
    assert!(run(&["completions", "fish"]).contains("complete -c solve2048"));

    let page = run(&["man"]);
    assert!(page.contains(".TH solve2048 1"), "a title header");
    for sub in ["solve", "query", "export", "serve", "completions"] {
        assert!(
            page.contains(&format!("solve2048\\-{sub}(1)")),
            "page lacks {sub}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let said = run(&["man", "--out", dir.path().to_str().unwrap()]);
    let export_page = std::fs::read_to_string(dir.path().join("solve2048-export.1")).unwrap();
    assert!(export_page.contains(".TH solve2048-export 1"));
    assert!(export_page.contains("with\\-moves"));
    let pages = std::fs::read_dir(dir.path()).unwrap().count();
    assert!(
        pages >= 19,
        "{pages} pages: the main one and one a subcommand"
    );
    assert_eq!(
        said.trim(),
        format!("wrote {pages} pages to {}", dir.path().display())
    );
}
