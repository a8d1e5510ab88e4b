//! `pathprof predict`: paths predicted from an edge profile versus the measured
//! path profile (Ball & Larus 1996, section 6: Table 2's "% Correct" and "Edge
//! Profile Paths" columns), as text. The comparison is
//! `pathprof_report::predict` (summed over the program) of
//! `pathprof_core::predict` (one function; its module defines the terms).

use super::load::Loaded;
use super::percent;
use anyhow::Result;
use pathprof_report::predict::{analyze, Lengths};
use std::fmt::Write as _;

/// How many functions the per-function table shows.
const TOP_FUNCTIONS: usize = 20;

/// The report.
pub fn report(loaded: &Loaded) -> Result<String> {
    let p = analyze(loaded)?;
    let t = &p.total;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Paths predicted from the edge profile versus measured paths (Ball & Larus 1996, Table 2):\n\
         from where each measured path starts, follow every block's most frequent out-edge."
    );
    if t.paths == 0 {
        let _ = writeln!(out, "\nNo path was executed: nothing to compare.");
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "\n{} executions of {} distinct paths in {} executed functions (paths per function: max {}, avg {:.1})",
        t.measured.executions,
        t.paths,
        p.functions.len(),
        p.max_paths(),
        t.paths as f64 / p.functions.len() as f64
    );
    let _ = writeln!(
        out,
        "predicted entirely correctly: {} of executions ({} of {}), {} of distinct paths ({} of {})",
        percent(t.correct_executions, t.measured.executions),
        t.correct_executions,
        t.measured.executions,
        percent(t.correct_paths as u128, t.paths as u128),
        t.correct_paths,
        t.paths
    );
    let d = &t.decisions;
    let _ = writeln!(
        out,
        "branch decisions along the paths: {}; mispredicted from the edge profile: {} ({}), \
         from the path so far: {} ({})",
        d.executed,
        d.edge_mispredicted,
        percent(d.edge_mispredicted, d.executed),
        d.path_mispredicted,
        percent(d.path_mispredicted, d.executed)
    );
    let _ = writeln!(
        out,
        "\n{:<44} {:>11} {:>11} {:>8} {:>8}",
        "path length (weighted by executions)", "avg blocks", "avg instrs", "longest", "longest"
    );
    let _ = writeln!(
        out,
        "{:<44} {:>11} {:>11} {:>8} {:>8}",
        "", "", "", "blocks", "instrs"
    );
    let row = |out: &mut String, label: &str, l: &Lengths| {
        let _ = writeln!(
            out,
            "{:<44} {:>11.1} {:>11.1} {:>8} {:>8}",
            label,
            l.avg_blocks(),
            l.avg_instructions(),
            l.longest_blocks,
            l.longest_instructions
        );
    };
    row(&mut out, "measured paths", &t.measured);
    row(
        &mut out,
        "edge-predicted (to first misprediction)",
        &t.predicted,
    );
    let mis_paths = t.paths - t.correct_paths;
    if mis_paths > 0 {
        let _ = writeln!(
            out,
            "mispredicted paths only ({} distinct, {} executions):",
            mis_paths, t.mispredicted_measured.executions
        );
        row(&mut out, "  measured", &t.mispredicted_measured);
        row(
            &mut out,
            "  predicted up to the first misprediction",
            &t.mispredicted_predicted,
        );
    }
    let _ = writeln!(out, "\nper function, most executions first:");
    let _ = writeln!(
        out,
        "{:>14} {:>6} {:>8} {:>8}  {:>21}  function",
        "executions", "paths", "correct", "correct", "mispredicted blocks"
    );
    let _ = writeln!(
        out,
        "{:>14} {:>6} {:>8} {:>8}  {:>21}",
        "", "", "paths", "execs", "predicted / measured"
    );
    for fp in p.functions.iter().take(TOP_FUNCTIONS) {
        let s = &fp.stats;
        let mis = if s.correct_paths == s.paths {
            "-".to_string()
        } else {
            format!(
                "{:.1} / {:.1}",
                s.mispredicted_predicted.avg_blocks(),
                s.mispredicted_measured.avg_blocks()
            )
        };
        let _ = writeln!(
            out,
            "{:>14} {:>6} {:>8} {:>8}  {:>21}  {}",
            s.measured.executions,
            s.paths,
            percent(s.correct_paths as u128, s.paths as u128),
            percent(s.correct_executions, s.measured.executions),
            mis,
            loaded.name(fp.function)
        );
    }
    if p.functions.len() > TOP_FUNCTIONS {
        let _ = writeln!(
            out,
            "{:>14} ({} more functions)",
            "...",
            p.functions.len() - TOP_FUNCTIONS
        );
    }
    if p.block_only > 0 {
        let _ = writeln!(
            out,
            "\n({} functions had too many paths and were counted by blocks; they are left out)",
            p.block_only
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures;

    #[test]
    fn report_reads_like_table_2() {
        let l = fixtures::diamond_chain(&[(&[0, 1, 5], 3), (&[0, 2, 3, 5], 5), (&[0, 2, 4, 5], 4)]);
        let text = report(&l).unwrap();
        assert!(text.contains("12 executions of 3 distinct paths in 1 executed functions"));
        assert!(text.contains(
            "predicted entirely correctly: 41.7% of executions (5 of 12), 33.3% of distinct paths (1 of 3)"
        ));
        assert!(text.contains("1.6 / 3.6"), "{text}");
        assert!(
            text.contains("per function, most executions first:"),
            "{text}"
        );
    }
}
