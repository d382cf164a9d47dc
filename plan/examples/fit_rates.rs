//! Fit `plan`'s rates (`plan/src/duration.rs`) to measured runs, as they
//! were fitted: each pass's wall seconds (`enumerate_seconds` and
//! `solve_seconds` of `solve --json`, the mean of a few runs) of
//!
//! - 4x4 to 16 at 1 and 2 threads: the 4x4 rates of layers that stay in
//!   cache (at 1 thread) and the shares spread over the threads (at 2);
//! - 4x4 to 32 at 2 threads, `--memory 2`: the 4x4 rates of larger layers;
//! - 3x3 to 1024 at 1 and 2 threads: the 3x3 rates, between the two.
//!
//! Each figure is divided by `slower` (how much slower the machine ran in
//! that sitting than on the day the rates stand for; 1 for none). Prints
//! the fitted rates and each pass of each run against the model.
//!
//! ```text
//! cargo run --release -p solve2048-plan --example fit_rates -- SLOWER \
//!     F16_1 B16_1 F16_2 B16_2 F32_2 B32_2 F1024_1 B1024_1 F1024_2 B1024_2
//! ```

use solve2048_core::Game;
use solve2048_plan::counts::{part_counts, PartCount};
use solve2048_plan::duration::{duration, Rates, FOUR_BY_FOUR, SMALL_BOARDS};
use solve2048_plan::Cluster;

/// A game's parts, counted once: the fit runs the model hundreds of times.
fn parts(n: u8, target: u64) -> Vec<PartCount> {
    part_counts(&Game::new(n.into(), target, 1.0).expect("a valid game"))
}

/// The model's forward and backward seconds of a game of `parts` for one
/// worker of `threads`.
fn model(parts: &[PartCount], threads: u32, rates: Rates) -> (f64, f64) {
    let cluster = Cluster {
        workers: 1,
        threads_per_worker: threads,
        worker_memory_bytes: 16 << 30,
        slots: 2,
        chunk_size: 1 << 22,
        recompute_values: false,
    };
    let d = duration(parts, rates, &cluster);
    (d.enumerate_seconds, d.solve_seconds)
}

/// The most a share can be (all of a task spread over the threads is 1).
const SHARE: f64 = 0.999;

/// The most a rate can be, in states a second a core.
const RATE: f64 = 1e9;

/// The `x` in `low..high` where `f` (monotonic) crosses 0.
fn root(low: f64, high: f64, f: impl Fn(f64) -> f64) -> f64 {
    let (mut a, mut b) = (low, high);
    let sign = f(a) > 0.0;
    for _ in 0..200 {
        let m = (a + b) / 2.0;
        if (f(m) > 0.0) == sign {
            a = m;
        } else {
            b = m;
        }
    }
    (a + b) / 2.0
}

/// Eleven positive numbers: `slower`, then the ten passes' seconds.
fn arguments() -> Option<(f64, [f64; 10])> {
    let args: Vec<f64> = (std::env::args().skip(1))
        .map(|a| a.parse().ok().filter(|&x: &f64| x > 0.0))
        .collect::<Option<_>>()?;
    let (&slower, measured) = args.split_first()?;
    Some((slower, measured.try_into().ok()?))
}

/// A run's game (its parts), threads and pass (0 forward, 1 backward).
type Run<'a> = (&'a [PartCount], u32, usize);

/// The value, from 0 to `most`, of one field of `rates` (a share or a
/// rate) at which the model's pass of `run` takes `measured` seconds.
fn fitted(
    rates: Rates,
    set: impl Fn(&mut Rates, f64),
    most: f64,
    (parts, threads, pass): Run,
    measured: f64,
) -> f64 {
    root(0.0, most, |x| {
        let mut r = rates;
        set(&mut r, x);
        let (forward, backward) = model(parts, threads, r);
        [forward, backward][pass] - measured
    })
}

fn main() {
    let Some((slower, measured)) = arguments() else {
        eprintln!(
            "usage: fit_rates SLOWER F16_1 B16_1 F16_2 B16_2 F32_2 B32_2 F1024_1 B1024_1 \
             F1024_2 B1024_2 (positive seconds; see the example's docs)"
        );
        std::process::exit(2);
    };
    let [f16_1, b16_1, f16_2, b16_2, f32, b32, f3_1, b3_1, f3_2, b3_2] =
        measured.map(|s| s / slower);

    let (p16, p32, p1024) = (parts(4, 16), parts(4, 32), parts(3, 1024));

    // Durations are inversely proportional to the rates: fit at rate 1.
    let mut four = FOUR_BY_FOUR;
    let unit = Rates {
        enumerate_cached_per_core: 1.0,
        solve_cached_per_core: 1.0,
        ..four
    };
    let at_one = model(&p16, 1, unit);
    four.enumerate_cached_per_core = at_one.0 / f16_1;
    four.solve_cached_per_core = at_one.1 / b16_1;
    // The shares, then the large layers' rates, each in turn.
    type Field = fn(&mut Rates, f64);
    let fits: [(Field, f64, Run, f64); 4] = [
        (|r, p| r.enumerate_parallel = p, SHARE, (&p16, 2, 0), f16_2),
        (|r, p| r.solve_parallel = p, SHARE, (&p16, 2, 1), b16_2),
        (|r, x| r.enumerate_per_core = x, RATE, (&p32, 2, 0), f32),
        (|r, x| r.solve_per_core = x, RATE, (&p32, 2, 1), b32),
    ];
    for (set, most, run, measured) in fits {
        let x = fitted(four, set, most, run, measured);
        set(&mut four, x);
    }

    // 3x3: one rate a pass, the geometric mean of the two runs' fits.
    let mut small = SMALL_BOARDS;
    let unit = Rates {
        enumerate_per_core: 1.0,
        solve_per_core: 1.0,
        enumerate_cached_per_core: 1.0,
        solve_cached_per_core: 1.0,
        ..small
    };
    let (one, two) = (model(&p1024, 1, unit), model(&p1024, 2, unit));
    let forward = (one.0 * two.0 / (f3_1 * f3_2)).sqrt();
    let backward = (one.1 * two.1 / (b3_1 * b3_2)).sqrt();
    (small.enumerate_per_core, small.enumerate_cached_per_core) = (forward, forward);
    (small.solve_per_core, small.solve_cached_per_core) = (backward, backward);

    println!("4x4: {four:#?}\n3x3: {small:#?}");
    let runs = [
        ("4x4 to 16", &p16, 1, f16_1, b16_1, four),
        ("4x4 to 16", &p16, 2, f16_2, b16_2, four),
        ("4x4 to 32", &p32, 2, f32, b32, four),
        ("3x3 to 1024", &p1024, 1, f3_1, b3_1, small),
        ("3x3 to 1024", &p1024, 2, f3_2, b3_2, small),
    ];
    for (game, parts, threads, f, b, rates) in runs {
        let (pf, pb) = model(parts, threads, rates);
        println!(
            "{game} at {threads}: forward {f:.3} s against {pf:.3} planned ({:.3}), \
             backward {b:.3} against {pb:.3} ({:.3})",
            f / pf,
            b / pb
        );
    }
}
