//! The verifier of the LLVM path-profiling notes (`pathprof verify`), as a
//! model: the edge profile derived from a path profile must equal, edge for
//! edge, the profile of the independent edge instrumentation of the same
//! program run on the same input, and each profile's own counts must balance
//! (every other report shows counts that do not, with a warning; the
//! verifier names where, and fails).
//!
//! A function is matched by its linkage name without LLVM's renaming
//! suffixes and where it is defined (two translation units may each have a
//! `static` function of one name): its file's name without the directory,
//! since the two builds may have been made in two places, and its line. One
//! source function built in two shapes (for two programs) has one key: each
//! build is compared with the other side's build of its shape.

use crate::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::derive::FlowNode;
use pathprof_core::layout::Layout;
use pathprof_core::map::{base_name, without_rename_suffixes, MapFile, MapFunction};
use pathprof_core::{BlockId, Mode};
use serde::Serialize;
use std::collections::HashMap;

/// What the verifier found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Edge counts compared.
    pub compared: usize,
    /// Functions of the path build.
    pub functions: usize,
    /// The functions, of either build, whose own counts do not balance.
    pub unbalanced: Vec<Unbalanced>,
    /// Where the two builds differ, in the path build's function order
    /// (functions only in the edge build last).
    pub differences: Vec<Difference>,
}

impl Verification {
    /// Whether the path profile verifies: no difference, every count
    /// balanced.
    pub fn matched(&self) -> bool {
        self.differences.is_empty() && self.unbalanced.is_empty()
    }
}

/// Which of the two builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Path,
    Edge,
}

impl Side {
    pub fn name(self) -> &'static str {
        match self {
            Side::Path => "path",
            Side::Edge => "edge",
        }
    }
}

/// A function whose counts do not balance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unbalanced {
    pub side: Side,
    pub function: String,
    /// How much more flowed out than in, over its nodes.
    pub total: u64,
    pub nodes: Vec<UnbalancedNode>,
}

/// One node of a function whose inflow and outflow differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnbalancedNode {
    pub place: Place,
    pub inflow: u64,
    pub outflow: u64,
}

/// Where in a function's flow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A block, with its first line.
    Block { block: u32, line: Option<u32> },
    /// The function's calls against its returns.
    CallsVersusReturns,
    /// The entry count the function's callers give it.
    Callers,
}

/// One difference between the builds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Difference {
    /// A function only the path build has.
    OnlyInPathBuild { function: String },
    /// A function only the edge build has.
    OnlyInEdgeBuild { function: String },
    /// The two builds of a function have different control flow.
    OtherControlFlow { function: String },
    /// An edge whose count derived from paths is not the edge profile's.
    Edge {
        function: String,
        edge: u32,
        from: u32,
        from_line: Option<u32>,
        to: u32,
        to_line: Option<u32>,
        from_paths: u64,
        edge_profile: u64,
    },
}

/// Compares the path-derived edge counts of `paths` with `edges`.
pub fn verify(paths: &Loaded, edges: &Loaded) -> Result<Verification> {
    if paths.map.mode != Mode::Path {
        bail!(
            "{} is not a path-mode map (it is {}); pass the path build's map with --map",
            paths.map_path.display(),
            paths.map.mode.name()
        );
    }
    // Block mode counts a spanning tree's chords, which give every edge,
    // unless it was built with a counter in every block.
    let counts_edges = edges
        .map
        .functions
        .iter()
        .any(|f| matches!(f.layout, Layout::Edge { .. }));
    if edges.map.mode == Mode::Block && !counts_edges {
        bail!(
            "{} is a block-mode map built with --every-block (a counter in every block, no edge \
             counts); --edge-map needs an edge-, path- or block-mode build that counts edges",
            edges.map_path.display()
        );
    }
    let key = |map: &MapFile, f: &MapFunction| {
        let file = map.file_name(f.file).map(base_name);
        (without_rename_suffixes(&f.name).to_string(), file, f.line)
    };
    let mut by_key: HashMap<_, Vec<usize>> = HashMap::new();
    for (j, g) in edges.map.functions.iter().enumerate() {
        by_key.entry(key(&edges.map, g)).or_default().push(j);
    }
    let mut unbalanced = unbalanced_functions(Side::Path, paths);
    unbalanced.extend(unbalanced_functions(Side::Edge, edges));
    let mut differences = Vec::new();
    let mut compared = 0usize;
    let mut compared_with = vec![false; edges.map.functions.len()];
    for (i, f) in paths.map.functions.iter().enumerate() {
        let function = || paths.name(i).to_string();
        let Some(builds) = by_key.get(&key(&paths.map, f)) else {
            differences.push(Difference::OnlyInPathBuild {
                function: function(),
            });
            continue;
        };
        let same_shape = builds
            .iter()
            .find(|&&j| edges.map.functions[j].hash == f.hash);
        let Some(&j) = same_shape else {
            builds.iter().for_each(|&j| compared_with[j] = true);
            differences.push(Difference::OtherControlFlow {
                function: function(),
            });
            continue;
        };
        compared_with[j] = true;
        let (Some(a), Some(b)) = (&paths.counts[i].edges, &edges.counts[j].edges) else {
            continue;
        };
        for (e, (&x, &y)) in a.iter().zip(b).enumerate() {
            compared += 1;
            if x != y {
                let ce = &f.cfg.edges()[e];
                differences.push(Difference::Edge {
                    function: function(),
                    edge: e as u32,
                    from: ce.from.index() as u32,
                    from_line: first_line(f, ce.from),
                    to: ce.to.index() as u32,
                    to_line: first_line(f, ce.to),
                    from_paths: x,
                    edge_profile: y,
                });
            }
        }
    }
    for (j, _) in compared_with.iter().enumerate().filter(|(_, &c)| !c) {
        differences.push(Difference::OnlyInEdgeBuild {
            function: edges.name(j).to_string(),
        });
    }
    Ok(Verification {
        compared,
        functions: paths.map.functions.len(),
        unbalanced,
        differences,
    })
}

fn first_line(f: &MapFunction, b: BlockId) -> Option<u32> {
    f.blocks[b.index()].line
}

/// Every function of `loaded` whose flow does not balance, with each of its
/// unbalanced nodes.
fn unbalanced_functions(side: Side, loaded: &Loaded) -> Vec<Unbalanced> {
    loaded
        .unbalanced()
        .into_iter()
        .map(|(i, total)| {
            let f = &loaded.map.functions[i];
            let nodes = loaded.counts[i]
                .imbalance
                .nodes
                .iter()
                .map(|n| UnbalancedNode {
                    place: match n.node {
                        FlowNode::Block(b) => Place::Block {
                            block: b.index() as u32,
                            line: first_line(f, b),
                        },
                        FlowNode::Outside => Place::CallsVersusReturns,
                        FlowNode::Callers => Place::Callers,
                    },
                    inflow: n.inflow,
                    outflow: n.outflow,
                })
                .collect();
            Unbalanced {
                side,
                function: loaded.name(i).to_string(),
                total,
                nodes,
            }
        })
        .collect()
}
