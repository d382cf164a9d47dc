//! Specifies `evaluate`: the exact value of a player from the random start,
//! as a job of the same coordinator and workers as the solve.
//!
//! - Its values equal, to 1e-12, a slow, obvious memoised recursion over
//!   boards as they lie (`players::slow_value`) for `random`,
//!   `order:LDRU` and `optimal` on 2x2 to 16, 2x2 to 32 and 3x3 to 64 (the
//!   slow optimal player picks its moves by a recursion of its own, not
//!   from any store); `optimal` is worth the solved store's start value;
//!   the boards' reach times loss add up to the gap.
//! - 10,000 simulated games of a player win as often as its exact value
//!   says, within 3 standard errors.
//! - Bad input gets one line and exit status 1: an unknown player or
//!   parameter, `mc:N` (refused, saying it samples), a store that is not a
//!   solved one, an evaluation store holding another evaluation, weights
//!   that are damaged or for another board.
//! - Killed with SIGKILL and run again, it ends with the same bytes; a
//!   coordinator with a worker process gives what the embedded run gives.

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use solve2048_core::rules::board::empty_bits;
use solve2048_core::rules::moves::{has_exponent, Mover};
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::{Direction, Game, Objective, Shape};
use solve2048_players::{parse, simulate, slow_value, NotExact, Parsed, Player};

use crate::cli::{bin, chunk_objects, commits, fails_with, free_port};
use crate::reference::{copy_store, solved};

