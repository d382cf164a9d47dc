//! Playing strength, over a few seeded games.

use solve2048_players::{parse, simulate, summary, Parsed, Player};

fn build(spec: &str, n: usize) -> Box<dyn Player> {
    match parse(spec, n, 0).unwrap() {
        Parsed::Player(p) => p,
        Parsed::Optimal => unreachable!(),
    }
}

fn mean_score(spec: &str, n: usize, games: u64) -> f64 {
    let mut p = build(spec, n);
    let records: Vec<_> = (0..games)
        .map(|s| simulate(n, None, p.as_mut(), s))
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
