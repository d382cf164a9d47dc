//! Durable job state in the store: the job manifest (`job.json`) and one
//! commit record per finished task (`commits/<task>.json`).
//!
//! A task's outputs are written first and its commit record last, each as one
//! atomic put; a task counts as done exactly when its record exists. After a
//! crash at any instant a rerun finds either no record (and recomputes the
//! task, rewriting identical bytes) or the record (and skips the task).

use std::collections::BTreeSet;

use serde::Serialize;
use solve2048_core::formats::chunk::{FORMAT_VERSION, OLDEST_READABLE_VERSION};
use solve2048_core::task::{
    Failure, FailureKind, JobManifest, JobSpec, LayerIndex, ManifestError, SolvedSummary, Task,
    TaskOutput,
};
use solve2048_store::{layout, Store, StoreError};

/// Errors of the coordinator.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The store holds another job.
    #[error("store {location} holds a different job ({found}); requested {requested}")]
    ForeignJob {
        /// Store location.
        location: String,
        /// The job in the store.
        found: String,
        /// The job asked for.
        requested: String,
    },
    /// The store was written by a format version this build does not read.
    #[error(
        "store {location} uses chunk format version {found}; this build reads versions \
         {OLDEST_READABLE_VERSION} to {FORMAT_VERSION}"
    )]
    FormatVersion {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// A store of an older format version: readable, but this build writes
    /// only its own version, so a solve does not add to it.
    #[error(
        "store {location} was written in chunk format version {found}: this build reads it \
         (verify, query, serve) but writes version {FORMAT_VERSION} only, so it cannot add to \
         it; solve into a new store"
    )]
    OlderFormat {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// Reading or writing the store failed, or a record is damaged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A record that does not parse.
    #[error("record {object} is damaged: {reason}")]
    Damaged {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// Another coordinator runs this job.
    #[error("store {location} is in use by a running coordinator ({holder}, renewed {age_seconds:.1} s ago)")]
    Locked {
        /// Store location.
        location: String,
        /// Who holds it.
        holder: String,
        /// Seconds since it renewed the lock.
        age_seconds: f64,
    },
    /// Another coordinator took the job over while this one ran.
    #[error("another coordinator took this job over ({holder}); stopping")]
    TakenOver {
        /// Who holds it now.
        holder: String,
    },
    /// The store holds no job (no `job.json`).
    #[error("store {location} holds no solve2048 job (no job.json)")]
    NoJob {
        /// Store location.
        location: String,
    },
    /// Stopped by a signal or a shutdown request; rerun the same command to resume.
    #[error("interrupted; run the same command again to resume")]
    Interrupted,
    /// The gRPC server's TLS could not be set up.
    #[error("cannot serve: TLS setup")]
    Tls {
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
    /// The store's check before serving (of a solved store, or for a
    /// repair) could not run.
    #[error("cannot serve")]
    Check {
        /// Why.
        #[source]
        source: solve2048_store::check::CheckError,
    },
    /// A task failed in a way no retry can mend: an input the job committed
    /// is damaged or missing, or the task does not fit the job.
    #[error("task {task} cannot succeed: {failure}")]
    TaskFatal {
        /// Task key.
        task: String,
        /// The worker's failure (its kind, and its error as text: it comes
        /// over the network).
        failure: Failure,
    },
    /// A repair could not restore a damaged object.
    #[error("repair failed")]
    RepairFailed {
        /// Why.
        #[source]
        source: RepairError,
    },
    /// The store is damaged (a repair sets the damage aside).
    #[error("store {location} is damaged")]
    StoreDamaged {
        /// Store location.
        location: String,
        /// The first damage met.
        #[source]
        source: Box<CoordinatorError>,
    },
    /// A check of the whole store found objects damaged or missing.
    #[error("{count} damaged or missing objects, the first {object}: {reason}")]
    Unsound {
        /// Objects refused.
        count: usize,
        /// The first.
        object: String,
        /// Why it was refused (the check report's words).
        reason: String,
    },
    /// An evaluation's solved store cannot be used.
    #[error("solved store {location} {reason}")]
    Reference {
        /// Its location.
        location: String,
        /// Why not.
        reason: String,
    },
    /// A task failed on every attempt.
    #[error("task {task} failed {attempts} times; last error: {error}")]
    TaskFailed {
        /// Task key.
        task: String,
        /// Attempts made.
        attempts: u32,
        /// The last error.
        error: String,
    },
}

/// Why a repair cannot restore what was damaged.
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    /// A solved store that keeps the values of only some layers: a redone
    /// task reads values it no longer holds.
    #[error(
        "store {location} has {objects} damaged or missing objects but cannot be repaired: it \
         was solved with --recompute-values, and redoing their tasks reads the values of layers \
         it no longer holds; solve the game again into a new store (`verify` names them)"
    )]
    RecomputedValues {
        /// Store location.
        location: String,
        /// Damaged or missing objects.
        objects: usize,
    },
    /// A task run again to make an input of a repaired task failed on every
    /// attempt.
    #[error("task {task} (run again to make an input of a repaired task) failed {attempts} times; last error: {last}")]
    Attempts {
        /// Task key.
        task: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure (as the worker sent it).
        last: String,
    },
    /// A committed task run again no longer writes one of its outputs.
    #[error("task {task} no longer writes {object}")]
    Vanished {
        /// Task key.
        task: String,
        /// The committed output.
        object: String,
    },
    /// A committed task run again wrote other bytes than its commit record
    /// names.
    #[error("task {task} wrote {new} with checksum {new_checksum:016x}, but {record} records {checksum:016x} for {object}: its output is not deterministic, or its inputs changed")]
    Differs {
        /// Task key.
        task: String,
        /// What it wrote now.
        new: String,
        /// Its checksum.
        new_checksum: u64,
        /// The commit record.
        record: String,
        /// The committed object.
        object: String,
        /// The committed checksum.
        checksum: u64,
    },
    /// A bundle made again does not hold the chunks its commit record names.
    #[error("{object}, made again, does not hold the chunks its commit record names")]
    OtherChunks {
        /// The bundle.
        object: String,
    },
    /// An input is gone and no committed task wrote it.
    #[error("{object} is gone and no committed task of this job wrote it")]
    NoProducer {
        /// The object.
        object: String,
    },
}

