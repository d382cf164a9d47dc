//! Criterion benchmarks of the core kernels on seeded, realistic inputs:
//! moves, canonicalisation, afterstates and their expansion, the k-way merge of runs,
//! decoding a run's keys, the gather of spawn sums and the solve; and random
//! lookups in a value table larger than the cache, the memory traffic the
//! gather and solve kernels are made of, on the threads rayon has (run it
//! with `RAYON_NUM_THREADS=1` and `2` to see how lookups scale).

use std::collections::BTreeMap;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use solve2048_core::formats::chunk::{decode_keys, encode_keys, ChunkHeader, ChunkKind};
use solve2048_core::kernel::value_table::ValueTable;
use solve2048_core::kernel::{
    afterstates, expand, filed_afterstates, gather, merge, solve, SpawnSums,
};
use solve2048_core::rules::canonical::{canonical, Orientation};
use solve2048_core::rules::moves::Mover;
use solve2048_core::rules::symmetry::canonical4;
use solve2048_core::space::ids::{mix, ChunkId, PartId};
use solve2048_core::{Board, Direction, Game};

/// Seeded mid-game 4x4 boards: a random walk of real play from a fixed seed,
/// keeping the boards of one tile-sum layer.
fn layer_states(game: &Game, sum_goal: u32, want: usize) -> (PartId, Vec<u64>) {
    let mover = Mover::new(game.shape);
    let mut rng = 0x2048_2048_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut by_part: std::collections::BTreeMap<PartId, Vec<u64>> = Default::default();
    while by_part.values().map(Vec::len).max().unwrap_or(0) < want {
        let mut x = 0u64;
        loop {
            let empties: Vec<usize> = (0..16).filter(|&c| (x >> (4 * c)) & 0xF == 0).collect();
            if empties.is_empty() {
                break;
            }
            let cell = empties[(next() % empties.len() as u64) as usize];
            x |= (if next() % 10 == 0 { 2 } else { 1 }) << (4 * cell);
            let b = Board(x);
            if b.tile_sum() >= sum_goal {
                if b.tile_sum() == sum_goal
                    && !mover.is_lost(x)
                    && b.max_exponent() < game.target_exp
                {
                    by_part
                        .entry(PartId {
                            sum: sum_goal,
                            max_exp: b.max_exponent(),
                        })
                        .or_default()
                        .push(canonical(x, solve2048_core::Shape::square(4)));
                }
                break;
            }
            let legal: Vec<u64> = Direction::ALL
                .iter()
                .map(|&d| mover.apply(x, d))
                .filter(|&t| t != x)
                .collect();
            if legal.is_empty() {
                break;
            }
            x = legal[(next() % legal.len() as u64) as usize];
        }
    }
    let (part, mut states) = by_part.into_iter().max_by_key(|(_, v)| v.len()).unwrap();
    states.sort_unstable();
    states.dedup();
    (part, states)
}

