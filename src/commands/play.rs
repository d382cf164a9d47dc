//! `solve2048 play`: seeded games of any player, the optimal policy of a
//! solved store or one of the heuristic players, through the one game loop
//! of every player ([`solve2048_players::simulate_with`]). One game is shown
//! move by move; several give their summary. With a store, each board's win
//! probability under optimal play is shown beside it, and the summary sets
//! the optimal value beside the player's win rate.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use serde_json::json;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::{Game, Objective, Shape};
use solve2048_players::game::Outcome;
use solve2048_players::spec::KNOWN;
use solve2048_players::{parse, simulate_with, summary, GameRecord, Parsed, Player};
use solve2048_solution::{OptimalPlayer, Solution};

use crate::runtime::{open_existing, runtime};

mod live;

use live::{grid, is_broken_pipe, write_out, Live};

/// Arguments of `play`.
#[derive(clap::Args)]
pub struct Args {
    /// The player: random, order:LDRU (any order of L, R, U, D), greedy,
    /// schain, mc:N, expectimax:D, ntuple:FILE, or optimal (needs --store)
    /// [default: optimal with --store; needed without].
    #[arg(long)]
    player: Option<String>,
    /// Board: 2, 3 or 4 for a square, or RxC for R rows of C cells
    /// [default: the store's; needed without --store].
    #[arg(long)]
    board: Option<Shape>,
    /// Target tile: games stop when it appears [default: the store's; without
    /// a store, games run until no move is legal].
    #[arg(long)]
    target: Option<u64>,
    /// Probability that a spawned tile is a 4, 0 to 1 [default: the store's;
    /// 0.1 without a store].
    #[arg(long, value_name = "P")]
    four_probability: Option<f64>,
    /// A solved store (a directory or s3://BUCKET/PREFIX), opened read-only:
    /// its game, its optimal player, and the win probability under optimal
    /// play of every board shown.
    #[arg(long)]
    store: Option<String>,
    /// Seed of the game (its tiles and the player's own randomness); game i
    /// of --games uses seed + i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of games: one is shown move by move, more give a summary.
    #[arg(long, default_value_t = 1)]
    games: u64,
    /// Pause between moves, in milliseconds (one game, not with --json).
    #[arg(long, default_value_t = 0)]
    delay: u64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// What the games are played with. Fields drop in order: the players before
/// the runtime their store look-ups block on.
struct Setup {
    /// The board's shape.
    shape: Shape,
    /// The target's exponent; `None`: play until no move is legal.
    target_exp: Option<u8>,
    /// How tiles are placed.
    rule: SpawnRule,
    player: Box<dyn Player>,
    /// With a store: the optimal policy, asked for the value of each board.
    oracle: Option<OptimalPlayer>,
    store: Option<String>,
    _runtime: Option<tokio::runtime::Runtime>,
}

impl Setup {
    fn from_args(args: &Args) -> anyhow::Result<Setup> {
        let Some(location) = &args.store else {
            let board = args.board.ok_or_else(|| {
                anyhow!("name the game with --board B [--target T], or give a solved store with --store DIR")
            })?;
            let (shape, target_exp) = game_of(board, args.target)?;
            let rule = rule_of(args.four_probability.unwrap_or(0.1))?;
            let spec = args.player.as_deref().ok_or_else(|| {
                let known: Vec<&str> = KNOWN.iter().map(|k| k.0).collect();
                anyhow!(
                    "name a player with --player SPEC (one of {})",
                    known.join(", ")
                )
            })?;
            let player = match parse(spec, shape, &rule, args.seed)? {
                Parsed::Player(p) => p,
                Parsed::Optimal => bail!(
                    "the optimal player needs a solved store: add --store DIR \
                     (a store that `solve2048 solve` wrote)"
                ),
            };
            return Ok(Setup {
                shape,
                target_exp,
                rule,
                player,
                oracle: None,
                store: None,
                _runtime: None,
            });
        };
        let rt = runtime()?;
        let solution = Arc::new(rt.block_on(Solution::open(open_existing(location)?))?);
        let solved = *solution.game();
        // A store played to the end has no target: neither has its play.
        let (shape, target_exp) = game_of(
            args.board.unwrap_or(solved.shape),
            args.target.or(solved.target_tile()),
        )?;
        let target = target_exp.unwrap_or(solved.target_exp);
        if let Some(p) = args.four_probability {
            anyhow::ensure!(
                rule_of(p)? == solved.spawn_rule(),
                "--four-probability {p}: the store solves {} with a 4 spawned with probability {}; \
                 drop the flag to play its game",
                solved.name(),
                solved.four_probability()
            );
        }
        let rule = solved.spawn_rule();
        let optimal = || OptimalPlayer::new(solution.clone(), rt.handle().clone(), shape, target);
        let oracle = optimal()?;
        let player = match parse(
            args.player.as_deref().unwrap_or("optimal"),
            shape,
            &rule,
            args.seed,
        )? {
            Parsed::Player(p) => p,
            Parsed::Optimal => Box::new(optimal()?),
        };
        Ok(Setup {
            shape,
            target_exp,
            rule,
            player,
            oracle: Some(oracle),
            store: Some(location.clone()),
            _runtime: Some(rt),
        })
    }

