//! Candidate codecs for a solved store's values (or a run's responses, or
//! its policy), measured on its real chunks: bytes a state, and encode and
//! decode speed, of each candidate, each checked to round-trip bit for bit.
//!
//! `cargo run --release -p solve2048-core --example value_codecs -- STORE [values|responses|policy]`
//!
//! STORE is a local store directory; `values` (the default) reads its
//! `values/` objects, `responses` its `responses/` bundles (transient: copy
//! them aside while a solve runs), `policy` its `policy/` objects;
//! `afterstates` reads values with their states and policy and measures the
//! format-5 coding by afterstate (`format5`: that coding only, timed); `row`
//! prints the store's `exact_share,values,policy` (the share of values
//! exactly 0 or 1, and bytes a state of `values/` and `policy/`), as
//! `plan/data/value-bytes.csv` holds them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use solve2048_core::formats::chunk::{
    self, ChunkHeader, ChunkKind, SolvedChunk, HEADER_LEN, MAGIC,
};
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::Game;

/// zstd level of stored chunks (the default of `solve --zstd-level`).
const LEVEL: i32 = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (store, kind) = match args.as_slice() {
        [s] => (PathBuf::from(s), "values"),
        [s, k]
            if [
                "values",
                "responses",
                "policy",
                "afterstates",
                "format5",
                "row",
            ]
            .contains(&k.as_str()) =>
        {
            (PathBuf::from(s), k.as_str())
        }
        _ => {
            eprintln!(
                "usage: value_codecs STORE [values|responses|policy|afterstates|format5|row]"
            );
            std::process::exit(2);
        }
    };
    if kind == "row" {
        row(&store);
        return;
    }
    if kind == "afterstates" || kind == "format5" {
        afterstates(&store, kind == "format5");
        return;
    }
    let mut files = Vec::new();
    walk(&store.join(kind), &mut files);
    if files.is_empty() {
        eprintln!(
            "value_codecs: no objects under {}",
            store.join(kind).display()
        );
        std::process::exit(2);
    }
    files.retain(|f| !f.to_string_lossy().contains('#'));
    files.sort();
    if kind == "policy" {
        policy(&files);
    } else {
        values(&files);
    }
}

/// The chunk an object under `store/base/` holds: its path there without
/// the attempt tag (`-a` and its digits).
fn chunk_name(store: &Path, object: &Path, base: &str) -> String {
    let s = object
        .strip_prefix(store.join(base))
        .unwrap()
        .to_string_lossy()
        .to_string();
    s[..s.rfind("-a").unwrap()].to_string()
}

/// The states and policy of the chunk whose values are `values_file`,
/// with the policy object's bytes.
fn states_and_policy(
    store: &Path,
    states_of: &std::collections::HashMap<String, PathBuf>,
    values_file: &Path,
) -> (Vec<u64>, Vec<u8>, u64) {
    let sb = std::fs::read(&states_of[&chunk_name(store, values_file, "values")]).unwrap();
    let (hs, _) = ChunkHeader::read(&sb).unwrap();
    let states = chunk::decode_keys(&sb, &hs).unwrap();
    let pb = std::fs::read(
        store
            .join("policy")
            .join(values_file.strip_prefix(store.join("values")).unwrap()),
    )
    .unwrap();
    let (hp, _) = ChunkHeader::read(&pb).unwrap();
    let policy = chunk::decode_policy(&pb, &hp).unwrap();
    (states, policy, pb.len() as u64)
}

/// Each states chunk file of `store`, by its chunk's name.
fn states_by_chunk(store: &Path) -> std::collections::HashMap<String, PathBuf> {
    let mut files = Vec::new();
    walk(&store.join("states"), &mut files);
    files
        .into_iter()
        .map(|p| (chunk_name(store, &p, "states"), p))
        .collect()
}

/// Every file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The chunks of an object: one, or a bundle's sections one after another.
fn sections(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    while bytes.len() - at >= HEADER_LEN {
        let len = u64::from_le_bytes(bytes[at + 48..at + 56].try_into().unwrap()) as usize;
        let end = at + HEADER_LEN + len;
        out.push(&bytes[at..end.min(bytes.len())]);
        at = end;
    }
    out
}

