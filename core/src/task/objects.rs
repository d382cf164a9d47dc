//! Names of stored objects and of attempts: chunks, runs, requests and
//! responses as tasks read and write them.

use serde::{Deserialize, Serialize};

use crate::space::ids::{ChunkId, PartId};

/// One attempt at a task: a lease. Unique across coordinator restarts (the
/// coordinator's epoch in the high 32 bits, a counter in the low ones), so
/// every attempt writes its outputs under names of its own and the
/// coordinator alone decides, by committing, which attempt's outputs count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AttemptId(pub u64);

impl AttemptId {
    /// The attempt `seq` of coordinator epoch `epoch`.
    pub fn new(epoch: u32, seq: u32) -> AttemptId {
        AttemptId(((epoch as u64) << 32) | seq as u64)
    }

    /// The coordinator epoch that issued it.
    pub fn epoch(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for AttemptId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a{:016x}", self.0)
    }
}

/// A stored chunk of states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// Which chunk.
    pub id: ChunkId,
    /// Number of states.
    pub count: u64,
    /// Payload checksum of the states object.
    pub checksum: u64,
    /// The merge attempt that wrote it.
    pub attempt: AttemptId,
}

/// A solved chunk: its states and the solve attempt that wrote its values
/// and policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolvedRef {
    /// The states.
    pub chunk: ChunkRef,
    /// The solve attempt that wrote values and policy.
    pub attempt: AttemptId,
    /// Payload checksum of the values object.
    pub values_checksum: u64,
    /// Payload checksum of the policy object.
    pub policy_checksum: u64,
}

/// A stored run: sorted keys of one source for one group of one part, the
/// group's states or afterstates whose spawns of one tile land in it
/// ([`RunRef::spawns`]). A task writes all its runs as one bundle object
/// (one put, one delete); each run is a whole chunk-format blob at a byte
/// range of it, read on its own and verified on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Target part.
    pub part: PartId,
    /// Target group.
    pub group: u32,
    /// What its keys are: `None`, states of the target group, which a
    /// merge takes as they are; `Some(tile)`, afterstates whose spawns of a
    /// tile of exponent `tile` (1 for a 2, 2 for a 4) all land in the target
    /// group, which an expand spawns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawns: Option<u8>,
    /// The bundle object it lies in.
    pub object: String,
    /// Its first byte in the object.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of keys.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
    /// Keys at evenly spaced ranks of the run ([`RUN_SAMPLES`] of them, or
    /// every key of a shorter run): what a merge splits a large group by.
    #[serde(default)]
    pub samples: Vec<u64>,
    /// A run of more than a frame of keys ([`run_frame_keys`](crate::task::run_frame_keys))
    /// is written as consecutive frames, each a whole chunk-format blob, so
    /// that a merge piece reads only the frames that hold its key range;
    /// empty when the run is one blob.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<RunFrame>,
}

/// One frame of a run: a chunk-format blob of its consecutive keys, at a
/// byte range of the bundle. Written in records as an array `[first,
/// offset, len, count, checksum]` (a large layer's records list hundreds of
/// frames a run; field names would be half their bytes); read in that form or
/// as the object with those fields that older records hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "FrameArray")]
pub struct RunFrame {
    /// Its first key: it holds the run's keys from here to the next
    /// frame's first.
    pub first: u64,
    /// Its first byte in the bundle.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of keys.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
}

/// A [`RunFrame`] as records write it: first, offset, len, count, checksum.
type FrameArray = (u64, u64, u64, u64, u64);

impl From<RunFrame> for FrameArray {
    fn from(f: RunFrame) -> FrameArray {
        (f.first, f.offset, f.len, f.count, f.checksum)
    }
}

/// A [`RunFrame`] as an object with named fields, which records may hold
/// instead of a [`FrameArray`].
#[derive(Deserialize)]
struct FrameObject {
    first: u64,
    offset: u64,
    len: u64,
    count: u64,
    checksum: u64,
}

