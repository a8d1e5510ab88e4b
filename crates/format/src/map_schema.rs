//! The map file format: the JSON of one fragment's body, field for field.
//!
//! These plain structs *are* the on-disk format of a fragment body, versioned
//! with the map's version (`pathprof_core::map::MAP_VERSION`): serde writes
//! them exactly as every `.ppmap` file and `.pathprof.map` section holds them
//! (fields in this order, under these names, those marked so left out when
//! empty, variants spelled as declared), and reads the bodies of versions 1,
//! 2 and 3 alike (the versions differ only in the header and compression
//! around the body). Changing anything here (a field's name, type, order or
//! default, when it is left out, a variant or its spelling) changes the bytes
//! of every map written, so it means a new version and a reader for the old
//! one; `pathprof-core`'s `tests/map_schema.rs` pins the JSON of a small map
//! of each mode so that no change goes unnoticed. Ids (blocks, CFG edges, DAG
//! nodes, files) are plain `u32` indices. `pathprof_core::map::schema`
//! converts between these and the algorithms' types, in one place.

use serde::{Deserialize, Serialize};
use std::format;
use std::prelude::rust_2021::*;

/// A fragment's body: one instrumented module (`pathprof_core::map::MapFile`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fragment {
    pub mode: Mode,
    pub build_id: u64,
    pub files: Vec<String>,
    /// Absent (empty) in maps written before digests were recorded.
    #[serde(default)]
    pub file_digests: Vec<Option<u64>>,
    pub functions: Vec<Function>,
    /// Absent (false) in maps written before it was recorded.
    #[serde(default)]
    pub atomic: bool,
    /// Every thread the runtime starts counts into counters of its own
    /// (runtime ABI 2): counts are exact whatever the threads do. Absent
    /// (false) in maps of older builds, whose threads shared counters; left
    /// out when false, so their bytes stay as they were.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_thread: bool,
    /// A `--mode=p3` build: what a reader needs to plan its copies again.
    /// Left out of every other map, whose bytes stay as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p3: Option<P3>,
}

/// `pathprof_core::map::P3Build`: the copies a partitioned-path-profiling
/// build was made for, and each function's call sites in the linked program
/// (per function, in `functions`' order; `u32::MAX`: called from outside
/// the program or through a pointer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct P3 {
    pub copies: u32,
    pub call_sites: Vec<u32>,
    /// Per function (in `functions`' order): the paths of a training run
    /// the plan was guided by, as `[Ball-Larus id, count]` pairs. Left out
    /// when the build had no training (`--p3-train`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trained: Vec<Vec<(u64, u64)>>,
}

/// `pathprof_core::Mode`: `"block"`, `"edge"` or `"path"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Block,
    Edge,
    Path,
}

/// `pathprof_core::map::MapFunction`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    pub file: Option<u32>,
    pub line: Option<u32>,
    pub hash: u64,
    pub cfg: Cfg,
    pub blocks: Vec<Block>,
    pub layout: Layout,
    /// `pathprof_core::callers::CallSite`s: absent when the function counts
    /// its own entries (every map written before they existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entry_calls: Vec<CallSite>,
}

/// `pathprof_core::callers::CallSite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    pub function: u32,
    pub block: u32,
}

/// `pathprof_core::map::BlockInfo`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub line: Option<u32>,
    pub instructions: u32,
    pub lines: Vec<LineSpan>,
}

/// `pathprof_core::map::LineSpan`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineSpan {
    pub file: u32,
    pub line: u32,
    pub instructions: u32,
}

/// `pathprof_core::Cfg`: what defines it (its side tables are rebuilt on reading).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cfg {
    pub num_blocks: usize,
    pub entry: u32,
    pub edges: Vec<CfgEdge>,
    /// Per block, its counted calls; left out when every block has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<u32>,
    /// The blocks whose terminator is a counted call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terminator_calls: Vec<u32>,
}

/// `pathprof_core::CfgEdge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CfgEdge {
    pub from: u32,
    pub to: u32,
    pub slot: u32,
    pub splittable: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resume: bool,
}

/// `pathprof_core::layout::Layout`, tagged with its `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Layout {
    Block {
        slot_of_block: Vec<Option<u32>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        calls_slot: Option<u32>,
    },
    Edge {
        counted: Vec<FlowEdge>,
        /// Blocks with calls that might not return have an uncounted exit
        /// edge each, derived as a net count (block mode's plan).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        net_call_exits: bool,
        /// The chord the callers' entry count replaces (a function whose
        /// callers give its entry count): absent elsewhere.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entry_replaces: Option<FlowEdge>,
    },
    Path {
        dag: Dag,
        self_loops: Vec<u32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        resumes: Vec<u32>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        call_exits: Vec<u32>,
        /// Preferential path profiling: the Ball-Larus id each PPP slot counts
        /// (`u64::MAX`: none); absent in path mode.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        ppp_owners: Vec<u64>,
        /// A PPP build: the Ball-Larus ids of the function's interesting
        /// paths (sorted), whether or not they were numbered; absent in path
        /// mode.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        interesting: Vec<u64>,
        /// The function's paths count in a hash table (more potential paths
        /// than the array limit; in a PPP build, its residual paths);
        /// absent when they count in an array.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hashed: bool,
    },
}

/// `pathprof_core::layout::FlowEdge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlowEdge {
    Cfg(u32),
    Entry,
    Exit(u32),
}

/// `pathprof_core::dag::Dag`: its edges, their classes and `Val`s (the rest is
/// rebuilt on reading).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dag {
    pub num_blocks: usize,
    pub edges: Vec<DagEdge>,
    pub classes: Vec<EdgeClass>,
    pub val: Vec<u64>,
}

/// `pathprof_core::dag::DagEdge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DagEdge {
    pub from: u32,
    pub to: u32,
    pub kind: DagEdgeKind,
}

/// `pathprof_core::dag::DagEdgeKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DagEdgeKind {
    Entry,
    Cfg(u32),
    Exit(u32),
    BackEntry(u32),
    BackExit(u32),
    UnsplitEntry(u32),
    UnsplitExit(u32),
    CallExit(u32, u32),
}

/// `pathprof_core::dag::EdgeClass`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EdgeClass {
    Forward,
    Back,
    Cut,
    Resume,
    SelfLoop,
    Unsplit,
    Sibling,
    Unreachable,
}

// Writing: the in-memory types to the schema.

impl Fragment {
    /// Whether every block count the body declares is backed by as many
    /// block records: a CFG and its DAG allocate per block, so a function may
    /// declare no more blocks than it has records (each at least
    /// `{"instructions":0,"lines":[]}` in the file), and a crafted
    /// `num_blocks` of 2^31 is refused before it allocates gigabytes.
    pub fn check_sizes(&self) -> Result<(), String> {
        for (i, f) in self.functions.iter().enumerate() {
            let records = f.blocks.len() as u64;
            let dag = match &f.layout {
                Layout::Path { dag, .. } => dag.num_blocks as u64,
                Layout::Block { .. } | Layout::Edge { .. } => 0,
            };
            let declared = (f.cfg.num_blocks as u64).max(dag);
            if declared > records {
                return Err(format!(
                    "function #{i} declares {declared} blocks but has {records} block records"
                ));
            }
        }
        Ok(())
    }
}
