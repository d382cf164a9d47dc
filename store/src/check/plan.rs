//! What `check` reads: the plan of units, every committed chunk and bundle
//! (what commit records name, and where), then every other output.

use std::collections::{BTreeMap, BTreeSet};

use solve2048_core::formats::chunk::ChunkKind;
use solve2048_core::task::{ChunkRef, PieceRef, SolvedRef, TaskOutput};

use crate::layout;

use super::rejected::Rejected;

/// A committed chunk to read, with what names it.
pub(super) enum Unit {
    /// States, values and policy of a solved chunk (states and policy only
    /// where its layer's values are recomputed: `values` false).
    Solved {
        solved: SolvedRef,
        values: bool,
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
    pub(super) kind: ChunkKind,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) count: u64,
    pub(super) checksum: u64,
    pub(super) commit: String,
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

/// The units to read: every committed chunk and bundle, then every other
/// output. Committed chunks that are not in the store are rejected here;
/// `held(sum)` says whether the store holds layer `sum`'s values.
pub(super) fn plan_units(
    commits: &BTreeMap<String, TaskOutput>,
    listed: &BTreeMap<String, u64>,
    held: &dyn Fn(u32) -> bool,
    rejected: &mut Vec<Rejected>,
) -> Vec<Unit> {
    let mut plan = Plan {
        listed,
        held,
        rejected,
        units: Vec::new(),
        named: BTreeSet::new(),
        bundles: BTreeMap::new(),
        solved_states: BTreeSet::new(),
    };
    for out in commits.values() {
        if let TaskOutput::Solved { solved, .. } = out {
            plan.solved_states.insert(layout::states_of(&solved.chunk));
        }
    }
    for (key, out) in commits {
        plan.commit(key, out);
    }
    let Plan {
        mut units,
        mut named,
        bundles,
        ..
    } = plan;
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

/// The units planned so far, and what commit records name.
struct Plan<'a> {
    listed: &'a BTreeMap<String, u64>,
    /// Whether the store holds a layer's values, by tile sum.
    held: &'a dyn Fn(u32) -> bool,
    rejected: &'a mut Vec<Rejected>,
    units: Vec<Unit>,
    /// Outputs a commit record names.
    named: BTreeSet<String>,
    /// The sections commit records name, by bundle.
    bundles: BTreeMap<String, Vec<Section>>,
    /// The states chunks of solved chunks (read with their values).
    solved_states: BTreeSet<String>,
}

impl Plan<'_> {
    /// Plan what the commit record of task `key` names.
    fn commit(&mut self, key: &str, out: &TaskOutput) {
        // Every blob of every run (a framed run's frames, each on its own).
        if let TaskOutput::Runs(runs) | TaskOutput::Enumerated { runs, .. } = out {
            for r in runs {
                for b in r.blobs() {
                    let (offset, len, count, checksum) = (b.offset, b.len, b.count, b.checksum);
                    self.section(
                        &r.object,
                        ChunkKind::Run,
                        key,
                        (offset, len, count, checksum),
                    );
                }
            }
        }
        match out {
            TaskOutput::Solved { solved, digest, .. } => self.solved(key, solved, *digest),
            TaskOutput::Chunks(chunks) => {
                for c in chunks {
                    let object = layout::states_of(c);
                    self.named.insert(object.clone());
                    if self.present(object.clone(), key) && !self.solved_states.contains(&object) {
                        self.units.push(Unit::States {
                            chunk: *c,
                            commit: key.to_string(),
                        });
                    }
                }
            }
            // Their runs are filed above.
            TaskOutput::Runs(_) => {}
            TaskOutput::Enumerated {
                requests, pushes, ..
            } => {
                self.pieces(requests, ChunkKind::Requests, key);
                self.pieces(pushes, ChunkKind::Pushes, key);
            }
            TaskOutput::Requests(requests) => self.pieces(requests, ChunkKind::Requests, key),
            TaskOutput::Responses(responses) => self.pieces(responses, ChunkKind::Responses, key),
            TaskOutput::StartValue(_) => {}
        }
    }

    /// Plan a solved chunk: its states, values and policy (without values
    /// where the store leaves them to be recomputed), when all are in the
    /// store.
    fn solved(&mut self, key: &str, solved: &SolvedRef, digest: u64) {
        let values = (self.held)(solved.chunk.id.part.sum);
        let mut objects = vec![layout::states_of(&solved.chunk), layout::policy_of(solved)];
        if values {
            objects.push(layout::values_of(solved));
        }
        let mut all = true;
        for o in &objects {
            all &= self.present(o.clone(), key);
            self.named.insert(o.clone());
        }
        if all {
            self.units.push(Unit::Solved {
                solved: *solved,
                values,
                digest,
                commit: key.to_string(),
            });
        }
    }

    /// Whether `object`, which commit record `key` names, is in the store;
    /// rejected as missing when it is not.
    fn present(&mut self, object: String, key: &str) -> bool {
        if !self.listed.contains_key(&object) {
            self.rejected.push(Rejected {
                object,
                reason: format!("missing; named by {}", layout::commit(key)),
            });
            false
        } else {
            true
        }
    }

    /// File each of `pieces` (chunks of `kind`) as a section of its bundle.
    fn pieces(&mut self, pieces: &[PieceRef], kind: ChunkKind, key: &str) {
        for p in pieces {
            self.section(&p.object, kind, key, (p.offset, p.len, p.count, p.checksum));
        }
    }

    /// File a chunk of `kind` at (offset, length, count, checksum) of bundle
    /// `object`, as commit record `key` names it.
    fn section(
        &mut self,
        object: &str,
        kind: ChunkKind,
        key: &str,
        (offset, len, count, checksum): (u64, u64, u64, u64),
    ) {
        self.bundles
            .entry(object.to_string())
            .or_default()
            .push(Section {
                kind,
                offset,
                len,
                count,
                checksum,
                commit: key.to_string(),
            });
    }
}
