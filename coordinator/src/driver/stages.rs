//! What the passes run, as data: pure functions from what a layer holds
//! (its pending runs, its chunks, the requests addressed to it) to the
//! tasks of its stages, and from stage outputs back to what the next stage
//! needs. The driver executes them ([`super::Driver::stage`]); these need
//! neither a runtime nor a store, and are tested so.

use std::collections::BTreeMap;

use solve2048_core::kernel::splitters;
use solve2048_core::space::ids::{ChunkId, PartId};
use solve2048_core::task::{
    merge_pieces, ChunkRef, LayerIndex, MergePiece, PartIndex, RequestRef, RunRef, Task, TaskOutput,
};
use solve2048_store::layout;

use crate::records::CoordinatorError;

/// Runs waiting to be merged or expanded: part -> group -> runs.
pub(super) type Pending = BTreeMap<PartId, BTreeMap<u32, Vec<RunRef>>>;

/// Each chunk's requests, from its ask (an evaluation's enumerate) until
/// its solve, which reads them beside their responses: source chunk -> its
/// requests, one a group its afterstates' spawns land in.
pub(super) type Requests = BTreeMap<ChunkId, Vec<RequestRef>>;

/// The first stages of a layer: each group's expand (a group fed by
/// afterstates) or merge (a group of state runs only), and the run bundles
/// they read.
#[derive(Debug, Default, PartialEq)]
pub(super) struct FirstStages {
    /// Expands, a group each.
    pub expands: Vec<Task>,
    /// Merges, a group (or a key-range piece of one) each.
    pub merges: Vec<Task>,
    /// The run bundles read (some more than once).
    pub read: Vec<String>,
}

/// The expands and merges of `parts`, whose runs `pending` holds (and
/// gives up).
pub(super) fn first_stages(
    parts: &[PartId],
    pending: &mut Pending,
    chunk_size: u64,
) -> FirstStages {
    let mut out = FirstStages::default();
    for part in parts {
        for (group, runs) in pending.remove(part).unwrap_or_default() {
            out.read.extend(runs.iter().map(|r| r.object.clone()));
            match runs.iter().any(|r| r.spawns.is_some()) {
                true => out.expands.push(Task::Expand {
                    part: *part,
                    group,
                    runs,
                }),
                false => out
                    .merges
                    .extend(merge_tasks(part, group, runs, chunk_size)),
            }
        }
    }
    out
}

/// What the expands made: chunks (a group small enough to sort at once),
/// and the sorted runs of the larger groups, which merges finish.
pub(super) fn expanded(
    outputs: Vec<(String, TaskOutput)>,
) -> Result<(Vec<ChunkRef>, Pending), CoordinatorError> {
    let (mut chunks, mut sorted) = (Vec::new(), Pending::new());
    for (key, out) in outputs {
        match out {
            TaskOutput::Chunks(c) => chunks.extend(c),
            TaskOutput::Runs(runs) => file_runs(&mut sorted, runs),
            other => return Err(unexpected(&key, &other)),
        }
    }
    Ok((chunks, sorted))
}

/// The merges of the groups expanded into sorted runs (states, sorted),
/// and the run bundles they read.
pub(super) fn sorted_merges(sorted: Pending, chunk_size: u64) -> (Vec<Task>, Vec<String>) {
    let (mut merges, mut read) = (Vec::new(), Vec::new());
    for (part, groups) in sorted {
        for (group, runs) in groups {
            read.extend(runs.iter().map(|r| r.object.clone()));
            merges.extend(merge_tasks(&part, group, runs, chunk_size));
        }
    }
    (merges, read)
}

