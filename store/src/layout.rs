//! Object names in the store, relative to the job's root: the one place that
//! says where each thing lives.
//!
//! ```text
//! job.json                                     game, chunk size, zstd level, format version
//! coordinator.json                             the coordinator lock
//! status.json                                  the last status snapshot
//! commits/<task>.json                          one per finished task: its outputs and checksums
//! failures/<task>.json                         failed attempts of a task and the last error
//! layers/sSSSSS.json                           a layer's parts, group counts and chunks
//! summary.json                                 written last: states, start value, digest
//! states/sSSSSS/mMM/gGGGG-cCCCC-aA.chunk       sorted canonical states of a chunk
//! values/sSSSSS/mMM/gGGGG-cCCCC-aA.chunk       f64 value of each state, same order
//! policy/sSSSSS/mMM/gGGGG-cCCCC-aA.chunk       optimal action code of each state
//! runs/sSSSSS/from-<chunk>-aA.runs           a chunk's successors in layer S, one run per
//!                                              target group (deleted once layer S is merged)
//! requests/sSSSSS/from-<chunk>-aA.reqs       a chunk's afterstates, one request per group their
//!                                              spawns land in (deleted once the chunk is solved)
//! responses/sSSSSS/mMM/gGGGG-aA.resps        group G's answers, one per request
//!                                              (deleted once the asking chunks are solved)
//! ```
//!
//! `<chunk>` is `sSSSSS-mMM-gGGGG-cCCCC`: the tile sum, max-tile exponent,
//! group and index of a chunk. Runs, requests and responses are bundles: a
//! task writes all of its own (its runs: of each target layer) as one
//! object, each a whole chunk-format blob at a byte range of it (its ref
//! says where), so a job makes one object a task (two for an enumerate)
//! however many groups it addresses.
//!
//! `A` is the attempt that wrote the object, so every attempt writes under
//! names of its own and an object under a given name never changes.

use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{AttemptId, ChunkRef, SolvedRef, TaskOutput};

fn chunk_path(kind: &str, id: &ChunkId, attempt: AttemptId) -> String {
    format!(
        "{kind}/s{:05}/m{:02}/g{:04}-c{:04}-{attempt}.chunk",
        id.part.sum, id.part.max_exp, id.group, id.index
    )
}

/// The job manifest.
pub const JOB: &str = "job.json";

/// Where objects set aside by a repair go, each under its own name, with a
/// `.reason.txt` beside it.
pub const QUARANTINE: &str = "quarantine";

/// The coordinator's lock: who runs the job now.
pub const LOCK: &str = "coordinator.json";

/// The last status snapshot the coordinator wrote.
pub const STATUS: &str = "status.json";

/// The summary of a solved job.
pub const SUMMARY: &str = "summary.json";

/// States of a chunk, as written by merge attempt `attempt`.
pub fn states(id: &ChunkId, attempt: AttemptId) -> String {
    chunk_path("states", id, attempt)
}

/// Values of a chunk, as written by solve attempt `attempt`.
pub fn values(id: &ChunkId, attempt: AttemptId) -> String {
    chunk_path("values", id, attempt)
}

/// Optimal actions of a chunk, as written by solve attempt `attempt`.
pub fn policy(id: &ChunkId, attempt: AttemptId) -> String {
    chunk_path("policy", id, attempt)
}

/// The states object of a stored chunk.
pub fn states_of(chunk: &ChunkRef) -> String {
    states(&chunk.id, chunk.attempt)
}

/// The values object of a solved chunk.
pub fn values_of(solved: &SolvedRef) -> String {
    values(&solved.chunk.id, solved.attempt)
}

/// The policy object of a solved chunk.
pub fn policy_of(solved: &SolvedRef) -> String {
    policy(&solved.chunk.id, solved.attempt)
}

