//! The model of `pathprof dot` and `pathprof instrument --dot-dir`: a
//! function's graph for Graphviz, like the `-dot-pathdag` option of the LLVM
//! path-profiling notes (files named `pathdag.<function>.dot`), as typed
//! nodes, edges and attributes; the `pathprof` binary writes them as DOT.
//!
//! Path mode draws the Ball-Larus DAG (1996, sections 3 and 4): the blocks
//! (`bN` with their source line) between a virtual ENTRY and EXIT; every DAG edge
//! labelled with its `Val` (Figure 5) and, for chords of the spanning tree, its
//! increment `Inc` (section 3.3), the planner's own
//! ([`pathprof_core::planner::planned_increments`]); dummy edges (section 4:
//! ENTRY→loop head, loop bottom→EXIT, and the cuts around unsplittable edges)
//! dashed; backedges, cuts, self loops and unsplittable edges, which are not in
//! the DAG, as dotted CFG edges. With a profile, every executed edge is labelled
//! with how many path executions crossed it and the edges of the hottest paths
//! are drawn heavier, their width scaled by that count.
//!
//! Block and edge mode maps (and functions that fell back to block counting)
//! draw the CFG with its block counts and, when known, edge counts; its
//! backedges (dotted) are the DAG's ([`pathprof_core::dag::backedges`]).
//!
//! Graphviz takes minutes on functions of thousands of blocks: with a profile,
//! [`Options::hot`] draws only the blocks and edges of the hottest paths (of
//! the most executed blocks in a CFG view) and says in the graph's label what
//! was left out; a graph of more than [`Options::node_limit`] nodes comes with
//! a warning that suggests it.

use crate::load::Loaded;
use crate::lookup::find_functions;
use crate::{percent, short_name};
use anyhow::{bail, Result};
use pathprof_core::dag::{backedges, Dag, DagEdgeKind, EdgeClass};
use pathprof_core::derive::{FunctionCounts, PathCount};
use pathprof_core::ids::{BlockId, EdgeId, NodeId};
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::planner::planned_increments;
use std::fmt::Write as _;

/// How many of the hottest paths are drawn heavier.
const TOP_PATHS: usize = 3;

/// Graphs with more nodes than this come with a warning: Graphviz's layout
/// grows much faster than the graph (minutes for xz's `lzma_decode`).
pub const NODE_LIMIT: usize = 200;

/// What `pathprof dot` draws.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Only the blocks and edges of this many of the hottest paths (in a CFG
    /// view, of the most executed blocks); needs a profile.
    pub hot: Option<usize>,
    /// Warn when the graph has more nodes (blocks, ENTRY and EXIT) than this.
    pub node_limit: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hot: None,
            node_limit: NODE_LIMIT,
        }
    }
}

/// A function's graph and what to say about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawing {
    pub graph: Graph,
    /// For stderr, when the graph has more than [`Options::node_limit`] nodes.
    pub warning: Option<String>,
}

/// One function's graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// `pathdag.<linkage name>`.
    pub name: String,
    /// The function, where it is defined, and what the drawing shows.
    pub title: String,
    /// The blocks drawn, each with its label.
    pub blocks: Vec<(u32, String)>,
    pub edges: Vec<Edge>,
    /// How many nodes: the blocks drawn, ENTRY and EXIT.
    pub nodes: usize,
}

/// One end of an edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Entry,
    Exit,
    Block(u32),
}

/// One edge, its attributes in the order they are written.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub from: End,
    pub to: End,
    pub attributes: Vec<Attribute>,
}

/// An edge's attribute.
#[derive(Clone, Debug, PartialEq)]
pub enum Attribute {
    Label(String),
    /// A dummy edge (dashed), or one outside the DAG or a backedge (dotted).
    Style(Style),
    /// Its width, by how often it ran against the busiest edge.
    Width(f64),
    /// On one of the hottest paths: drawn and labelled in the hot colour.
    Hot,
    /// Outside the DAG: laid out without constraint, in grey.
    Outside,
    /// A backedge of the CFG view: laid out without constraint.
    Unconstrained,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Dashed,
    Dotted,
}

