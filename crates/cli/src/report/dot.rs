//! `pathprof dot` and `pathprof instrument --dot-dir`: a function's graph for
//! Graphviz, like the `-dot-pathdag` option of the LLVM path-profiling notes
//! (files named `pathdag.<function>.dot`).
//!
//! Path mode draws the Ball-Larus DAG (1996, sections 3 and 4): the blocks
//! (`bN` with their source line) between a virtual ENTRY and EXIT; every DAG edge
//! labelled with its `Val` (Figure 5) and, for chords of the spanning tree, its
//! increment `Inc` (section 3.3), recomputed exactly as the path planner chose it
//! (same loop-depth weights, same maximum spanning tree); dummy edges (section 4:
//! ENTRY→loop head, loop bottom→EXIT, and the cuts around unsplittable edges)
//! dashed; backedges, cuts, self loops and unsplittable edges, which are not in
//! the DAG, as dotted CFG edges. With a profile, every executed edge is labelled
//! with how many path executions crossed it and the edges of the hottest paths
//! are drawn heavier, their width scaled by that count.
//!
//! Block and edge mode maps (and functions that fell back to block counting)
//! draw the CFG with its block counts and, when known, edge counts.

use super::load::Loaded;
use anyhow::{bail, Context as _, Result};
use pathprof_core::cfg::Cfg;
use pathprof_core::dag::{Dag, DagEdgeKind, EdgeClass};
use pathprof_core::derive::FunctionCounts;
use pathprof_core::ids::{BlockId, EdgeId};
use pathprof_core::increments::ChordIncrements;
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::weights::Weights;
use std::fmt::Write as _;

/// How many of the hottest paths are drawn heavier.
const TOP_PATHS: usize = 3;
const HOT_COLOR: &str = "#c0392b";

/// The DOT text of function `function` (linkage or demangled name) of `map`, with
/// the counts of `profile` when given.
pub fn render(map: &MapFile, function: &str, profile: Option<&Loaded>) -> Result<String> {
    let index = find_function(map, function)?;
    if let Some(l) = profile {
        if l.map.build_id != map.build_id {
            bail!("the profile is of another build than the map");
        }
    }
    Ok(render_function(
        map,
        index,
        profile.map(|l| &l.counts[index]),
    ))
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
        std::fs::write(&path, render_function(map, i, None))
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

/// The index of the function called `name`, or an error naming similar ones.
fn find_function(map: &MapFile, name: &str) -> Result<usize> {
    if let Some(i) = map.functions.iter().position(|f| f.name == name) {
        return Ok(i);
    }
    if let Some(i) = map
        .functions
        .iter()
        .position(|f| f.display_name.as_deref() == Some(name))
    {
        return Ok(i);
    }
    let lower = name.to_lowercase();
    let mut near: Vec<(usize, &str)> = map
        .functions
        .iter()
        .map(|f| f.display_name.as_deref().unwrap_or(&f.name))
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = if l.contains(&lower) || lower.contains(&l) {
                0
            } else {
                edit_distance(&lower, &l)
            };
            (d <= 2.max(name.len() / 3)).then_some((d, n))
        })
        .collect();
    near.sort();
    near.truncate(5);
    if near.is_empty() {
        let some: Vec<&str> = map
            .functions
            .iter()
            .take(5)
            .map(|f| f.display_name.as_deref().unwrap_or(&f.name))
            .collect();
        bail!(
            "no function named `{name}` in the map; it has {} functions, such as {}",
            map.functions.len(),
            some.join(", ")
        );
    }
    let names: Vec<&str> = near.into_iter().map(|(_, n)| n).collect();
    bail!(
        "no function named `{name}` in the map; did you mean {}?",
        names.join(", ")
    )
}

/// Levenshtein distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The chord increments the path planner used: the spanning tree that maximises
/// the loop-depth weights (`pathprof-core`'s `path::plan_paths` weighs DAG edges
/// the same way; the instrumenter never passes measured counts).
pub fn increments(cfg: &Cfg, dag: &Dag) -> ChordIncrements {
    pathprof_core::path::chord_increments(cfg, dag, &Weights::estimate(cfg))
}

