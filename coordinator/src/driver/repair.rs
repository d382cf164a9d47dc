//! Redoing the tasks of damaged objects (`--repair`), after the store's
//! check set them aside in `quarantine/`.
//!
//! - A damaged record is simply gone: a commit record's task runs again
//!   and is committed; layer indexes, the summary and the job manifest are
//!   written again by the job as it goes.
//! - A damaged states, values or policy chunk belongs to a committed task:
//!   that task runs again under a new attempt, and its new outputs must have
//!   the very checksums its commit record names (every task is a pure
//!   function of its inputs). They are then copied under the committed
//!   names, so no record changes and nothing downstream is redone.
//! - Inputs that a redone task needs but that were deleted once consumed
//!   (runs, requests, responses; a solve reads its chunk's requests beside
//!   their responses) are made again by running the tasks that
//!   wrote them, uncommitted (a gather only for the chunk that needs it);
//!   their new bundles must hold the same chunks, checksum for checksum.
//!   The sweep at the end of the job deletes them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{
    ChunkRef, GatherGroup, GatherPiece, RequestRef, RunRef, Task, TaskOutput,
};
use solve2048_store::layout;

use crate::records::{CoordinatorError, Records, RepairError};
use crate::scheduler::Scheduler;

/// What a repair knows and has made so far.
pub struct Repair {
    /// Objects set aside or missing: a committed task that wrote one runs
    /// again.
    damaged: BTreeSet<String>,
    // std Mutexes: held only for map look-ups and inserts, never across an
    // await.
    /// The task that wrote each bundle (runs, requests, responses).
    producers: Mutex<HashMap<String, Task>>,
    /// Bundles known to exist (or not).
    exists: Mutex<HashMap<String, bool>>,
    /// Tasks run again so far (committed ones, and the makers of their
    /// inputs), which the job's count of tasks run includes.
    ran: AtomicU64,
}

impl Repair {
    /// A repair of the objects `damaged` (set aside or missing).
    pub fn new(damaged: BTreeSet<String>) -> Repair {
        Repair {
            damaged,
            producers: Mutex::new(HashMap::new()),
            exists: Mutex::new(HashMap::new()),
            ran: AtomicU64::new(0),
        }
    }

    /// Tasks run again so far.
    pub(super) fn ran(&self) -> u64 {
        self.ran.load(Ordering::Relaxed)
    }

    /// Note the bundles a task's output names, to make them again if they
    /// are needed and gone.
    pub(super) fn note(&self, task: &Task, out: &TaskOutput) {
        // An expand's output is chunks, or runs a merge reads.
        if !matches!(
            task,
            Task::Seed { .. }
                | Task::Enumerate { .. }
                | Task::Expand { .. }
                | Task::Ask { .. }
                | Task::Gather { .. }
        ) {
            return;
        }
        let mut p = self.producers.lock().unwrap();
        for object in layout::outputs_of(out) {
            p.insert(object, task.clone());
        }
    }

    /// Whether a committed output names a damaged chunk (its task must run
    /// again).
    pub(super) fn names_damaged(&self, out: &TaskOutput) -> bool {
        permanent(out)
            .iter()
            .any(|(object, _)| self.damaged.contains(object))
    }
}

/// What running one task needs: the records, the scheduler, the attempts.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub records: &'a Records,
    pub scheduler: &'a Scheduler,
    pub attempts: u32,
    pub repair: &'a Repair,
}

/// The states, values and policy objects an output names, each with its
/// payload checksum.
fn permanent(out: &TaskOutput) -> Vec<(String, u64)> {
    match out {
        TaskOutput::Chunks(chunks) => chunks
            .iter()
            .map(|c| (layout::states_of(c), c.checksum))
            .collect(),
        TaskOutput::Solved { solved, .. } => vec![
            (layout::values_of(solved), solved.values_checksum),
            (layout::policy_of(solved), solved.policy_checksum),
        ],
        _ => Vec::new(),
    }
}

/// Run `task` (uncommitted) until an attempt succeeds, up to the attempts.
async fn run(ctx: Ctx<'_>, task: &Task) -> Result<TaskOutput, CoordinatorError> {
    let mut last = String::new();
    for _ in 0..ctx.attempts {
        match ctx.scheduler.attempt(task).await {
            Ok((out, _)) => {
                ctx.scheduler.done(&task.key(), 0, false);
                ctx.repair.ran.fetch_add(1, Ordering::Relaxed);
                return Ok(out);
            }
            Err(f) => last = f.message,
        }
    }
    Err(RepairError::Attempts {
        task: task.key(),
        attempts: ctx.attempts,
        last,
    }
    .into())
}