/// Reads a [`RunFrame`] in either form straight from the parser (an
/// untagged enum would buffer every frame first: 3.4 times the parse time
/// of the arrays, on every record a coordinator reads when it resumes).
struct FrameVisitor;

impl<'de> serde::de::Visitor<'de> for FrameVisitor {
    type Value = RunFrame;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a run frame [first, offset, len, count, checksum]")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RunFrame, A::Error> {
        let mut field = [0u64; 5];
        for (i, v) in field.iter_mut().enumerate() {
            *v = seq
                .next_element()?
                .ok_or_else(|| serde::de::Error::invalid_length(i, &self))?;
        }
        let [first, offset, len, count, checksum] = field;
        Ok(RunFrame {
            first,
            offset,
            len,
            count,
            checksum,
        })
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RunFrame, A::Error> {
        let f = FrameObject::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        Ok(RunFrame {
            first: f.first,
            offset: f.offset,
            len: f.len,
            count: f.count,
            checksum: f.checksum,
        })
    }
}

impl<'de> Deserialize<'de> for RunFrame {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunFrame, D::Error> {
        d.deserialize_any(FrameVisitor)
    }
}

impl RunRef {
    /// The blobs the run is stored as: its frames, or itself whole.
    pub fn blobs(&self) -> Vec<RunFrame> {
        if !self.frames.is_empty() {
            return self.frames.clone();
        }
        vec![RunFrame {
            first: 0,
            offset: self.offset,
            len: self.len,
            count: self.count,
            checksum: self.checksum,
        }]
    }

    /// The blobs that may hold keys in `[lo, hi)`: consecutive, so read
    /// as one byte range.
    pub fn blobs_in(&self, lo: u64, hi: u64) -> Vec<RunFrame> {
        let blobs = self.blobs();
        let ends: Vec<u64> = blobs
            .iter()
            .skip(1)
            .map(|b| b.first)
            .chain(std::iter::once(u64::MAX))
            .collect();
        blobs
            .into_iter()
            .zip(ends)
            .filter(|(b, end)| b.first < hi && *end > lo)
            .map(|(b, _)| b)
            .collect()
    }
}

/// The checksum a framed run is named by (repair compares it): its frames'
/// checksums folded in order.
pub fn frames_checksum(frames: &[RunFrame]) -> u64 {
    frames.iter().fold(0u64, |acc, f| {
        acc.rotate_left(17) ^ f.checksum.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    })
}

/// Keys a run records as samples of its key range.
pub const RUN_SAMPLES: usize = 16;

/// A piece of a bundle that one chunk's task addresses to one group of a
/// part, or that group's answer to it: the chunk's distinct afterstates
/// (sorted) whose spawns of one tile all land in that group, with what goes
/// with each. The tile is the part's tile sum less the chunk's (2 or 4). In
/// its three roles ([`RequestRef`], [`ResponseRef`], [`PushRef`]) it names
/// the same afterstates, so one type serves all three.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceRef {
    /// The chunk whose afterstates these are (whose solve reads the answer).
    pub source: ChunkId,
    /// The part their spawns land in (that answers).
    pub part: PartId,
    /// The group of that part.
    pub group: u32,
    /// The bundle object it lies in.
    pub object: String,
    /// Its first byte in the object.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Number of afterstates.
    pub count: u64,
    /// Payload checksum.
    pub checksum: u64,
    /// Responses of evaluation jobs: true for the sums of the solved store's
    /// optimal values, false for those of the evaluated player's values
    /// (each request of an evaluation is answered with both). False in every
    /// other piece.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
    /// Responses of a gather of one slice of a group cut into several
    /// ([`crate::task::GatherPiece`]): (that slice, the number of slices).
    /// A response holds one sum for each key of its request in the slice,
    /// in order. None for the whole group, and in every other piece.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<(u32, u32)>,
}

