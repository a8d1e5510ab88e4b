//! `pathprof dot` and `pathprof instrument --dot-dir`: a function's graph for
//! Graphviz, like the `-dot-pathdag` option of the LLVM path-profiling notes
//! (files named `pathdag.<function>.dot`).
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

use super::load::Loaded;
use super::percent;
use anyhow::{bail, Context as _, Result};
use pathprof_core::dag::{backedges, Dag, DagEdgeKind, EdgeClass};
use pathprof_core::derive::FunctionCounts;
use pathprof_core::ids::{BlockId, EdgeId};
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::planner::planned_increments;
use pathprof_report::lookup::find_functions;
use std::fmt::Write as _;

/// How many of the hottest paths are drawn heavier.
const TOP_PATHS: usize = 3;
const HOT_COLOR: &str = "#c0392b";

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

/// A function's graph.
pub struct Graph {
    /// The DOT text.
    pub text: String,
    /// For stderr, when the graph has more than [`Options::node_limit`] nodes.
    pub warning: Option<String>,
}

/// The graph of function `function` (linkage or demangled name) of `map`, with
/// the counts of `profile` when given.
pub fn render(
    map: &MapFile,
    function: &str,
    profile: Option<&Loaded>,
    options: &Options,
) -> Result<Graph> {
    let index = find_functions(map, function, "the map")?[0];
    if let Some(l) = profile {
        if l.map.build_id != map.build_id {
            bail!("the profile is of another build than the map");
        }
    } else if options.hot.is_some() {
        bail!("--hot draws the hottest paths of a profile: name it with --profile");
    }
    let counts = profile.map(|l| &l.counts[index]);
    let (text, nodes) = render_function(map, index, counts, options.hot);
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
    Ok(Graph { text, warning })
}

/// Writes `pathdag.<function>.dot` into `dir` for every function of `map`.
pub fn write_all(map: &MapFile, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the DOT directory {}", dir.display()))?;
    let mut used = std::collections::HashSet::new();
    for (i, f) in map.functions.iter().enumerate() {
        let mut name = format!("pathdag.{}.dot", file_safe(&f.name));
        if !used.insert(name.clone()) {
            name = format!("pathdag.{}.{i}.dot", file_safe(&f.name));
            used.insert(name.clone());
        }
        let path = dir.join(name);
        std::fs::write(&path, render_function(map, i, None, None).0)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// A function name usable as (part of) a file name: no `/`, not too long.
fn file_safe(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    if clean.len() <= 200 {
        return clean;
    }
    let mut cut = 180;
    while !clean.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}-{:016x}",
        &clean[..cut],
        pathprof_core::hash::fnv64(name.as_bytes())
    )
}

/// One node per drawn block, labelled with its position (and count).
fn block_nodes(
    out: &mut String,
    map: &MapFile,
    f: &MapFunction,
    counts: Option<&FunctionCounts>,
    drawn: &[bool],
) {
    for b in f.cfg.blocks().filter(|&b| drawn[b.index()]) {
        let n = counts.map(|c| c.blocks[b.index()]);
        let _ = writeln!(
            out,
            "  b{} [label={}];",
            b.0,
            quote(&block_label(map, f, b, n))
        );
    }
}

/// A DOT string literal.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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
        let name = map
            .file_name(file)
            .map_or("?".to_string(), super::paths::short_name);
        let _ = write!(label, "\n{name}:{line}");
    }
    if let Some(n) = count {
        let _ = write!(label, "\n×{n}");
    }
    label
}

fn header(out: &mut String, map: &MapFile, f: &MapFunction, what: &str) {
    let name = f.shown_name();
    let at = match (map.file_name(f.file), f.line) {
        (Some(file), Some(line)) => format!(" ({}:{line})", super::paths::short_name(file)),
        _ => String::new(),
    };
    let by_callers = if f.counted_by_callers() {
        "\nno probe counts its entries: its callers' call sites do"
    } else {
        ""
    };
    let _ = writeln!(out, "digraph {} {{", quote(&format!("pathdag.{}", f.name)));
    let _ = writeln!(
        out,
        "  graph [label={}, labelloc=t, fontname=\"Helvetica\", fontsize=12];",
        quote(&format!("{name}{at}\n{what}{by_callers}"))
    );
    let _ = writeln!(
        out,
        "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=9];");
    let _ = writeln!(
        out,
        "  ENTRY [shape=ellipse, style=filled, fillcolor=\"#e8e8e8\"];"
    );
    let _ = writeln!(
        out,
        "  EXIT [shape=ellipse, style=filled, fillcolor=\"#e8e8e8\"];"
    );
}

