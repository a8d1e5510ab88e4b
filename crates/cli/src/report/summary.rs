//! `pathprof report` in text: one line per function (calls, blocks executed
//! of reachable blocks, executed paths of potential paths), sorted by blocks
//! executed (the sum of its block counts), most first; then, in path mode,
//! the functions whose paths counted in hash tables and what it cost.

use super::load::Loaded;
use pathprof_report::summary::{FunctionSummary, Summary};
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
    out.push_str(&hashed(&summary));
    out
}

/// Functions listed in [`hashed`].
const HASHED_SHOWN: usize = 10;

/// The functions whose paths counted in hash tables, most executions there
/// first, and how to keep them in arrays (empty when none did).
fn hashed(summary: &Summary) -> String {
    let mut rows: Vec<(u128, &FunctionSummary)> = summary
        .functions
        .iter()
        .filter_map(|f| Some((f.hashed_executions?, f)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.index.cmp(&b.1.index)));
    let p = &summary.program;
    let share = if p.path_executions == 0 {
        0.0
    } else {
        100.0 * p.hashed_executions as f64 / p.path_executions as f64
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} function{} counted paths in hash tables (more potential paths than the array limit): \
         {} of {} path executions ({share:.1}%) were table lookups",
        p.hashed_functions,
        if p.hashed_functions == 1 { "" } else { "s" },
        p.hashed_executions,
        p.path_executions
    );
    let _ = writeln!(
        out,
        "{:>15} {:>22}  function",
        "executions", "potential paths"
    );
    for (n, f) in rows.iter().take(HASHED_SHOWN) {
        let total = f.paths.map_or(0, |r| r.total);
        let _ = writeln!(out, "{n:>15} {total:>22}  {}", f.name);
    }
    if rows.len() > HASHED_SHOWN {
        let _ = writeln!(out, "({} more)", rows.len() - HASHED_SHOWN);
    }
    let _ = writeln!(
        out,
        "To count their paths in arrays: --mode=ppp with a training run's paths \
         (pathprof interesting; and --ppp-cache-paths=0 for functions of at most {} \
         interesting paths), or --max-paths=N (at most the array limit) to cut them.",
        pathprof_core::path::PPP_CACHE_PATHS
    );
    out
}
