//! What `check` reads, unit by unit (as the plan lists them): each
//! chunk's header and checksums, and for a solved chunk its decoded contents
//! and result digest.

use bytes::Bytes;
use solve2048_core::chain::Chain;
use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind, FormatError, HEADER_LEN};
use solve2048_core::task::{result_digest, ChunkRef, SolvedRef};

use crate::layout;
use crate::{Store, StoreError};

use super::plan::{Section, Unit};
use super::rejected::Rejected;

/// What reading one unit gave.
#[derive(Default)]
pub(super) struct UnitResult {
    pub(super) rejected: Vec<Rejected>,
    /// (states, digest) of a solved chunk that read back whole.
    pub(super) solved: Option<(u64, u64)>,
}

/// The coordinator epoch in an object's attempt tag (`-a` and 16 hex
/// digits, the epoch the first 8).
pub(super) fn epoch_of(object: &str) -> Option<u32> {
    let name = object.rsplit('/').next()?;
    let stem = name.split('.').next()?;
    let tag = &stem[stem.rfind("-a")? + 2..];
    (tag.len() == 16)
        .then(|| u32::from_str_radix(&tag[..8], 16).ok())
        .flatten()
}

/// The reason of a record's error, without its name (the report names it).
pub(super) fn reason_of(e: StoreError) -> String {
    match e {
        StoreError::Damaged { source, .. } => Chain(&*source).to_string(),
        other => Chain(&other).to_string(),
    }
}

/// Whether `object` is a JSON record of the job.
pub(super) fn is_record(object: &str) -> bool {
    object.ends_with(".json")
        && (!object.contains('/')
            || object.starts_with("commits/")
            || object.starts_with("failures/")
            || object.starts_with("layers/"))
}

/// The task key of a commit record's name.
pub(super) fn commit_key(object: &str) -> Option<&str> {
    object.strip_prefix("commits/")?.strip_suffix(".json")
}

/// Read one unit and check it.
pub(super) async fn check_unit(
    store: &Store,
    unit: Unit,
    tick: &(dyn Fn(u64, u64) + Sync),
) -> UnitResult {
    let (object, checked) = match unit {
        Unit::Solved {
            solved,
            values,
            digest,
            commit,
        } => return check_solved(store, tick, (solved, values), digest, commit).await,
        Unit::States { chunk: c, commit } => {
            let object = layout::states_of(&c);
            let got = fetch(store, object.clone(), tick).await;
            (object, got.map(|b| check_states(&b, &c, &commit)))
        }
        Unit::Bundle { object, sections } => {
            let got = fetch(store, object.clone(), tick).await;
            (object, got.map(|b| check_bundle(&b, &sections)))
        }
        Unit::Unreferenced { object } => {
            let got = fetch(store, object.clone(), tick).await;
            let checked = got.map(|b| check_unreferenced(&object, &b));
            (object, checked)
        }
    };
    let mut out = UnitResult::default();
    match checked {
        Err(r) => out.rejected.push(r),
        Ok(Err(reason)) => out.rejected.push(Rejected { object, reason }),
        Ok(Ok(())) => {}
    }
    out
}

/// Read `object`, counting its bytes; rejected when it cannot be read or
/// is gone.
async fn fetch(
    store: &Store,
    object: String,
    tick: &(dyn Fn(u64, u64) + Sync),
) -> Result<Bytes, Rejected> {
    match store.get(&object).await {
        Ok(Some(b)) => {
            tick(b.len() as u64, 1);
            Ok(b)
        }
        Ok(None) => Err(Rejected {
            reason: "missing (deleted while it was checked?)".into(),
            object,
        }),
        Err(e) => Err(Rejected {
            reason: format!("cannot read: {}", Chain(&e)),
            object,
        }),
    }
}

/// Read a solved chunk's states, values and policy, check each is the one
/// its commit record names, then decode them and compare their result digest
/// with the record's. Where its layer's values are recomputed (`values`
/// false) only its states and policy are read and decoded, and its digest
/// is the record's.
async fn check_solved(
    store: &Store,
    tick: &(dyn Fn(u64, u64) + Sync),
    (solved, values): (SolvedRef, bool),
    digest: u64,
    commit: String,
) -> UnitResult {
    let mut out = UnitResult::default();
    let mut objects = vec![
        (
            layout::states_of(&solved.chunk),
            ChunkKind::States,
            solved.chunk.checksum,
        ),
        (
            layout::policy_of(&solved),
            ChunkKind::Policy,
            solved.policy_checksum,
        ),
    ];
    if values {
        let v = layout::values_of(&solved);
        objects.push((v, ChunkKind::Values, solved.values_checksum));
    }
    let reads = objects.iter().map(|(o, ..)| fetch(store, o.clone(), tick));
    let got = futures::future::join_all(reads).await;
    let mut bytes = Vec::new();
    for ((object, kind, checksum), g) in objects.iter().zip(got) {
        match g.and_then(|b| {
            named_chunk(&b, *kind, &solved.chunk, *checksum, &commit)
                .map(|()| b)
                .map_err(|reason| Rejected {
                    object: object.clone(),
                    reason,
                })
        }) {
            Ok(b) => bytes.push(b),
            Err(r) => out.rejected.push(r),
        }
    }
    if out.rejected.is_empty() {
        let decoded = tokio::task::spawn_blocking(move || decode_solved(&bytes)).await;
        let names: Vec<&str> = objects.iter().map(|(o, ..)| o.as_str()).collect();
        match decoded {
            Ok(Ok((states, None))) => out.solved = Some((states, digest)),
            Ok(Ok((states, Some(d)))) if d == digest => out.solved = Some((states, d)),
            Ok(Ok(_)) => out.rejected.push(Rejected {
                object: layout::commit(&commit),
                reason: format!(
                    "its result digest differs from that of {}",
                    names.join(", ")
                ),
            }),
            Ok(Err((i, e))) => out.rejected.push(Rejected {
                object: objects[i].0.clone(),
                reason: e.to_string(),
            }),
            Err(_) => out.rejected.push(Rejected {
                object: objects[0].0.clone(),
                reason: "decoding panicked".into(),
            }),
        }
    }
    out
}