/// Run a committed task again because its output names a damaged chunk,
/// check that the new outputs are the committed ones, and put them under
/// the committed names.
pub(super) async fn redo_committed(
    ctx: Ctx<'_>,
    task: &Task,
    committed: &TaskOutput,
) -> Result<(), CoordinatorError> {
    let task = with_inputs(ctx, task.clone()).await?;
    tracing::warn!(task = %task.key(), "repair: running a committed task again for its damaged outputs");
    let out = run(ctx, &task).await?;
    let fresh: BTreeMap<String, (String, u64)> = permanent(&out)
        .into_iter()
        .map(|(o, c)| (logical(&o), (o, c)))
        .collect();
    for (object, checksum) in permanent(committed) {
        let Some((new, new_sum)) = fresh.get(&logical(&object)) else {
            let task = task.key();
            return Err(RepairError::Vanished { task, object }.into());
        };
        if *new_sum != checksum {
            return Err(RepairError::Differs {
                task: task.key(),
                new: new.clone(),
                new_checksum: *new_sum,
                record: layout::commit(&task.key()),
                object,
                checksum,
            }
            .into());
        }
        if ctx.repair.damaged.contains(&object) {
            let store = ctx.records.store();
            let bytes = store.get_required(new).await?;
            store.put(&object, bytes.to_vec()).await?;
            tracing::warn!(%object, "repair: restored");
        }
    }
    for (new, _) in fresh.values() {
        ctx.records.delete(new).await?;
    }
    Ok(())
}

/// An object's name without its attempt tag.
fn logical(object: &str) -> String {
    match object.rfind("-a") {
        Some(i) => object[..i].to_string(),
        None => object.to_string(),
    }
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, CoordinatorError>> + Send + 'a>>;

/// `task` with every bundle it reads present: a bundle deleted once consumed
/// is made again by its producer (uncommitted), and the task is pointed at
/// the new one.
pub(super) fn with_inputs<'a>(ctx: Ctx<'a>, task: Task) -> Boxed<'a, Task> {
    Box::pin(async move {
        match task {
            Task::Merge {
                part,
                group,
                mut runs,
                piece,
            } => {
                with_runs(ctx, &mut runs).await?;
                Ok(Task::Merge {
                    part,
                    group,
                    runs,
                    piece,
                })
            }
            Task::Expand {
                part,
                group,
                mut runs,
            } => {
                with_runs(ctx, &mut runs).await?;
                Ok(Task::Expand { part, group, runs })
            }
            Task::Solve {
                chunk,
                mut requests,
                mut responses,
                pushes,
                reference,
            } => {
                with_requests(ctx, requests.iter_mut()).await?;
                let objects = responses.iter().map(|r| r.object.clone());
                for (object, made) in remake_all(ctx, objects, Some(chunk.id)).await? {
                    let TaskOutput::Responses(new) = made else {
                        return Err(differs(&object));
                    };
                    for r in responses.iter_mut().filter(|r| r.object == object) {
                        let found = new
                            .iter()
                            .find(|n| {
                                n.source == r.source
                                    && n.part == r.part
                                    && n.group == r.group
                                    && n.reference == r.reference
                            })
                            .filter(|n| n.checksum == r.checksum && n.count == r.count);
                        *r = found.cloned().ok_or_else(|| differs(&object))?;
                    }
                }
                Ok(Task::Solve {
                    chunk,
                    requests,
                    responses,
                    pushes,
                    reference,
                })
            }
            Task::Gather {
                part,
                mut groups,
                piece,
            } => {
                with_requests(ctx, groups.iter_mut().flat_map(|g| &mut g.requests)).await?;
                Ok(Task::Gather {
                    part,
                    groups,
                    piece,
                })
            }
            other => Ok(other),
        }
    })
}

/// Point `runs` at bundles that are present: each one deleted once consumed
/// is made again by its producer (the seed, an enumerate, or an expand of a
/// large group), uncommitted. An expand's runs share their part and group:
/// each is found by its checksum and keys.
async fn with_runs(ctx: Ctx<'_>, runs: &mut [RunRef]) -> Result<(), CoordinatorError> {
    for (object, made) in remake_all(ctx, runs.iter().map(|r| r.object.clone()), None).await? {
        let new: Vec<_> = match &made {
            TaskOutput::Runs(r) | TaskOutput::Enumerated { runs: r, .. } => r.clone(),
            _ => Vec::new(),
        };
        for r in runs.iter_mut().filter(|r| r.object == object) {
            let found = new.iter().find(|n| {
                n.part == r.part
                    && n.group == r.group
                    && n.checksum == r.checksum
                    && n.count == r.count
            });
            *r = found.cloned().ok_or_else(|| differs(&object))?;
        }
    }
    Ok(())
}

