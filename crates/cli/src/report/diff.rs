//! `pathprof diff`: the paths of two profiles of one build compared (Ball & Larus
//! 1996, section 6, Table 3, where A is the *train* input and B the *ref* input).
//!
//! Terms, all about B as seen from A:
//! - *common* paths were executed in both profiles; *only A* / *only B* in one.
//! - *static coverage*: common paths / B's distinct paths.
//! - *dynamic coverage*: B's executions of common paths / all of B's path
//!   executions.
//! - *common instructions*: B's instructions executed along common paths / B's
//!   instructions executed along all paths, where one execution of a path executes
//!   the sum of its blocks' instruction counts. (Self-loop iterations, counted
//!   apart from paths, are in neither.)
//!
//! Paths are compared by id, which is sound because both profiles are read
//! against one map. Functions that fell back to block counting have no paths.

use super::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::dag::Dag;
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFunction;
use pathprof_core::regen::Path;
use pathprof_core::Mode;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The comparison for one function or the whole program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathDiff {
    pub common: usize,
    pub only_a: usize,
    pub only_b: usize,
    /// Executions in A of paths B never ran.
    pub a_only_executions: u128,
    /// All of B's path executions, and those on common paths.
    pub b_executions: u128,
    pub b_common_executions: u128,
    /// B's instructions along all paths, and along common paths.
    pub b_instructions: u128,
    pub b_common_instructions: u128,
}

impl PathDiff {
    fn merge(&mut self, o: &PathDiff) {
        self.common += o.common;
        self.only_a += o.only_a;
        self.only_b += o.only_b;
        self.a_only_executions += o.a_only_executions;
        self.b_executions += o.b_executions;
        self.b_common_executions += o.b_common_executions;
        self.b_instructions += o.b_instructions;
        self.b_common_instructions += o.b_common_instructions;
    }

    /// Whether both profiles ran exactly the same paths.
    pub fn same_paths(&self) -> bool {
        self.only_a == 0 && self.only_b == 0
    }

    /// B's executions not on common paths.
    pub fn b_uncovered_executions(&self) -> u128 {
        self.b_executions - self.b_common_executions
    }
}

/// The whole comparison.
#[derive(Clone, Debug, Default)]
pub struct Diff {
    pub total: PathDiff,
    /// `(function index, diff)` for every function either profile ran a path of,
    /// those that differ most first.
    pub functions: Vec<(usize, PathDiff)>,
}

fn instructions(f: &MapFunction, dag: &Dag, path: &Path) -> u128 {
    path.blocks(dag)
        .iter()
        .map(|b| f.blocks[b.index()].instructions as u128)
        .sum()
}

/// Compares the paths of `a` and `b`, two profiles of one build.
pub fn analyze(a: &Loaded, b: &Loaded) -> Result<Diff> {
    for l in [a, b] {
        if l.map.mode != Mode::Path {
            bail!(
                "diff compares path profiles, but {} was built in {} mode; rebuild the program with `pathprof cc --mode=path` (the default) and run it on both inputs",
                l.map_path.display(),
                l.map.mode.name()
            );
        }
    }
    if a.map.build_id != b.map.build_id || a.counts.len() != b.counts.len() {
        bail!(
            "the two profiles are of different builds ({} and {}); diff compares two runs of one build",
            a.map_path.display(),
            b.map_path.display()
        );
    }
    let mut out = Diff::default();
    for (i, f) in b.map.functions.iter().enumerate() {
        let Layout::Path { dag, .. } = &f.layout else {
            continue;
        };
        let (ca, cb) = (&a.counts[i], &b.counts[i]);
        let in_a: HashMap<u64, u64> = ca
            .paths
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| (p.id, p.count))
            .collect();
        let mut d = PathDiff::default();
        let mut in_b = 0usize;
        for p in cb.paths.iter().filter(|p| p.count > 0) {
            in_b += 1;
            let n = p.count as u128;
            let instrs = n * instructions(f, dag, &p.path);
            d.b_executions += n;
            d.b_instructions += instrs;
            if in_a.contains_key(&p.id) {
                d.common += 1;
                d.b_common_executions += n;
                d.b_common_instructions += instrs;
            } else {
                d.only_b += 1;
            }
        }
        d.only_a = in_a.len() - d.common;
        let b_ids: std::collections::HashSet<u64> = cb
            .paths
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| p.id)
            .collect();
        d.a_only_executions = in_a
            .iter()
            .filter(|(id, _)| !b_ids.contains(id))
            .map(|(_, &c)| c as u128)
            .sum();
        debug_assert_eq!(in_b, d.common + d.only_b);
        if in_b + in_a.len() > 0 {
            out.total.merge(&d);
            out.functions.push((i, d));
        }
    }
    out.functions.sort_by(|x, y| {
        y.1.b_uncovered_executions()
            .cmp(&x.1.b_uncovered_executions())
            .then((y.1.only_a + y.1.only_b).cmp(&(x.1.only_a + x.1.only_b)))
            .then(y.1.a_only_executions.cmp(&x.1.a_only_executions))
            .then(x.0.cmp(&y.0))
    });
    Ok(out)
}