/// `penwidth` for an edge run `n` times when the busiest ran `max` times.
fn width(n: u64, max: u64) -> f64 {
    if max == 0 {
        1.0
    } else {
        1.0 + 5.0 * n as f64 / max as f64
    }
}

/// The DOT text of function `index` and how many nodes it has; `hot` needs
/// `counts`.
fn render_function(
    map: &MapFile,
    index: usize,
    counts: Option<&FunctionCounts>,
    hot: Option<usize>,
) -> (String, usize) {
    let f = &map.functions[index];
    let hot = hot.filter(|_| counts.is_some());
    match &f.layout {
        Layout::Path {
            dag, self_loops, ..
        } => render_dag(map, f, dag, self_loops, counts, hot),
        _ => render_cfg(map, f, counts, hot),
    }
}

/// How many of `drawn` are true.
fn count(drawn: &[bool]) -> usize {
    drawn.iter().filter(|&&d| d).count()
}

fn node_name(dag: &Dag, v: pathprof_core::NodeId) -> String {
    if v == dag.entry() {
        "ENTRY".into()
    } else if v == dag.exit() {
        "EXIT".into()
    } else {
        format!("b{}", v.0)
    }
}

fn render_dag(
    map: &MapFile,
    f: &MapFunction,
    dag: &Dag,
    self_loops: &[EdgeId],
    counts: Option<&FunctionCounts>,
    keep: Option<usize>,
) -> (String, usize) {
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
            let executions = |ps: &[&pathprof_core::derive::PathCount]| -> u128 {
                ps.iter().map(|p| p.count as u128).sum()
            };
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
    let mut out = String::new();
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
    header(&mut out, map, f, &what);
    block_nodes(&mut out, map, f, counts, &drawn);
    for id in dag.edge_ids().filter(|id| drawn_edges[id.index()]) {
        let e = dag.edge(id);
        let mut label = format!("Val {}", dag.val(id));
        if probed && incs.is_chord(id) {
            let _ = write!(label, "\nInc {}", incs.inc[id.index()]);
        }
        let mut attrs: Vec<String> = Vec::new();
        match e.kind {
            DagEdgeKind::BackEntry(ce) | DagEdgeKind::BackExit(ce) => {
                let c = cfg.edge(ce);
                let why = match dag.classes()[ce.index()] {
                    EdgeClass::Cut => "cut",
                    EdgeClass::Sibling => "beside unsplittable",
                    _ => "backedge",
                };
                let _ = write!(label, "\n({why} {}→{})", c.from, c.to);
                attrs.push("style=dashed".into());
            }
            DagEdgeKind::UnsplitEntry(_) | DagEdgeKind::UnsplitExit(_) => {
                label.push_str("\n(unsplittable)");
                attrs.push("style=dashed".into());
            }
            DagEdgeKind::CallExit(_, k) => {
                let _ = write!(label, "\n(inside call #{k})");
                attrs.push("style=dashed".into());
            }
            _ => {}
        }
        if counts.is_some() && crossed[id.index()] > 0 {
            let _ = write!(label, "\n{}×", crossed[id.index()]);
            if hot[id.index()] {
                attrs.push(format!("penwidth={:.2}", width(crossed[id.index()], max)));
                attrs.push(format!("color=\"{HOT_COLOR}\""));
                attrs.push(format!("fontcolor=\"{HOT_COLOR}\""));
            }
        }
        attrs.insert(0, format!("label={}", quote(&label)));
        let _ = writeln!(
            out,
            "  {} -> {} [{}];",
            node_name(dag, e.from),
            node_name(dag, e.to),
            attrs.join(", ")
        );
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
        let _ = writeln!(
            out,
            "  b{} -> b{} [label={}, style=dotted, constraint=false, color=\"#777777\", fontcolor=\"#777777\"];",
            c.from.0,
            c.to.0,
            quote(&label)
        );
    }
    out.push_str("}\n");
    (out, count(&drawn) + 2)
}