/// A values header for the codecs that write whole chunks (its game only
/// matters to the coding by afterstate).
fn values_header(count: usize) -> ChunkHeader {
    ChunkHeader {
        kind: ChunkKind::Values,
        game: Game::new(3, 1024, 1.0).unwrap(),
        id: ChunkId {
            part: PartId { sum: 4, max_exp: 1 },
            group: 0,
            index: 0,
        },
        count: count as u64,
    }
}

/// A candidate codec of a chunk's values.
struct Candidate {
    name: &'static str,
    encode: fn(&[f64]) -> Vec<u8>,
    decode: fn(&[u8], usize) -> Vec<f64>,
}

/// One candidate's totals.
#[derive(Default)]
struct Tally {
    bytes: u64,
    encode: Duration,
    decode: Duration,
}

fn values(files: &[PathBuf]) {
    let candidates = [
        Candidate {
            name: "plain (f64 LE, zstd; format 4)",
            encode: plain_encode,
            decode: plain_decode,
        },
        Candidate {
            name: "byte planes, zstd",
            encode: |v| zstd_of(&planes(&bits(v))),
            decode: |b, n| from_bits(&unplanes(&unzstd(b, n * 8), n)),
        },
        Candidate {
            name: "xor previous, byte planes, zstd",
            encode: |v| zstd_of(&planes(&xor_prev(&bits(v)))),
            decode: |b, n| from_bits(&unxor_prev(&unplanes(&unzstd(b, n * 8), n))),
        },
        Candidate {
            name: "pco (level 8)",
            encode: |v| pco::standalone::simple_compress(v, &pco::ChunkConfig::default()).unwrap(),
            decode: |b, _| pco::standalone::simple_decompress(b).unwrap(),
        },
        Candidate {
            name: "dictionary sorted: deltas and ranks in byte planes, zstd",
            encode: dict_sorted_encode,
            decode: dict_sorted_decode,
        },
        Candidate {
            name: "dictionary sorted: deltas and ranks, pco",
            encode: dict_sorted_pco_encode,
            decode: dict_sorted_pco_decode,
        },
        Candidate {
            name: "format 5 coded each state (its tokens without afterstates)",
            encode: |v| chunk::encode_values(&values_header(v.len()), v, LEVEL),
            decode: |b, _| chunk::decode_values(b, &values_header(u64::MAX as usize)).unwrap(),
        },
        Candidate {
            name: "tokens (0, 1, new, back-reference), new values xor'd in planes, zstd a stream",
            encode: tokens_encode,
            decode: tokens_decode,
        },
    ];
    let mut tallies: Vec<Tally> = candidates.iter().map(|_| Tally::default()).collect();
    let (mut states, mut chunks, mut exact, mut distinct) = (0u64, 0u64, 0u64, 0u64);
    let mut info = 0f64;
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        for section in sections(&bytes) {
            let (h, _): (ChunkHeader, _) = ChunkHeader::read(section).unwrap();
            let v = chunk::decode_values(section, &h).unwrap();
            states += v.len() as u64;
            chunks += 1;
            exact += v.iter().filter(|&&x| x == 0.0 || x == 1.0).count() as u64;
            let mut d = bits(&v);
            d.sort_unstable();
            d.dedup();
            distinct += d.len() as u64;
            info += information(&v);
            for (c, t) in candidates.iter().zip(&mut tallies) {
                let clock = Instant::now();
                let e = (c.encode)(&v);
                t.encode += clock.elapsed();
                let clock = Instant::now();
                let back = (c.decode)(&e, v.len());
                t.decode += clock.elapsed();
                assert!(
                    back.len() == v.len()
                        && back.iter().zip(&v).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{} does not round-trip {}",
                    c.name,
                    f.display()
                );
                t.bytes += e.len() as u64
                    + if e.len() > HEADER_LEN && e[..8] == MAGIC {
                        0
                    } else {
                        HEADER_LEN as u64
                    };
            }
        }
    }
    let n = states as f64;
    println!(
        "{chunks} chunks, {states} values; exactly 0 or 1: {:.4}; distinct in their chunk: {:.4} a state",
        exact as f64 / n,
        distinct as f64 / n
    );
    println!(
        "information estimate: {:.4} bytes a state (the distinct values as a sorted set, \
         log2 of each gap + 1.44 bits, and each state's value among them at its order-0 entropy)",
        info / 8.0 / n
    );
    println!("bytes/state  encode MB/s  decode MB/s  codec (header included)");
    for (c, t) in candidates.iter().zip(&tallies) {
        let mbs = |d: Duration| n * 8.0 / 1e6 / d.as_secs_f64();
        println!(
            "{:11.4}  {:11.0}  {:11.0}  {}",
            t.bytes as f64 / n,
            mbs(t.encode),
            mbs(t.decode),
            c.name
        );
    }
}

