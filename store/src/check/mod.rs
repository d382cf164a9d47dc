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

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures::StreamExt;
use serde::Serialize;
use solve2048_core::chain::Chain;
use solve2048_core::formats::chunk::{self};
use solve2048_core::task::{JobSpec, LayerIndex, ManifestError, SolvedSummary, TaskOutput};

use crate::layout;
use crate::record;
use crate::record::parse_record;
use crate::{Store, StoreError};

use crate::layout::QUARANTINE;

mod plan;
mod rejected;
mod units;

use plan::{is_output, plan_units, Unit};
pub use rejected::Rejected;
use units::{check_unit, commit_key, epoch_of, is_record, reason_of, UnitResult};

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
        "store {location} uses chunk format version {found}; this build reads versions {} to {}",
        chunk::OLDEST_READABLE_VERSION,
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

/// Check every object of `store` with at most `concurrency` reads at once,
/// calling `progress` as objects are read.
pub async fn check_store(
    store: &Store,
    concurrency: usize,
    progress: &(dyn Fn(CheckProgress) + Sync),
) -> Result<CheckReport, CheckError> {
    let t0 = Instant::now();
    let concurrency = concurrency.max(1);
    let (listed, mut max_epoch) = listing(store).await?;
    let records: Vec<&String> = listed.keys().filter(|o| is_record(o)).collect();
    let outputs: Vec<&String> = listed.keys().filter(|o| is_output(o)).collect();
    let tally = Tally::new(&listed, &records, &outputs, progress);
    let tick = |bytes: u64, objects: u64| tally.tick(bytes, objects);

    // Records first: the commit records say what every chunk must be.
    let read = RecordsRead::read(store, &listed, &records, concurrency, &tick).await;
    if let Some(found) = read.version {
        return Err(CheckError::Version {
            location: store.location().to_string(),
            found,
        });
    }
    let RecordsRead {
        mut rejected,
        commits,
        summary,
        game,
        job,
        ..
    } = read;
    for out in commits.values() {
        for object in layout::outputs_of(out) {
            max_epoch = max_epoch.max(epoch_of(&object).unwrap_or(0));
        }
    }

    // Then every output, by what names it.
    // A solved store with recomputed values holds only some layers' values
    // (solved: its summary is listed, readable or not).
    let solved = listed.contains_key(layout::SUMMARY);
    let held = |sum: u32| job.as_ref().is_none_or(|j| j.holds_values(sum, solved));
    let units = plan_units(&commits, &listed, &held, &mut rejected);
    let unreferenced = units
        .iter()
        .filter(|u| matches!(u, Unit::Unreferenced { .. }))
        .count() as u64;
    let results =
        futures::stream::iter(units.into_iter().map(|unit| check_unit(store, unit, &tick)))
            .buffer_unordered(concurrency)
            .collect::<Vec<UnitResult>>()
            .await;
    let totals = solved_totals(results, summary.as_ref(), &mut rejected);
    rejected.sort();
    rejected.dedup();
    Ok(CheckReport {
        game,
        objects: tally.objects.load(Ordering::Relaxed),
        bytes: tally.bytes.load(Ordering::Relaxed),
        seconds: t0.elapsed().as_secs_f64(),
        committed_tasks: commits.len() as u64,
        unreferenced,
        solved: summary.is_some(),
        totals,
        rejected,
        max_epoch,
    })
}

/// The store's objects with their sizes, less those in quarantine, and the
/// latest epoch any object carries (quarantine included). Refused when the
/// store holds nothing.
async fn listing(store: &Store) -> Result<(BTreeMap<String, u64>, u32), CheckError> {
    let all = store.list_sizes("").await?;
    let max_epoch = all
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
    Ok((listed, max_epoch))
}

/// The objects and bytes read so far, reported to the caller's `progress`.
struct Tally<'a> {
    objects: AtomicU64,
    bytes: AtomicU64,
    /// The totals to read.
    total: CheckProgress,
    progress: &'a (dyn Fn(CheckProgress) + Sync),
}

