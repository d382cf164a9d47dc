//! Playing strength, over a few seeded games.

use solve2048_core::Shape;
use solve2048_players::{parse, simulate, summary, Parsed, Player};

fn build(spec: &str, n: usize) -> Box<dyn Player> {
    match parse(
        spec,
        Shape::square(n as u8),
        &solve2048_core::rules::spawn::SpawnRule::standard(),
        0,
    )
    .unwrap()
    {
        Parsed::Player(p) => p,
        Parsed::Optimal => unreachable!(),
    }
}

fn mean_score(spec: &str, n: usize, games: u64) -> f64 {
    let mut p = build(spec, n);
    let records: Vec<_> = (0..games)
        .map(|s| {
            simulate(
                Shape::square(n as u8),
                None,
                &solve2048_core::rules::spawn::SpawnRule::standard(),
                p.as_mut(),
                s,
            )
        })
        .collect();
    summary(&records).mean_score
}

#[test]
fn expectimax_2_beats_random_on_4x4_by_far() {
    let random = mean_score("random", 4, 20);
    let expectimax = mean_score("expectimax:2", 4, 3);
    assert!(
        expectimax > 10.0 * random,
        "expectimax:2 mean score {expectimax}, random {random}"
    );
}

#[test]
fn heuristic_players_beat_random_on_4x4() {
    let random = mean_score("random", 4, 50);
    for spec in ["greedy", "schain", "mc:10"] {
        let s = mean_score(spec, 4, 20);
        assert!(s > 1.5 * random, "{spec} mean score {s}, random {random}");
    }
}

/// The shipped networks load (checksums intact, right board) and play at
/// the level their README gives.
#[test]
fn shipped_networks_load_and_play() {
    // Cargo sets the crate's folder at run time too: a test binary reused
    // from a build in another copy of the repository still finds the files.
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let dir = crate_dir.join("networks");
    let net3 = dir.join("3x3-pentomino.weights");
    let mut p = build(&format!("ntuple:{}", net3.display()), 3);
    let won = (0..400)
        .filter(|&s| {
            simulate(
                Shape::square(3),
                Some(9),
                &solve2048_core::rules::spawn::SpawnRule::standard(),
                p.as_mut(),
                s,
            )
            .won()
        })
        .count();
    assert!(won > 120, "3x3 to 512: won {won} of 400");
    let net4 = dir.join("4x4-rows-squares.weights");
    let score = mean_score(&format!("ntuple:{}", net4.display()), 4, 5);
    assert!(score > 15_000.0, "4x4 mean score {score}");
}
