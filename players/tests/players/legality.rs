//! Every player, every board size: legal moves, distributions that match the
//! moves, determinism given a seed.

use std::sync::Arc;

use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::rng::SeededRng;
use solve2048_core::rules::spawn::SpawnRule;
use solve2048_core::Shape;
use solve2048_players::ntuple::NTuplePlayer;
use solve2048_players::{
    parse, simulate, train, Network, Parsed, Player, PlayerSpec, TrainConfig, TupleSpec,
};

const SPECS: &[&str] = &[
    "random",
    "order:LDRU",
    "order:URDL",
    "greedy",
    "schain",
    "mc:3",
    "expectimax:1",
    "expectimax:2",
];

fn build(spec: &str, n: Shape, seed: u64) -> Box<dyn Player> {
    match parse(
        spec,
        n,
        &solve2048_core::rules::spawn::SpawnRule::standard(),
        seed,
    )
    .unwrap()
    {
        Parsed::Player(p) => p,
        Parsed::Optimal => unreachable!(),
    }
}

/// Boards as games reach them: positions of seeded random games, all sizes
/// of board fill, plus a few lost boards.
fn boards(n: Shape, count: usize, seed: u64) -> Vec<u64> {
    let mover = Mover::new(n);
    let mut rng = SeededRng::new(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let mut x = rng.start(n);
        loop {
            out.push(x);
            let legal: Vec<u64> = solve2048_core::Direction::ALL
                .iter()
                .map(|&d| mover.apply(x, d))
                .filter(|&a| a != x)
                .collect();
            if legal.is_empty() {
                break;
            }
            let pick = legal[rng.below(legal.len() as u64) as usize];
            x = rng.spawn(pick, n);
        }
    }
    out
}

fn ntuple_player(n: Shape, dir: &std::path::Path) -> Box<dyn Player> {
    // A briefly trained network, through its weights file and the spec.
    let mut config = TrainConfig::new(n.rows(), 30, 1).unwrap();
    config.tuples = TupleSpec::default_for(n.rows());
    let path = dir.join(format!("n{n}.weights"));
    train(&config, |_| {}).unwrap().save(&path).unwrap();
    build(&format!("ntuple:{}", path.display()), n, 0)
}

#[test]
fn every_player_plays_legal_moves_on_every_size() {
    let dir = tempfile::tempdir().unwrap();
    for n in Shape::all() {
        let mover = Mover::new(n);
        let mut players: Vec<Box<dyn Player>> = SPECS.iter().map(|s| build(s, n, 7)).collect();
        // Networks are for squares; a rectangle refuses them.
        if n.is_square() {
            players.push(ntuple_player(n, dir.path()));
        }
        let boards = boards(
            n,
            if n.cells() > 9 { 300 } else { 600 },
            100 + n.index() as u64,
        );
        for p in players.iter_mut() {
            for &x in &boards {
                let lost = mover.is_lost(x);
                match p.choose(x) {
                    None => assert!(lost, "{} gave no move on live {x:#x}", p.name()),
                    Some(d) => {
                        assert_ne!(mover.apply(x, d), x, "{} illegal {d:?} on {x:#x}", p.name())
                    }
                }
                if let Ok(dist) = p.distribution(x) {
                    assert_eq!(dist.is_empty(), lost, "{}", p.name());
                    if !lost {
                        let total: f64 = dist.iter().map(|(_, q)| q).sum();
                        assert!((total - 1.0).abs() < 1e-12, "{}", p.name());
                    }
                    for (d, q) in dist {
                        assert!(q > 0.0);
                        assert_ne!(mover.apply(x, d), x, "{} illegal {d:?}", p.name());
                    }
                }
            }
        }
    }
}

#[test]
fn deterministic_players_play_their_distribution() {
    for n in Shape::all() {
        for spec in ["order:LDRU", "greedy", "schain", "expectimax:2"] {
            let mut p = build(spec, n, 0);
            for x in boards(n, 200, 5) {
                let choice = p.choose(x);
                let dist = p.distribution(x).unwrap();
                assert_eq!(
                    dist,
                    choice.map(|d| vec![(d, 1.0)]).unwrap_or_default(),
                    "{spec}"
                );
            }
        }
    }
    let mut mc = build("mc:2", Shape::square(3), 0);
    let e = mc.distribution(0x12).unwrap_err();
    assert!(e.to_string().contains("sampled"), "{e}");
}

#[test]
fn a_seed_gives_the_same_moves_and_games() {
    for n in Shape::all() {
        for spec in SPECS {
            let boards = boards(n, 100, 9);
            let mut a = build(spec, n, 42);
            let mut b = build(spec, n, 42);
            let ma: Vec<_> = boards.iter().map(|&x| a.choose(x)).collect();
            let mb: Vec<_> = boards.iter().map(|&x| b.choose(x)).collect();
            assert_eq!(ma, mb, "{spec} {n}");
            // A game depends on its seed only, not on the player's history.
            let ga = simulate(
                n,
                None,
                &solve2048_core::rules::spawn::SpawnRule::standard(),
                a.as_mut(),
                3,
            );
            let gb = simulate(
                n,
                None,
                &solve2048_core::rules::spawn::SpawnRule::standard(),
                build(spec, n, 1).as_mut(),
                3,
            );
            assert_eq!(ga.steps, gb.steps, "{spec} {n}");
            assert_eq!(ga.score, gb.score);
        }
    }
}

#[test]
fn the_random_player_uses_its_seed() {
    let boards = boards(Shape::square(4), 200, 1);
    let mut a = build("random", Shape::square(4), 1);
    let mut b = build("random", Shape::square(4), 2);
    let ma: Vec<_> = boards.iter().map(|&x| a.choose(x)).collect();
    let mb: Vec<_> = boards.iter().map(|&x| b.choose(x)).collect();
    assert_ne!(ma, mb);
}

#[test]
fn an_ntuple_file_for_another_board_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    Network::new(TupleSpec::default_for(3)).save(&path).unwrap();
    let spec = PlayerSpec::parse(&format!("ntuple:{}", path.display())).unwrap();
    let e = spec
        .build(Shape::square(4), &SpawnRule::standard(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("is for 3x3, not 4x4"), "{e}");
    let e = spec
        .build("3x2".parse().unwrap(), &SpawnRule::standard(), 0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("square boards only") && e.contains("3x2"), "{e}");
    let net = Arc::new(Network::load_for(&path, 3).unwrap());
    let mut p = NTuplePlayer::new(net, "n".into());
    // All weights 0: the largest merge, ties to left first (greedy).
    let mut g = build("greedy", Shape::square(3), 0);
    for x in boards(Shape::square(3), 300, 2) {
        assert_eq!(p.choose(x), g.choose(x));
    }
}