/// Decode a solved chunk's states, policy and (when read) values: (states,
/// result digest, None without values), or which of them does not decode
/// (its index in `bytes`), and why.
fn decode_solved(bytes: &[Bytes]) -> Result<(u64, Option<u64>), (usize, FormatError)> {
    let h = |b: &[u8]| ChunkHeader::read(b).map(|(h, _)| h);
    let states = h(&bytes[0])
        .and_then(|h| chunk::decode_keys(&bytes[0], &h))
        .map_err(|e| (0, e))?;
    let policy = h(&bytes[1])
        .and_then(|h| chunk::decode_policy(&bytes[1], &h))
        .map_err(|e| (1, e))?;
    let Some(values) = bytes.get(2) else {
        return Ok((states.len() as u64, None));
    };
    let solved = chunk::SolvedChunk {
        states: &states,
        policy: &policy,
    };
    let values = h(values)
        .and_then(|h| chunk::decode_solved_values(values, &h, solved))
        .map_err(|e| (2, e))?;
    Ok((
        states.len() as u64,
        Some(result_digest(&states, &values, &policy)),
    ))
}

/// Check a chunk of states not solved yet: the one its commit record names,
/// and its states decode.
fn check_states(b: &[u8], c: &ChunkRef, commit: &str) -> Result<(), String> {
    named_chunk(b, ChunkKind::States, c, c.checksum, commit)?;
    let (h, _) = ChunkHeader::read(b).map_err(|e| e.to_string())?;
    chunk::decode_keys(b, &h)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Check a bundle: every chunk by its own checksums, then each section at
/// the range its commit record names.
fn check_bundle(b: &[u8], sections: &[Section]) -> Result<(), String> {
    walk_bundle(b)?;
    for s in sections {
        let end = s.offset.saturating_add(s.len);
        if end > b.len() as u64 {
            return Err(format!(
                "bytes {}..{end} named by {} lie past its end ({} bytes)",
                s.offset,
                layout::commit(&s.commit),
                b.len()
            ));
        }
        let blob = &b[s.offset as usize..end as usize];
        match ChunkHeader::read(blob) {
            Err(e) => return Err(format!("bytes {}..{end}: {e}", s.offset)),
            Ok((h, _)) if h.kind != s.kind || h.count != s.count => {
                return Err(format!(
                    "bytes {}..{end} hold {:?} of {} elements, but {} names {:?} of {}",
                    s.offset,
                    h.kind,
                    h.count,
                    layout::commit(&s.commit),
                    s.kind,
                    s.count
                ))
            }
            Ok(_) if chunk::file_checksum(blob) != s.checksum => {
                return Err(format!(
                    "bytes {}..{end} are not the ones {} names (checksum)",
                    s.offset,
                    layout::commit(&s.commit)
                ))
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Check an output no record names: a chunk's header, or a bundle's chunks.
fn check_unreferenced(object: &str, b: &[u8]) -> Result<(), String> {
    if object.ends_with(".chunk") {
        ChunkHeader::read(b).map(|_| ()).map_err(|e| e.to_string())
    } else {
        walk_bundle(b)
    }
}

/// Check that chunk bytes are the ones a commit record names: checksums,
/// kind, chunk, count and payload checksum.
pub(super) fn named_chunk(
    bytes: &[u8],
    kind: ChunkKind,
    chunk: &ChunkRef,
    checksum: u64,
    commit: &str,
) -> Result<(), String> {
    let (h, _) = ChunkHeader::read(bytes).map_err(|e| e.to_string())?;
    if h.kind != kind || h.id != chunk.id || h.count != chunk.count {
        return Err(format!(
            "holds {:?} of {} with {} elements, but {} names {kind:?} of {} with {}",
            h.kind,
            h.id,
            h.count,
            layout::commit(commit),
            chunk.id,
            chunk.count
        ));
    }
    if chunk::file_checksum(bytes) != checksum {
        return Err(format!(
            "its checksum {:016x} is not the {checksum:016x} that {} names",
            chunk::file_checksum(bytes),
            layout::commit(commit)
        ));
    }
    Ok(())
}

/// Check every chunk of a bundle, one after another, by its own checksums.
pub(super) fn walk_bundle(bytes: &[u8]) -> Result<(), String> {
    let mut at = 0usize;
    while at < bytes.len() {
        if bytes.len() - at < HEADER_LEN {
            return Err(format!("bytes {at}..: truncated chunk header"));
        }
        let len = u64::from_le_bytes(bytes[at + 48..at + 56].try_into().expect("8 bytes"));
        let end = (at as u64)
            .checked_add(HEADER_LEN as u64)
            .and_then(|e| e.checked_add(len))
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| format!("bytes {at}..: chunk length past the end"))?
            as usize;
        ChunkHeader::read(&bytes[at..end]).map_err(|e| format!("bytes {at}..{end}: {e}"))?;
        at = end;
    }
    Ok(())
}
