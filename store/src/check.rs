//! Checking a whole store, solved or not (`solve2048 verify`, and the scan
//! that `--repair` starts with): every object it holds is read, concurrently
//! and bounded, and every damaged or missing one is reported with its
//! reason; the check goes on past the first.
//!
//! - Records (`*.json`): their checksum ([`crate::record`]) and shape.
//! - Chunks and bundles: each chunk's header and payload checksums. A chunk
//!   a commit record names must also be the one it names (kind, chunk,
//!   count and payload checksum); solved chunks are decoded (states strictly
//!   increasing, values, policy codes) and their result digest compared
//!   with the commit record's.
//! - A chunk a commit record names that is not in the store is missing
//!   (bundles are deleted once consumed, so only states, values and policy).
//! - Once solved: the states and result digest of every solved chunk must
//!   add up to the summary's.
//!
//! Objects under `quarantine/` (set aside by a repair) are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use solve2048_core::chunk::{self, ChunkHeader, ChunkKind, FormatError, HEADER_LEN};
use solve2048_core::task::{
    result_digest, ChunkRef, LayerIndex, ManifestError, SolvedRef, SolvedSummary, TaskOutput,
};

use crate::layout;
use crate::record;
use crate::store::{parse_record, Store, StoreError};

/// Where objects set aside by a repair go.
pub const QUARANTINE: &str = "quarantine";

/// A damaged or missing object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Rejected {
    /// The object.
    pub object: String,
    /// What is wrong with it.
    pub reason: String,
}

/// How far a check has gone.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckProgress {
    /// Objects read so far.
    pub objects: u64,
    /// Objects to read.
    pub objects_total: u64,
    /// Bytes read so far.
    pub bytes: u64,
    /// Bytes to read.
    pub bytes_total: u64,
}

/// The solved part of a check: totals over every solved chunk.
#[derive(Clone, Debug, Serialize)]
pub struct SolvedTotals {
    /// Solved chunks read.
    pub chunks: u64,
    /// States in them.
    pub states: u64,
    /// Their result digest (hex).
    pub digest: String,
    /// Layers the summary lists.
    pub layers: usize,
}

/// What a check found.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The game, when `job.json` is readable.
    pub game: Option<String>,
    /// Objects read.
    pub objects: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Seconds the check took.
    pub seconds: f64,
    /// Committed tasks (readable commit records).
    pub committed_tasks: u64,
    /// Task outputs no commit record names (left by attempts that were not
    /// committed; the end of the job deletes them). Checked all the same.
    pub unreferenced: u64,
    /// Whether the store holds a summary (the job finished).
    pub solved: bool,
    /// Totals over the solved chunks, when the store is solved and every
    /// solved chunk could be read.
    pub totals: Option<SolvedTotals>,
    /// Every damaged or missing object, by name.
    pub rejected: Vec<Rejected>,
    /// The latest coordinator epoch any attempt in the store (or its
    /// quarantine) carries: a coordinator whose lock was lost must start
    /// after it, so its attempts never reuse a name.
    pub max_epoch: u32,
}

