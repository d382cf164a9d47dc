//! The kernels' floor: a whole game enumerated and solved in memory with the
//! job's kernels, and no store, no codec, no chunks and no join. What the
//! stored job costs beyond this is what its data handling costs.
//!
//! `cargo run --release -p solve2048-core --example floor -- 4 32` (under
//! `/usr/bin/time -v` for core time and peak RSS). It holds every state of
//! the game (8 bytes each) and the value tables of three layers: 4x4 to 32
//! needs about 20 GB.

use std::collections::BTreeMap;
use std::time::Instant;

use solve2048_core::kernel::allocator::HugePageAlloc;
use solve2048_core::kernel::in_memory;
use solve2048_core::Game;

/// The job's allocator ([`solve2048_core::kernel::allocator`]).
#[global_allocator]
static ALLOC: HugePageAlloc = HugePageAlloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [n, target] = args.as_slice() else {
        eprintln!("usage: floor SIDE TARGET (for example: floor 4 32)");
        std::process::exit(2);
    };
    let game = match (n.parse(), target.parse()) {
        (Ok(n), Ok(target)) => Game::new(n, target, 1.0),
        _ => {
            eprintln!("floor: SIDE and TARGET are whole numbers, got {n:?} and {target:?}");
            std::process::exit(2);
        }
    };
    let game = game.unwrap_or_else(|e| {
        eprintln!("floor: {e}");
        std::process::exit(2);
    });
    let clock = Instant::now();
    let mut parts = BTreeMap::new();
    in_memory::enumerate(&game, |part, states| {
        parts.insert(part, states);
    });
    let states: usize = parts.values().map(Vec::len).sum();
    let forward = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let mut total = 0.0;
    in_memory::solve_parts(&game, &parts, |_, _, values| {
        total += values.iter().sum::<f64>();
    });
    println!(
        "{states} states; forward {forward:.1} s, backward {:.1} s (wall); mean value {:.6}",
        clock.elapsed().as_secs_f64(),
        total / states as f64
    );
}
