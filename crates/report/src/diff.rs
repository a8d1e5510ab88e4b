//! `pathprof diff`'s model: the paths of two profiles of one build compared
//! (Ball & Larus 1996, section 6, Table 3, where A is the *train* input and B
//! the *ref* input).
//!
//! Terms, all about B as seen from A:
//! - *common* paths were executed in both profiles; *only A* / *only B* in one.
//! - *static coverage*: common paths / B's distinct paths.
//! - *dynamic coverage*: B's executions of common paths / all of B's path
//!   executions.
//! - *common instructions*: B's instructions executed along common paths / B's
//!   instructions executed along all paths, where one execution of a path
//!   executes the sum of its blocks' instruction counts
//!   ([`pathprof_core::predict::path_length`]). (Self-loop iterations, counted
//!   apart from paths, are in neither.)
//!
//! Paths are compared by id, which is sound because both profiles are read
//! against one map. Functions that fell back to block counting have no paths.

use crate::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::dag::Dag;
use pathprof_core::derive::FunctionCounts;
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFunction;
use pathprof_core::predict::path_length;
use pathprof_core::regen::Path;
use pathprof_core::Mode;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The comparison for one function or the whole program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// One function's paths in `a` and `b`, its counts in the two profiles.
    pub fn of_function(
        f: &MapFunction,
        dag: &Dag,
        a: &FunctionCounts,
        b: &FunctionCounts,
    ) -> PathDiff {
        let in_a: HashMap<u64, u64> = a
            .paths
            .iter()
            .filter(|p| p.count > 0)
            .map(|p| (p.id, p.count))
            .collect();
        let mut d = PathDiff::default();
        let mut in_b = std::collections::HashSet::new();
        for p in b.paths.iter().filter(|p| p.count > 0) {
            in_b.insert(p.id);
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
        d.a_only_executions = in_a
            .iter()
            .filter(|(id, _)| !in_b.contains(id))
            .map(|(_, &c)| c as u128)
            .sum();
        d
    }

    /// Adds another function's comparison.
    pub fn merge(&mut self, o: &PathDiff) {
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

    /// Whether either profile ran a path.
    pub fn ran(&self) -> bool {
        self.common + self.only_a + self.only_b > 0
    }

    /// B's executions not on common paths.
    pub fn b_uncovered_executions(&self) -> u128 {
        self.b_executions - self.b_common_executions
    }
}

/// One function's comparison.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionDiff {
    /// The function's index in the map.
    pub function: usize,
    pub diff: PathDiff,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diff {
    pub total: PathDiff,
    /// Every function either profile ran a path of, those that differ most
    /// first: most of B's executions off common paths, then most paths in one
    /// profile only, then most of A's executions off B's paths, then map order.
    pub functions: Vec<FunctionDiff>,
}

/// Instructions executed by one execution of `path` of `f`.
pub fn instructions(f: &MapFunction, dag: &Dag, path: &Path) -> u128 {
    path_length(f, dag, &path.edges).1 as u128
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
        let d = PathDiff::of_function(f, dag, &a.counts[i], &b.counts[i]);
        if d.ran() {
            out.total.merge(&d);
            out.functions.push(FunctionDiff {
                function: i,
                diff: d,
            });
        }
    }
    out.functions.sort_by(|x, y| {
        let (x, y, xi, yi) = (&x.diff, &y.diff, x.function, y.function);
        y.b_uncovered_executions()
            .cmp(&x.b_uncovered_executions())
            .then((y.only_a + y.only_b).cmp(&(x.only_a + x.only_b)))
            .then(y.a_only_executions.cmp(&x.a_only_executions))
            .then(xi.cmp(&yi))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::diamond_chain as with_runs;

    #[test]
    fn table_3_by_hand() {
        // Instructions per path: 0 1 5 = 9, 0 2 3 5 = 14, 0 2 4 5 = 15.
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let b = with_runs(&[(&[0, 2, 3, 5], 6), (&[0, 2, 4, 5], 2)]);
        let d = analyze(&a, &b).unwrap();
        let t = &d.total;
        assert_eq!((t.common, t.only_a, t.only_b), (1, 1, 1));
        assert_eq!((t.b_common_executions, t.b_executions), (6, 8));
        assert_eq!((t.b_common_instructions, t.b_instructions), (84, 84 + 30));
        assert_eq!(t.a_only_executions, 7);
        assert_eq!(t.b_uncovered_executions(), 2);
        assert_eq!(d.functions.len(), 1);
        assert_eq!(&d.functions[0].diff, t);
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("\"b_common_instructions\":84"), "{json}");
    }

    #[test]
    fn same_profile_covers_everything() {
        let a = with_runs(&[(&[0, 1, 5], 7), (&[0, 2, 3, 5], 2)]);
        let d = analyze(&a, &a).unwrap();
        assert_eq!(d.total.b_common_executions, d.total.b_executions);
        assert!(d.total.same_paths());
    }

    #[test]
    fn other_modes_and_builds_are_refused() {
        let a = with_runs(&[(&[0, 1, 5], 7)]);
        let mut b = with_runs(&[(&[0, 1, 5], 7)]);
        b.map.build_id ^= 1;
        assert!(analyze(&a, &b)
            .unwrap_err()
            .to_string()
            .contains("different builds"));
        b.map.mode = Mode::Block;
        assert!(analyze(&a, &b)
            .unwrap_err()
            .to_string()
            .contains("diff compares path profiles"));
    }
}