fn policy(files: &[PathBuf]) {
    let (mut states, mut plain, mut packed, mut v5) = (0u64, 0u64, 0u64, 0u64);
    let (mut hist, mut t_plain, mut t_packed) = ([0u64; 4], Duration::ZERO, Duration::ZERO);
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        let (h, _) = ChunkHeader::read(&bytes).unwrap();
        let a = chunk::decode_policy(&bytes, &h).unwrap();
        states += a.len() as u64;
        for &x in &a {
            hist[x as usize] += 1;
        }
        let clock = Instant::now();
        plain += zstd_of(&a).len() as u64 + HEADER_LEN as u64;
        t_plain += clock.elapsed();
        let clock = Instant::now();
        let p: Vec<u8> = a
            .chunks(4)
            .map(|q| {
                q.iter()
                    .enumerate()
                    .fold(0u8, |b, (i, &x)| b | (x << (2 * i)))
            })
            .collect();
        packed += zstd_of(&p).len() as u64 + HEADER_LEN as u64;
        t_packed += clock.elapsed();
        v5 += chunk::encode_policy(&h, &a, LEVEL).len() as u64;
    }
    let n = states as f64;
    let h: f64 = hist
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| -(c as f64 / n) * (c as f64 / n).log2())
        .sum();
    println!(
        "{states} policy codes; order-0 entropy {:.4} bytes a state",
        h / 8.0
    );
    println!(
        "{:.4} B/state plain codes, zstd ({:.0} MB/s)",
        plain as f64 / n,
        n / 1e6 / t_plain.as_secs_f64()
    );
    println!(
        "{:.4} B/state 2 bits packed, zstd ({:.0} MB/s)",
        packed as f64 / n,
        n / 1e6 / t_packed.as_secs_f64()
    );
    println!("{:.4} B/state format 5", v5 as f64 / n);
}

