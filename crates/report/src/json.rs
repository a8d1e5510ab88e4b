//! The JSON report (`pathprof report --format json`, format
//! `pathprof-report`, version 1): the machine-readable contract tests and
//! other tools rely on, as types. [`Report::of`] builds it from a loaded
//! profile; serialising it is the report, and readers deserialise the same
//! types. Fields are only ever added (optional ones are omitted when absent,
//! as before they existed).

use crate::load::Loaded;
use pathprof_core::derive::PathCount as CorePathCount;
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFunction;
use pathprof_core::regen::PathEnd;
use serde::{Deserialize, Serialize};

/// The report's `format` field.
pub const FORMAT: &str = "pathprof-report";
/// The report's `version` field.
pub const VERSION: u64 = 1;

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub format: String,
    pub version: u64,
    /// `block`, `edge` or `path` (also for a PPP build, whose profile is a
    /// path profile: its paths say whether they are `interesting`).
    pub mode: String,
    /// The map's build id, 16 hex digits.
    pub build_id: String,
    /// Processes whose counts the profile holds.
    #[serde(default)]
    pub processes: u64,
    /// How many of them were fork children.
    #[serde(default)]
    pub forked_processes: u64,
    /// Threads started in those processes.
    #[serde(default)]
    pub threads: u64,
    /// Whether the report vouches for every count (see `Facts::exact`).
    pub exact: bool,
    pub functions: Vec<Function>,
}

/// One function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// Linkage name.
    pub name: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Calls.
    pub entry_count: u64,
    /// Path mode: acyclic paths of its DAG (after truncation); else `null`.
    pub potential_paths: Option<u64>,
    /// Path mode: `true` when its paths count in a hash table (more
    /// potential paths than the array limit; in a PPP build, its residual
    /// paths), `false` in an array. Absent in other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashed: Option<bool>,
    pub blocks: Vec<Block>,
    pub edges: Vec<Edge>,
    /// The demangled name, when it differs from `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Path mode: paths ending in a call whose counts were taken back
    /// (activations that went on after the call in a fork child).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_paths: Option<Vec<PathCount>>,
    /// Path mode: executed paths, by id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<PathCount>>,
    /// Edge and path modes: executions whose last partial path was lost to
    /// `exit()` or `longjmp` (0 with `--early-exit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_paths: Option<u64>,
    /// How far the counts are from balancing: 0 for any complete run.
    #[serde(default)]
    pub flow_imbalance: u64,
    /// Only where its name, file and line do not tell it from another
    /// function of the report (one source function built in two shapes, by
    /// programs built with other macros, say): the executables and shared
    /// libraries whose runs hold its counts, as the runtime found them
    /// loaded (sorted), which say which program ran which build. Absent
    /// elsewhere, and where no run of its build was recorded, so that a
    /// program's report does not depend on where it ran from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
}

/// One basic block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    pub id: u32,
    pub line: Option<u32>,
    pub instructions: u32,
    pub count: u64,
    /// Edge and path modes: returns from it, and activations that ended
    /// inside its calls (counted with `--early-exit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exits: Option<u64>,
    /// Edge and path modes: activations that went on after one of its calls
    /// although their count up to it was written (a fork child returning into
    /// a frame of its parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<u64>,
}

/// One CFG edge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    /// `null` in block mode.
    pub count: Option<u64>,
    /// After a call that returns more than once (`fork`, `setjmp`): taken
    /// once per return, so flow is not conserved across it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resume: bool,
}

/// One executed path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathCount {
    pub id: u64,
    pub count: u64,
    pub blocks: Vec<u32>,
    /// `[from, to]` of the backedge or cut that ended the path; `to` is `null`
    /// when it ended before an unsplittable terminator or inside a call;
    /// `null` when it left the function.
    pub exit: Option<(u32, Option<u32>)>,
    /// `[from, to]` of the backedge, cut or resume edge the path started
    /// after; `from` is `null` when it started after an unsplittable edge;
    /// `null` when it started at the function's entry.
    pub start: Option<(Option<u32>, Option<u32>)>,
    /// Ended inside a call that never returned (`--early-exit`).
    pub terminated: bool,
    /// A PPP build (`--mode=ppp`): whether the path is one of the
    /// interesting paths its function was built with (counted in its array);
    /// `false` for a residual path. Absent in other builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interesting: Option<bool>,
}

