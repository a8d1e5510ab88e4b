//! `pathprof diff`: the paths of two profiles of one build compared (Ball &
//! Larus 1996, section 6, Table 3, where A is the *train* input and B the
//! *ref* input), as text. The comparison and its terms are
//! `pathprof_report::diff`.

use super::load::Loaded;
use super::percent;
use anyhow::Result;
use pathprof_report::diff::{analyze, FunctionDiff, PathDiff};
use std::fmt::Write as _;

/// How many differing functions the report lists.
const TOP_FUNCTIONS: usize = 20;

fn row(out: &mut String, d: &PathDiff, name: &str) {
    let _ = writeln!(
        out,
        "{:>8} {:>8} {:>8} {:>8} {:>8} {:>16} {:>8}  {}",
        d.common,
        d.only_a,
        d.only_b,
        percent(d.common as u128, (d.common + d.only_b) as u128),
        percent(d.b_common_executions, d.b_executions),
        d.b_common_instructions,
        percent(d.b_common_instructions, d.b_instructions),
        name
    );
}

/// The report: A is the first profile (train), B the second (ref).
pub fn report(a: &Loaded, b: &Loaded) -> Result<String> {
    let d = analyze(a, b)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Paths of profile A versus profile B (Ball & Larus 1996, Table 3: A = train, B = ref).\n\
         static = B's distinct paths that A ran too; dynamic = B's executions on those paths;\n\
         common instructions = B's instructions executed along them."
    );
    let _ = writeln!(
        out,
        "\nfunctions whose paths differ, most of B's executions off common paths first:"
    );
    let _ = writeln!(
        out,
        "{:>8} {:>8} {:>8} {:>8} {:>8} {:>16} {:>8}  function",
        "common", "only A", "only B", "static", "dynamic", "common instrs", "dynamic"
    );
    let differing: Vec<&FunctionDiff> = d
        .functions
        .iter()
        .filter(|f| !f.diff.same_paths())
        .collect();
    for f in differing.iter().take(TOP_FUNCTIONS) {
        row(&mut out, &f.diff, b.name(f.function));
    }
    if differing.len() > TOP_FUNCTIONS {
        let _ = writeln!(
            out,
            "{:>8} ({} more functions differ)",
            "...",
            differing.len() - TOP_FUNCTIONS
        );
    }
    let same = d.functions.len() - differing.len();
    if same > 0 {
        let _ = writeln!(
            out,
            "{:>8} ({} functions ran the same paths in both)",
            "", same
        );
    }
    row(&mut out, &d.total, "total");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures::diamond_chain as with_runs;

    #[test]
    fn table_3_by_hand() {
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let b = with_runs(&[(&[0, 2, 3, 5], 6), (&[0, 2, 4, 5], 2)]);
        let text = report(&a, &b).unwrap();
        assert!(
            text.contains(
                "       1        1        1    50.0%    75.0%               84    73.7%  f"
            ),
            "{text}"
        );
        assert!(text.contains("73.7%  total"), "{text}");
        assert!(text.contains("most of B's executions off common paths first"));
    }

    #[test]
    fn same_profile_covers_everything() {
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let text = report(&a, &a).unwrap();
        assert!(
            text.contains("(1 functions ran the same paths in both)"),
            "{text}"
        );
        assert!(text.contains("100.0%"), "{text}");
    }
}
