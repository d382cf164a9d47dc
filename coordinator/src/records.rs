//! Durable job state in the store: the job manifest (`job.json`) and one
//! commit record per finished task (`commits/<task>.json`).
//!
//! A task's outputs are written first and its commit record last, each as one
//! atomic put; a task counts as done exactly when its record exists. After a
//! crash at any instant a rerun finds either no record (and recomputes the
//! task, rewriting identical bytes) or the record (and skips the task).

use std::collections::BTreeSet;
use std::sync::Arc;

use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::Serialize;
use solve2048_core::chunk::FORMAT_VERSION;
use solve2048_core::task::{
    layout, JobManifest, JobSpec, LayerIndex, ManifestError, Task, TaskOutput,
};

/// Errors of the coordinator.
#[derive(Debug, thiserror::Error)]
pub enum CoordinatorError {
    /// The store holds another job.
    #[error("store {location} holds a different job ({found}); requested {requested}. Use another --store, or the same settings to resume")]
    ForeignJob {
        /// Store location.
        location: String,
        /// The job in the store.
        found: String,
        /// The job asked for.
        requested: String,
    },
    /// The store was written by an incompatible format version.
    #[error("store {location} uses chunk format version {found}; this build reads version {FORMAT_VERSION}")]
    FormatVersion {
        /// Store location.
        location: String,
        /// Version found.
        found: u16,
    },
    /// Reading or writing a record failed.
    #[error("store error on {object}: {reason}")]
    Store {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// A record that does not parse.
    #[error("record {object} is damaged: {reason}")]
    Damaged {
        /// The object.
        object: String,
        /// Why.
        reason: String,
    },
    /// Another coordinator runs this job.
    #[error("store {location} is in use by a running coordinator ({holder}, renewed {age_seconds:.1} s ago); stop it, or pass --take-over to replace it deliberately")]
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
    /// A setting no job or cluster can have.
    #[error("{setting} {reason}")]
    BadSetting {
        /// The flag.
        setting: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Stopped by a signal or a shutdown request; rerun the same command to resume.
    #[error("interrupted; run the same command again to resume")]
    Interrupted,
    /// The gRPC server could not run.
    #[error("cannot serve: {reason}")]
    Serve {
        /// Why.
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

/// How long a failing delete is retried before the error stands.
const DELETE_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(300);

/// Access to the records of one store.
#[derive(Clone)]
pub struct Records {
    store: Arc<dyn ObjectStore>,
    location: String,
}

impl Records {
    /// Records of `store` (described as `location` in messages).
    pub fn new(store: Arc<dyn ObjectStore>, location: &str) -> Records {
        Records {
            store,
            location: location.to_string(),
        }
    }

    async fn get(&self, object: &str) -> Result<Option<Vec<u8>>, CoordinatorError> {
        let err = |e: object_store::Error| CoordinatorError::Store {
            object: object.to_string(),
            reason: e.to_string(),
        };
        match self.store.get(&Path::from(object)).await {
            Ok(r) => Ok(Some(r.bytes().await.map_err(err)?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(err(e)),
        }
    }

    async fn put(&self, object: &str, bytes: Vec<u8>) -> Result<(), CoordinatorError> {
        self.store
            .put(&Path::from(object), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| CoordinatorError::Store {
                object: object.to_string(),
                reason: e.to_string(),
            })
    }

    /// The store's location, for messages.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Delete an object; a missing one is fine.
    ///
    /// object_store retries gets, lists and puts through a server outage, but
    /// not deletes (S3's DELETE and bulk-delete POST are not flagged
    /// idempotent, so a connection reset fails at once). Deleting is
    /// idempotent here, so failures are retried with the same backoff for up
    /// to [`DELETE_RETRY_FOR`].
    pub async fn delete(&self, object: &str) -> Result<(), CoordinatorError> {
        let start = std::time::Instant::now();
        let mut backoff = std::time::Duration::from_millis(200);
        loop {
            match self.store.delete(&Path::from(object)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => return Ok(()),
                Err(e) if start.elapsed() < DELETE_RETRY_FOR => {
                    tracing::warn!(object, error = %e, ?backoff, "delete failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(std::time::Duration::from_secs(15));
                }
                Err(e) => {
                    return Err(CoordinatorError::Store {
                        object: object.to_string(),
                        reason: e.to_string(),
                    })
                }
            }
        }
    }

    fn parse<T: serde::de::DeserializeOwned>(
        object: &str,
        bytes: &[u8],
    ) -> Result<T, CoordinatorError> {
        serde_json::from_slice(bytes).map_err(|e| CoordinatorError::Damaged {
            object: object.to_string(),
            reason: e.to_string(),
        })
    }

    /// Read a JSON object that must exist.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<T, CoordinatorError> {
        match self.get(object).await? {
            Some(bytes) => Self::parse(object, &bytes),
            None => Err(CoordinatorError::Damaged {
                object: object.to_string(),
                reason: "missing".into(),
            }),
        }
    }

    /// Read a JSON object, or `None` when it does not exist.
    pub async fn get_json_opt<T: serde::de::DeserializeOwned>(
        &self,
        object: &str,
    ) -> Result<Option<T>, CoordinatorError> {
        match self.get(object).await? {
            Some(bytes) => Ok(Some(Self::parse(object, &bytes)?)),
            None => Ok(None),
        }
    }

    /// Names of the objects under `prefix`.
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, CoordinatorError> {
        let err = |e: object_store::Error| CoordinatorError::Store {
            object: format!("{prefix}/"),
            reason: e.to_string(),
        };
        let metas: Vec<_> = self
            .store
            .list(Some(&Path::from(prefix)))
            .try_collect()
            .await
            .map_err(err)?;
        Ok(metas.into_iter().map(|m| m.location.to_string()).collect())
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
    /// (killed workers, lapsed leases) left behind. Returns how many.
    pub async fn sweep(&self, keep: &BTreeSet<String>) -> Result<u64, CoordinatorError> {
        let mut removed = 0;
        for prefix in layout::OUTPUT_PREFIXES {
            for object in self.list(prefix).await? {
                if !keep.contains(&object) {
                    self.delete(&object).await?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Write a JSON object (indexes and summaries derived from commit records;
    /// rewriting one gives identical bytes).
    pub async fn put_json<T: Serialize>(
        &self,
        object: &str,
        value: &T,
    ) -> Result<(), CoordinatorError> {
        self.put(object, serde_json::to_vec_pretty(value).unwrap())
            .await
    }

    /// Every layer index in the store (`layers/sSSSSS.json`), by tile sum.
    pub async fn layer_indexes(&self) -> Result<Vec<LayerIndex>, CoordinatorError> {
        let mut sums: Vec<u32> = self
            .list("layers")
            .await?
            .iter()
            .filter_map(|o| {
                o.strip_prefix("layers/s")?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()
            })
            .collect();
        sums.sort_unstable();
        let mut out = Vec::with_capacity(sums.len());
        for sum in sums {
            out.push(self.get_json(&layout::layer_index(sum)).await?);
        }
        Ok(out)
    }

    /// Read the job manifest, if any.
    pub async fn manifest(&self) -> Result<Option<JobManifest>, CoordinatorError> {
        match self.get(layout::JOB).await? {
            Some(bytes) => match JobManifest::parse(&bytes) {
                Ok(m) => Ok(Some(m)),
                Err(ManifestError::Version { found }) => Err(CoordinatorError::FormatVersion {
                    location: self.location.clone(),
                    found,
                }),
                Err(ManifestError::Damaged(reason)) => Err(CoordinatorError::Damaged {
                    object: layout::JOB.to_string(),
                    reason,
                }),
            },
            None => Ok(None),
        }
    }

    /// Open the job in the store: create its manifest, or check that the one
    /// there is this job.
    pub async fn open_job(&self, job: &JobSpec) -> Result<(), CoordinatorError> {
        let want = JobManifest {
            format_version: FORMAT_VERSION,
            job: *job,
        };
        match self.manifest().await? {
            Some(found) if found == want => Ok(()),
            Some(found) => Err(CoordinatorError::ForeignJob {
                location: self.location.clone(),
                found: describe(&found.job),
                requested: describe(job),
            }),
            None => {
                self.put(layout::JOB, serde_json::to_vec_pretty(&want).unwrap())
                    .await
            }
        }
    }

    /// The recorded output of a committed task.
    pub async fn committed(&self, task: &Task) -> Result<Option<TaskOutput>, CoordinatorError> {
        let object = layout::commit(&task.key());
        match self.get(&object).await? {
            Some(bytes) => Ok(Some(Self::parse(&object, &bytes)?)),
            None => Ok(None),
        }
    }

    /// Commit a task's output (after all its objects are written).
    pub async fn commit(&self, task: &Task, output: &TaskOutput) -> Result<(), CoordinatorError> {
        self.put(
            &layout::commit(&task.key()),
            serde_json::to_vec(output).unwrap(),
        )
        .await
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
    format!(
        "{}, chunk size {}, zstd level {}",
        job.game.name(),
        job.chunk_size,
        job.zstd_level
    )
}