/// The merge of one group: one task, or one per key range when its runs
/// hold many chunks of keys. The ranges come from the runs' samples, so
/// they are the same on every run of the job.
pub(super) fn merge_tasks(
    part: &PartId,
    group: u32,
    runs: Vec<RunRef>,
    chunk_size: u64,
) -> Vec<Task> {
    let part = *part;
    let keys: u64 = runs.iter().map(|r| r.count).sum();
    let pieces = merge_pieces(keys, chunk_size);
    let cuts = match pieces > 1 {
        true => {
            let samples: Vec<(u64, &[u64])> = (runs.iter())
                .map(|r| (r.count, r.samples.as_slice()))
                .collect();
            splitters(&samples, pieces)
        }
        false => Vec::new(),
    };
    if cuts.is_empty() {
        let piece = None;
        return vec![Task::Merge {
            part,
            group,
            runs,
            piece,
        }];
    }
    let bounds: Vec<u64> = (std::iter::once(0).chain(cuts))
        .chain(std::iter::once(u64::MAX))
        .collect();
    (bounds.windows(2).enumerate())
        .map(|(index, w)| Task::Merge {
            part,
            group,
            runs: runs.clone(),
            piece: Some(MergePiece {
                index: index as u32,
                lo: w[0],
                hi: w[1],
            }),
        })
        .collect()
}

/// The index of layer `sum`: those of its `parts` that have chunks (a part
/// whose afterstates' spawns are all lost has no states: it is no part of
/// the layer, nor is a layer of such parts: `None`), with their chunks and
/// group counts.
pub(super) fn layer_index(
    sum: u32,
    parts: Vec<PartId>,
    chunks: &[ChunkRef],
    groups: impl Fn(PartId) -> u32,
) -> Option<LayerIndex> {
    let parts: Vec<PartIndex> = (parts.into_iter())
        .filter(|&p| chunks.iter().any(|c| c.id.part == p))
        .map(|part| PartIndex {
            part,
            groups: groups(part),
            chunks: (chunks.iter().filter(|c| c.id.part == part).copied()).collect(),
            solved: Vec::new(),
        })
        .collect();
    (!parts.is_empty()).then_some(LayerIndex { sum, parts })
}

/// Files `runs` in `pending` by part and group.
pub(super) fn file_runs(pending: &mut Pending, runs: Vec<RunRef>) {
    for r in runs {
        (pending.entry(r.part).or_default())
            .entry(r.group)
            .or_default()
            .push(r);
    }
}

/// File `asked` (an ask or an evaluation's enumerate output) under the
/// chunk that asked.
pub(super) fn file_requests(requests: &mut Requests, asked: Vec<RequestRef>) {
    for r in asked {
        requests.entry(r.source).or_default().push(r);
    }
}

/// Files the runs and requests of the seed's or the enumerates' outputs (by
/// task key); any other output is an error.
pub(super) fn file_enumerated(
    pending: &mut Pending,
    requests: &mut Requests,
    outputs: Vec<(String, TaskOutput)>,
) -> Result<(), CoordinatorError> {
    for (key, out) in outputs {
        match out {
            TaskOutput::Runs(runs) => file_runs(pending, runs),
            TaskOutput::Enumerated {
                runs,
                requests: asked,
                ..
            } => {
                file_runs(pending, runs);
                file_requests(requests, asked);
            }
            other => return Err(unexpected(&key, &other)),
        }
    }
    Ok(())
}

/// The requests addressed to layer `sum`, by part and group, in the order
/// of the chunks that asked.
pub(super) fn addressed_to(
    requests: &Requests,
    sum: u32,
) -> BTreeMap<(PartId, u32), Vec<RequestRef>> {
    let mut to: BTreeMap<(PartId, u32), Vec<RequestRef>> = BTreeMap::new();
    for r in requests.values().flatten().filter(|r| r.part.sum == sum) {
        to.entry((r.part, r.group)).or_default().push(r.clone());
    }
    to
}

/// One step of the backward pass, at layer `sum`: solve its chunks, then
/// the chunks of `asks` ask for their spawn sums, then its groups answer
/// the requests addressed to them (from layers `sum - 2` and `sum - 4`).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct BackStep {
    /// The layer solved and gathered.
    pub sum: u32,
    /// The layers whose chunks ask at this step.
    pub asks: Vec<u32>,
}