impl From<RepairError> for CoordinatorError {
    fn from(source: RepairError) -> CoordinatorError {
        CoordinatorError::RepairFailed { source }
    }
}

impl CoordinatorError {
    /// Whether it says the store is damaged (a record or chunk refused, or a
    /// committed object missing), which `--repair` mends.
    pub fn is_damage(&self) -> bool {
        match self {
            CoordinatorError::Store(
                StoreError::Damaged { .. }
                | StoreError::Rejected { .. }
                | StoreError::Missing { .. },
            )
            | CoordinatorError::Damaged { .. } => true,
            CoordinatorError::TaskFatal { failure, .. } => failure.kind == FailureKind::Damaged,
            _ => false,
        }
    }
}

/// The records of one job's store.
#[derive(Clone)]
pub struct Records {
    store: Store,
}

impl Records {
    /// The records of `store`.
    pub fn new(store: Store) -> Records {
        Records { store }
    }

    /// The store's location, for messages.
    pub fn location(&self) -> &str {
        self.store.location()
    }

    /// The store itself.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Delete an object; a missing one is fine (retried, see [`Store::delete`]).
    pub async fn delete(&self, object: &str) -> Result<(), CoordinatorError> {
        Ok(self.store.delete(object).await?)
    }

    /// Read a JSON record that must exist.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<T, CoordinatorError> {
        Ok(self.store.get_json(object).await?)
    }

    /// Read a JSON record, or `None` when it does not exist.
    pub async fn get_json_opt<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<Option<T>, CoordinatorError> {
        Ok(self.store.get_json_opt(object).await?)
    }

    /// Write a JSON record (indexes and summaries derived from commit
    /// records; rewriting one gives identical bytes).
    pub async fn put_json<T: Serialize>(
        &self,
        object: &str,
        value: &T,
    ) -> Result<(), CoordinatorError> {
        Ok(self.store.put_json(object, value).await?)
    }

    /// Record a failed attempt at a task (`failures/<task>.json`), for `chunks`.
    pub async fn record_failure(
        &self,
        key: &str,
        attempt: u32,
        error: &str,
    ) -> Result<(), CoordinatorError> {
        let record = FailureRecord {
            task: key.to_string(),
            attempts: attempt,
            last_error: error.to_string(),
        };
        self.put_json(&layout::failure(key), &record).await
    }

    /// Delete every task output not in `keep`: what uncommitted attempts
    /// (killed workers, lapsed leases) left behind, and the runs, which
    /// only live until their merge. Returns how many objects.
    pub async fn sweep(&self, keep: &BTreeSet<String>) -> Result<u64, CoordinatorError> {
        let mut removed = 0;
        for prefix in layout::OUTPUT_PREFIXES {
            for object in self.store.list(prefix).await? {
                if !keep.contains(&object) {
                    self.delete(&object).await?;
                    removed += 1;
                }
            }
            // A local store keeps the folders of deleted objects, and the
            // staging files of writes a killed attempt left unfinished.
            self.store.remove_local_leftovers(prefix, keep);
        }
        Ok(removed)
    }

    /// Every layer index in the store (`layers/sSSSSS.json`), by tile sum.
    pub async fn layer_indexes(&self) -> Result<Vec<LayerIndex>, CoordinatorError> {
        let mut sums: Vec<u32> = self
            .store
            .list("layers")
            .await?
            .iter()
            .filter_map(|o| layout::layer_index_sum(o))
            .collect();
        sums.sort_unstable();
        let mut out = Vec::with_capacity(sums.len());
        for sum in sums {
            out.push(self.get_json(&layout::layer_index(sum)).await?);
        }
        Ok(out)
    }

    /// The job and summary of the finished solve this store holds (an
    /// evaluation's solved store); refused ([`CoordinatorError::Reference`])
    /// when it holds no job, an evaluation, a solve that keeps only some
    /// layers' values (an exact evaluation reads every layer's), or a solve
    /// not finished.
    pub async fn solved(&self) -> Result<(JobSpec, SolvedSummary), CoordinatorError> {
        let refuse = |reason: String| CoordinatorError::Reference {
            location: self.location().to_string(),
            reason,
        };
        let Some(manifest) = self.manifest().await? else {
            return Err(refuse("holds no solve2048 job (no job.json)".into()));
        };
        if let Some(e) = &manifest.job.evaluate {
            return Err(refuse(format!(
                "is an evaluation of {}, not a solved store: give the solved store ({})",
                e.player, e.reference
            )));
        }
        if manifest.job.recompute_values {
            return Err(refuse(
                "keeps the values of only two layers in five (--recompute-values); an exact \
                 evaluation reads every layer's: solve the game again without it"
                    .into(),
            ));
        }
        match self.get_json_opt(layout::SUMMARY).await? {
            Some(summary) => Ok((manifest.job, summary)),
            None => Err(refuse(
                "is not solved yet (no summary.json): finish its solve first".into(),
            )),
        }
    }

    /// Read the job manifest, if any.
    pub async fn manifest(&self) -> Result<Option<JobManifest>, CoordinatorError> {
        match self.store.get(layout::JOB).await? {
            Some(bytes) => match solve2048_store::record::manifest(&bytes) {
                Ok(m) => Ok(Some(m)),
                Err(ManifestError::Version { found }) => Err(CoordinatorError::FormatVersion {
                    location: self.location().to_string(),
                    found,
                }),
                Err(ManifestError::Damaged(source)) => {
                    Err(CoordinatorError::Store(StoreError::Damaged {
                        object: layout::JOB.to_string(),
                        source,
                    }))
                }
            },
            None => Ok(None),
        }
    }

    /// Open the job in the store: create its manifest, or check that the one
    /// there is this job.
    pub async fn open_job(&self, job: &JobSpec) -> Result<(), CoordinatorError> {
        let want = JobManifest {
            format_version: FORMAT_VERSION,
            job: job.clone(),
        };
        match self.manifest().await? {
            Some(found) if found == want => Ok(()),
            Some(found) if found.format_version != FORMAT_VERSION => {
                Err(CoordinatorError::OlderFormat {
                    location: self.location().to_string(),
                    found: found.format_version,
                })
            }
            Some(found) => Err(CoordinatorError::ForeignJob {
                location: self.location().to_string(),
                found: describe(&found.job),
                requested: describe(job),
            }),
            None => self.put_json(layout::JOB, &want).await,
        }
    }

    /// The recorded output of a committed task.
    pub async fn committed(&self, task: &Task) -> Result<Option<TaskOutput>, CoordinatorError> {
        self.get_json_opt(&layout::commit(&task.key())).await
    }

    /// Commit a task's output (after all its objects are written).
    pub async fn commit(&self, task: &Task, output: &TaskOutput) -> Result<(), CoordinatorError> {
        Ok(self
            .store
            .put_json_compact(&layout::commit(&task.key()), output)
            .await?)
    }
}

/// The failures of one task (`failures/<task>.json`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct FailureRecord {
    /// Task key.
    pub task: String,
    /// Attempts failed so far (by the coordinator that wrote the record).
    pub attempts: u32,
    /// The last error.
    pub last_error: String,
}

fn describe(job: &JobSpec) -> String {
    let evaluating = job.evaluate.as_ref().map_or(String::new(), |e| {
        format!(
            " evaluating {}{} against {} (digest {})",
            e.player,
            e.weights
                .as_ref()
                .map_or(String::new(), |w| format!(" (weights {w})")),
            e.reference,
            e.reference_digest
        )
    });
    let values = match job.recompute_values {
        true => ", values of two layers in five (--recompute-values)",
        false => "",
    };
    format!(
        "{}{evaluating}, chunk size {}, zstd level {}{values}",
        job.game.name(),
        job.chunk_size,
        job.zstd_level
    )
}
