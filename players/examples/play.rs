//! Play seeded games with a player and print their summary (moves per
//! second, mean and median score, the share of games reaching each tile).
//!
//! ```sh
//! cargo run --release -p solve2048-players --example play -- \
//!     --board 4 --player expectimax:2 --games 20 [--target 2048] [--seed 0] [--replay]
//! ```
//!
//! Games use seeds `seed .. seed + games`. `--replay` prints each game move
//! by move.

use solve2048_players::{parse, simulate, summary, Parsed};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let n: usize = flag("--board").ok_or("--board N is required")?.parse()?;
    let spec = flag("--player").ok_or("--player SPEC is required")?;
    let games: u64 = flag("--games").unwrap_or_else(|| "10".into()).parse()?;
    let seed: u64 = flag("--seed").unwrap_or_else(|| "0".into()).parse()?;
    let target_exp = match flag("--target") {
        Some(t) => {
            let t: u32 = t.parse()?;
            if !t.is_power_of_two() || t < 8 {
                return Err(format!("target {t} is not a power of two from 8").into());
            }
            Some(t.trailing_zeros() as u8)
        }
        None => None,
    };
    let mut player = match parse(&spec, n, seed)? {
        Parsed::Player(p) => p,
        Parsed::Optimal => return Err("optimal needs a solved store (use solve2048 play)".into()),
    };
    let mut records = Vec::new();
    for s in seed..seed + games {
        let r = simulate(n, target_exp, player.as_mut(), s);
        if args.iter().any(|a| a == "--replay") {
            println!("game {s}:\n{}", r.replay());
        }
        eprintln!(
            "seed {s}: {:?}, score {}, max tile {}, {} moves, {:.0} moves/s",
            r.outcome,
            r.score,
            r.max_tile(),
            r.moves(),
            r.moves() as f64 / r.seconds.max(1e-9)
        );
        records.push(r);
    }
    print!("{} on {n}x{n}: {}", player.name(), summary(&records));
    Ok(())
}