fn render_cfg(
    map: &MapFile,
    f: &MapFunction,
    counts: Option<&FunctionCounts>,
    keep: Option<usize>,
) -> (String, usize) {
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
    let mut out = String::new();
    let kind = match &f.layout {
        Layout::Block { .. } => "block counts",
        Layout::Edge {
            net_call_exits: true,
            ..
        } => "block counts, from edge counts",
        _ => "edge counts",
    };
    header(
        &mut out,
        map,
        f,
        &format!("control-flow graph ({kind}); dotted: backedges{kept_note}"),
    );
    block_nodes(&mut out, map, f, counts, &drawn);
    if drawn[cfg.entry().index()] {
        let entry_label = counts.map_or(String::new(), |c| format!("{}×", c.entry));
        let _ = writeln!(
            out,
            "  ENTRY -> b{} [label={}];",
            cfg.entry().0,
            quote(&entry_label)
        );
    }
    for ce in cfg.edge_ids() {
        let c = cfg.edge(ce);
        if !(drawn[c.from.index()] && drawn[c.to.index()]) {
            continue;
        }
        let mut attrs = Vec::new();
        if let Some(n) = edge_counts.map(|e| e[ce.index()]) {
            attrs.push(format!("label={}", quote(&format!("{n}×"))));
            if n > 0 {
                attrs.push(format!("penwidth={:.2}", width(n, max)));
            }
        }
        if back[ce.index()] {
            attrs.push("style=dotted".into());
            attrs.push("constraint=false".into());
        }
        let _ = writeln!(
            out,
            "  b{} -> b{} [{}];",
            c.from.0,
            c.to.0,
            attrs.join(", ")
        );
    }
    for b in cfg.blocks().filter(|&b| drawn[b.index()] && cfg.is_exit(b)) {
        let label = counts.map_or(String::new(), |c| format!("{}×", c.blocks[b.index()]));
        let _ = writeln!(out, "  b{} -> EXIT [label={}];", b.0, quote(&label));
    }
    out.push_str("}\n");
    (out, count(&drawn) + 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures::loaded;

    /// [`render`]'s text with `options`.
    fn dot(l: &Loaded, profile: Option<&Loaded>, options: &Options) -> String {
        render(&l.map, "f", profile, options).unwrap().text
    }

    /// The `bN` nodes a graph declares.
    fn nodes(text: &str) -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix('b'))
            .filter_map(|l| l.split_once(" [label="))
            .filter(|(n, _)| n.bytes().all(|c| c.is_ascii_digit()))
            .map(|(n, _)| format!("b{n}"))
            .collect()
    }

    /// A loop: b0 -> b1 (head) -> b2 | b3 -> b4 (latch) -> b1, b4 -> b5.
    fn looped() -> Loaded {
        loaded(
            6,
            &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)],
            &[(&[0, 1, 2, 4], 1), (&[1, 2, 4], 8), (&[1, 3, 4, 5], 1)],
            &[],
        )
    }

    #[test]
    fn dag_has_values_increments_dummies_and_hot_paths() {
        let l = looped();
        let plain = dot(&l, None, &Options::default());
        assert!(plain.starts_with("digraph \"pathdag.f\" {"), "{plain}");
        assert!(plain.contains("ENTRY -> b0 [label=\"Val 0"), "{plain}");
        assert!(plain.contains("style=dashed"), "{plain}");
        assert!(plain.contains("Inc "), "{plain}");
        assert!(
            plain.contains("b4 -> b1 [label=\"backedge\", style=dotted"),
            "{plain}"
        );
        assert!(plain.contains("b2 [label=\"b2\\nt.c:12\"]"), "{plain}");
        assert!(!plain.contains("penwidth"));
        let hot = dot(&l, Some(&l), &Options::default());
        assert!(hot.contains("penwidth=6.00"), "{hot}");
        assert!(hot.contains("\\n9×"), "{hot}"); // b1 -> b2 crossed by 1 + 8
        assert!(hot.contains("\\n×10\"]"), "{hot}"); // block b1 ran 10 times
        assert!(hot.contains("backedge\\n9×"), "{hot}");
    }

    #[test]
    fn block_mode_draws_the_cfg() {
        let mut l = loaded(3, &[(0, 1), (1, 1), (1, 2)], &[(&[0, 1, 2], 1)], &[4]);
        let f = &mut l.map.functions[0];
        f.layout = Layout::Block {
            slot_of_block: vec![Some(0), Some(1), Some(2)],
            calls_slot: None,
        };
        l.map.mode = pathprof_core::Mode::Block;
        l.counts[0].edges = None;
        let text = dot(&l, Some(&l), &Options::default());
        assert!(
            text.contains("b1 -> b1 [style=dotted, constraint=false]"),
            "{text}"
        );
        assert!(text.contains("ENTRY -> b0 [label=\"1×\"]"), "{text}");
        assert!(text.contains("b2 -> EXIT"), "{text}");
        // b1 ran 5 times, b0 and b2 once: the hottest block is b1 alone.
        let hot = Options {
            hot: Some(1),
            ..Options::default()
        };
        let text = dot(&l, Some(&l), &hot);
        assert_eq!(nodes(&text), ["b1"], "{text}");
        assert!(text.contains("b1 -> b1 [style=dotted"), "{text}");
        assert!(
            !text.contains("ENTRY ->") && !text.contains("-> EXIT"),
            "{text}"
        );
        assert!(text.contains("the 1 most executed of 3 blocks"), "{text}");
    }

    #[test]
    fn hot_draws_only_the_hottest_paths() {
        let l = looped();
        let hot = |n| Options {
            hot: Some(n),
            ..Options::default()
        };
        // The hottest path, 1 2 4 after the backedge (8 times).
        let one = render(&l.map, "f", Some(&l), &hot(1)).unwrap();
        assert_eq!(nodes(&one.text), ["b1", "b2", "b4"], "{}", one.text);
        assert!(one.text.contains("ENTRY -> b1"), "{}", one.text);
        assert!(one.text.contains("b4 -> EXIT"), "{}", one.text);
        assert!(!one.text.contains("b0 ->"), "{}", one.text);
        assert!(
            one.text.contains("b4 -> b1 [label=\"backedge"),
            "the backedge between drawn blocks: {}",
            one.text
        );
        assert!(
            one.text
                .contains("--hot 1: the 1 hottest of 3 executed paths (80.0% of executions): 3 of 6 blocks, 4 of "),
            "{}",
            one.text
        );
        assert!(one.warning.is_none());
        let two = dot(&l, Some(&l), &hot(2));
        assert_eq!(nodes(&two), ["b0", "b1", "b2", "b4"], "{two}");
        // More than there are: every executed path.
        let all = dot(&l, Some(&l), &hot(99));
        assert_eq!(nodes(&all), ["b0", "b1", "b2", "b3", "b4", "b5"], "{all}");
        assert!(render(&l.map, "f", None, &hot(1))
            .err()
            .unwrap()
            .to_string()
            .contains("--profile"));
    }

    #[test]
    fn large_graphs_come_with_a_warning() {
        let l = looped();
        let limit = |node_limit| Options {
            node_limit,
            ..Options::default()
        };
        let g = render(&l.map, "f", None, &limit(8)).unwrap();
        assert_eq!(nodes(&g.text).len() + 2, 8);
        assert_eq!(g.warning, None);
        let g = render(&l.map, "f", None, &limit(7)).unwrap();
        let w = g.warning.unwrap();
        assert!(
            w.contains("the graph of f has 8 nodes (more than 7)"),
            "{w}"
        );
        assert!(w.contains("--profile PROFILE --hot N"), "{w}");
        let g = render(&l.map, "f", Some(&l), &limit(7)).unwrap();
        assert!(g.warning.unwrap().contains("; --hot N draws only"));
    }

    #[test]
    fn a_path_its_callers_count_has_no_increment() {
        // One path (b0 -> b1), the planner's chord increment 0 and a count.
        let mut l = loaded(2, &[(0, 1)], &[(&[0, 1], 1)], &[]);
        let counted = dot(&l, None, &Options::default());
        assert!(counted.contains("Inc 0"), "{counted}");
        assert!(!counted.contains("callers"), "{counted}");
        // Its entry count given by its callers: nothing is placed in it,
        // in a fragment (call sites) as in a combined map (materialized).
        let site = pathprof_core::callers::CallSite {
            function: 0,
            block: BlockId(0),
        };
        l.map.functions[0].entry_calls = vec![site];
        let fragment = dot(&l, None, &Options::default());
        l.map.functions[0].entry_calls.clear();
        l.map.functions[0].entries_by_callers = true;
        let combined = dot(&l, None, &Options::default());
        for text in [fragment, combined] {
            assert!(!text.contains("Inc"), "{text}");
            assert!(text.contains("its callers' call sites do"), "{text}");
        }
    }

    #[test]
    fn write_all_names_files_like_llvm() {
        let l = loaded(2, &[(0, 1)], &[(&[0, 1], 1)], &[]);
        let dir = tempfile::tempdir().unwrap();
        write_all(&l.map, dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join("pathdag.f.dot")).unwrap();
        assert!(text.starts_with("digraph"));
        assert_eq!(file_safe("a/b"), "a_b");
        assert!(file_safe(&"x".repeat(300)).len() < 220);
    }
}
