//! What `check` reads, unit by unit: the plan of units (every committed
//! chunk and bundle, then every other output) and the reading of one unit:
//! each chunk's header and checksums, and for a solved chunk its decoded
//! contents and result digest.

use std::collections::{BTreeMap, BTreeSet};

use solve2048_core::formats::chunk::{self, ChunkHeader, ChunkKind, FormatError, HEADER_LEN};
use solve2048_core::task::{result_digest, ChunkRef, SolvedRef, TaskOutput};

use crate::layout;
use crate::{Store, StoreError};

use super::rejected::Rejected;

/// A committed chunk to read, with what names it.
pub(super) enum Unit {
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
pub(super) struct Section {
    kind: ChunkKind,
    offset: u64,
    len: u64,
    count: u64,
    checksum: u64,
    commit: String,
}

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
        StoreError::Damaged { reason, .. } => reason,
        other => other.to_string(),
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

/// Whether `object` is a task output (a chunk or a bundle).
pub(super) fn is_output(object: &str) -> bool {
    layout::OUTPUT_PREFIXES
        .iter()
        .any(|p| object.starts_with(p) && object[p.len()..].starts_with('/'))
        && [".chunk", ".runs", ".reqs", ".resps"]
            .iter()
            .any(|ext| object.ends_with(ext))
}

/// The task key of a commit record's name.
pub(super) fn commit_key(object: &str) -> Option<&str> {
    object.strip_prefix("commits/")?.strip_suffix(".json")
}

/// The units to read: every committed chunk and bundle, then every other
/// output. Committed chunks that are not in the store are rejected here.
pub(super) fn plan_units(
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
        // Every blob of every run (a framed run's frames, each on its own).
        if let TaskOutput::Runs(runs) | TaskOutput::Enumerated { runs, .. } = out {
            for r in runs {
                for b in r.blobs() {
                    section(
                        &r.object,
                        ChunkKind::Run,
                        b.offset,
                        b.len,
                        b.count,
                        b.checksum,
                    );
                }
            }
        }
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
            // Their runs are filed above.
            TaskOutput::Runs(_) => {}
            TaskOutput::Enumerated {
                requests, pushes, ..
            } => {
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
            TaskOutput::Requests(requests) => {
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
pub(super) async fn check_unit(
    store: &Store,
    unit: Unit,
    tick: &(dyn Fn(u64, u64) + Sync),
) -> UnitResult {
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