impl<'a> Tally<'a> {
    /// Nothing read yet, of the `records` and `outputs` in `listed`.
    fn new(
        listed: &BTreeMap<String, u64>,
        records: &[&String],
        outputs: &[&String],
        progress: &'a (dyn Fn(CheckProgress) + Sync),
    ) -> Tally<'a> {
        let total = CheckProgress {
            objects_total: (records.len() + outputs.len()) as u64,
            bytes_total: records
                .iter()
                .chain(outputs)
                .map(|o| listed[o.as_str()])
                .sum(),
            ..CheckProgress::default()
        };
        Tally {
            objects: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            total,
            progress,
        }
    }

    /// Count `bytes` in `objects` more objects read, and say so.
    fn tick(&self, bytes: u64, objects: u64) {
        let o = self.objects.fetch_add(objects, Ordering::Relaxed) + objects;
        let b = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        (self.progress)(CheckProgress {
            objects: o,
            bytes: b,
            ..self.total
        });
    }
}

/// What the store's records say, and those that are damaged.
struct RecordsRead {
    rejected: Vec<Rejected>,
    /// Readable commit records, by task key.
    commits: BTreeMap<String, TaskOutput>,
    summary: Option<SolvedSummary>,
    /// The game, when `job.json` is readable.
    game: Option<String>,
    /// The job, when `job.json` is readable.
    job: Option<JobSpec>,
    /// Another format version, when `job.json` is of one.
    version: Option<u16>,
}

impl RecordsRead {
    /// Read every one of `records`, at most `concurrency` at once.
    async fn read(
        store: &Store,
        listed: &BTreeMap<String, u64>,
        records: &[&String],
        concurrency: usize,
        tick: &(dyn Fn(u64, u64) + Sync),
    ) -> RecordsRead {
        let mut read = RecordsRead {
            rejected: Vec::new(),
            commits: BTreeMap::new(),
            summary: None,
            game: None,
            job: None,
            version: None,
        };
        if !listed.contains_key(layout::JOB) {
            read.rejected.push(Rejected {
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
                    read.rejected.push(Rejected {
                        object: object.into(),
                        reason: format!("cannot read: {}", Chain(&e)),
                    });
                    continue;
                }
            };
            tick(bytes.len() as u64, 1);
            read.file(object, &bytes);
        }
        read
    }

    /// Take in the record `object` read as `bytes`, by its kind.
    fn file(&mut self, object: &str, bytes: &[u8]) {
        let reject = |reason: String| Rejected {
            object: object.to_string(),
            reason,
        };
        if object == layout::JOB {
            match record::manifest(bytes) {
                Ok(m) => {
                    self.game = Some(m.job.game.name());
                    self.job = Some(m.job);
                }
                Err(ManifestError::Version { found }) => self.version = Some(found),
                Err(ManifestError::Damaged(e)) => {
                    self.rejected.push(reject(Chain(&*e).to_string()))
                }
            }
        } else if let Some(key) = commit_key(object) {
            match parse_record::<TaskOutput>(object, bytes) {
                Ok(out) => {
                    self.commits.insert(key.to_string(), out);
                }
                Err(e) => self.rejected.push(reject(reason_of(e))),
            }
        } else if object == layout::SUMMARY {
            match parse_record::<SolvedSummary>(object, bytes) {
                Ok(s) => self.summary = Some(s),
                Err(e) => self.rejected.push(reject(reason_of(e))),
            }
        } else if layout::layer_index_sum(object).is_some() {
            if let Err(e) = parse_record::<LayerIndex>(object, bytes) {
                self.rejected.push(reject(reason_of(e)));
            }
        } else if let Err(e) = parse_record::<serde_json::Value>(object, bytes) {
            self.rejected.push(reject(reason_of(e)));
        }
    }
}

/// Add up the solved chunks of `results`, taking in their rejections; the
/// totals, when the store is solved and every chunk read back whole (a
/// summary they do not add up to is rejected).
fn solved_totals(
    results: Vec<UnitResult>,
    summary: Option<&SolvedSummary>,
    rejected: &mut Vec<Rejected>,
) -> Option<SolvedTotals> {
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
    let totals = summary.filter(|_| all_read).map(|s| SolvedTotals {
        chunks: solved_chunks,
        states,
        digest: format!("{digest:016x}"),
        layers: s.layers.len(),
    });
    if let (Some(s), Some(t)) = (summary, &totals) {
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
    totals
}
