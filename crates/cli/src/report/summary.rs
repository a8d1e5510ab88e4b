//! `pathprof report` in text: one line per function (calls, blocks executed
//! of reachable blocks, executed paths of potential paths), sorted by blocks
//! executed (the sum of its block counts), most first.

use super::load::Loaded;
use pathprof_report::summary::Summary;
use std::fmt::Write as _;

/// The text report.
pub fn report(loaded: &Loaded) -> String {
    let summary = Summary::of(loaded);
    let mut rows: Vec<_> = summary.functions.iter().collect();
    rows.sort_by_key(|f| std::cmp::Reverse(loaded.counts[f.index].blocks.iter().sum::<u64>()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>9} {:>15}  function (most block executions first)",
        "calls", "blocks", "paths run/all"
    );
    for f in rows {
        let paths = f
            .paths
            .map_or_else(|| "-".to_string(), |p| format!("{}/{}", p.hit, p.total));
        let where_ = match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("  ({file}:{line})"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:>12} {:>9} {:>15}  {}{}",
            f.calls,
            format!("{}/{}", f.blocks.hit, f.blocks.total),
            paths,
            f.name,
            where_
        );
    }
    out
}
