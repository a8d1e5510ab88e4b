//! A map fragment whose functions' entry counts their callers give
//! ([`crate::callers`]), written out as counts of the functions' own, with
//! its profile section: what combining fragments ([`crate::combine`]) adds
//! up when one function is compiled into several modules.

use crate::derive::{FlowNode, FunctionCounts, Unbalanced};
use crate::layout::{FlowEdge, Layout};
use crate::map::MapFile;
use crate::profile::ProfileError;
use pathprof_format::{RawFunction, RawProfile};

/// A fragment with every entry count its callers give written out as a
/// count of the function's own (see [`materialize`]).
#[derive(Debug)]
pub struct Materialized {
    pub map: MapFile,
    pub section: Option<RawProfile>,
    /// Per function (its index in the fragment) whose entry count may be
    /// too high, the account ([`FlowNode::Callers`]).
    pub doubts: Vec<(usize, Unbalanced)>,
}

/// `fragment` and its profile `section`, with each function whose callers
/// give its entry count counting it itself: an edge layout becomes the
/// layout of the plan that counts its entries (the chord the entry count
/// replaced counted again, with its derived count), which every module
/// that counted the function has; a one-path layout gets its path count.
/// Each such function keeps [`crate::map::MapFunction::entries_by_callers`], so that
/// what draws its probes does not draw the plan's. Combining fragments
/// ([`crate::combine`]) adds up the counts of one function compiled into
/// several modules, which its callers' sites in each module could not give
/// once renumbered. `None` when no function needs it.
pub fn materialize(
    fragment: &MapFile,
    section: Option<&RawProfile>,
    map_name: &str,
    profile_name: &str,
) -> Result<Option<Materialized>, ProfileError> {
    if fragment.functions.iter().all(|f| f.entry_calls.is_empty()) {
        return Ok(None);
    }
    let counts = section
        .map(|s| crate::profile::interpret(fragment, map_name, s, profile_name))
        .transpose()?;
    let mut map = fragment.clone();
    let mut section = section.cloned();
    let mut doubts = Vec::new();
    for (i, f) in map.functions.iter_mut().enumerate() {
        if f.entry_calls.is_empty() {
            continue;
        }
        f.entry_calls.clear();
        f.entries_by_callers = true;
        let derived = counts.as_ref().map(|c| &c[i]);
        let entry = derived.map_or(0, |c| c.entry);
        let doubt = derived.and_then(|c| {
            c.imbalance
                .nodes
                .iter()
                .find(|n| n.node == FlowNode::Callers)
        });
        doubts.extend(doubt.map(|&n| (i, n)));
        let record = section.as_mut().map(|s| record_of(s, i, f.hash));
        match &mut f.layout {
            Layout::Edge {
                counted,
                entry_replaces,
                ..
            } => {
                // Back to the plan that counts the entry: its chord where
                // the flow order puts it, with its derived count.
                let Some(chord) = entry_replaces.take() else {
                    continue;
                };
                let rank = |fe: FlowEdge| flow_rank(&f.cfg, fe);
                let at = counted.partition_point(|&fe| rank(fe) < rank(chord));
                counted.insert(at, chord);
                if let Some(r) = record {
                    let count = derived.map_or(0, |c| flow_count(c, chord));
                    r.slots.resize(counted.len() - 1, 0);
                    r.slots.insert(at, count);
                    for (k, _) in &mut r.slot_resumes {
                        if *k >= at as u64 {
                            *k += 1;
                        }
                    }
                }
            }
            Layout::Path { .. } => {
                if let Some(r) = record {
                    r.paths = if entry > 0 {
                        vec![(0, entry)]
                    } else {
                        Vec::new()
                    };
                }
            }
            Layout::Block { .. } => {}
        }
    }
    if let Some(s) = &mut section {
        s.functions.sort_by_key(|f| f.index);
    }
    Ok(Some(Materialized {
        map,
        section,
        doubts,
    }))
}

/// Where `fe` comes in the flow graph's edge order (entry, CFG edges, exits:
/// [`crate::edge::flow_edges`]), the order of a layout's counted edges.
fn flow_rank(cfg: &crate::cfg::Cfg, fe: FlowEdge) -> usize {
    match fe {
        FlowEdge::Entry => 0,
        FlowEdge::Cfg(e) => 1 + e.index(),
        FlowEdge::Exit(b) => 1 + cfg.edges().len() + b.index(),
    }
}

/// The derived count of flow edge `fe`.
fn flow_count(counts: &FunctionCounts, fe: FlowEdge) -> u64 {
    let at = |v: &Option<Vec<u64>>, i: usize| v.as_ref().and_then(|v| v.get(i)).copied();
    match fe {
        FlowEdge::Entry => Some(counts.entry),
        FlowEdge::Cfg(e) => at(&counts.edges, e.index()),
        FlowEdge::Exit(b) => at(&counts.exits, b.index()),
    }
    .unwrap_or(0)
}

/// Function `index`'s record in `section`, added (empty) if it has none.
fn record_of(section: &mut RawProfile, index: usize, hash: u64) -> &mut RawFunction {
    let at = match section
        .functions
        .iter()
        .position(|f| f.index as usize == index)
    {
        Some(at) => at,
        None => {
            section.functions.push(RawFunction {
                index: index as u32,
                hash,
                slots: Vec::new(),
                paths: Vec::new(),
                slot_resumes: Vec::new(),
                path_resumes: Vec::new(),
            });
            section.functions.len() - 1
        }
    };
    &mut section.functions[at]
}
