//! `pathprof coverage`: line, block, edge and path coverage per function and in
//! total, with each function's never-executed lines. Path coverage is executed
//! paths out of potential paths (Ball-Larus section 1: feasible for most
//! routines).

use super::load::Loaded;
use pathprof_report::summary::{Ratio, Summary};
use std::fmt::Write as _;

/// A ratio in a column: `hit/total  pct%`, or `-` for an empty set.
fn show(r: Option<Ratio>) -> String {
    let text = match r.and_then(|r| r.percent().map(|p| (r, p))) {
        Some((r, p)) => format!("{}/{} {p:5.1}%", r.hit, r.total),
        None => "-".to_string(),
    };
    format!("{text:>22}")
}

/// Compresses sorted line numbers into `3-5, 9`.
pub fn ranges(lines: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        while i + 1 < lines.len() && lines[i + 1] == lines[i] + 1 {
            i += 1;
        }
        out.push(if lines[i] > start {
            format!("{start}-{}", lines[i])
        } else {
            start.to_string()
        });
        i += 1;
    }
    out.join(", ")
}

/// The report. TOTAL's lines are the program's lines, each counted once
/// however many functions have code on it (the LCOV export's and the HTML
/// report's count); its blocks, edges and paths add up the functions'.
pub fn report(loaded: &Loaded) -> String {
    let summary = Summary::of(loaded);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<28} {:>22} {:>22} {:>22} {:>22}",
        "function", "lines", "blocks", "edges", "paths"
    );
    for f in &summary.functions {
        let _ = writeln!(
            out,
            "{:<28} {} {} {} {}",
            f.name,
            show(Some(f.lines)),
            show(Some(f.blocks)),
            show(f.edges),
            show(f.paths)
        );
        if f.calls == 0 {
            let _ = writeln!(out, "    never called");
        } else if !f.never_executed_lines.is_empty() {
            let _ = writeln!(
                out,
                "    never executed: lines {}",
                ranges(&f.never_executed_lines)
            );
        }
    }
    let p = &summary.program;
    let _ = writeln!(
        out,
        "{:<28} {} {} {} {}",
        "TOTAL",
        show(Some(p.lines)),
        show(Some(p.blocks)),
        show(p.edges),
        show(p.paths)
    );
    out
}