impl Report {
    /// The report of a loaded profile.
    pub fn of(loaded: &Loaded) -> Report {
        let map = &loaded.map;
        let facts = &loaded.facts;
        let ppp = map.is_ppp();
        Report {
            format: FORMAT.into(),
            version: VERSION,
            mode: map.mode.name().into(),
            build_id: format!("{:016x}", map.build_id),
            processes: facts.processes,
            forked_processes: facts.forked,
            threads: facts.threads,
            exact: facts.exact(),
            functions: (0..map.functions.len())
                .map(|i| function(loaded, i, ppp))
                .collect(),
        }
    }

    /// The function named `name` (linkage name), if any.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

impl Function {
    /// Its executed paths (none outside path mode).
    pub fn paths(&self) -> &[PathCount] {
        self.paths.as_deref().unwrap_or(&[])
    }
}

/// Function `i` of the report; with `ppp` (a PPP build) every path says
/// whether it is interesting.
fn function(loaded: &Loaded, i: usize, ppp: bool) -> Function {
    let (f, c) = (&loaded.map.functions[i], &loaded.counts[i]);
    let blocks = f
        .blocks
        .iter()
        .enumerate()
        .map(|(b, info)| Block {
            id: b as u32,
            line: info.line,
            instructions: info.instructions,
            count: c.blocks[b],
            exits: c.exits.as_ref().map(|e| e[b]),
            starts: c.starts.as_ref().map(|s| s[b]),
        })
        .collect();
    let edges = f
        .cfg
        .edges()
        .iter()
        .enumerate()
        .map(|(k, e)| Edge {
            from: e.from.0,
            to: e.to.0,
            count: c.edges.as_ref().map(|v| v[k]),
            resume: e.resume,
        })
        .collect();
    let listed = |paths: &[CorePathCount]| {
        paths
            .iter()
            .map(|p| PathCount {
                interesting: ppp.then(|| f.layout.is_interesting(p.id)),
                ..path(f, p)
            })
            .collect()
    };
    let path_mode = matches!(f.layout, Layout::Path { .. });
    Function {
        name: f.name.clone(),
        file: loaded.map.file_name(f.file).map(str::to_string),
        line: f.line,
        entry_count: c.entry,
        potential_paths: match &f.layout {
            Layout::Path { dag, .. } => Some(dag.num_paths()),
            _ => None,
        },
        hashed: match &f.layout {
            Layout::Path { hashed, .. } => Some(*hashed),
            _ => None,
        },
        blocks,
        edges,
        display_name: f.display_name.clone(),
        resumed_paths: path_mode.then(|| listed(&c.resumed)),
        paths: path_mode.then(|| listed(&c.paths)),
        // Block mode's counts lose nothing to executions cut short.
        lost_paths: (!matches!(
            f.layout,
            Layout::Block { .. }
                | Layout::Edge {
                    net_call_exits: true,
                    ..
                }
        ))
        .then_some(c.lost),
        flow_imbalance: c.imbalance.total(),
        objects: loaded.ambiguous_objects(i),
    }
}

fn path(f: &MapFunction, p: &CorePathCount) -> PathCount {
    let Layout::Path { dag, .. } = &f.layout else {
        unreachable!("paths exist only in path mode");
    };
    let end = |e: PathEnd| match e {
        PathEnd::Function => None,
        PathEnd::Edge(id) => {
            let ce = f.cfg.edge(id);
            Some((Some(ce.from.0), Some(ce.to.0)))
        }
        PathEnd::Unsplittable(b) | PathEnd::Call(b, _) => Some((Some(b.0), None)),
    };
    let exit = p.path.end(dag);
    let start = match p.path.start(dag) {
        PathEnd::Unsplittable(b) => Some((None, Some(b.0))),
        other => end(other),
    };
    PathCount {
        id: p.id,
        count: p.count,
        blocks: p.path.blocks(dag).iter().map(|b| b.0).collect(),
        exit: end(exit).map(|(from, to)| (from.expect("an end has its block"), to)),
        start,
        terminated: matches!(exit, PathEnd::Call(..)),
        interesting: None,
    }
}
