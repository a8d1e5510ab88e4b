//! `pathprof verify`, as text: renders [`pathprof_report::verify`]'s
//! comparison of a path profile's derived edge counts with an edge profile,
//! and where either profile's counts do not balance.

use pathprof_report::verify::{Difference, Place, Verification};
use std::fmt::Write as _;

/// The text of `v`: each unbalanced function with its nodes, each
/// difference, then the verdict.
pub fn text(v: &Verification) -> String {
    let mut text = String::new();
    for u in &v.unbalanced {
        let name = &u.function;
        let _ = writeln!(
            text,
            "{name}: the {} profile's counts do not balance (by {}):",
            u.side.name(),
            u.total
        );
        for n in &u.nodes {
            let place = match n.place {
                Place::Block { block, line } => {
                    let line = line.map_or(String::new(), |l| format!(" (line {l})"));
                    format!("block b{block}{line}")
                }
                Place::CallsVersusReturns => "calls vs returns".to_string(),
                Place::Callers => {
                    "entry count its callers give (the count, and as far off as it may be)"
                        .to_string()
                }
            };
            let _ = writeln!(text, "{name}: {place}: {} in, {} out", n.inflow, n.outflow);
        }
    }
    for d in &v.differences {
        let _ = match d {
            Difference::OnlyInPathBuild { function } => {
                writeln!(text, "{function}: only in the path build")
            }
            Difference::OnlyInEdgeBuild { function } => {
                writeln!(text, "{function}: only in the edge build")
            }
            Difference::OtherControlFlow { function } => writeln!(
                text,
                "{function}: the two builds have different control flow (compile both with the same flags)"
            ),
            Difference::Edge {
                function,
                edge,
                from,
                from_line,
                to,
                to_line,
                from_paths,
                edge_profile,
            } => {
                let line = |l: &Option<u32>| l.map_or(String::new(), |l| format!(":{l}"));
                writeln!(
                    text,
                    "{function}: edge e{edge} b{from}{} -> b{to}{}: from paths {from_paths}, edge profile {edge_profile}",
                    line(from_line),
                    line(to_line)
                )
            }
        };
    }
    if v.matched() {
        let _ = writeln!(
            text,
            "verified: {} edge counts of {} functions derived from the path profile equal the edge profile",
            v.compared, v.functions
        );
    }
    if !v.differences.is_empty() {
        let _ = writeln!(
            text,
            "MISMATCH: {} differences ({} edges compared)",
            v.differences.len(),
            v.compared
        );
    }
    if !v.unbalanced.is_empty() {
        let _ = writeln!(
            text,
            "UNBALANCED: the counts of {} function(s) do not balance",
            v.unbalanced.len()
        );
    }
    text
}