/// Run `evaluate --store STORE --player PLAYER --out OUT --json EXTRA`.
fn evaluate(store: &Path, player: &str, out: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("evaluate")
        .arg("--store")
        .arg(store)
        .args(["--player", player, "--json"])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// [`evaluate`], which must succeed: its JSON.
pub(crate) fn evaluate_json(
    store: &Path,
    player: &str,
    out: &Path,
    extra: &[&str],
) -> serde_json::Value {
    let o = evaluate(store, player, out, extra);
    assert!(
        o.status.success(),
        "evaluate {player} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("one JSON object on stdout")
}

/// The optimal player of a game, by a memoised recursion of its own over
/// boards as they lie: the best move's value, ties to the first move in
/// left, right, up, down order.
pub(crate) struct SlowOptimal {
    game: Game,
    mover: Mover,
    memo: HashMap<u64, f64>,
}

impl SlowOptimal {
    pub(crate) fn new(game: Game) -> SlowOptimal {
        SlowOptimal {
            mover: Mover::new(game.shape),
            game,
            memo: HashMap::new(),
        }
    }

    /// The value of each move of `x` (None where illegal): what it scores
    /// (with the score objective) and what follows.
    fn moves(&mut self, x: u64) -> [Option<f64>; 4] {
        let mut q = [None; 4];
        for d in Direction::ALL {
            let (after, points) = self.mover.apply_scored(x, d);
            if after == x {
                continue;
            }
            let earned = match self.game.objective {
                Objective::Win => 0.0,
                Objective::Score => f64::from(points),
            };
            q[d as usize] = Some(
                earned
                    + if has_exponent(after, self.game.target_exp) {
                        self.game.discount * self.game.target_value()
                    } else {
                        let mut empties = empty_bits(after, self.game.shape);
                        let k = f64::from(empties.count_ones());
                        let rule = self.game.spawn_rule();
                        let mut v = 0.0;
                        while empties != 0 {
                            let bit = empties & empties.wrapping_neg();
                            for (tile, chance) in [(bit, rule.two), (bit << 1, rule.four)] {
                                if chance > 0.0 {
                                    v += chance / k * self.value(after | tile);
                                }
                            }
                            empties &= empties - 1;
                        }
                        self.game.discount * v
                    },
            );
        }
        q
    }

    fn value(&mut self, x: u64) -> f64 {
        if let Some(&v) = self.memo.get(&x) {
            return v;
        }
        let v = self.moves(x).into_iter().flatten().fold(0.0, f64::max);
        self.memo.insert(x, v);
        v
    }
}

impl Player for SlowOptimal {
    fn choose(&mut self, board: u64) -> Option<Direction> {
        let q = self.moves(board);
        let mut best: Option<(Direction, f64)> = None;
        for d in Direction::ALL {
            if let Some(v) = q[d as usize] {
                if best.is_none_or(|(_, b)| v > b) {
                    best = Some((d, v));
                }
            }
        }
        best.map(|b| b.0)
    }

    fn distribution(&mut self, board: u64) -> Result<Vec<(Direction, f64)>, NotExact> {
        Ok(self
            .choose(board)
            .map(|d| vec![(d, 1.0)])
            .unwrap_or_default())
    }

    fn name(&self) -> String {
        "slow optimal".into()
    }
}

/// The player of `spec` (not `optimal`) for boards of `n`.
fn player(spec: &str, n: Shape) -> Box<dyn Player> {
    match parse(spec, n, &SpawnRule::standard(), 0).unwrap() {
        Parsed::Player(p) => p,
        Parsed::Optimal => unreachable!("built by the test"),
    }
}

/// The games of the tests with the arguments of their solves: 3x3 to 32 in
/// chunks of 5,000 (124,372 states, so the evaluation has several groups a
/// part and several chunks a group: 22 parts and 67 groups), 2x2 to 32 in
/// chunks of 5.
const GAMES: [(u32, u64, &[&str]); 3] = [
    (2, 16, &["--board", "2", "--target", "16"]),
    (
        2,
        32,
        &["--board", "2", "--target", "32", "--chunk-size", "5"],
    ),
    (
        3,
        32,
        &["--board", "3", "--target", "32", "--chunk-size", "5000"],
    ),
];

#[test]
fn exact_values_match_a_slow_recursion_over_boards_as_they_lie() {
    let dir = tempfile::tempdir().unwrap();
    for (n, target, args) in GAMES {
        let game = Game::new(n, target, 1.0).unwrap();
        let reference = solved(args);
        let optimal = reference.summary["start_value"].as_f64().unwrap();
        for spec in ["random", "order:LDRU", "optimal"] {
            let what = format!("{spec} on {}", game.name());
            let out = dir.path().join(format!("{n}-{target}-{spec}"));
            let got = evaluate_json(&reference.store, spec, &out, &[]);
            let slow = match spec {
                "optimal" => slow_value(&game, &mut SlowOptimal::new(game)),
                _ => slow_value(&game, player(spec, game.shape).as_mut()),
            }
            .unwrap();
            let (value, gap) = (got["value"].as_f64().unwrap(), got["gap"].as_f64().unwrap());
            assert!((value - slow).abs() < 1e-12, "{what}: {value} vs {slow}");
            assert_eq!(got["optimal"].as_f64().unwrap(), optimal, "{what}");
            assert!((optimal - value - gap).abs() < 1e-15, "{what}");
            let cost = got["cost"].as_f64().unwrap();
            assert!((cost - gap).abs() < 1e-12, "{what}: cost {cost}, gap {gap}");
            let worst = got["worst"].as_array().unwrap();
            if spec == "optimal" {
                assert!(
                    (value - optimal).abs() < 1e-12,
                    "{what}: {value} vs {optimal}"
                );
                assert_eq!(cost, 0.0, "{what}");
                assert!(worst.is_empty(), "{what}");
            } else {
                assert_eq!(worst.len(), 10, "{what}");
                let costs: Vec<f64> = worst.iter().map(|w| w["cost"].as_f64().unwrap()).collect();
                assert!(costs.windows(2).all(|c| c[0] >= c[1]), "{what}: {costs:?}");
                for w in worst {
                    let (reach, loss) = (w["reach"].as_f64().unwrap(), w["loss"].as_f64().unwrap());
                    assert!((reach * loss - w["cost"].as_f64().unwrap()).abs() < 1e-15);
                    assert!(w["optimal"].as_f64().unwrap() >= w["value"].as_f64().unwrap());
                    // The player's move there is not (only) the best one.
                    let best = w["best"].as_str().unwrap();
                    assert_ne!(w["moves"][best].as_f64(), Some(1.0), "{what}: {w}");
                }
            }
            assert!(got["states"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn simulated_games_win_as_often_as_the_exact_value_says() {
    let dir = tempfile::tempdir().unwrap();
    let (n, target, args) = GAMES[2];
    let game = Game::new(n, target, 1.0).unwrap();
    let store = &solved(args).store;
    for spec in ["order:LDRU", "greedy"] {
        let exact = evaluate_json(store, spec, &dir.path().join(spec), &[])["value"]
            .as_f64()
            .unwrap();
        let games = 10_000;
        let mut p = player(spec, game.shape);
        let won = (0..games)
            .filter(|&s| {
                simulate(
                    game.shape,
                    Some(game.target_exp),
                    &game.spawn_rule(),
                    p.as_mut(),
                    s,
                )
                .won()
            })
            .count();
        let rate = won as f64 / games as f64;
        let se = (exact * (1.0 - exact) / games as f64).sqrt();
        assert!(se > 0.001, "{spec}: a value of {exact} tests little");
        assert!(
            (rate - exact).abs() <= 3.0 * se,
            "{spec}: exact {exact}, {won} of {games} won, se {se}"
        );
    }
}

/// Expect a failure of one line on stderr, with exit status 1, saying
/// `needle`.
fn fails_in_one_line(out: &Output, needle: &str) {
    fails_with(out, needle);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn bad_input_gets_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s216 = &solved(GAMES[0].2).store;
    let s332 = &solved(GAMES[2].2).store;
    let out = d.join("eval");
    for (player, needle) in [
        ("minimax", "unknown player \"minimax\""),
        ("random:3", "bad parameter \"3\" for player \"random\""),
        ("order:LLRU", "bad parameter \"LLRU\""),
        ("expectimax:9", "the depth is a number of moves from 1 to 8"),
        (
            "mc:50",
            "mc:50 cannot be evaluated exactly: it is a sampled player",
        ),
        (
            "ntuple:/nonexistent/w.weights",
            "weights file /nonexistent/w.weights",
        ),
    ] {
        fails_in_one_line(&evaluate(s216, player, &out, &[]), needle);
    }
    // Weights that are damaged, cut short, or for another board.
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("players/networks");
    let bytes = std::fs::read(real.join("3x3-pentomino.weights")).unwrap();
    let garbage = d.join("garbage.weights");
    std::fs::write(&garbage, b"not weights at all").unwrap();
    let cut = d.join("cut.weights");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    let flip = d.join("flip.weights");
    std::fs::write(&flip, &flipped).unwrap();
    for (file, needle) in [
        (garbage, "bad magic"),
        (cut, "length"),
        (flip, "checksum mismatch"),
        (real.join("4x4-rows-squares.weights"), "is for 4x4, not 3x3"),
    ] {
        let spec = format!("ntuple:{}", file.display());
        fails_in_one_line(&evaluate(s332, &spec, &out, &[]), needle);
    }
    assert!(!out.exists(), "nothing is written for a refused player");
    // Stores that are not solved ones.
    fails_in_one_line(
        &evaluate(&d.join("nothing"), "random", &out, &[]),
        "does not exist",
    );
    let unsolved = d.join("unsolved");
    copy_store(s216, &unsolved);
    std::fs::remove_file(unsolved.join("summary.json")).unwrap();
    fails_in_one_line(
        &evaluate(&unsolved, "random", &out, &[]),
        "is not solved yet (no summary.json)",
    );
    evaluate_json(s216, "random", &out, &[]);
    fails_in_one_line(
        &evaluate(&out, "random", &d.join("other"), &[]),
        "is an evaluation of random, not a solved store",
    );
    // The evaluation store holds an evaluation of another player, or of
    // another game: refused, and left as it was.
    let before = chunk_objects(&out);
    for (store, player) in [(s216, "order:LDRU"), (s332, "random")] {
        fails_in_one_line(
            &evaluate(store, player, &out, &[]),
            "holds another evaluation (2x2-to-16 evaluating random",
        );
    }
    assert!(before == chunk_objects(&out));
    // The solved store is read, never written.
    assert!(!s216.join("player.weights").exists());
}

#[test]
fn killed_and_rerun_it_ends_with_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = &solved(GAMES[2].2).store;
    let clean_out = dir.path().join("clean");
    let clean = evaluate_json(store, "random", &clean_out, &[]);
    for (prefix, n) in [("enumerate-", 40), ("solve-", 40)] {
        let out = dir.path().join(prefix);
        let mut child = bin()
            .arg("evaluate")
            .arg("--store")
            .arg(store)
            .args(["--player", "random", "--json", "--out"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while commits(&out, prefix) < n {
            assert!(child.try_wait().unwrap().is_none(), "finished too soon");
            assert!(t0.elapsed() < Duration::from_secs(120));
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(!out.join("summary.json").exists(), "killed after the end");
        let resumed = evaluate_json(store, "random", &out, &[]);
        assert!(resumed["tasks_skipped"].as_u64().unwrap() >= n as u64);
        for key in ["value", "gap", "cost", "states", "digest", "worst"] {
            assert_eq!(resumed[key], clean[key], "{key} after a kill in {prefix}");
        }
        let (a, b) = (chunk_objects(&clean_out), chunk_objects(&out));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (k, v) in &a {
            assert!(v == &b[k], "{k} differs after a kill in {prefix}");
        }
    }
    // Run again when done: nothing runs, the same results.
    let again = evaluate_json(store, "random", &clean_out, &[]);
    assert_eq!(again["tasks_run"], 0);
    assert_eq!(again["value"], clean["value"]);
    assert_eq!(again["worst"], clean["worst"]);
}

#[test]
fn a_coordinator_and_a_worker_process_evaluate_as_the_embedded_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let store = &solved(GAMES[2].2).store;
    let weights =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("players/networks/3x3-pentomino.weights");
    let spec = format!("ntuple:{}", weights.display());
    let embedded_out = dir.path().join("embedded");
    let embedded = evaluate_json(store, &spec, &embedded_out, &[]);
    let out = dir.path().join("cluster");
    let port = free_port();
    let token = "evaluate-test-token";
    let coordinator = bin()
        .env("SOLVE2048_TOKEN", token)
        .arg("coordinator")
        .args(["--listen", &format!("127.0.0.1:{port}"), "--json"])
        .arg("--store")
        .arg(&out)
        .arg("--evaluate")
        .arg(store)
        .args(["--player", &spec])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut worker = bin()
        .env("SOLVE2048_TOKEN", token)
        .arg("worker")
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .args(["--threads", "2", "--give-up-after", "60"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let done = coordinator.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(worker.wait().unwrap().success());
    let cluster: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    for key in [
        "player", "value", "optimal", "cost", "states", "digest", "worst",
    ] {
        assert_eq!(cluster[key], embedded[key], "{key}");
    }
    let (a, b) = (chunk_objects(&embedded_out), chunk_objects(&out));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs");
    }
    // The network plays: it wins far more often than the simple players.
    assert!(embedded["value"].as_f64().unwrap() > 0.5, "{embedded}");
}