    /// `3x3 to 512`, or `4x4 to the end`.
    fn game_name(&self) -> String {
        let shape = self.shape;
        match self.target_exp {
            Some(e) => format!("{shape} to {}", 1u64 << e),
            None => format!("{shape} to the end"),
        }
    }

    /// The solved game, with a store.
    fn solved(&self) -> Option<&Game> {
        self.oracle.as_ref().map(|o| o.solution().game())
    }

    /// What a store's values are: a win probability or an expected score
    /// at discount 1.
    fn value_name(&self) -> String {
        match self.solved() {
            Some(g) => format!("{} under optimal play", g.value_name()),
            None => "win probability under optimal play".to_string(),
        }
    }
}

/// Board shape and target exponent, validated as the solver validates them.
fn game_of(board: Shape, target: Option<u64>) -> anyhow::Result<(Shape, Option<u8>)> {
    match target {
        Some(t) => {
            let game = Game::on(board, t, 1.0)?;
            Ok((game.shape, Some(game.target_exp)))
        }
        None => Ok((board, None)),
    }
}

/// The spawn rule of a probability of a 4 a person gives, validated as the
/// solver validates it.
fn rule_of(four_probability: f64) -> anyhow::Result<SpawnRule> {
    Ok(SpawnRule::new(Game::check_four_probability(
        four_probability,
    )?))
}

/// Run `play`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.games >= 1, "--games must be at least 1");
    anyhow::ensure!(
        args.seed.checked_add(args.games - 1).is_some(),
        "--seed {} with --games {} runs past the largest seed",
        args.seed,
        args.games
    );
    let mut setup = Setup::from_args(&args)?;
    if args.games == 1 {
        one_game(&args, &mut setup)
    } else {
        many_games(&args, &mut setup)
    }
}

/// One game, shown move by move (or as JSON, with every step).
fn one_game(args: &Args, setup: &mut Setup) -> anyhow::Result<()> {
    let n = setup.shape;
    let mut live = Live::new(
        n,
        !args.json,
        args.delay,
        setup.value_name(),
        setup.oracle.as_ref(),
    );
    if !args.json {
        let store = setup.store.as_ref();
        let header = format!(
            "{} on {}, seed {}{}\n",
            setup.player.name(),
            setup.game_name(),
            args.seed,
            store.map_or(String::new(), |s| format!(", store {s}"))
        );
        live.header(&header);
    }
    let record = simulate_with(
        n,
        setup.target_exp,
        &setup.rule,
        setup.player.as_mut(),
        args.seed,
        |s, b| live.step(s, b),
    )?;
    match live.failed() {
        // The reader went away (`play ... | head`): nothing more to show.
        Some(e) if is_broken_pipe(&e) => return Ok(()),
        Some(e) => return Err(e),
        None => {}
    }
    if args.json {
        let game = steps_json(&record, setup.oracle.as_ref())?;
        println!("{}", document(args, setup, &[record], vec![game]));
        return Ok(());
    }
    let text = ending(&record, n, &live)?;
    match write_out(&text) {
        Err(e) if !is_broken_pipe(&e) => Err(e),
        _ => Ok(()),
    }
}

/// The end of a game shown: its start when no move was played, and how it
/// ended.
fn ending(record: &GameRecord, n: Shape, live: &Live) -> anyhow::Result<String> {
    let mut text = String::new();
    if record.steps.is_empty() {
        // The start is already won or lost: show it.
        text.push_str(&format!("\nstart\n{}", grid(record.start, n, None)));
        text.push_str(&live.value_line(record.start)?);
    }
    text.push_str(&format!(
        "\n{} after {} moves (seed {}): score {}, largest tile {}\n",
        match record.outcome {
            Outcome::Won => "won",
            Outcome::Lost => "lost",
            Outcome::TileLimit => "stopped before a merge into 65536 (beyond a 4-bit cell)",
            Outcome::Resigned => "resigned",
        },
        record.moves(),
        record.seed,
        record.score,
        record.max_tile()
    ));
    Ok(text)
}