/// The steps of the backward pass, from the top down: `last` is the top
/// layer of states, `asked_top` the highest layer any request of the
/// forward pass is addressed to (an evaluation's), `asking` whether the
/// chunks ask in this pass (a solve; an evaluation's asked in the forward
/// pass). A layer asks once, after the solve of the layer two above it has
/// freed that layer's requests, so two layers' requests live at once, not
/// three; the top step asks for both layers below it. Requests may reach a
/// layer past the last one (afterstates whose spawns are all lost): its
/// step answers them too, from no states.
pub(super) fn backward_steps(last: u32, asked_top: Option<u32>, asking: bool) -> Vec<BackStep> {
    let top = asked_top
        .into_iter()
        .chain([if asking { last + 4 } else { last }])
        .max()
        .unwrap_or(4);
    (4..=top)
        .rev()
        .step_by(2)
        .map(|sum| BackStep {
            sum,
            asks: [sum - 2, sum - 4]
                .into_iter()
                .filter(|&s| asking && s >= 4 && s <= last && (s == sum - 4 || sum == top))
                .collect(),
        })
        .collect()
}

/// An output that does not fit its task, named by the task's commit record.
pub(super) fn unexpected(key: &str, out: &TaskOutput) -> CoordinatorError {
    CoordinatorError::Damaged {
        object: layout::commit(key),
        reason: format!("unexpected output {out:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use solve2048_core::task::AttemptId;

    fn part(sum: u32) -> PartId {
        PartId { sum, max_exp: 3 }
    }

    /// A run of `count` keys of `part`'s `group`, of afterstates when
    /// `spawns`, sampled at every tenth key of 0, 10, 20, ...
    fn run(part: PartId, group: u32, object: &str, count: u64, spawns: bool) -> RunRef {
        RunRef {
            part,
            group,
            spawns: spawns.then_some(1),
            object: object.into(),
            offset: 0,
            len: 1,
            count,
            checksum: 0,
            samples: (0..count / 10).map(|i| i * 100).collect(),
            frames: Vec::new(),
        }
    }

    fn chunk(part: PartId, group: u32) -> ChunkRef {
        ChunkRef {
            id: ChunkId {
                part,
                group,
                index: 0,
            },
            count: 5,
            checksum: 0,
            attempt: AttemptId(1),
        }
    }

    /// A group fed by afterstates is expanded, a group of state runs
    /// merged; the parts taken leave `pending`, the others stay; every
    /// bundle read is listed.
    #[test]
    fn afterstates_are_expanded_and_state_runs_merged() {
        let (a, b, later) = (part(10), part(10), part(12));
        let b = PartId { max_exp: 4, ..b };
        let mut pending = Pending::new();
        file_runs(
            &mut pending,
            vec![
                run(a, 0, "runs/x", 10, true),
                run(a, 0, "runs/y", 10, false),
                run(b, 1, "runs/z", 10, false),
                run(later, 0, "runs/w", 10, true),
            ],
        );
        let first = first_stages(&[a, b], &mut pending, 1000);
        assert_eq!(first.expands.len(), 1);
        assert!(
            matches!(&first.expands[0], Task::Expand { part, group: 0, runs } if *part == a && runs.len() == 2)
        );
        assert_eq!(first.merges.len(), 1);
        assert!(
            matches!(&first.merges[0], Task::Merge { part, group: 1, piece: None, .. } if *part == b)
        );
        assert_eq!(first.read, ["runs/x", "runs/y", "runs/z"]);
        assert_eq!(pending.keys().copied().collect::<Vec<_>>(), [later]);
    }

    /// A group of many chunks of keys is merged in key-range pieces that
    /// cover every key once, in order; a small one in one task.
    #[test]
    fn large_merges_are_cut_into_contiguous_key_ranges() {
        let small = merge_tasks(&part(8), 0, vec![run(part(8), 0, "r", 100, false)], 100);
        assert!(matches!(&small[..], [Task::Merge { piece: None, .. }]));
        let runs = vec![
            run(part(8), 0, "r1", 4000, false),
            run(part(8), 0, "r2", 4000, false),
        ];
        let pieces = merge_tasks(&part(8), 0, runs, 100);
        assert!(pieces.len() > 1, "{pieces:?}");
        let ranges: Vec<(u32, u64, u64)> = (pieces.iter())
            .map(|t| match t {
                Task::Merge {
                    piece: Some(p),
                    runs,
                    ..
                } if runs.len() == 2 => (p.index, p.lo, p.hi),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ranges[0].1, 0);
        assert_eq!(ranges.last().unwrap().2, u64::MAX);
        for (i, w) in ranges.windows(2).enumerate() {
            assert_eq!((w[0].0, w[1].0), (i as u32, i as u32 + 1));
            assert!(w[0].1 < w[0].2 && w[0].2 == w[1].1, "{ranges:?}");
        }
    }

    /// Outputs are filed where the next stage reads them; an output that
    /// does not fit its stage names its task's commit record.
    #[test]
    fn outputs_are_filed_and_strays_refused() {
        let (chunks, sorted) = expanded(vec![
            (
                "expand-a".into(),
                TaskOutput::Chunks(vec![chunk(part(10), 0)]),
            ),
            (
                "expand-b".into(),
                TaskOutput::Runs(vec![run(part(10), 1, "s", 10, false)]),
            ),
        ])
        .unwrap();
        assert_eq!(chunks, [chunk(part(10), 0)]);
        assert_eq!(sorted[&part(10)][&1].len(), 1);
        let (merges, read) = sorted_merges(sorted, 1000);
        assert!(matches!(
            &merges[..],
            [Task::Merge {
                group: 1,
                piece: None,
                ..
            }]
        ));
        assert_eq!(read, ["s"]);
        let stray = ("expand-c".to_string(), TaskOutput::StartValue(0.5));
        let e = expanded(vec![stray.clone()]).unwrap_err();
        assert!(
            matches!(&e, CoordinatorError::Damaged { object, .. } if object == "commits/expand-c.json"),
            "{e}"
        );
        let (mut pending, mut requests) = (Pending::new(), Requests::new());
        let e = file_enumerated(&mut pending, &mut requests, vec![stray]).unwrap_err();
        assert!(matches!(e, CoordinatorError::Damaged { .. }));
        let outputs = vec![(
            "seed".into(),
            TaskOutput::Runs(vec![run(part(4), 0, "s", 3, false)]),
        )];
        file_enumerated(&mut pending, &mut requests, outputs).unwrap();
        assert_eq!(pending[&part(4)][&0][0].object, "s");
    }

    /// A layer's index lists its parts that have chunks, with their group
    /// counts; a layer of no chunk has none.
    #[test]
    fn a_layer_is_indexed_by_its_parts_with_chunks() {
        let (a, b) = (
            part(10),
            PartId {
                sum: 10,
                max_exp: 4,
            },
        );
        let chunks = [chunk(a, 0), chunk(a, 1)];
        let index = layer_index(10, vec![a, b], &chunks, |_| 7).unwrap();
        assert_eq!(index.parts.len(), 1);
        assert_eq!((index.parts[0].part, index.parts[0].groups), (a, 7));
        assert_eq!(index.parts[0].chunks, chunks);
        assert!(layer_index(10, vec![b], &chunks, |_| 7).is_none());
    }

    /// A solve's backward pass: every layer asks exactly once, at the step
    /// of the layer two or four above it whose gather answers it, never
    /// after that gather; the top step is four above the last layer. An
    /// evaluation asks nothing, and reaches the highest layer it asked.
    #[test]
    fn each_layer_asks_once_before_its_answers_are_gathered() {
        let last = 20;
        let steps = backward_steps(last, None, true);
        assert_eq!(steps.first().unwrap().sum, last + 4);
        assert_eq!(steps.last().unwrap().sum, 4);
        let mut asked_at = BTreeMap::new();
        for step in &steps {
            for &layer in &step.asks {
                assert!(
                    asked_at.insert(layer, step.sum).is_none(),
                    "{layer} asked twice"
                );
            }
        }
        assert_eq!(
            asked_at.keys().copied().collect::<Vec<_>>(),
            (4..=last).step_by(2).collect::<Vec<_>>()
        );
        for (layer, at) in asked_at {
            // Asked at the gather of layer+4 (the top's, for the top two).
            assert!(
                at == layer + 4 || (at == last + 4 && layer + 2 == at),
                "{layer} at {at}"
            );
        }
        let evaluation = backward_steps(last, Some(30), false);
        assert_eq!(evaluation.first().unwrap().sum, 30);
        assert!(evaluation.iter().all(|s| s.asks.is_empty()));
    }
}