fn plain_encode(v: &[f64]) -> Vec<u8> {
    zstd_of(&v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
}

fn plain_decode(b: &[u8], n: usize) -> Vec<f64> {
    unzstd(b, n * 8)
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn zstd_of(b: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(b, LEVEL).unwrap()
}

fn unzstd(b: &[u8], limit: usize) -> Vec<u8> {
    zstd::bulk::decompress(b, limit.max(1)).unwrap()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn from_bits(b: &[u64]) -> Vec<f64> {
    b.iter().map(|&x| f64::from_bits(x)).collect()
}

/// The bytes of `w`-byte little-endian words, plane by plane (all first
/// bytes, then all second bytes, ...).
fn planes_w(x: &[u64], w: usize) -> Vec<u8> {
    let mut out = vec![0u8; x.len() * w];
    for (i, v) in x.iter().enumerate() {
        for b in 0..w {
            out[b * x.len() + i] = (v >> (8 * b)) as u8;
        }
    }
    out
}

fn unplanes_w(p: &[u8], n: usize, w: usize) -> Vec<u64> {
    (0..n)
        .map(|i| (0..w).fold(0u64, |v, b| v | (p[b * n + i] as u64) << (8 * b)))
        .collect()
}

fn planes(x: &[u64]) -> Vec<u8> {
    planes_w(x, 8)
}

fn unplanes(p: &[u8], n: usize) -> Vec<u64> {
    unplanes_w(p, n, 8)
}

fn xor_prev(x: &[u64]) -> Vec<u64> {
    let mut prev = 0;
    x.iter()
        .map(|&v| {
            let d = v ^ prev;
            prev = v;
            d
        })
        .collect()
}

fn unxor_prev(x: &[u64]) -> Vec<u64> {
    let mut prev = 0;
    x.iter()
        .map(|&d| {
            prev ^= d;
            prev
        })
        .collect()
}

/// Distinct bits sorted, and each value's rank among them.
fn dictionary(v: &[f64]) -> (Vec<u64>, Vec<u64>) {
    let b = bits(v);
    let mut d = b.clone();
    d.sort_unstable();
    d.dedup();
    let ranks = b
        .iter()
        .map(|x| d.binary_search(x).unwrap() as u64)
        .collect();
    (d, ranks)
}

fn deltas(d: &[u64]) -> Vec<u64> {
    let mut prev = 0;
    d.iter()
        .map(|&x| {
            let r = x - prev;
            prev = x;
            r
        })
        .collect()
}

fn undeltas(d: &[u64]) -> Vec<u64> {
    let mut prev = 0u64;
    d.iter()
        .map(|&x| {
            prev += x;
            prev
        })
        .collect()
}

fn width(max: u64) -> usize {
    (64 - max.leading_zeros() as usize).div_ceil(8).max(1)
}

fn dict_sorted_encode(v: &[f64]) -> Vec<u8> {
    let (d, ranks) = dictionary(v);
    let w = width(d.len() as u64);
    let mut body = (d.len() as u64).to_le_bytes().to_vec();
    body.extend(planes(&deltas(&d)));
    body.extend(planes_w(&ranks, w));
    zstd_of(&body)
}

fn dict_sorted_decode(b: &[u8], n: usize) -> Vec<f64> {
    let body = unzstd(b, 8 + n * 16);
    let dn = u64::from_le_bytes(body[..8].try_into().unwrap()) as usize;
    let d = undeltas(&unplanes(&body[8..8 + dn * 8], dn));
    let ranks = unplanes_w(&body[8 + dn * 8..], n, width(dn as u64));
    ranks
        .iter()
        .map(|&r| f64::from_bits(d[r as usize]))
        .collect()
}

fn dict_sorted_pco_encode(v: &[f64]) -> Vec<u8> {
    let (d, ranks) = dictionary(v);
    let c = pco::ChunkConfig::default();
    let a = pco::standalone::simple_compress(&deltas(&d), &c).unwrap();
    let mut out = (a.len() as u64).to_le_bytes().to_vec();
    out.extend(a);
    out.extend(pco::standalone::simple_compress(&ranks, &c).unwrap());
    out
}

fn dict_sorted_pco_decode(b: &[u8], _: usize) -> Vec<f64> {
    let la = u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    let d = undeltas(&pco::standalone::simple_decompress::<u64>(&b[8..8 + la]).unwrap());
    let ranks = pco::standalone::simple_decompress::<u64>(&b[8 + la..]).unwrap();
    ranks
        .iter()
        .map(|&r| f64::from_bits(d[r as usize]))
        .collect()
}

/// Streams, each zstd'd and preceded by its length.
fn frames(streams: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for s in streams {
        let z = zstd_of(s);
        out.extend((z.len() as u32).to_le_bytes());
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(z);
    }
    out
}

fn unframes(mut b: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let zl = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
        let l = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
        out.push(unzstd(&b[8..8 + zl], l));
        b = &b[8 + zl..];
    }
    out
}

fn put_varint(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> u64 {
    let (mut x, mut s) = (0u64, 0);
    loop {
        let c = b[*at];
        *at += 1;
        x |= ((c & 0x7f) as u64) << s;
        if c < 0x80 {
            return x;
        }
        s += 7;
    }
}

fn tokens_encode(v: &[f64]) -> Vec<u8> {
    let (zero, one) = (0f64.to_bits(), 1f64.to_bits());
    let mut seen = std::collections::HashMap::new();
    let (mut tokens, mut refs, mut news) = (Vec::new(), Vec::new(), Vec::new());
    for x in v {
        let b = x.to_bits();
        if b == zero {
            tokens.push(0);
        } else if b == one {
            tokens.push(1);
        } else if let Some(&id) = seen.get(&b) {
            let d = seen.len() as u64 - 1 - id;
            if d == 0 {
                tokens.push(2);
            } else {
                tokens.push(3);
                put_varint(&mut refs, d - 1);
            }
        } else {
            seen.insert(b, seen.len() as u64);
            tokens.push(4);
            news.push(b);
        }
    }
    frames(&[tokens, refs, planes(&xor_prev(&news))])
}

fn tokens_decode(b: &[u8], n: usize) -> Vec<f64> {
    let s = unframes(b);
    let news = unxor_prev(&unplanes(&s[2], s[2].len() / 8));
    let (mut at, mut next, mut out) = (0, 0, Vec::with_capacity(n));
    for &t in &s[0] {
        out.push(match t {
            0 => 0.0,
            1 => 1.0,
            2 => f64::from_bits(news[next - 1]),
            3 => f64::from_bits(news[next - 2 - get_varint(&s[1], &mut at) as usize]),
            _ => {
                next += 1;
                f64::from_bits(news[next - 1])
            }
        });
    }
    out
}

/// An estimate of the bits a chunk's values hold: the set of distinct
/// values (a random subset of the doubles between its ends costs about
/// log2(gap) + log2(e) bits an element), and the order-0 entropy of which
/// one each state takes.
fn information(v: &[f64]) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for x in v {
        *counts.entry(x.to_bits()).or_insert(0u64) += 1;
    }
    let mut d: Vec<u64> = counts.keys().copied().collect();
    d.sort_unstable();
    let set: f64 = d
        .windows(2)
        .map(|w| ((w[1] - w[0]) as f64).log2() + std::f64::consts::LOG2_E)
        .sum::<f64>()
        + 64.0;
    let n = v.len() as f64;
    let which: f64 = counts
        .values()
        .map(|&c| -(c as f64) * (c as f64 / n).log2())
        .sum();
    set + which
}

/// What the `afterstates` and `format5` modes say of a store of another
/// format: they measure format 5 against a store's format-4 values.
const FORMAT4_ONLY: &str = "the afterstates and format5 modes measure a store of chunk \
                            format 4 (values readable without their states)";

/// How far a chunk's values follow from its best afterstates: states whose
/// optimal move leads to the same canonical afterstate have the same value
/// (in a win game), so the values of its distinct best afterstates, in the
/// order the states first reach them, are all a reader given the states
/// and the policy would need.
fn afterstates(store: &Path, only_format5: bool) {
    use solve2048_core::rules::canonical::canonical;
    use solve2048_core::rules::moves::{has_exponent, Mover};
    use solve2048_core::Direction;
    let mut files = Vec::new();
    walk(&store.join("values"), &mut files);
    let states_of = states_by_chunk(store);
    let (mut n, mut distinct_after, mut wins, mut clashes, mut bytes, mut tok_bytes) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut v5, mut v4, mut enc, mut dec, mut dec4) =
        (0u64, 0u64, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut stream_bytes = [(0u64, 0u64); 4];
    for f in &files {
        let vb = std::fs::read(f).unwrap();
        let (hv, _) = ChunkHeader::read(&vb).unwrap();
        let values = chunk::decode_values(&vb, &hv).expect(FORMAT4_ONLY);
        let (states, policy, _) = states_and_policy(store, &states_of, f);
        let game = hv.game;
        let mover = Mover::new(game.shape);
        let mut seen: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
        let mut stream = Vec::new();
        for ((&s, &v), &a) in states
            .iter()
            .zip(&values)
            .zip(&policy)
            .filter(|_| !only_format5)
        {
            let t = mover.apply(s, Direction::ALL[a as usize]);
            if has_exponent(t, game.target_exp) {
                wins += 1;
                continue;
            }
            let c = canonical(t, game.shape);
            match seen.get(&c) {
                Some(&w) if w != v.to_bits() => clashes += 1,
                Some(_) => {}
                None => {
                    seen.insert(c, v.to_bits());
                    stream.push(v);
                }
            }
        }
        let solved = SolvedChunk {
            states: &states,
            policy: &policy,
        };
        let clock = Instant::now();
        let coded = chunk::encode_solved_values(&hv, &values, solved, LEVEL);
        enc += clock.elapsed();
        let clock = Instant::now();
        let back = chunk::decode_solved_values(&coded, &hv, solved).unwrap();
        dec += clock.elapsed();
        assert!(
            back.iter()
                .zip(&values)
                .all(|(a, b)| a.to_bits() == b.to_bits())
                && back.len() == values.len()
        );
        let clock = Instant::now();
        chunk::decode_values(&vb, &hv).unwrap();
        dec4 += clock.elapsed();
        v5 += coded.len() as u64;
        for (i, (raw, z)) in streams(&coded[HEADER_LEN..]).into_iter().enumerate() {
            stream_bytes[i].0 += raw;
            stream_bytes[i].1 += z;
        }
        v4 += vb.len() as u64;
        n += states.len() as u64;
        distinct_after += seen.len() as u64;
        if !only_format5 {
            bytes += (tokens_encode(&stream).len() + HEADER_LEN) as u64;
            tok_bytes += (tokens_encode(&values).len() + HEADER_LEN) as u64;
        }
    }
    let n = n as f64;
    println!(
        "{} states: winning best moves {:.4}, distinct best afterstates {:.4} a state, \
         states whose value differs from their afterstate's first {:.6}",
        n,
        wins as f64 / n,
        distinct_after as f64 / n,
        clashes as f64 / n
    );
    println!(
        "values of the distinct best afterstates in first-reached order, tokens codec: {:.4} B/state \
         (every value, tokens codec: {:.4})",
        bytes as f64 / n,
        tok_bytes as f64 / n
    );
    let ns = |d: Duration| d.as_secs_f64() * 1e9 / n;
    println!(
        "format 5: {:.4} B/state (the store's chunks: {:.4}); encode {:.1} ns a state, decode {:.1} (the store's chunks: {:.1})",
        v5 as f64 / n,
        v4 as f64 / n,
        ns(enc),
        ns(dec),
        ns(dec4)
    );
    for (name, (raw, z)) in ["tokens", "exceptions", "references", "new values"]
        .iter()
        .zip(stream_bytes)
    {
        println!(
            "  {name}: {:.4} B/state raw, {:.4} compressed",
            raw as f64 / n,
            z as f64 / n
        );
    }
}

/// The (raw, compressed) lengths of a format-5 values payload's streams
/// (none for the plain coding).
fn streams(payload: &[u8]) -> Vec<(u64, u64)> {
    if payload[0] == 0 {
        return Vec::new();
    }
    let mut at = 1;
    (0..4)
        .map(|_| {
            let raw = get_varint(payload, &mut at);
            let z = get_varint(payload, &mut at);
            at += z as usize;
            (raw, z)
        })
        .collect()
}

/// A solved chunk's values, read with its states and policy (any format
/// version), and its values and policy objects' bytes.
fn solved_chunks(store: &Path) -> Vec<(Vec<f64>, u64, u64)> {
    let mut files = Vec::new();
    walk(&store.join("values"), &mut files);
    files.retain(|f| !f.to_string_lossy().contains('#'));
    let states_of = states_by_chunk(store);
    files
        .iter()
        .map(|f| {
            let vb = std::fs::read(f).unwrap();
            let (hv, _) = ChunkHeader::read(&vb).unwrap();
            let (states, policy, policy_bytes) = states_and_policy(store, &states_of, f);
            let solved = SolvedChunk {
                states: &states,
                policy: &policy,
            };
            let values = chunk::decode_solved_values(&vb, &hv, solved).unwrap();
            (values, vb.len() as u64, policy_bytes)
        })
        .collect()
}

/// `exact_share,values,policy` of a solved store.
fn row(store: &Path) {
    let (mut n, mut exact, mut vbytes, mut pbytes) = (0u64, 0u64, 0u64, 0u64);
    for (values, v, p) in solved_chunks(store) {
        n += values.len() as u64;
        exact += values.iter().filter(|&&x| x == 0.0 || x == 1.0).count() as u64;
        vbytes += v;
        pbytes += p;
    }
    let n = n.max(1) as f64;
    println!(
        "{:.5},{:.5},{:.5}",
        exact as f64 / n,
        vbytes as f64 / n,
        pbytes as f64 / n
    );
}