/// Why a store could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// Nothing in the store.
    #[error("store {location} holds no solve2048 job (no job.json)")]
    NoJob {
        /// Store location.
        location: String,
    },
    /// Another format version: nothing in it can be read by this build.
    #[error(
        "store {location} uses chunk format version {found}; this build reads version {}",
        chunk::FORMAT_VERSION
    )]
    Version {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// Listing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A committed chunk to read, with what names it.
enum Unit {
    /// States, values and policy of a solved chunk.
    Solved {
        solved: SolvedRef,
        digest: u64,
        commit: String,
    },
    /// States of a chunk not solved yet.
    States { chunk: ChunkRef, commit: String },
    /// A bundle whose sections commit records name.
    Bundle {
        object: String,
        sections: Vec<Section>,
    },
    /// An object no record names: its own checksums only.
    Unreferenced { object: String },
}

/// A chunk at a byte range of a bundle, as a commit record names it.
struct Section {
    kind: ChunkKind,
    offset: u64,
    len: u64,
    count: u64,
    checksum: u64,
    commit: String,
}

/// What reading one unit gave.
#[derive(Default)]
struct UnitResult {
    rejected: Vec<Rejected>,
    /// (states, digest) of a solved chunk that read back whole.
    solved: Option<(u64, u64)>,
}

/// Check every object of `store` with at most `concurrency` reads at once,
/// calling `progress` as objects are read.
pub async fn check_store(
    store: &Store,
    concurrency: usize,
    progress: &(dyn Fn(CheckProgress) + Sync),
) -> Result<CheckReport, CheckError> {
    let t0 = Instant::now();
    let concurrency = concurrency.max(1);
    let all = store.list_sizes("").await?;
    let mut max_epoch = all
        .iter()
        .filter_map(|(o, _)| epoch_of(o))
        .max()
        .unwrap_or(0);
    let listed: BTreeMap<String, u64> = all
        .into_iter()
        .filter(|(o, _)| !o.starts_with(&format!("{QUARANTINE}/")))
        .collect();
    if !listed.contains_key(layout::JOB) && listed.is_empty() {
        return Err(CheckError::NoJob {
            location: store.location().to_string(),
        });
    }
    let records: Vec<&String> = listed.keys().filter(|o| is_record(o)).collect();
    let outputs: Vec<&String> = listed.keys().filter(|o| is_output(o)).collect();
    let done_objects = AtomicU64::new(0);
    let done_bytes = AtomicU64::new(0);
    let total = CheckProgress {
        objects_total: (records.len() + outputs.len()) as u64,
        bytes_total: records
            .iter()
            .chain(&outputs)
            .map(|o| listed[o.as_str()])
            .sum(),
        ..CheckProgress::default()
    };
    let tick = |bytes: u64, objects: u64| {
        let o = done_objects.fetch_add(objects, Ordering::Relaxed) + objects;
        let b = done_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        progress(CheckProgress {
            objects: o,
            bytes: b,
            ..total
        });
    };

    // Records first: the commit records say what every chunk must be.
    let mut rejected: Vec<Rejected> = Vec::new();
    let mut commits: BTreeMap<String, TaskOutput> = BTreeMap::new();
    let mut summary: Option<SolvedSummary> = None;
    let mut game = None;
    let mut version: Option<u16> = None;
    if !listed.contains_key(layout::JOB) {
        rejected.push(Rejected {
            object: layout::JOB.into(),
            reason: "missing: the store holds objects but no job manifest".into(),
        });
    }
    let read_records = futures::stream::iter(records.iter().map(|object| async move {
        let got = store.get(object).await;
        (object.as_str(), got)
    }))
    .buffer_unordered(concurrency);
    futures::pin_mut!(read_records);
    while let Some((object, got)) = read_records.next().await {
        let bytes = match got {
            Ok(Some(b)) => b,
            Ok(None) => continue, // deleted since the listing (a live job)
            Err(e) => {
                rejected.push(Rejected {
                    object: object.into(),
                    reason: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        tick(bytes.len() as u64, 1);
        let reject = |reason: String| Rejected {
            object: object.to_string(),
            reason,
        };
        if object == layout::JOB {
            match record::manifest(&bytes) {
                Ok(m) => game = Some(m.job.game.name()),
                Err(ManifestError::Version { found }) => version = Some(found),
                Err(ManifestError::Damaged(reason)) => rejected.push(reject(reason)),
            }
        } else if let Some(key) = commit_key(object) {
            match parse_record::<TaskOutput>(object, &bytes) {
                Ok(out) => {
                    commits.insert(key.to_string(), out);
                }
                Err(e) => rejected.push(reject(reason_of(e))),
            }
        } else if object == layout::SUMMARY {
            match parse_record::<SolvedSummary>(object, &bytes) {
                Ok(s) => summary = Some(s),
                Err(e) => rejected.push(reject(reason_of(e))),
            }
        } else if layout::layer_index_sum(object).is_some() {
            if let Err(e) = parse_record::<LayerIndex>(object, &bytes) {
                rejected.push(reject(reason_of(e)));
            }
        } else if let Err(e) = parse_record::<serde_json::Value>(object, &bytes) {
            rejected.push(reject(reason_of(e)));
        }
    }
    if let Some(found) = version {
        return Err(CheckError::Version {
            location: store.location().to_string(),
            found,
        });
    }

    for out in commits.values() {
        for object in layout::outputs_of(out) {
            max_epoch = max_epoch.max(epoch_of(&object).unwrap_or(0));
        }
    }

    // Then every output, by what names it.
    let units = plan_units(&commits, &listed, &mut rejected);
    let unreferenced = units
        .iter()
        .filter(|u| matches!(u, Unit::Unreferenced { .. }))
        .count() as u64;
    let results =
        futures::stream::iter(units.into_iter().map(|unit| check_unit(store, unit, &tick)))
            .buffer_unordered(concurrency)
            .collect::<Vec<UnitResult>>()
            .await;
    let mut solved_chunks = 0u64;
    let mut states = 0u64;
    let mut digest = 0u64;
    let mut all_read = true;
    for r in results {
        all_read &= r.rejected.is_empty();
        rejected.extend(r.rejected);
        if let Some((s, d)) = r.solved {
            solved_chunks += 1;
            states += s;
            digest = digest.wrapping_add(d);
        }
    }
    let totals = summary.as_ref().filter(|_| all_read).map(|s| SolvedTotals {
        chunks: solved_chunks,
        states,
        digest: format!("{digest:016x}"),
        layers: s.layers.len(),
    });
    if let (Some(s), Some(t)) = (&summary, &totals) {
        if s.states != t.states || s.digest != t.digest {
            rejected.push(Rejected {
                object: layout::SUMMARY.into(),
                reason: format!(
                    "records {} states with digest {}, but the solved chunks hold {} states with digest {}",
                    s.states, s.digest, t.states, t.digest
                ),
            });
        }
    }
    rejected.sort();
    rejected.dedup();
    Ok(CheckReport {
        game,
        objects: done_objects.load(Ordering::Relaxed),
        bytes: done_bytes.load(Ordering::Relaxed),
        seconds: t0.elapsed().as_secs_f64(),
        committed_tasks: commits.len() as u64,
        unreferenced,
        solved: summary.is_some(),
        totals,
        rejected,
        max_epoch,
    })
}

/// The coordinator epoch in an object's attempt tag (`-a` and 16 hex
/// digits, the epoch the first 8).
fn epoch_of(object: &str) -> Option<u32> {
    let name = object.rsplit('/').next()?;
    let stem = name.split('.').next()?;
    let tag = &stem[stem.rfind("-a")? + 2..];
    (tag.len() == 16)
        .then(|| u32::from_str_radix(&tag[..8], 16).ok())
        .flatten()
}

/// The reason of a record's error, without its name (the report names it).
fn reason_of(e: StoreError) -> String {
    match e {
        StoreError::Damaged { reason, .. } => reason,
        other => other.to_string(),
    }
}

/// Whether `object` is a JSON record of the job.
fn is_record(object: &str) -> bool {
    object.ends_with(".json")
        && (!object.contains('/')
            || object.starts_with("commits/")
            || object.starts_with("failures/")
            || object.starts_with("layers/"))
}

/// Whether `object` is a task output (a chunk or a bundle).
fn is_output(object: &str) -> bool {
    layout::OUTPUT_PREFIXES
        .iter()
        .any(|p| object.starts_with(p) && object[p.len()..].starts_with('/'))
        && [".chunk", ".runs", ".reqs", ".resps"]
            .iter()
            .any(|ext| object.ends_with(ext))
}

/// The task key of a commit record's name.
fn commit_key(object: &str) -> Option<&str> {
    object.strip_prefix("commits/")?.strip_suffix(".json")
}

/// The units to read: every committed chunk and bundle, then every other
/// output. Committed chunks that are not in the store are rejected here.
fn plan_units(
    commits: &BTreeMap<String, TaskOutput>,
    listed: &BTreeMap<String, u64>,
    rejected: &mut Vec<Rejected>,
) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    let mut bundles: BTreeMap<String, Vec<Section>> = BTreeMap::new();
    let mut solved_states: BTreeSet<String> = BTreeSet::new();
    for out in commits.values() {
        if let TaskOutput::Solved { solved, .. } = out {
            solved_states.insert(layout::states_of(&solved.chunk));
        }
    }
    let mut missing = |object: String, commit: &str| {
        if !listed.contains_key(&object) {
            rejected.push(Rejected {
                object,
                reason: format!("missing; named by {}", layout::commit(commit)),
            });
            false
        } else {
            true
        }
    };
    for (key, out) in commits {
        let mut section = |object: &String, kind, offset, len, count, checksum| {
            bundles.entry(object.clone()).or_default().push(Section {
                kind,
                offset,
                len,
                count,
                checksum,
                commit: key.clone(),
            });
        };
        match out {
            TaskOutput::Solved { solved, digest, .. } => {
                let objects = [
                    layout::states_of(&solved.chunk),
                    layout::values_of(solved),
                    layout::policy_of(solved),
                ];
                let mut all = true;
                for o in &objects {
                    all &= missing(o.clone(), key);
                    named.insert(o.clone());
                }
                if all {
                    units.push(Unit::Solved {
                        solved: *solved,
                        digest: *digest,
                        commit: key.clone(),
                    });
                }
            }
            TaskOutput::Chunks(chunks) => {
                for c in chunks {
                    let object = layout::states_of(c);
                    named.insert(object.clone());
                    if missing(object.clone(), key) && !solved_states.contains(&object) {
                        units.push(Unit::States {
                            chunk: *c,
                            commit: key.clone(),
                        });
                    }
                }
            }
            TaskOutput::Runs(runs) => {
                for r in runs {
                    section(
                        &r.object,
                        ChunkKind::Run,
                        r.offset,
                        r.len,
                        r.count,
                        r.checksum,
                    );
                }
            }
            TaskOutput::Enumerated {
                runs,
                requests,
                pushes,
            } => {
                for r in runs {
                    section(
                        &r.object,
                        ChunkKind::Run,
                        r.offset,
                        r.len,
                        r.count,
                        r.checksum,
                    );
                }
                for r in requests {
                    section(
                        &r.object,
                        ChunkKind::Requests,
                        r.offset,
                        r.len,
                        r.count,
                        r.checksum,
                    );
                }
                for p in pushes {
                    section(
                        &p.object,
                        ChunkKind::Pushes,
                        p.offset,
                        p.len,
                        p.count,
                        p.checksum,
                    );
                }
            }
            TaskOutput::Responses(responses) => {
                for r in responses {
                    section(
                        &r.object,
                        ChunkKind::Responses,
                        r.offset,
                        r.len,
                        r.count,
                        r.checksum,
                    );
                }
            }
            TaskOutput::StartValue(_) => {}
        }
    }
    for (object, sections) in bundles {
        // A bundle is deleted once the stages that read it are committed.
        if listed.contains_key(&object) {
            named.insert(object.clone());
            units.push(Unit::Bundle { object, sections });
        }
    }
    for object in listed.keys().filter(|o| is_output(o)) {
        if !named.contains(object) {
            units.push(Unit::Unreferenced {
                object: object.clone(),
            });
        }
    }
    units
}

/// Read one unit and check it.
async fn check_unit(store: &Store, unit: Unit, tick: &(dyn Fn(u64, u64) + Sync)) -> UnitResult {
    let mut out = UnitResult::default();
    let read = |object: String| async move {
        let got = store.get(&object).await;
        if let Ok(Some(b)) = &got {
            tick(b.len() as u64, 1);
        }
        (object, got)
    };
    let fetch = |object: String| async {
        match read(object).await {
            (_, Ok(Some(b))) => Ok(b),
            (object, Ok(None)) => Err(Rejected {
                reason: "missing (deleted while it was checked?)".into(),
                object,
            }),
            (object, Err(e)) => Err(Rejected {
                reason: format!("cannot read: {e}"),
                object,
            }),
        }
    };
    match unit {
        Unit::Solved {
            solved,
            digest,
            commit,
        } => {
            let objects = [
                layout::states_of(&solved.chunk),
                layout::values_of(&solved),
                layout::policy_of(&solved),
            ];
            let expect = [
                (ChunkKind::States, solved.chunk.checksum),
                (ChunkKind::Values, solved.values_checksum),
                (ChunkKind::Policy, solved.policy_checksum),
            ];
            let got = futures::future::join_all(objects.iter().cloned().map(fetch)).await;
            let mut bytes = Vec::new();
            for ((object, g), (kind, checksum)) in objects.iter().zip(got).zip(expect) {
                match g.and_then(|b| {
                    named_chunk(&b, kind, &solved.chunk, checksum, &commit)
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
                let decoded = tokio::task::spawn_blocking(move || {
                    let h = |b: &[u8]| ChunkHeader::read(b).map(|(h, _)| h);
                    let states = h(&bytes[0])
                        .and_then(|h| chunk::decode_keys(&bytes[0], &h))
                        .map_err(|e| (0, e))?;
                    let values = h(&bytes[1])
                        .and_then(|h| chunk::decode_values(&bytes[1], &h))
                        .map_err(|e| (1, e))?;
                    let policy = h(&bytes[2])
                        .and_then(|h| chunk::decode_policy(&bytes[2], &h))
                        .map_err(|e| (2, e))?;
                    Ok::<_, (usize, FormatError)>((
                        states.len() as u64,
                        result_digest(&states, &values, &policy),
                    ))
                })
                .await;
                match decoded {
                    Ok(Ok((states, d))) if d == digest => out.solved = Some((states, d)),
                    Ok(Ok(_)) => out.rejected.push(Rejected {
                        object: layout::commit(&commit),
                        reason: format!(
                            "its result digest differs from that of {}, {} and {}",
                            objects[0], objects[1], objects[2]
                        ),
                    }),
                    Ok(Err((i, e))) => out.rejected.push(Rejected {
                        object: objects[i].clone(),
                        reason: e.to_string(),
                    }),
                    Err(_) => out.rejected.push(Rejected {
                        object: objects[0].clone(),
                        reason: "decoding panicked".into(),
                    }),
                }
            }
        }
        Unit::States { chunk: c, commit } => {
            let object = layout::states_of(&c);
            match fetch(object.clone()).await {
                Err(r) => out.rejected.push(r),
                Ok(b) => {
                    let checked = named_chunk(&b, ChunkKind::States, &c, c.checksum, &commit)
                        .and_then(|()| {
                            let (h, _) = ChunkHeader::read(&b).map_err(|e| e.to_string())?;
                            chunk::decode_keys(&b, &h)
                                .map(|_| ())
                                .map_err(|e| e.to_string())
                        });
                    if let Err(reason) = checked {
                        out.rejected.push(Rejected { object, reason });
                    }
                }
            }
        }
        Unit::Bundle { object, sections } => match fetch(object.clone()).await {
            Err(r) => out.rejected.push(r),
            Ok(b) => {
                let mut bad = walk_bundle(&b).err();
                for s in &sections {
                    if bad.is_some() {
                        break;
                    }
                    let end = s.offset.saturating_add(s.len);
                    if end > b.len() as u64 {
                        bad = Some(format!(
                            "bytes {}..{end} named by {} lie past its end ({} bytes)",
                            s.offset,
                            layout::commit(&s.commit),
                            b.len()
                        ));
                        break;
                    }
                    let blob = &b[s.offset as usize..end as usize];
                    bad = match ChunkHeader::read(blob) {
                        Err(e) => Some(format!("bytes {}..{end}: {e}", s.offset)),
                        Ok((h, _)) if h.kind != s.kind || h.count != s.count => Some(format!(
                            "bytes {}..{end} hold {:?} of {} elements, but {} names {:?} of {}",
                            s.offset,
                            h.kind,
                            h.count,
                            layout::commit(&s.commit),
                            s.kind,
                            s.count
                        )),
                        Ok(_) if chunk::file_checksum(blob) != s.checksum => Some(format!(
                            "bytes {}..{end} are not the ones {} names (checksum)",
                            s.offset,
                            layout::commit(&s.commit)
                        )),
                        Ok(_) => None,
                    };
                }
                if let Some(reason) = bad {
                    out.rejected.push(Rejected { object, reason });
                }
            }
        },
        Unit::Unreferenced { object } => match fetch(object.clone()).await {
            Err(r) => out.rejected.push(r),
            Ok(b) => {
                let checked = if object.ends_with(".chunk") {
                    ChunkHeader::read(&b).map(|_| ()).map_err(|e| e.to_string())
                } else {
                    walk_bundle(&b)
                };
                if let Err(reason) = checked {
                    out.rejected.push(Rejected { object, reason });
                }
            }
        },
    }
    out
}

/// Check that chunk bytes are the ones a commit record names: checksums,
/// kind, chunk, count and payload checksum.
fn named_chunk(
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
fn walk_bundle(bytes: &[u8]) -> Result<(), String> {
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