/// The graph of function `function` (linkage or demangled name) of `map`, with
/// the counts of `profile` when given.
pub fn draw(
    map: &MapFile,
    function: &str,
    profile: Option<&Loaded>,
    options: &Options,
) -> Result<Drawing> {
    let index = find_functions(map, function, "the map")?[0];
    if let Some(l) = profile {
        if l.map.build_id != map.build_id {
            bail!("the profile is of another build than the map");
        }
    } else if options.hot.is_some() {
        bail!("--hot draws the hottest paths of a profile: name it with --profile");
    }
    let counts = profile.map(|l| &l.counts[index]);
    let graph = function_graph(map, index, counts, options.hot);
    let nodes = graph.nodes;
    let warning = (nodes > options.node_limit).then(|| {
        let hot = "draws only the blocks and edges of the N hottest paths";
        let advice = match (options.hot, profile) {
            (Some(_), _) => "a smaller --hot N draws fewer".to_string(),
            (None, Some(_)) => format!("--hot N {hot}"),
            (None, None) => format!("--profile PROFILE --hot N {hot}"),
        };
        let f = &map.functions[index];
        format!(
            "pathprof: warning: the graph of {} has {nodes} nodes (more than {}); \
             Graphviz may take minutes to lay it out; {advice}",
            f.shown_name(),
            options.node_limit
        )
    });
    Ok(Drawing { graph, warning })
}

/// The graph of function `index` of `map`; `hot` needs `counts`.
pub fn function_graph(
    map: &MapFile,
    index: usize,
    counts: Option<&FunctionCounts>,
    hot: Option<usize>,
) -> Graph {
    let f = &map.functions[index];
    let hot = hot.filter(|_| counts.is_some());
    match &f.layout {
        Layout::Path {
            dag, self_loops, ..
        } => dag_graph(map, f, dag, self_loops, counts, hot),
        _ => cfg_graph(map, f, counts, hot),
    }
}

/// The graph of `f` with its `drawn` blocks and `edges`, showing `what`.
fn graph(
    map: &MapFile,
    f: &MapFunction,
    counts: Option<&FunctionCounts>,
    drawn: &[bool],
    what: &str,
    edges: Vec<Edge>,
) -> Graph {
    Graph {
        name: format!("pathdag.{}", f.name),
        title: title(map, f, what),
        blocks: block_nodes(map, f, counts, drawn),
        edges,
        nodes: count(drawn) + 2,
    }
}

/// The drawn blocks, each labelled with its position (and count).
fn block_nodes(
    map: &MapFile,
    f: &MapFunction,
    counts: Option<&FunctionCounts>,
    drawn: &[bool],
) -> Vec<(u32, String)> {
    f.cfg
        .blocks()
        .filter(|&b| drawn[b.index()])
        .map(|b| {
            let n = counts.map(|c| c.blocks[b.index()]);
            (b.0, block_label(map, f, b, n))
        })
        .collect()
}

fn block_label(map: &MapFile, f: &MapFunction, b: BlockId, count: Option<u64>) -> String {
    let mut label = b.to_string();
    let info = &f.blocks[b.index()];
    let file = info
        .lines
        .iter()
        .find(|s| Some(s.line) == info.line)
        .map(|s| s.file)
        .or(f.file);
    if let Some(line) = info.line {
        let name = map.file_name(file).map_or("?".to_string(), short_name);
        let _ = write!(label, "\n{name}:{line}");
    }
    if let Some(n) = count {
        let _ = write!(label, "\n×{n}");
    }
    label
}

/// The graph's title: the function, where it is, `what` is drawn.
fn title(map: &MapFile, f: &MapFunction, what: &str) -> String {
    let name = f.shown_name();
    let at = match (map.file_name(f.file), f.line) {
        (Some(file), Some(line)) => format!(" ({}:{line})", short_name(file)),
        _ => String::new(),
    };
    let by_callers = if f.counted_by_callers() {
        "\nno probe counts its entries: its callers' call sites do"
    } else {
        ""
    };
    format!("{name}{at}\n{what}{by_callers}")
}

/// The width of an edge run `n` times when the busiest ran `max` times.
fn width(n: u64, max: u64) -> f64 {
    if max == 0 {
        1.0
    } else {
        1.0 + 5.0 * n as f64 / max as f64
    }
}

/// How many of `drawn` are true.
fn count(drawn: &[bool]) -> usize {
    drawn.iter().filter(|&&d| d).count()
}

fn node_end(dag: &Dag, v: NodeId) -> End {
    if v == dag.entry() {
        End::Entry
    } else if v == dag.exit() {
        End::Exit
    } else {
        End::Block(v.0)
    }
}