/// One game in the JSON document, with every step (and its value).
fn steps_json(
    record: &GameRecord,
    oracle: Option<&OptimalPlayer>,
) -> anyhow::Result<serde_json::Value> {
    let mut game = game_json(record);
    let mut steps = Vec::new();
    for s in &record.steps {
        let mut step = json!({
            "board": format!("{:#018x}", s.board),
            "action": s.dir,
            "score": s.score,
            "spawn": {
                "row": s.spawn_cell / 4,
                "column": s.spawn_cell % 4,
                "tile": 1u32 << s.spawn_exp,
            },
        });
        if let Some(o) = oracle {
            step["value"] = json!(o.value(s.board)?);
        }
        steps.push(step);
    }
    game["start"] = json!(format!("{:#018x}", record.start));
    game["last"] = json!(format!("{:#018x}", record.last));
    game["steps"] = json!(steps);
    Ok(game)
}

/// Seeds `seed .. seed + games`, and their summary.
fn many_games(args: &Args, setup: &mut Setup) -> anyhow::Result<()> {
    let tty = std::io::stderr().is_terminal();
    let clock = Instant::now();
    let mut last_draw: Option<Instant> = None;
    let mut records = Vec::with_capacity(args.games as usize);
    for i in 0..args.games {
        let seed = args.seed + i;
        let mut record = simulate_with(
            setup.shape,
            setup.target_exp,
            &setup.rule,
            setup.player.as_mut(),
            seed,
            |_, _| {},
        )?;
        record.drop_steps();
        records.push(record);
        if tty && last_draw.is_none_or(|t| t.elapsed() >= Duration::from_millis(200)) {
            last_draw = Some(Instant::now());
            let won = records.iter().filter(|r| r.won()).count();
            eprint!(
                "\r\x1b[2Kgame {}/{} | {:.0} s | {}",
                i + 1,
                args.games,
                clock.elapsed().as_secs_f64(),
                if setup.target_exp.is_some() {
                    format!("won {won}")
                } else {
                    let best = records.iter().map(|r| r.max_tile()).max().unwrap_or(0);
                    format!("largest tile {best}")
                }
            );
        }
    }
    if tty {
        eprint!("\r\x1b[2K");
    }
    if args.json {
        let games = records.iter().map(game_json).collect();
        println!("{}", document(args, setup, &records, games));
        return Ok(());
    }
    let s = summary(&records);
    println!(
        "{} on {}: {} games, seeds {} to {}",
        setup.player.name(),
        setup.game_name(),
        s.games,
        args.seed,
        args.seed + args.games - 1
    );
    if let (Some(v), Some(game)) = (start_value(setup), setup.solved()) {
        if game.discount == 1.0 && game.objective == Objective::Win {
            println!("  optimal play wins {v:.4} of games (the store's exact value)");
        } else {
            println!(
                "  optimal {} {v:.4} (the store's exact value)",
                game.value_name()
            );
        }
    }
    print!("{s}");
    println!("  {:.1} s in all", clock.elapsed().as_secs_f64());
    Ok(())
}

/// The store's value of the game from the random start.
fn start_value(setup: &Setup) -> Option<f64> {
    setup
        .oracle
        .as_ref()
        .map(|o| o.solution().summary().start_value)
}

/// One game in the JSON document.
fn game_json(r: &GameRecord) -> serde_json::Value {
    json!({
        "seed": r.seed,
        "moves": r.moves(),
        "score": r.score,
        "max_tile": r.max_tile(),
        "won": r.won(),
        "outcome": r.outcome,
    })
}

/// The one JSON object of `--json`: the games and their summary.
fn document(
    args: &Args,
    setup: &Setup,
    records: &[GameRecord],
    games: Vec<serde_json::Value>,
) -> serde_json::Value {
    let s = summary(records);
    let reached: Vec<_> = s
        .reached
        .iter()
        .map(|&(tile, share)| json!({"tile": tile, "share": share}))
        .collect();
    let rate = s.win_rate();
    json!({
        "player": setup.player.name(),
        "board": setup.shape,
        "target": setup.target_exp.map(|e| 1u64 << e),
        "store": setup.store,
        "discount": setup.solved().map(|g| g.discount),
        "four_probability": setup.rule.four,
        "start_value": start_value(setup),
        "first_seed": args.seed,
        "games": games,
        "summary": {
            "games": s.games,
            "won": s.won,
            "win_rate": rate,
            "standard_error": rate.map(|r| (r * (1.0 - r) / s.games as f64).sqrt()),
            "mean_score": s.mean_score,
            "median_score": s.median_score,
            "mean_moves": s.mean_moves,
            "moves_per_second": s.moves_per_second,
            "reached": reached,
        },
    })
}
