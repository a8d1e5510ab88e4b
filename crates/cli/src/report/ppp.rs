//! Preferential path profiling's reports: `pathprof residual` (the executed
//! paths of a PPP profile that are not interesting) and `pathprof ppp-stats`;
//! the interesting paths and the list checks are
//! [`pathprof_report::ppp`]'s.

use super::load::Loaded;
use super::paths::{describe_end, hot_paths, source_ranges};
use anyhow::{bail, Result};
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFile;
use pathprof_core::ppp::InterestingList;
use std::fmt::Write as _;
use std::path::Path;

/// Prints [`pathprof_report::ppp::Unknown::warnings`] of `list` (at
/// `list_path`) against `maps` on standard error.
pub fn warn_unknown(list: &InterestingList, list_path: &Path, maps: &[&MapFile], verbose: bool) {
    let unknown = pathprof_report::ppp::unknown_functions(list, maps);
    for warning in unknown.warnings(list_path, verbose) {
        eprintln!("{warning}");
    }
}

/// `pathprof residual`: the executed paths that are not interesting.
pub fn residual(loaded: &Loaded, function: Option<&str>, top: usize) -> Result<String> {
    let map = &loaded.map;
    if !map.is_ppp() {
        bail!(
            "{} is not a PPP build: build with `pathprof cc --mode=ppp --interesting=FILE`",
            loaded.map_path.display()
        );
    }
    let paths = hot_paths(loaded, function)?;
    let total: u128 = paths.iter().map(|p| p.count as u128).sum();
    let residual: Vec<_> = paths
        .iter()
        .filter(|p| !p.function.layout.is_interesting(p.id))
        .collect();
    let executions: u128 = residual.iter().map(|p| p.count as u128).sum();
    let mut out = String::new();
    let share = |n: u128| {
        if total == 0 {
            0.0
        } else {
            100.0 * n as f64 / total as f64
        }
    };
    let _ = writeln!(
        out,
        "{} residual paths (executed, not interesting) of {} executed, {} executions ({:.2}% of {}), most executed first",
        residual.len(),
        paths.len(),
        executions,
        share(executions),
        total
    );
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>7} {:>6}  function / path",
        "rank", "count", "share", "blocks"
    );
    for (rank, p) in residual.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "{:>4} {:>12} {:>6.2}% {:>6}  {} (path {})",
            rank + 1,
            p.count,
            share(p.count as u128),
            p.path.blocks(p.dag).len(),
            p.name,
            p.id
        );
        let _ = writeln!(
            out,
            "{:>33}{}",
            "",
            source_ranges(map, p.function, p.dag, p.path)
        );
        for (end, starting) in [(p.path.start(p.dag), true), (p.path.end(p.dag), false)] {
            if let Some(text) = describe_end(p.function, end, starting) {
                let _ = writeln!(out, "{:>33}{text}", "");
            }
        }
    }
    if residual.len() > top {
        let _ = writeln!(out, "({} more)", residual.len() - top);
    }
    Ok(out)
}

/// `pathprof ppp-stats`: per PPP-numbered function (most interesting paths
/// first) its potential paths, |I|, PPP interval and δ, then δ's histogram
/// (the paper's Figure 16); functions with interesting paths that path
/// mode's array counts instead are counted, not listed.
pub fn stats(map: &MapFile) -> String {
    let mut rows: Vec<(&pathprof_core::map::MapFunction, u64, u64, u64)> = Vec::new();
    for f in &map.functions {
        let Layout::Path {
            dag, ppp_owners, ..
        } = &f.layout
        else {
            continue;
        };
        if ppp_owners.is_empty() {
            continue;
        }
        let interesting = f.layout.interesting().len() as u64;
        rows.push((f, dag.num_paths(), interesting, ppp_owners.len() as u64));
    }
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.name.cmp(&b.0.name)));
    let listed = map
        .functions
        .iter()
        .filter(|f| !f.layout.interesting().is_empty())
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{listed} of {} functions have interesting paths, {} numbered by PPP (the others count as \
         in path mode: in its arrays, or through its inline cache), most interesting paths first",
        map.functions.len(),
        rows.len()
    );
    let _ = writeln!(
        out,
        "{:>20} {:>8} {:>9} {:>7}  function",
        "potential paths", "|I|", "interval", "delta"
    );
    // Upper bounds of δ's buckets: 1 (compact), then up to 1.1, 1.5, 2, 4, more.
    const BOUNDS: [f64; 5] = [1.0, 1.1, 1.5, 2.0, 4.0];
    let mut histogram = [0usize; BOUNDS.len() + 1];
    for &(f, paths, interesting, interval) in &rows {
        let delta = interval as f64 / interesting as f64;
        let bucket = BOUNDS
            .iter()
            .position(|&b| delta <= b)
            .unwrap_or(BOUNDS.len());
        histogram[bucket] += 1;
        let _ = writeln!(
            out,
            "{paths:>20} {interesting:>8} {interval:>9} {delta:>7.3}  {}",
            f.shown_name()
        );
    }
    let labels = ["1", "(1, 1.1]", "(1.1, 1.5]", "(1.5, 2]", "(2, 4]", "> 4"];
    let _ = writeln!(out, "delta histogram (functions):");
    for (label, n) in labels.iter().zip(histogram) {
        let _ = writeln!(out, "{label:>12} {n}");
    }
    out
}