/// Point `requests` at bundles that are present: each one deleted once
/// consumed is made again by its producer (an ask, or an evaluation's
/// enumerate), uncommitted.
async fn with_requests<'r>(
    ctx: Ctx<'_>,
    requests: impl Iterator<Item = &'r mut RequestRef>,
) -> Result<(), CoordinatorError> {
    let mut requests: Vec<&mut RequestRef> = requests.collect();
    let objects = requests
        .iter()
        .map(|r| r.object.clone())
        .collect::<Vec<_>>();
    for (object, made) in remake_all(ctx, objects.into_iter(), None).await? {
        let (TaskOutput::Requests(new) | TaskOutput::Enumerated { requests: new, .. }) = made
        else {
            return Err(differs(&object));
        };
        for r in requests.iter_mut().filter(|r| r.object == object) {
            let found = new
                .iter()
                .find(|n| n.source == r.source && n.part == r.part && n.group == r.group)
                .filter(|n| n.checksum == r.checksum && n.count == r.count);
            **r = found.cloned().ok_or_else(|| differs(&object))?;
        }
    }
    Ok(())
}

fn differs(object: &str) -> CoordinatorError {
    let object = object.to_string();
    RepairError::OtherChunks { object }.into()
}

/// Make again, at once, each of `objects` that is not in the store.
async fn remake_all(
    ctx: Ctx<'_>,
    objects: impl Iterator<Item = String>,
    source: Option<ChunkId>,
) -> Result<Vec<(String, TaskOutput)>, CoordinatorError> {
    let gone = gone(ctx, objects).await?;
    futures::future::try_join_all(gone.into_iter().map(|object| async move {
        let made = remake(ctx, &object, source).await?;
        Ok::<_, CoordinatorError>((object, made))
    }))
    .await
}

/// The distinct objects among `objects` that are not in the store.
async fn gone(
    ctx: Ctx<'_>,
    objects: impl Iterator<Item = String>,
) -> Result<Vec<String>, CoordinatorError> {
    let distinct: BTreeSet<String> = objects.collect();
    let mut out = Vec::new();
    for object in distinct {
        let known = ctx.repair.exists.lock().unwrap().get(&object).copied();
        let present = match known {
            Some(p) => p,
            None => {
                let p = ctx.records.store().exists(&object).await?;
                ctx.repair.exists.lock().unwrap().insert(object.clone(), p);
                p
            }
        };
        if !present {
            out.push(object);
        }
    }
    Ok(out)
}

/// Make bundle `object` again: run the task that wrote it (only for chunk
/// `source`'s requests, when it is a gather and a solve needs it).
async fn remake(
    ctx: Ctx<'_>,
    object: &str,
    source: Option<ChunkId>,
) -> Result<TaskOutput, CoordinatorError> {
    let producer = ctx
        .repair
        .producers
        .lock()
        .unwrap()
        .get(object)
        .cloned()
        .ok_or_else(|| RepairError::NoProducer {
            object: object.to_string(),
        })?;
    let producer = match (producer, source) {
        (
            Task::Gather {
                part,
                groups,
                piece,
            },
            Some(source),
        ) => only_for(part, groups, piece, source),
        (t, _) => t,
    };
    let producer = with_inputs(ctx, producer).await?;
    tracing::info!(task = %producer.key(), %object, "repair: making a consumed input again");
    run(ctx, &producer).await
}

/// A gather (or one piece of one) reduced to the requests of chunk
/// `source`.
fn only_for(
    part: PartId,
    groups: Vec<GatherGroup>,
    piece: Option<GatherPiece>,
    source: ChunkId,
) -> Task {
    let groups = groups
        .into_iter()
        .filter_map(|mut g| {
            g.requests.retain(|r| r.source == source);
            (!g.requests.is_empty()).then_some(g)
        })
        .collect();
    Task::Gather {
        part,
        groups,
        piece,
    }
}

/// A solve's commit whose chunk is `chunk` but under another attempt (its
/// merge was run again after its commit record was lost): the same states,
/// byte for byte, when the count and checksum agree.
pub(super) fn rebased(chunk: &ChunkRef, out: &TaskOutput) -> Option<Option<TaskOutput>> {
    let TaskOutput::Solved {
        solved,
        digest,
        evaluated,
    } = out
    else {
        return None;
    };
    if solved.chunk == *chunk {
        return None;
    }
    if solved.chunk.id == chunk.id
        && solved.chunk.count == chunk.count
        && solved.chunk.checksum == chunk.checksum
    {
        let mut solved = *solved;
        solved.chunk = *chunk;
        Some(Some(TaskOutput::Solved {
            solved,
            digest: *digest,
            evaluated: evaluated.clone(),
        }))
    } else {
        Some(None)
    }
}
