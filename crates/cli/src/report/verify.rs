//! `pathprof verify`: the verifier of the LLVM path-profiling notes. The edge
//! profile derived from a path profile must equal, edge for edge, the profile of
//! the independent edge instrumentation of the same program run on the same input.
//! And each profile's own counts must balance: every other report shows counts
//! that do not (with a warning), `verify` names where and fails.

use super::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::derive::FlowNode;
use pathprof_core::map::{base_name, without_rename_suffixes, MapFile, MapFunction};
use std::collections::HashMap;
use std::fmt::Write as _;

/// What `verify` found.
pub struct Outcome {
    pub matched: bool,
    pub text: String,
}

/// Compares the path-derived edge counts of `paths` with `edges`.
pub fn verify<'a>(paths: &'a Loaded, edges: &'a Loaded) -> Result<Outcome> {
    if paths.map.mode != pathprof_core::Mode::Path {
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
        .any(|f| matches!(f.layout, pathprof_core::layout::Layout::Edge { .. }));
    if edges.map.mode == pathprof_core::Mode::Block && !counts_edges {
        bail!(
            "{} is a block-mode map built with --every-block (a counter in every block, no edge \
             counts); --edge-map needs an edge-, path- or block-mode build that counts edges",
            edges.map_path.display()
        );
    }
    // A function is its name and where it is defined (two translation units
    // may each have a `static` function of one name): the file's name without
    // its directory, since the two builds may have been made in two places.
    // Its name without LLVM's renaming suffixes: a whole-program build may
    // have renamed it.
    let key = |map: &'a MapFile, f: &'a MapFunction| {
        let file = map.file_name(f.file).map(base_name);
        (without_rename_suffixes(&f.name), file, f.line)
    };
    // One source function built in two shapes (for two programs) has one
    // key: each build is compared with the other side's build of its shape.
    let mut by_key: HashMap<_, Vec<usize>> = HashMap::new();
    for (j, g) in edges.map.functions.iter().enumerate() {
        by_key.entry(key(&edges.map, g)).or_default().push(j);
    }
    let mut text = String::new();
    let mut unbalanced = 0usize;
    for (what, loaded) in [("path", paths), ("edge", edges)] {
        unbalanced += imbalance(what, loaded, &mut text);
    }
    let mut differing = 0usize;
    let mut compared = 0usize;
    let mut compared_with = vec![false; edges.map.functions.len()];
    for (i, f) in paths.map.functions.iter().enumerate() {
        let Some(builds) = by_key.get(&key(&paths.map, f)) else {
            let _ = writeln!(text, "{}: only in the path build", paths.name(i));
            differing += 1;
            continue;
        };
        let same_shape = builds
            .iter()
            .find(|&&j| edges.map.functions[j].hash == f.hash);
        let Some(&j) = same_shape else {
            builds.iter().for_each(|&j| compared_with[j] = true);
            let _ = writeln!(
                text,
                "{}: the two builds have different control flow (compile both with the same flags)",
                paths.name(i)
            );
            differing += 1;
            continue;
        };
        compared_with[j] = true;
        let (Some(a), Some(b)) = (&paths.counts[i].edges, &edges.counts[j].edges) else {
            continue;
        };
        for (e, (x, y)) in a.iter().zip(b).enumerate() {
            compared += 1;
            if x != y {
                differing += 1;
                let ce = &f.cfg.edges()[e];
                let line = |b: pathprof_core::BlockId| {
                    f.blocks[b.index()]
                        .line
                        .map_or(String::new(), |l| format!(":{l}"))
                };
                let _ = writeln!(
                    text,
                    "{}: edge e{e} {}{} -> {}{}: from paths {x}, edge profile {y}",
                    paths.name(i),
                    ce.from,
                    line(ce.from),
                    ce.to,
                    line(ce.to)
                );
            }
        }
    }
    for (j, _) in compared_with.iter().enumerate().filter(|(_, &c)| !c) {
        let _ = writeln!(text, "{}: only in the edge build", edges.name(j));
        differing += 1;
    }
    let matched = differing == 0 && unbalanced == 0;
    if matched {
        let _ = writeln!(
            text,
            "verified: {compared} edge counts of {} functions derived from the path profile equal the edge profile",
            paths.map.functions.len()
        );
    }
    if differing > 0 {
        let _ = writeln!(
            text,
            "MISMATCH: {differing} differences ({compared} edges compared)"
        );
    }
    if unbalanced > 0 {
        let _ = writeln!(
            text,
            "UNBALANCED: the counts of {unbalanced} function(s) do not balance"
        );
    }
    Ok(Outcome { matched, text })
}

/// Lists, for each function of `loaded` whose flow does not balance, every
/// unbalanced node with its inflow and outflow; returns how many functions.
fn imbalance(what: &str, loaded: &Loaded, text: &mut String) -> usize {
    let unbalanced = loaded.unbalanced();
    for &(i, total) in &unbalanced {
        let f = &loaded.map.functions[i];
        let name = loaded.name(i);
        let _ = writeln!(
            text,
            "{name}: the {what} profile's counts do not balance (by {total}):"
        );
        for n in &loaded.counts[i].imbalance.nodes {
            let place = match n.node {
                FlowNode::Block(b) => {
                    let line = f.blocks[b.index()]
                        .line
                        .map_or(String::new(), |l| format!(" (line {l})"));
                    format!("block {b}{line}")
                }
                FlowNode::Outside => "calls vs returns".to_string(),
                FlowNode::Callers => {
                    "entry count its callers give (the count, and as far off as it may be)"
                        .to_string()
                }
            };
            let _ = writeln!(text, "{name}: {place}: {} in, {} out", n.inflow, n.outflow);
        }
    }
    unbalanced.len()
}