fn percent(a: u128, b: u128) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

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
        "\n{:>8} {:>8} {:>8} {:>8} {:>8} {:>16} {:>8}  function",
        "common", "only A", "only B", "static", "dynamic", "common instrs", "dynamic"
    );
    let differing: Vec<&(usize, PathDiff)> = d
        .functions
        .iter()
        .filter(|(_, f)| !f.same_paths())
        .collect();
    for (i, f) in differing.iter().take(TOP_FUNCTIONS) {
        let mf = &b.map.functions[*i];
        row(&mut out, f, mf.display_name.as_deref().unwrap_or(&mf.name));
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
    use crate::report::predict::tests::{loaded, path_id_of};
    use pathprof_core::derive::derive;

    const EDGES: [(u32, u32); 7] = [(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)];

    /// The diamond chain of the predict tests with other counts on the same build.
    fn with_runs(runs: &[(&[u32], u64)]) -> Loaded {
        let mut l = loaded(6, &EDGES, &[(&[0, 1, 5], 1)], &[]);
        let f = &l.map.functions[0];
        let Layout::Path { dag, .. } = &f.layout else {
            unreachable!()
        };
        let paths: Vec<(u64, u64)> = runs.iter().map(|(b, c)| (path_id_of(dag, b), *c)).collect();
        l.counts[0] = derive(&f.cfg, &f.layout, &[], &paths).unwrap();
        l
    }

    #[test]
    fn table_3_by_hand() {
        // Instructions per path: 0 1 5 = 9, 0 2 3 5 = 14, 0 2 4 5 = 15.
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let b = with_runs(&[(&[0, 2, 3, 5], 6), (&[0, 2, 4, 5], 2)]);
        let d = analyze(&a, &b).unwrap().total;
        assert_eq!((d.common, d.only_a, d.only_b), (1, 1, 1));
        assert_eq!((d.b_common_executions, d.b_executions), (6, 8));
        assert_eq!((d.b_common_instructions, d.b_instructions), (84, 84 + 30));
        assert_eq!(d.a_only_executions, 7);
        let text = report(&a, &b).unwrap();
        assert!(
            text.contains(
                "       1        1        1    50.0%    75.0%               84    73.7%  f"
            ),
            "{text}"
        );
        assert!(text.contains("73.7%  total"), "{text}");
    }

    #[test]
    fn same_profile_covers_everything() {
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let d = analyze(&a, &a).unwrap();
        assert_eq!(d.total.b_common_executions, d.total.b_executions);
        let text = report(&a, &a).unwrap();
        assert!(
            text.contains("(1 functions ran the same paths in both)"),
            "{text}"
        );
        assert!(text.contains("100.0%"), "{text}");
    }

    #[test]
    fn other_modes_and_builds_are_refused() {
        let a = with_runs(&[(&[0, 1, 5], 7)]);
        let mut b = with_runs(&[(&[0, 1, 5], 7)]);
        b.map.build_id ^= 1;
        assert!(report(&a, &b)
            .unwrap_err()
            .to_string()
            .contains("different builds"));
        b.map.mode = Mode::Block;
        assert!(report(&a, &b)
            .unwrap_err()
            .to_string()
            .contains("diff compares path profiles"));
    }
}
