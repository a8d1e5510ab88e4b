//! `pathprof dot` and `pathprof instrument --dot-dir`, as DOT text: writes
//! [`pathprof_report::dot`]'s graph of a function (the Ball-Larus DAG, or the
//! CFG) for Graphviz, in files named `pathdag.<function>.dot` as the LLVM
//! path-profiling notes' `-dot-pathdag` does.

use super::load::Loaded;
use anyhow::{Context as _, Result};
use pathprof_core::map::MapFile;
use pathprof_report::dot::{draw, function_graph, Attribute, End, Graph, Style};
pub use pathprof_report::dot::{Options, NODE_LIMIT};
use std::fmt::Write as _;

const HOT_COLOR: &str = "#c0392b";
const OUTSIDE_COLOR: &str = "#777777";

/// A function's graph as DOT.
pub struct Rendered {
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
) -> Result<Rendered> {
    let drawing = draw(map, function, profile, options)?;
    Ok(Rendered {
        text: text(&drawing.graph),
        warning: drawing.warning,
    })
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
        pathprof_io::output::write_new(&path, text(&function_graph(map, i, None, None)).as_bytes())
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

/// The DOT text of `g`.
pub fn text(g: &Graph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&g.name));
    let _ = writeln!(
        out,
        "  graph [label={}, labelloc=t, fontname=\"Helvetica\", fontsize=12];",
        quote(&g.title)
    );
    let _ = writeln!(
        out,
        "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=9];");
    for end in ["ENTRY", "EXIT"] {
        let _ = writeln!(
            out,
            "  {end} [shape=ellipse, style=filled, fillcolor=\"#e8e8e8\"];"
        );
    }
    for (b, label) in &g.blocks {
        let _ = writeln!(out, "  b{b} [label={}];", quote(label));
    }
    for e in &g.edges {
        let attributes: Vec<String> = e.attributes.iter().map(attribute).collect();
        let _ = writeln!(
            out,
            "  {} -> {} [{}];",
            end(e.from),
            end(e.to),
            attributes.join(", ")
        );
    }
    out.push_str("}\n");
    out
}

fn end(e: End) -> String {
    match e {
        End::Entry => "ENTRY".into(),
        End::Exit => "EXIT".into(),
        End::Block(b) => format!("b{b}"),
    }
}

fn attribute(a: &Attribute) -> String {
    match a {
        Attribute::Label(label) => format!("label={}", quote(label)),
        Attribute::Style(Style::Dashed) => "style=dashed".into(),
        Attribute::Style(Style::Dotted) => "style=dotted".into(),
        Attribute::Width(w) => format!("penwidth={w:.2}"),
        Attribute::Hot => format!("color=\"{HOT_COLOR}\", fontcolor=\"{HOT_COLOR}\""),
        Attribute::Outside => {
            format!("constraint=false, color=\"{OUTSIDE_COLOR}\", fontcolor=\"{OUTSIDE_COLOR}\"")
        }
        Attribute::Unconstrained => "constraint=false".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_core::layout::Layout;
    use pathprof_core::BlockId;
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
