//! `pathprof paths`: the hottest acyclic paths, program-wide or per function, each
//! shown as the source lines it runs through (regenerated from its id), where it
//! starts and how it ends; with Ball-Larus Table 2's weighted instructions per
//! path.

use super::load::Loaded;
use super::source::SourceRoot;
use crate::cli::PathSort;
use anyhow::{bail, Result};
use pathprof_core::dag::Dag;
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, MapFunction};
use pathprof_core::predict::path_length;
use pathprof_core::regen::{Path, PathEnd};
use pathprof_report::lookup::find_functions;
use std::fmt::Write as _;

/// One executed path with what the report shows of it.
pub struct HotPath<'a> {
    pub function: &'a MapFunction,
    /// The name a person reads for it ([`Loaded::name`]).
    pub name: &'a str,
    pub dag: &'a Dag,
    pub id: u64,
    pub count: u64,
    pub path: &'a Path,
}

impl HotPath<'_> {
    /// Instructions executed along the path once.
    pub fn instructions(&self) -> u64 {
        path_length(self.function, self.dag, &self.path.edges).1
    }

    /// The work the path did: its executions times its instructions.
    pub fn work(&self) -> u128 {
        self.count as u128 * self.instructions() as u128
    }
}

/// Every executed path of the functions selected by `function` (all if `None`),
/// hottest first.
pub fn hot_paths<'a>(loaded: &'a Loaded, function: Option<&str>) -> Result<Vec<HotPath<'a>>> {
    let map = &loaded.map;
    if map.mode != pathprof_core::Mode::Path {
        bail!(
            "{} holds a {} profile; path reports need a program built with --mode=path",
            loaded.map_path.display(),
            map.mode.name()
        );
    }
    let selected: Vec<usize> = match function {
        None => (0..map.functions.len()).collect(),
        Some(name) => find_functions(map, name, &loaded.map_path.display().to_string())?,
    };
    let mut out = Vec::new();
    for i in selected {
        let f = &map.functions[i];
        let Layout::Path { dag, .. } = &f.layout else {
            continue; // a function that fell back to block counting
        };
        for p in &loaded.counts[i].paths {
            out.push(HotPath {
                function: f,
                name: loaded.name(i),
                dag,
                id: p.id,
                count: p.count,
                path: &p.path,
            });
        }
    }
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(a.function.name.cmp(&b.function.name))
            .then(a.id.cmp(&b.id))
    });
    Ok(out)
}

/// Source positions of a path's blocks as `file:line` ranges in order, e.g.
/// `t.c:3-5, 9, util.c:2`.
pub fn source_ranges(map: &MapFile, f: &MapFunction, dag: &Dag, path: &Path) -> String {
    let mut lines: Vec<(u32, u32)> = Vec::new();
    for b in path.blocks(dag) {
        for span in &f.blocks[b.index()].lines {
            if lines.last() != Some(&(span.file, span.line)) {
                lines.push((span.file, span.line));
            }
        }
    }
    let mut out = String::new();
    let mut file = None;
    let mut i = 0;
    while i < lines.len() {
        let (fi, start) = lines[i];
        let mut end = start;
        while i + 1 < lines.len() && lines[i + 1].0 == fi && lines[i + 1].1 == end + 1 {
            i += 1;
            end += 1;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        if file != Some(fi) {
            out.push_str(&short_name(map.file_name(Some(fi)).unwrap_or("?")));
            out.push(':');
            file = Some(fi);
        }
        if end > start {
            let _ = write!(out, "{start}-{end}");
        } else {
            let _ = write!(out, "{start}");
        }
        i += 1;
    }
    if out.is_empty() {
        out.push_str("(no line information)");
    }
    out
}

pub use pathprof_report::short_name;

/// How a path began or ended, in words.
pub fn describe_end(f: &MapFunction, end: PathEnd, starting: bool) -> Option<String> {
    let line = |b: pathprof_core::BlockId| {
        f.blocks[b.index()]
            .line
            .map_or(String::new(), |l| format!(" (line {l})"))
    };
    match end {
        PathEnd::Function => None,
        PathEnd::Edge(e) => {
            let ce = f.cfg.edge(e);
            let what = if starting {
                "starts after"
            } else {
                "ends with"
            };
            Some(format!(
                "{what} loop back/cut edge {}{} -> {}{}",
                ce.from,
                line(ce.from),
                ce.to,
                line(ce.to)
            ))
        }
        PathEnd::Unsplittable(b) if starting => {
            Some(format!("starts at {b}{} after an indirect branch", line(b)))
        }
        PathEnd::Unsplittable(b) => Some(format!("ends at the indirect branch of {b}{}", line(b))),
        PathEnd::Call(b, k) => Some(format!(
            "ends inside call #{k} of {b}{}, which never returned",
            line(b)
        )),
    }
}

/// The report: the `top` paths ranked by `sort`.
pub fn report(
    loaded: &Loaded,
    function: Option<&str>,
    top: usize,
    sort: PathSort,
    _sources: &SourceRoot,
) -> Result<String> {
    let mut paths = hot_paths(loaded, function)?;
    let ranked = match sort {
        PathSort::Count => "most executed first",
        PathSort::Work => {
            // A stable sort: equal work stays most executed first.
            paths.sort_by_key(|p| std::cmp::Reverse(p.work()));
            "most work (executions x instructions) first"
        }
    };
    let total: u128 = paths.iter().map(|p| p.count as u128).sum();
    let weighted: u128 = paths.iter().map(HotPath::work).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} executions of {} distinct paths, {ranked}; weighted instructions per path {:.1}",
        total,
        paths.len(),
        if total == 0 {
            0.0
        } else {
            weighted as f64 / total as f64
        }
    );
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>7} {:>6} {:>6} {:>14}  function / path",
        "rank", "count", "share", "blocks", "instrs", "work"
    );
    let mut one_block = false;
    for (rank, p) in paths.iter().take(top).enumerate() {
        let blocks = p.path.blocks(p.dag);
        let share = if total == 0 {
            0.0
        } else {
            100.0 * p.count as f64 / total as f64
        };
        let _ = writeln!(
            out,
            "{:>4} {:>12} {:>6.2}% {:>6} {:>6} {:>14}  {} (path {}){}",
            rank + 1,
            p.count,
            share,
            blocks.len(),
            p.instructions(),
            p.work(),
            p.name,
            p.id,
            if blocks.len() == 1 { " *" } else { "" }
        );
        one_block |= blocks.len() == 1;
        if let Some(s) = describe_end(p.function, p.path.start(p.dag), true) {
            let _ = writeln!(out, "{:>40}{s}", "");
        }
        let _ = writeln!(
            out,
            "{:>40}{}",
            "",
            source_ranges(&loaded.map, p.function, p.dag, p.path)
        );
        if let Some(s) = describe_end(p.function, p.path.end(p.dag), false) {
            let _ = writeln!(out, "{:>40}{s}", "");
        }
    }
    if one_block {
        let _ = writeln!(
            out,
            "* one block: straight-line code with no branch, the whole of a function \
             without branches (often a small helper inlined everywhere) or one turn of a \
             one-block loop; `pathprof lines` shows its lines' counts"
        );
    }
    Ok(out)
}
