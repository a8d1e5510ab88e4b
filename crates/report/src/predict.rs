//! `pathprof predict`'s model: paths predicted from the edge profile versus
//! the measured path profile over a whole program (Ball & Larus 1996, section
//! 6, Table 2). Each function's comparison is
//! [`pathprof_core::predict::function_stats`] (its module says what
//! "predicted", "correct" and "length up to the first misprediction" mean);
//! here they are summed, execution-weighted as in the paper, and the functions
//! ranked. Functions that fell back to block counting (too many paths) have no
//! paths and are only counted.

use crate::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::layout::Layout;
use pathprof_core::predict::function_stats;
pub use pathprof_core::predict::{Lengths, Stats};
use pathprof_core::Mode;
use serde::{Deserialize, Serialize};

/// One function's comparison.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionPrediction {
    /// The function's index in the map.
    pub function: usize,
    pub stats: Stats,
}

/// The whole comparison.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    pub total: Stats,
    /// Every function with executed paths, most executions first (then in map
    /// order).
    pub functions: Vec<FunctionPrediction>,
    /// Functions of the map counted by blocks only (no paths to compare).
    pub block_only: usize,
}

impl Prediction {
    /// The most distinct paths any one function ran.
    pub fn max_paths(&self) -> usize {
        self.functions
            .iter()
            .map(|f| f.stats.paths)
            .max()
            .unwrap_or(0)
    }
}

/// Runs the comparison over every function of a path profile.
pub fn analyze(loaded: &Loaded) -> Result<Prediction> {
    let map = &loaded.map;
    if map.mode != Mode::Path {
        bail!(
            "predict needs a path profile, but {} was built in {} mode; rebuild the program with `pathprof cc --mode=path` (the default) and run it again",
            loaded.map_path.display(),
            map.mode.name()
        );
    }
    let mut out = Prediction::default();
    for (i, (f, c)) in map.functions.iter().zip(&loaded.counts).enumerate() {
        let Layout::Path { dag, .. } = &f.layout else {
            out.block_only += 1;
            continue;
        };
        let s = function_stats(f, dag, c);
        if s.paths > 0 {
            out.total.merge(&s);
            out.functions.push(FunctionPrediction {
                function: i,
                stats: s,
            });
        }
    }
    out.functions.sort_by(|a, b| {
        b.stats
            .measured
            .executions
            .cmp(&a.stats.measured.executions)
            .then(a.function.cmp(&b.function))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, loaded};

    /// The diamond chain's runs: instructions 9, 14 and 15 per path.
    fn diamond_chain() -> Loaded {
        fixtures::diamond_chain(&[(&[0, 1, 5], 3), (&[0, 2, 3, 5], 5), (&[0, 2, 4, 5], 4)])
    }

    #[test]
    fn totals_are_the_functions_stats() {
        // b0: b1 3 < b2 9 -> b2; b2: b3 5 > b4 4 -> b3. Predicted: 0 2 3 5.
        let l = diamond_chain();
        let p = analyze(&l).unwrap();
        let Layout::Path { dag, .. } = &l.map.functions[0].layout else {
            unreachable!()
        };
        let s = function_stats(&l.map.functions[0], dag, &l.counts[0]);
        assert_eq!(p.total, s);
        assert_eq!(
            p.functions,
            [FunctionPrediction {
                function: 0,
                stats: s
            }]
        );
        assert_eq!((p.total.paths, p.total.correct_paths), (3, 1));
        assert_eq!(p.total.correct_executions, 5);
        assert_eq!((p.max_paths(), p.block_only), (3, 0));
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains("\"correct_executions\":5"), "{json}");
    }

    #[test]
    fn loops_start_after_the_backedge() {
        // b0 -> b1 (head) -> b2 | b3 -> b4 (latch) -> b1 back, b4 -> b5 exit.
        // 10 iterations: 7 through b2, 3 through b3.
        let edges = [(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)];
        let l = loaded(
            6,
            &edges,
            &[
                (&[0, 1, 2, 4], 1), // first iteration, ends with the backedge
                (&[1, 2, 4], 5),    // after the backedge, back again
                (&[1, 3, 4], 3),
                (&[1, 2, 4, 5], 1), // last iteration leaves
            ],
            &[],
        );
        // b4: back 9 > exit 1; b1: b2 7 > b3 3. From entry: 0 1 2 4 back (right);
        // after the backedge: 1 2 4 back (right for 5 runs, wrong for 1 2 4 5 at b4
        // and 1 3 4 at b1).
        let s = analyze(&l).unwrap().total;
        assert_eq!((s.paths, s.correct_paths), (4, 2));
        assert_eq!(s.correct_executions, 6);
        assert_eq!(s.mispredicted_predicted.blocks, 3 + 3);
        assert_eq!(s.mispredicted_measured.blocks, 3 * 3 + 4);
    }

    #[test]
    fn block_counted_functions_are_left_out() {
        let mut l = diamond_chain();
        l.map.functions[0].layout = Layout::Block {
            slot_of_block: vec![Some(0); 6],
            calls_slot: None,
        };
        let p = analyze(&l).unwrap();
        assert_eq!((p.total.paths, p.functions.len(), p.block_only), (0, 0, 1));
    }

    #[test]
    fn other_modes_are_refused() {
        let mut l = diamond_chain();
        l.map.mode = Mode::Edge;
        let err = analyze(&l).unwrap_err().to_string();
        assert!(err.contains("predict needs a path profile"), "{err}");
    }
}