/// One node per reachable block, labelled with its position (and count).
fn block_nodes(out: &mut String, map: &MapFile, f: &MapFunction, counts: Option<&FunctionCounts>) {
    for b in f.cfg.blocks().filter(|&b| f.cfg.is_reachable(b)) {
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
    let name = f.display_name.as_deref().unwrap_or(&f.name);
    let at = match (map.file_name(f.file), f.line) {
        (Some(file), Some(line)) => format!(" ({}:{line})", super::paths::short_name(file)),
        _ => String::new(),
    };
    let _ = writeln!(out, "digraph {} {{", quote(&format!("pathdag.{}", f.name)));
    let _ = writeln!(
        out,
        "  graph [label={}, labelloc=t, fontname=\"Helvetica\", fontsize=12];",
        quote(&format!("{name}{at}\n{what}"))
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

fn render_function(map: &MapFile, index: usize, counts: Option<&FunctionCounts>) -> String {
    let f = &map.functions[index];
    match &f.layout {
        Layout::Path {
            dag, self_loops, ..
        } => render_dag(map, f, dag, self_loops, counts),
        _ => render_cfg(map, f, counts),
    }
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
) -> String {
    let cfg = &f.cfg;
    let incs = increments(cfg, dag);
    // Per DAG edge: path executions crossing it; and whether a top path uses it.
    let mut crossed = vec![0u64; dag.edges().len()];
    let mut hot = vec![false; dag.edges().len()];
    if let Some(c) = counts {
        for p in &c.paths {
            for &e in &p.path.edges {
                crossed[e.index()] = crossed[e.index()].saturating_add(p.count);
            }
        }
        let mut order: Vec<_> = c.paths.iter().filter(|p| p.count > 0).collect();
        order.sort_by(|a, b| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
        for p in order.into_iter().take(TOP_PATHS) {
            for &e in &p.path.edges {
                hot[e.index()] = true;
            }
        }
    }
    let max = crossed.iter().copied().max().unwrap_or(0);
    let mut out = String::new();
    let what = format!(
        "Ball-Larus path DAG, {} potential paths: Val on every edge, Inc on chords\ndashed: dummy edges; dotted: CFG edges outside the DAG{}",
        dag.num_paths(),
        if counts.is_some() {
            format!("\ncounts: path executions (blocks: ×runs); red: the {TOP_PATHS} hottest paths, width by count")
        } else {
            String::new()
        }
    );
    header(&mut out, map, f, &what);
    block_nodes(&mut out, map, f, counts);
    for id in dag.edge_ids() {
        let e = dag.edge(id);
        let mut label = format!("Val {}", dag.val(id));
        if incs.is_chord(id) {
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
    // CFG edges that are not DAG edges.
    for ce in cfg.edge_ids() {
        let c = cfg.edge(ce);
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
    out
}

fn render_cfg(map: &MapFile, f: &MapFunction, counts: Option<&FunctionCounts>) -> String {
    let cfg = &f.cfg;
    let back = backedges(cfg);
    let edge_counts = counts.and_then(|c| c.edges.as_ref());
    let max = edge_counts
        .and_then(|e| e.iter().copied().max())
        .unwrap_or(0)
        .max(counts.map_or(0, |c| c.entry));
    let mut out = String::new();
    let kind = match &f.layout {
        Layout::Block { .. } => "block counts",
        _ => "edge counts",
    };
    header(
        &mut out,
        map,
        f,
        &format!("control-flow graph ({kind}); dotted: backedges"),
    );
    block_nodes(&mut out, map, f, counts);
    let entry_label = counts.map_or(String::new(), |c| format!("{}×", c.entry));
    let _ = writeln!(
        out,
        "  ENTRY -> b{} [label={}];",
        cfg.entry().0,
        quote(&entry_label)
    );
    for ce in cfg.edge_ids() {
        let c = cfg.edge(ce);
        if !cfg.is_reachable(c.from) {
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
    for b in cfg
        .blocks()
        .filter(|&b| cfg.is_reachable(b) && cfg.is_exit(b))
    {
        let label = counts.map_or(String::new(), |c| format!("{}×", c.blocks[b.index()]));
        let _ = writeln!(out, "  b{} -> EXIT [label={}];", b.0, quote(&label));
    }
    out.push_str("}\n");
    out
}

/// CFG edges to a block on the depth-first-search stack.
fn backedges(cfg: &Cfg) -> Vec<bool> {
    let mut back = vec![false; cfg.edges().len()];
    let mut state = vec![0u8; cfg.num_blocks()];
    let mut stack: Vec<(BlockId, usize)> = vec![(cfg.entry(), 0)];
    state[cfg.entry().index()] = 1;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&e) = cfg.succs(b).get(*next) {
            *next += 1;
            let to = cfg.edge(e).to;
            match state[to.index()] {
                0 => {
                    state[to.index()] = 1;
                    stack.push((to, 0));
                }
                1 => back[e.index()] = true,
                _ => {}
            }
        } else {
            state[b.index()] = 2;
            stack.pop();
        }
    }
    back
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::predict::tests::loaded;
    use pathprof_core::path::{plan_paths, transcribe, PathOptions};
    use pathprof_core::regen::regenerate;

    fn graphs() -> Vec<Cfg> {
        vec![
            // diamond chain
            Cfg::from_edge_list(6, &[(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)])
                .unwrap(),
            // loop with a branch inside and a self loop
            Cfg::from_edge_list(
                7,
                &[
                    (0, 1),
                    (1, 2),
                    (1, 3),
                    (2, 4),
                    (3, 4),
                    (4, 4),
                    (4, 1),
                    (4, 5),
                    (5, 6),
                    (0, 6),
                ],
            )
            .unwrap(),
            // nested loops
            Cfg::from_edge_list(
                6,
                &[
                    (0, 1),
                    (1, 2),
                    (2, 3),
                    (3, 2),
                    (3, 4),
                    (4, 1),
                    (4, 5),
                    (2, 5),
                ],
            )
            .unwrap(),
        ]
    }

    #[test]
    fn increments_match_the_planner() {
        let mut early = PathOptions::default();
        early.dag.early_exit = true;
        let mut cases: Vec<(Cfg, PathOptions)> = graphs()
            .into_iter()
            .map(|g| (g, PathOptions::default()))
            .collect();
        for mut g in graphs() {
            // Calls that might not return in every other block.
            let calls = (0..g.num_blocks() as u32).map(|b| b % 2).collect();
            g.set_calls(calls).unwrap();
            cases.push((g, early));
        }
        for (cfg, options) in cases {
            let dag = Dag::build(&cfg, options.dag).unwrap();
            let incs = increments(&cfg, &dag);
            let (mine, _) = transcribe(&cfg, dag.clone(), &incs, &options);
            let (planned, _) = plan_paths(&cfg, &Weights::estimate(&cfg), &options).unwrap();
            assert_eq!(mine, planned);
            // And chord sums number the paths.
            for id in 0..dag.num_paths() {
                let p = regenerate(&dag, id).unwrap();
                let sum = p
                    .edges
                    .iter()
                    .fold(0i64, |acc, e| acc.wrapping_add(incs.inc[e.index()]));
                assert_eq!(sum as u64, id);
            }
        }
    }

    #[test]
    fn dag_has_values_increments_dummies_and_hot_paths() {
        let l = loaded(
            6,
            &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)],
            &[(&[0, 1, 2, 4], 1), (&[1, 2, 4], 8), (&[1, 3, 4, 5], 1)],
            &[],
        );
        let plain = render(&l.map, "f", None).unwrap();
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
        let hot = render(&l.map, "f", Some(&l)).unwrap();
        assert!(hot.contains("penwidth=6.00"), "{hot}");
        assert!(hot.contains("\\n9×"), "{hot}"); // b1 -> b2 crossed by 1 + 8
        assert!(hot.contains("\\n×10\"]"), "{hot}"); // block b1 ran 10 times
        assert!(hot.contains("backedge\\n9×"), "{hot}");
    }

    #[test]
    fn unknown_functions_suggest_near_names() {
        let mut l = loaded(2, &[(0, 1)], &[(&[0, 1], 1)], &[]);
        l.map.functions[0].name = "parse_header".into();
        let err = render(&l.map, "parse_headr", None).unwrap_err().to_string();
        assert!(err.contains("did you mean parse_header?"), "{err}");
        let err = render(&l.map, "zzzzzzzzzzzzzz", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("such as parse_header"), "{err}");
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
        let text = render(&l.map, "f", Some(&l)).unwrap();
        assert!(
            text.contains("b1 -> b1 [style=dotted, constraint=false]"),
            "{text}"
        );
        assert!(text.contains("ENTRY -> b0 [label=\"1×\"]"), "{text}");
        assert!(text.contains("b2 -> EXIT"), "{text}");
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