fn dag_graph(
    map: &MapFile,
    f: &MapFunction,
    dag: &Dag,
    self_loops: &[EdgeId],
    counts: Option<&FunctionCounts>,
    keep: Option<usize>,
) -> Graph {
    let cfg = &f.cfg;
    let incs = planned_increments(cfg, dag);
    // A one-path function whose callers count its entries has no probe.
    let probed = !f.counted_by_callers();
    // Per DAG edge: path executions crossing it; whether a top path uses it;
    // whether it is drawn (on one of the `keep` hottest paths, or all).
    let mut crossed = vec![0u64; dag.edges().len()];
    let mut hot = vec![false; dag.edges().len()];
    let mut drawn_edges = vec![keep.is_none(); dag.edges().len()];
    let mut kept_note = String::new();
    if let Some(c) = counts {
        for p in &c.paths {
            for &e in &p.path.edges {
                crossed[e.index()] = crossed[e.index()].saturating_add(p.count);
            }
        }
        let mut order: Vec<_> = c.paths.iter().filter(|p| p.count > 0).collect();
        order.sort_by(|a, b| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
        for p in order.iter().take(TOP_PATHS) {
            for &e in &p.path.edges {
                hot[e.index()] = true;
            }
        }
        if let Some(n) = keep {
            let kept = &order[..n.min(order.len())];
            for p in kept {
                for &e in &p.path.edges {
                    drawn_edges[e.index()] = true;
                }
            }
            let executions =
                |ps: &[&PathCount]| -> u128 { ps.iter().map(|p| p.count as u128).sum() };
            kept_note = format!(
                "\n--hot {n}: the {} hottest of {} executed paths ({} of executions)",
                kept.len(),
                order.len(),
                percent(executions(kept), executions(&order))
            );
        }
    }
    // Blocks: reachable ones, or those of the drawn edges.
    let mut drawn = vec![false; cfg.num_blocks()];
    for b in cfg.blocks() {
        drawn[b.index()] = keep.is_none() && cfg.is_reachable(b);
    }
    for id in dag.edge_ids().filter(|id| drawn_edges[id.index()]) {
        let e = dag.edge(id);
        for b in [dag.block(e.from), dag.block(e.to)].into_iter().flatten() {
            drawn[b.index()] = true;
        }
    }
    if keep.is_some() {
        let reachable = cfg.blocks().filter(|&b| cfg.is_reachable(b)).count();
        let _ = write!(
            kept_note,
            ": {} of {reachable} blocks, {} of {} DAG edges; the rest left out",
            count(&drawn),
            count(&drawn_edges),
            dag.edges().len()
        );
    }
    let max = crossed.iter().copied().max().unwrap_or(0);
    let what = format!(
        "Ball-Larus path DAG, {} potential paths: Val on every edge{}\ndashed: dummy edges; dotted: CFG edges outside the DAG{}{kept_note}",
        dag.num_paths(),
        if probed { ", Inc on chords" } else { "" },
        if counts.is_some() {
            format!("\ncounts: path executions (blocks: ×runs); red: the {TOP_PATHS} hottest paths, width by count")
        } else {
            String::new()
        }
    );
    let mut edges = Vec::new();
    for id in dag.edge_ids().filter(|id| drawn_edges[id.index()]) {
        let e = dag.edge(id);
        let mut label = format!("Val {}", dag.val(id));
        if probed && incs.is_chord(id) {
            let _ = write!(label, "\nInc {}", incs.inc[id.index()]);
        }
        let mut attributes = Vec::new();
        match e.kind {
            DagEdgeKind::BackEntry(ce) | DagEdgeKind::BackExit(ce) => {
                let c = cfg.edge(ce);
                let why = match dag.classes()[ce.index()] {
                    EdgeClass::Cut => "cut",
                    EdgeClass::Sibling => "beside unsplittable",
                    _ => "backedge",
                };
                let _ = write!(label, "\n({why} {}→{})", c.from, c.to);
                attributes.push(Attribute::Style(Style::Dashed));
            }
            DagEdgeKind::UnsplitEntry(_) | DagEdgeKind::UnsplitExit(_) => {
                label.push_str("\n(unsplittable)");
                attributes.push(Attribute::Style(Style::Dashed));
            }
            DagEdgeKind::CallExit(_, k) => {
                let _ = write!(label, "\n(inside call #{k})");
                attributes.push(Attribute::Style(Style::Dashed));
            }
            _ => {}
        }
        if counts.is_some() && crossed[id.index()] > 0 {
            let _ = write!(label, "\n{}×", crossed[id.index()]);
            if hot[id.index()] {
                attributes.push(Attribute::Width(width(crossed[id.index()], max)));
                attributes.push(Attribute::Hot);
            }
        }
        attributes.insert(0, Attribute::Label(label));
        edges.push(Edge {
            from: node_end(dag, e.from),
            to: node_end(dag, e.to),
            attributes,
        });
    }
    // CFG edges that are not DAG edges, between drawn blocks.
    for ce in cfg.edge_ids() {
        let c = cfg.edge(ce);
        if !(drawn[c.from.index()] && drawn[c.to.index()]) {
            continue;
        }
        let what = match dag.classes()[ce.index()] {
            EdgeClass::Back => "backedge".to_string(),
            EdgeClass::Cut => "cut".to_string(),
            EdgeClass::SelfLoop => {
                let k = self_loops.iter().position(|&s| s == ce).unwrap_or(0);
                format!("self loop, slot {k}")
            }
            EdgeClass::Unsplit => "unsplittable".to_string(),
            EdgeClass::Sibling => "beside unsplittable".to_string(),
            EdgeClass::Forward | EdgeClass::Unreachable => continue,
            // Classes added later (resume edges) are named as they are.
            #[allow(unreachable_patterns)]
            other => format!("{other:?}").to_lowercase(),
        };
        let mut label = what;
        if let Some(n) = counts.and_then(|c| c.edges.as_ref()).map(|e| e[ce.index()]) {
            let _ = write!(label, "\n{n}×");
        }
        edges.push(Edge {
            from: End::Block(c.from.0),
            to: End::Block(c.to.0),
            attributes: vec![
                Attribute::Label(label),
                Attribute::Style(Style::Dotted),
                Attribute::Outside,
            ],
        });
    }
    graph(map, f, counts, &drawn, &what, edges)
}

fn cfg_graph(
    map: &MapFile,
    f: &MapFunction,
    counts: Option<&FunctionCounts>,
    keep: Option<usize>,
) -> Graph {
    let cfg = &f.cfg;
    let back = backedges(cfg);
    // Blocks: reachable ones, or the `keep` most executed.
    let mut drawn: Vec<bool> = cfg.blocks().map(|b| cfg.is_reachable(b)).collect();
    let mut kept_note = String::new();
    if let (Some(n), Some(c)) = (keep, counts) {
        let reachable = count(&drawn);
        let mut order: Vec<BlockId> = cfg
            .blocks()
            .filter(|&b| drawn[b.index()] && c.blocks[b.index()] > 0)
            .collect();
        order.sort_by(|a, b| c.blocks[b.index()].cmp(&c.blocks[a.index()]).then(a.cmp(b)));
        drawn = vec![false; cfg.num_blocks()];
        for b in order.iter().take(n) {
            drawn[b.index()] = true;
        }
        kept_note = format!(
            "\n--hot {n}: the {} most executed of {reachable} blocks (no paths in this view) \
             and the edges between them; the rest left out",
            count(&drawn)
        );
    }
    let edge_counts = counts.and_then(|c| c.edges.as_ref());
    let max = edge_counts
        .and_then(|e| e.iter().copied().max())
        .unwrap_or(0)
        .max(counts.map_or(0, |c| c.entry));
    let kind = match &f.layout {
        Layout::Block { .. } => "block counts",
        Layout::Edge {
            net_call_exits: true,
            ..
        } => "block counts, from edge counts",
        _ => "edge counts",
    };
    let what = format!("control-flow graph ({kind}); dotted: backedges{kept_note}");
    let mut edges = Vec::new();
    if drawn[cfg.entry().index()] {
        let entry_label = counts.map_or(String::new(), |c| format!("{}×", c.entry));
        edges.push(Edge {
            from: End::Entry,
            to: End::Block(cfg.entry().0),
            attributes: vec![Attribute::Label(entry_label)],
        });
    }
    for ce in cfg.edge_ids() {
        let c = cfg.edge(ce);
        if !(drawn[c.from.index()] && drawn[c.to.index()]) {
            continue;
        }
        let mut attributes = Vec::new();
        if let Some(n) = edge_counts.map(|e| e[ce.index()]) {
            attributes.push(Attribute::Label(format!("{n}×")));
            if n > 0 {
                attributes.push(Attribute::Width(width(n, max)));
            }
        }
        if back[ce.index()] {
            attributes.push(Attribute::Style(Style::Dotted));
            attributes.push(Attribute::Unconstrained);
        }
        edges.push(Edge {
            from: End::Block(c.from.0),
            to: End::Block(c.to.0),
            attributes,
        });
    }
    for b in cfg.blocks().filter(|&b| drawn[b.index()] && cfg.is_exit(b)) {
        let label = counts.map_or(String::new(), |c| format!("{}×", c.blocks[b.index()]));
        edges.push(Edge {
            from: End::Block(b.0),
            to: End::Exit,
            attributes: vec![Attribute::Label(label)],
        });
    }
    graph(map, f, counts, &drawn, &what, edges)
}