impl PieceRef {
    /// Exponent of the spawned tile: 1 for a 2, 2 for a 4.
    pub fn tile(&self) -> u8 {
        ((self.part.sum - self.source.part.sum) / 2) as u8
    }
}

/// Requests of one chunk to one group: its afterstates whose spawns land
/// there, keys only.
pub type RequestRef = PieceRef;

/// The answer to one [`RequestRef`]: for each of its afterstates in the
/// gather's slice ([`PieceRef::slice`]), in order, the sum over the
/// afterstate's empty cells of the values of its spawns of the request's
/// tile. The sums only: the solve that reads it reads the request too.
pub type ResponseRef = PieceRef;

/// An evaluation's forward pass: the afterstates of one request, each with
/// the discounted probability that the evaluated player makes it from the
/// chunk's boards. Its keys are those of the request.
pub type PushRef = PieceRef;

#[cfg(test)]
mod tests {
    use super::*;

    fn run(firsts: &[u64]) -> RunRef {
        let frames: Vec<RunFrame> = firsts
            .iter()
            .enumerate()
            .map(|(i, &first)| RunFrame {
                first,
                offset: 100 * i as u64,
                len: 100,
                count: 10,
                checksum: i as u64,
            })
            .collect();
        RunRef {
            part: PartId { sum: 8, max_exp: 2 },
            group: 0,
            spawns: None,
            object: "runs/x".into(),
            offset: 0,
            len: 100 * firsts.len() as u64,
            count: 10 * firsts.len() as u64,
            checksum: frames_checksum(&frames),
            samples: Vec::new(),
            frames,
        }
    }

    /// A range reads the frames that may hold its keys, and only those.
    #[test]
    fn a_range_reads_its_frames() {
        let r = run(&[10, 20, 30]);
        let firsts = |lo, hi| -> Vec<u64> { r.blobs_in(lo, hi).iter().map(|b| b.first).collect() };
        assert_eq!(firsts(0, u64::MAX), vec![10, 20, 30]);
        assert_eq!(firsts(15, 25), vec![10, 20]);
        assert_eq!(firsts(20, 30), vec![20]);
        assert_eq!(firsts(0, 10), Vec::<u64>::new());
        assert_eq!(firsts(0, 11), vec![10]);
        assert_eq!(firsts(31, u64::MAX), vec![30]);
        // A run of one blob is read whole by every range.
        let whole = RunRef {
            frames: Vec::new(),
            ..run(&[10])
        };
        assert_eq!(whole.blobs_in(500, 600).len(), 1);
        assert_eq!(whole.blobs_in(500, 600)[0].len, whole.len);
        // The name of a framed run follows every frame's content.
        let mut other = r.frames.clone();
        other[1].checksum ^= 1;
        assert_ne!(frames_checksum(&r.frames), frames_checksum(&other));
    }

    /// Frames are written as arrays, and read back from arrays or from the
    /// objects of older records; anything else is refused.
    #[test]
    fn frames_are_written_as_arrays_and_read_in_both_forms() {
        let r = run(&[10, u64::MAX - 1]);
        let json = serde_json::to_string(&r).unwrap();
        assert!(
            json.contains(r#""frames":[[10,0,100,10,0],[18446744073709551614,100,100,10,1]]"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<RunRef>(&json).unwrap(), r);
        let old = json.replace(
            "[[10,0,100,10,0],",
            r#"[{"first":10,"offset":0,"len":100,"count":10,"checksum":0},"#,
        );
        assert_ne!(old, json);
        assert_eq!(serde_json::from_str::<RunRef>(&old).unwrap(), r);
        for bad in [
            "[[10,0,100,10],",
            "[[10,0,100,10,0,7],",
            r#"[{"first":10,"offset":0},"#,
        ] {
            let damaged = json.replace("[[10,0,100,10,0],", bad);
            assert!(
                serde_json::from_str::<RunRef>(&damaged).is_err(),
                "{damaged}"
            );
        }
    }
}