/// The runs of an enumerate task of chunk `source` (or of the seed) for the
/// parts of layer `target`, as one bundle, written by attempt `attempt`.
/// One bundle a target layer, so that each is deleted once its layer is
/// merged.
pub fn runs(source: Option<&ChunkId>, target: u32, attempt: AttemptId) -> String {
    match source {
        Some(id) => format!("runs/s{target:05}/from-{}-{attempt}.runs", id.name()),
        None => format!("runs/s{target:05}/seed-{attempt}.runs"),
    }
}

/// Sorted run `index` of states that an expand of `group` of `part` wrote (a
/// group too large to sort at once), as one bundle, written by attempt
/// `attempt`.
pub fn expanded_run(part: &PartId, group: u32, index: u32, attempt: AttemptId) -> String {
    format!(
        "runs/s{:05}/m{:02}-g{:04}-r{index:04}-{attempt}.runs",
        part.sum, part.max_exp, group
    )
}

/// The requests of chunk `source`, as one bundle, written by attempt
/// `attempt`.
pub fn requests(source: &ChunkId, attempt: AttemptId) -> String {
    format!(
        "requests/s{:05}/from-{}-{attempt}.reqs",
        source.part.sum,
        source.name()
    )
}

/// The responses of `group` of `part`, as one bundle, written by attempt
/// `attempt`.
pub fn responses(part: &PartId, group: u32, attempt: AttemptId) -> String {
    format!(
        "responses/s{:05}/m{:02}/g{:04}-{attempt}.resps",
        part.sum, part.max_exp, group
    )
}

/// The prefixes holding task outputs.
pub const OUTPUT_PREFIXES: [&str; 6] = [
    "states",
    "values",
    "policy",
    "runs",
    "requests",
    "responses",
];

/// The objects a task's output names: what an attempt that is not
/// committed leaves behind, to delete.
pub fn outputs_of(output: &TaskOutput) -> Vec<String> {
    match output {
        TaskOutput::Runs(runs) => distinct(runs.iter().map(|r| &r.object)),
        TaskOutput::Enumerated {
            runs,
            requests,
            pushes,
        } => distinct(
            runs.iter()
                .map(|r| &r.object)
                .chain(requests.iter().map(|r| &r.object))
                .chain(pushes.iter().map(|p| &p.object)),
        ),
        TaskOutput::Requests(requests) => distinct(requests.iter().map(|r| &r.object)),
        TaskOutput::Responses(responses) => distinct(responses.iter().map(|r| &r.object)),
        TaskOutput::Chunks(chunks) => chunks.iter().map(states_of).collect(),
        TaskOutput::Solved { solved, .. } => vec![values_of(solved), policy_of(solved)],
        TaskOutput::StartValue(_) => Vec::new(),
    }
}

/// The distinct names among `objects`, in order.
fn distinct<'a>(objects: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for o in objects {
        if !out.contains(o) {
            out.push(o.clone());
        }
    }
    out
}

/// The index of layer `sum`.
pub fn layer_index(sum: u32) -> String {
    format!("layers/s{sum:05}.json")
}

/// The tile sum of a layer index object, if `object` is one.
pub fn layer_index_sum(object: &str) -> Option<u32> {
    object
        .strip_prefix("layers/s")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// Failures of a task.
pub fn failure(task_key: &str) -> String {
    format!("failures/{task_key}.json")
}

/// Commit record of a task.
pub fn commit(task_key: &str) -> String {
    format!("commits/{task_key}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_chunk_and_the_attempt() {
        let id = ChunkId {
            part: PartId {
                sum: 30,
                max_exp: 3,
            },
            group: 7,
            index: 2,
        };
        let a = AttemptId::new(1, 5);
        assert_eq!(
            states(&id, a),
            "states/s00030/m03/g0007-c0002-a0000000100000005.chunk"
        );
        assert_eq!(
            runs(Some(&id), 32, a),
            "runs/s00032/from-s00030-m03-g0007-c0002-a0000000100000005.runs"
        );
        assert_eq!(runs(None, 6, a), "runs/s00006/seed-a0000000100000005.runs");
        assert_eq!(layer_index_sum(&layer_index(1234)), Some(1234));
        assert_eq!(layer_index_sum("layers/x.json"), None);
    }
}