fn kernels(c: &mut Criterion) {
    // To 128, not 64: random play seldom reaches tile sum 200 without a 64,
    // so boards of a game to 64 took the walk many minutes to find.
    let game = Game::new(4, 128, 1.0).unwrap();
    let (part, states) = layer_states(&game, 200, 20_000);
    let mover = Mover::new(solve2048_core::Shape::square(4));

    let mut g = c.benchmark_group("board");
    g.throughput(Throughput::Elements(states.len() as u64 * 4));
    g.bench_function("moves_4x4", |b| {
        b.iter(|| {
            states
                .iter()
                .map(|&s| {
                    Direction::ALL
                        .iter()
                        .map(|&d| mover.apply(s, d))
                        .fold(0, u64::wrapping_add)
                })
                .fold(0, u64::wrapping_add)
        })
    });
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("canonical_4x4", |b| {
        b.iter(|| {
            states
                .iter()
                .map(|&s| canonical(s.rotate_left(16), solve2048_core::Shape::square(4)))
                .fold(0, u64::wrapping_add)
        })
    });
    // The four moves' boards of each state, canonicalised one at a time and
    // four at once (`canonical4`: AVX2 lanes where the processor has them).
    let square = solve2048_core::Shape::square(4);
    let moved: Vec<[u64; 4]> = states.iter().map(|&s| mover.apply_all(s)).collect();
    g.throughput(Throughput::Elements(4 * states.len() as u64));
    g.bench_function("canonical_of_moves_4x4", |b| {
        b.iter(|| {
            moved
                .iter()
                .flat_map(|t| t.map(|t| canonical(t, square)))
                .fold(0, u64::wrapping_add)
        })
    });
    g.bench_function("canonical4_of_moves_4x4", |b| {
        b.iter(|| {
            moved
                .iter()
                .flat_map(|&t| canonical4(t, [true; 4], square))
                .fold(0, u64::wrapping_add)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("kernel");
    g.sample_size(10);
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("enumerate_4x4_afterstates", |b| {
        b.iter(|| filed_afterstates(&game, part, &states, |_| Some(1)))
    });
    // An expand task: the states of each successor part from the
    // afterstates filed to it (a 2 spawned a part of the sum above, a 4 two
    // above).
    let filed = filed_afterstates(&game, part, &states, |_| Some(1)).unwrap();
    let expand_all = || -> BTreeMap<_, Vec<u64>> {
        filed
            .iter()
            .map(|(&p, groups)| {
                let tile = (p.sum - part.sum) / 2;
                let after: [&[u64]; 2] = match tile {
                    1 => [&groups[0], &[]],
                    _ => [&[], &groups[0]],
                };
                (p, expand(&game, Orientation::Canonical, after, &[]))
            })
            .collect()
    };
    let spawned: usize = expand_all().values().map(Vec::len).sum();
    g.throughput(Throughput::Elements(spawned as u64));
    g.bench_function("expand_4x4_successors", |b| b.iter(expand_all));
    g.throughput(Throughput::Elements(states.len() as u64));
    // A merge task's k-way merge: 128 runs (a group of a 4x4 layer hears
    // from about that many chunks), overlapping as successors of nearby
    // chunks do.
    let runs: Vec<Vec<u64>> = (0..128u64)
        .map(|r| {
            let mut v: Vec<u64> = (0..20_000)
                .map(|i| mix(r * 1_000_003 + i) % 2_000_000)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let run_keys: usize = runs.iter().map(Vec::len).sum();
    g.throughput(Throughput::Elements(run_keys as u64));
    g.bench_function("merge_128_runs", |b| {
        b.iter(|| {
            let streams: Vec<_> = runs
                .iter()
                .map(|r| r.iter().map(|&k| Ok::<u64, ()>(k)))
                .collect();
            merge(streams).unwrap()
        })
    });
    // Values: gather the spawn sums of the states' distinct afterstates from
    // tables holding every successor, then solve the states from them.
    let succ = expand_all();
    // A run's keys decoded: the successors of the states in their largest
    // part, as an expand writes them.
    let (&run_part, run) = succ.iter().max_by_key(|(_, v)| v.len()).unwrap();
    let header = ChunkHeader {
        kind: ChunkKind::Run,
        game,
        id: ChunkId {
            part: run_part,
            group: 0,
            index: 0,
        },
        count: run.len() as u64,
    };
    let bytes = encode_keys(&header, run, 1);
    g.throughput(Throughput::Elements(run.len() as u64));
    g.bench_function("decode_run_keys", |b| {
        b.iter(|| decode_keys(&bytes, &header).unwrap())
    });
    let table = |sum: u32| {
        let keys: Vec<u64> = succ
            .iter()
            .filter(|(p, _)| p.sum == sum)
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        let t = ValueTable::with_capacity(keys.len());
        for (i, &k) in keys.iter().enumerate() {
            t.insert(k, (i % 97) as f64 / 97.0);
        }
        t
    };
    let (plus2, plus4) = (table(part.sum + 2), table(part.sum + 4));
    let after = afterstates(
        &game,
        &Mover::new(solve2048_core::Shape::square(4)),
        &states,
    );
    g.throughput(Throughput::Elements(after.len() as u64));
    g.bench_function("gather_4x4_afterstates", |b| {
        b.iter(|| gather(&game, Orientation::Canonical, part.sum, 1, &after, &plus2).unwrap())
    });
    let sums = SpawnSums {
        twos: gather(&game, Orientation::Canonical, part.sum, 1, &after, &plus2).unwrap(),
        fours: gather(&game, Orientation::Canonical, part.sum, 2, &after, &plus4).unwrap(),
        afterstates: after,
    };
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("solve_4x4_states", |b| {
        b.iter_batched(
            || (),
            |_| solve(&game, &states, &sums).unwrap(),
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Keys of the lookups bench's table: about 190 MB of slots, far past the
/// cache, as a large layer's table is.
const LOOKUP_TABLE_KEYS: u64 = 8 << 20;

/// Lookups a table answers ahead of the one being read: the solve kernel
/// prefetches its afterstates 8 states (up to 32 lookups) ahead.
const LOOKUPS_AHEAD: usize = 24;

/// Random lookups in a value table of [`LOOKUP_TABLE_KEYS`] keys, each
/// prefetched [`LOOKUPS_AHEAD`] lookups ahead, in batches on all of rayon's
/// threads: lookups a second on 1 and on 2 threads bound what the gather
/// and solve kernels can gain from a second core.
fn lookups(c: &mut Criterion) {
    use rayon::prelude::*;
    let key = |i: u64| mix(i) | 1;
    let mut table = ValueTable::with_capacity(LOOKUP_TABLE_KEYS as usize);
    let keys: Vec<u64> = (0..LOOKUP_TABLE_KEYS).map(key).collect();
    let values: Vec<f64> = (0..LOOKUP_TABLE_KEYS).map(|i| i as f64).collect();
    table.insert_many(&keys, &values);
    // The keys in another random order, so that neighbours share no line.
    let asked: Vec<u64> = (0..LOOKUP_TABLE_KEYS)
        .map(|i| key(mix(i ^ 0x5eed) % LOOKUP_TABLE_KEYS))
        .collect();
    let mut g = c.benchmark_group("table");
    g.sample_size(10);
    g.throughput(Throughput::Elements(asked.len() as u64));
    g.bench_function("lookups_8m_keys", |b| {
        b.iter(|| {
            asked
                .par_chunks(4096)
                .map(|batch| {
                    let mut sum = 0.0;
                    batch
                        .iter()
                        .take(LOOKUPS_AHEAD)
                        .for_each(|&k| table.prefetch(k));
                    for (i, &k) in batch.iter().enumerate() {
                        if let Some(&ahead) = batch.get(i + LOOKUPS_AHEAD) {
                            table.prefetch(ahead);
                        }
                        sum += table.get(k).expect("every asked key is in the table");
                    }
                    sum
                })
                .sum::<f64>()
        })
    });
    g.finish();
}

criterion_group!(benches, kernels, lookups);
criterion_main!(benches);
