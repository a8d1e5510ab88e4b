//! Paths predicted from an edge profile versus measured paths, for one
//! function (Ball & Larus 1996, section 6: Table 2's "% Correct" and "Edge
//! Profile Paths" columns; the paper's \[Cha88\] heuristic). Owns the DAG edge
//! counts an edge profile implies ([`dag_edge_counts`]), the prediction from a
//! path's start ([`predict_path`]), the size of a path in blocks and
//! instructions ([`path_length`]), and one function's comparison
//! ([`function_stats`] → [`Stats`]). Summing over a program is the report
//! crate's (`pathprof_report::predict`).
//!
//! Terms:
//! - The *edge profile* is the one derived from the path profile itself (every
//!   CFG edge's count, as `pathprof verify` checks against a real edge
//!   profile), so a single path-mode run answers the question.
//! - A measured path *starts* where its first DAG edge says: function entry,
//!   after a backedge or truncation cut, or after an unsplittable edge.
//! - The *prediction* from a start follows, at each block, the DAG out-edge
//!   whose CFG edge ran most often, until the path would end (return, a
//!   backedge or cut, before an unsplittable terminator). Ties go to the later
//!   successor slot: for a conditional branch that is the `false` successor,
//!   the nearest LLVM analogue of the paper's "not taken" edge. Self loops are
//!   not part of acyclic paths (section 4.1) and are never followed.
//! - A measured path is *predicted entirely correctly* when the prediction
//!   from its start is exactly that path. For a mispredicted path the
//!   prediction's *length up to the first misprediction* counts the blocks
//!   (and their instructions) the two share, up to and including the block
//!   whose out-edge was mispredicted.
//! - Lengths are weighted by execution count, as in the paper.

use crate::dag::{Dag, DagEdgeKind};
use crate::derive::FunctionCounts;
use crate::ids::{DagEdgeId, NodeId};
use crate::map::MapFunction;
use serde::{Deserialize, Serialize};

/// Execution-weighted lengths of a set of paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lengths {
    /// Executions (the weight).
    pub executions: u128,
    /// Σ executions × blocks.
    pub blocks: u128,
    /// Σ executions × instructions.
    pub instructions: u128,
    /// The longest one, in blocks and in instructions.
    pub longest_blocks: u64,
    pub longest_instructions: u64,
}

impl Lengths {
    /// Adds a path of `blocks` blocks and `instructions` instructions run
    /// `count` times.
    pub fn add(&mut self, count: u64, blocks: u64, instructions: u64) {
        let c = count as u128;
        self.executions += c;
        self.blocks += c * blocks as u128;
        self.instructions += c * instructions as u128;
        self.longest_blocks = self.longest_blocks.max(blocks);
        self.longest_instructions = self.longest_instructions.max(instructions);
    }

    /// Adds another set of paths.
    pub fn merge(&mut self, o: &Lengths) {
        self.executions += o.executions;
        self.blocks += o.blocks;
        self.instructions += o.instructions;
        self.longest_blocks = self.longest_blocks.max(o.longest_blocks);
        self.longest_instructions = self.longest_instructions.max(o.longest_instructions);
    }

    /// Blocks per execution (0 without executions).
    pub fn avg_blocks(&self) -> f64 {
        ratio(self.blocks, self.executions)
    }

    /// Instructions per execution (0 without executions).
    pub fn avg_instructions(&self) -> f64 {
        ratio(self.instructions, self.executions)
    }
}

fn ratio(a: u128, b: u128) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The comparison for one function, or (merged) for many.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Distinct executed paths.
    pub paths: usize,
    /// Of them, predicted entirely correctly.
    pub correct_paths: usize,
    /// Executions of the correctly predicted paths.
    pub correct_executions: u128,
    /// Every executed path, measured.
    pub measured: Lengths,
    /// Every executed path as the edge profile predicts it: in full when correct,
    /// up to the first misprediction otherwise (Table 2's edge-profile columns).
    pub predicted: Lengths,
    /// The mispredicted paths, measured...
    pub mispredicted_measured: Lengths,
    /// ...and predicted up to their first misprediction.
    pub mispredicted_predicted: Lengths,
    /// The branches the measured paths take, executions of a DAG node with
    /// more than one out-edge; see [`Decisions`].
    #[serde(default)]
    pub decisions: Decisions,
}

/// How well the branches along the measured paths are told from the edge
/// profile and from the path so far. `edge_mispredicted`: decisions that go
/// another way than their node's most frequent out-edge (a static
/// prediction from edge weights, what edge-profile PGO tells the
/// optimiser). `path_mispredicted`: decisions that go another way than the
/// most frequent out-edge *of paths that came the same way from the path's
/// start* (what duplicating every block along every path prefix, a
/// superblock per prefix, could tell it at best). The difference is all a
/// path-guided transformation could add to edge weights' predictions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decisions {
    pub executed: u128,
    pub edge_mispredicted: u128,
    pub path_mispredicted: u128,
}

impl Decisions {
    fn merge(&mut self, o: &Decisions) {
        self.executed += o.executed;
        self.edge_mispredicted += o.edge_mispredicted;
        self.path_mispredicted += o.path_mispredicted;
    }
}

impl Stats {
    /// Adds another function's comparison.
    pub fn merge(&mut self, o: &Stats) {
        self.paths += o.paths;
        self.correct_paths += o.correct_paths;
        self.correct_executions += o.correct_executions;
        self.measured.merge(&o.measured);
        self.predicted.merge(&o.predicted);
        self.mispredicted_measured.merge(&o.mispredicted_measured);
        self.mispredicted_predicted.merge(&o.mispredicted_predicted);
        self.decisions.merge(&o.decisions);
    }
}

/// How often each DAG edge ran according to the edge profile: a CFG edge's
/// count for the edges that stand for one; the calls for ENTRY→entry; for a path
/// ending inside a call that never returned (early-exit builds, where the edge
/// profile counts such exits too), how many did; for a block's return or its
/// end before an unsplittable terminator, the block's count less those.
/// `edges` are the CFG edge counts.
pub fn dag_edge_counts(dag: &Dag, counts: &FunctionCounts, edges: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; dag.edges().len()];
    let mut call_exits = vec![0u64; dag.num_blocks()];
    for p in &counts.paths {
        let last = *p.path.edges.last().expect("paths are non-empty");
        if let DagEdgeKind::CallExit(b, _) = dag.edge(last).kind {
            out[last.index()] = out[last.index()].saturating_add(p.count);
            call_exits[b.index()] = call_exits[b.index()].saturating_add(p.count);
        }
    }
    for e in dag.edge_ids() {
        out[e.index()] = match dag.edge(e).kind {
            DagEdgeKind::Cfg(ce) | DagEdgeKind::BackExit(ce) | DagEdgeKind::BackEntry(ce) => {
                edges[ce.index()]
            }
            DagEdgeKind::Exit(b) | DagEdgeKind::UnsplitExit(b) => {
                counts.blocks[b.index()].saturating_sub(call_exits[b.index()])
            }
            DagEdgeKind::UnsplitEntry(b) => counts.blocks[b.index()],
            DagEdgeKind::Entry => counts.entry,
            DagEdgeKind::CallExit(..) => out[e.index()],
        };
    }
    out
}

/// Breaks ties between equally frequent out-edges: the later successor slot
/// wins; a block's one way out beats nothing; leaving inside a call loses.
fn tie_break(f: &MapFunction, dag: &Dag, e: DagEdgeId) -> u32 {
    match dag.edge(e).kind {
        DagEdgeKind::Cfg(ce) | DagEdgeKind::BackExit(ce) | DagEdgeKind::BackEntry(ce) => {
            f.cfg.edge(ce).slot.saturating_add(1)
        }
        DagEdgeKind::CallExit(..) => 0,
        _ => u32::MAX,
    }
}

/// The path the edge profile predicts after the DAG edge `first` (an edge out of
/// ENTRY): `first`, then the most frequent out-edge of each node until EXIT.
/// `counts` are [`dag_edge_counts`].
pub fn predict_path(
    f: &MapFunction,
    dag: &Dag,
    counts: &[u64],
    first: DagEdgeId,
) -> Vec<DagEdgeId> {
    let mut out = vec![first];
    let mut v: NodeId = dag.edge(first).to;
    while v != dag.exit() {
        let next = dag
            .succs(v)
            .iter()
            .copied()
            .max_by_key(|&e| (counts[e.index()], tie_break(f, dag, e)))
            .expect("every DAG node but EXIT has an out-edge");
        out.push(next);
        v = dag.edge(next).to;
    }
    out
}

/// The blocks a path (or a prefix of one) given by its DAG `edges` runs
/// through, and their instructions: one execution's length.
pub fn path_length(f: &MapFunction, dag: &Dag, edges: &[DagEdgeId]) -> (u64, u64) {
    let mut blocks = 0;
    let mut instructions = 0;
    for &e in edges {
        if let Some(b) = dag.block(dag.edge(e).to) {
            blocks += 1;
            instructions += f.blocks[b.index()].instructions as u64;
        }
    }
    (blocks, instructions)
}

/// Compares one function's measured paths with their predictions.
pub fn function_stats(f: &MapFunction, dag: &Dag, counts: &FunctionCounts) -> Stats {
    let mut s = Stats::default();
    let zeros;
    let edges: &[u64] = match &counts.edges {
        Some(e) => e,
        None => {
            zeros = vec![0; f.cfg.edges().len()];
            &zeros
        }
    };
    let dag_counts = dag_edge_counts(dag, counts, edges);
    for p in counts.paths.iter().filter(|p| p.count > 0) {
        s.paths += 1;
        let measured = &p.path.edges;
        let (mb, mi) = path_length(f, dag, measured);
        s.measured.add(p.count, mb, mi);
        let predicted = predict_path(f, dag, &dag_counts, measured[0]);
        if &predicted == measured {
            s.correct_paths += 1;
            s.correct_executions += p.count as u128;
            s.predicted.add(p.count, mb, mi);
        } else {
            let agree = measured
                .iter()
                .zip(&predicted)
                .take_while(|(a, b)| a == b)
                .count();
            let (pb, pi) = path_length(f, dag, &measured[..agree]);
            s.predicted.add(p.count, pb, pi);
            s.mispredicted_measured.add(p.count, mb, mi);
            s.mispredicted_predicted.add(p.count, pb, pi);
        }
    }
    s.decisions = decisions(f, dag, counts, &dag_counts);
    s
}

/// The branch decisions of `counts`' measured paths, and how many of them
/// the edge profile (`dag_counts`) and the path so far mispredict
/// ([`Decisions`]).
fn decisions(f: &MapFunction, dag: &Dag, counts: &FunctionCounts, dag_counts: &[u64]) -> Decisions {
    use std::collections::HashMap;
    let mut d = Decisions::default();
    // Per path prefix ending at a decision: how often each out-edge follows.
    let mut after_prefix: HashMap<&[DagEdgeId], HashMap<DagEdgeId, u128>> = HashMap::new();
    for p in counts.paths.iter().filter(|p| p.count > 0) {
        let edges = &p.path.edges;
        for i in 1..edges.len() {
            let at = dag.edge(edges[i]).from;
            if dag.succs(at).len() < 2 {
                continue;
            }
            let n = u128::from(p.count);
            d.executed += n;
            let likely = dag
                .succs(at)
                .iter()
                .copied()
                .max_by_key(|&e| (dag_counts[e.index()], tie_break(f, dag, e)))
                .expect("a decision has out-edges");
            if likely != edges[i] {
                d.edge_mispredicted += n;
            }
            *after_prefix
                .entry(&edges[..i])
                .or_default()
                .entry(edges[i])
                .or_default() += n;
        }
    }
    for followers in after_prefix.values() {
        let all: u128 = followers.values().sum();
        let most = followers.values().copied().max().unwrap_or(0);
        d.path_mispredicted += all - most;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dag::DagOptions;
    use crate::derive::derive;
    use crate::layout::Layout;
    use crate::map::BlockInfo;
    use crate::regen::regenerate;
    use crate::{BlockId, Cfg};

    /// `cfg` as a map function whose block `b` has `b + 1` instructions, its
    /// DAG, and the counts of `runs`: (blocks, whether the path ends inside a
    /// call, count), each path from the function entry.
    fn function(
        cfg: Cfg,
        options: DagOptions,
        runs: &[(&[u32], bool, u64)],
    ) -> (MapFunction, Dag, FunctionCounts) {
        let dag = Dag::build(&cfg, options).unwrap();
        let id = |blocks: &[u32], in_call: bool| {
            (0..dag.num_paths())
                .find(|&id| {
                    let p = regenerate(&dag, id).unwrap();
                    let last = dag.edge(*p.edges.last().unwrap()).kind;
                    p.blocks(&dag) == blocks.iter().map(|&b| BlockId(b)).collect::<Vec<_>>()
                        && matches!(last, DagEdgeKind::CallExit(..)) == in_call
                })
                .unwrap()
        };
        let paths: Vec<(u64, u64)> = runs.iter().map(|&(b, c, n)| (id(b, c), n)).collect();
        let layout = Layout::Path {
            dag: dag.clone(),
            self_loops: vec![],
            resumes: vec![],
            call_exits: vec![],
            ppp_owners: vec![],
            interesting: vec![],
            hashed: false,
        };
        let counts = derive(&cfg, &layout, &[], &paths).unwrap();
        let blocks = (0..cfg.num_blocks() as u32)
            .map(|b| BlockInfo {
                line: None,
                instructions: b + 1,
                lines: vec![],
            })
            .collect();
        let f = MapFunction {
            name: "f".into(),
            display_name: None,
            file: None,
            line: None,
            hash: cfg.shape_hash(),
            cfg,
            blocks,
            layout,
            entry_calls: Vec::new(),
            entries_by_callers: false,
        };
        (f, dag, counts)
    }

    #[test]
    fn most_frequent_edge_predicts_the_hot_chain() {
        // b0: b1 3 < b2 9 -> b2; b2: b3 5 > b4 4 -> b3. Predicted: 0 2 3 5.
        let cfg = Cfg::from_edge_list(6, &[(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)])
            .unwrap();
        let (f, dag, c) = function(
            cfg,
            DagOptions::default(),
            &[
                (&[0, 1, 5], false, 3),    // 1 + 2 + 6 = 9 instructions
                (&[0, 2, 3, 5], false, 5), // 1 + 3 + 4 + 6 = 14
                (&[0, 2, 4, 5], false, 4), // 1 + 3 + 5 + 6 = 15
            ],
        );
        let s = function_stats(&f, &dag, &c);
        assert_eq!(s.paths, 3);
        assert_eq!(s.correct_paths, 1);
        assert_eq!(s.correct_executions, 5);
        assert_eq!(s.measured.executions, 12);
        // Measured: 3*3 + 5*4 + 4*4 blocks, 3*9 + 5*14 + 4*15 instructions.
        assert_eq!((s.measured.blocks, s.measured.instructions), (45, 157));
        // 0 1 5 mispredicted at b0: prefix b0 (1 block, 1 instr);
        // 0 2 4 5 mispredicted at b2: prefix b0 b2 (2 blocks, 4 instrs).
        assert_eq!(s.mispredicted_predicted.executions, 7);
        assert_eq!(s.mispredicted_predicted.blocks, 3 + 4 * 2);
        assert_eq!(s.mispredicted_predicted.instructions, 3 + 4 * 4);
        assert_eq!(s.mispredicted_measured.blocks, 3 * 3 + 4 * 4);
        assert_eq!(s.mispredicted_measured.instructions, 3 * 9 + 4 * 15);
        assert_eq!(s.predicted.blocks, 3 + 8 + 5 * 4);
        assert_eq!(s.predicted.longest_blocks, 4);
        assert_eq!(s.measured.longest_instructions, 15);
        assert_eq!(path_length(&f, &dag, &c.paths[0].path.edges).0, 3);
    }

    #[test]
    fn the_path_so_far_tells_correlated_branches_the_edge_profile_cannot() {
        // Two diamonds, b0 -> {b1, b2} -> b3 -> {b4, b5} -> b6, whose second
        // branch goes the way the first went: every edge ran 10 times.
        let cfg = Cfg::two_diamonds();
        let (f, dag, c) = function(
            cfg,
            DagOptions::default(),
            &[(&[0, 1, 3, 4, 6], false, 10), (&[0, 2, 3, 5, 6], false, 10)],
        );
        let d = function_stats(&f, &dag, &c).decisions;
        // Two decisions per execution. The edge profile predicts b2 and b5
        // (ties: the later slot), wrong for 10 at b0 and 10 at b3; the path
        // so far is as blind at b0 and never wrong at b3.
        assert_eq!(
            d,
            Decisions {
                executed: 40,
                edge_mispredicted: 20,
                path_mispredicted: 10
            }
        );
    }

    #[test]
    fn ties_follow_the_later_slot() {
        // b0 -> b1 and b0 -> b2 both twice: the later slot (b2) is predicted.
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        let (f, dag, c) = function(
            cfg,
            DagOptions::default(),
            &[(&[0, 1, 3], false, 2), (&[0, 2, 3], false, 2)],
        );
        assert_eq!(function_stats(&f, &dag, &c).correct_paths, 1);
        let counts = dag_edge_counts(&dag, &c, c.edges.as_ref().unwrap());
        let predicted = predict_path(&f, &dag, &counts, dag.succs(dag.entry())[0]);
        let blocks: Vec<u32> = predicted
            .iter()
            .filter_map(|&e| dag.block(dag.edge(e).to))
            .map(|b| b.0)
            .collect();
        assert_eq!(blocks, [0, 2, 3]);
    }

    #[test]
    fn paths_ending_inside_calls_compete_with_the_other_edges() {
        // b0 calls something that may not return, then goes to b1 or b2.
        let mut cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        cfg.set_calls(vec![1, 0, 0, 0]).unwrap();
        // 5 exits inside the call, 3 through b1, 2 through b2.
        let (f, dag, c) = function(
            cfg,
            DagOptions {
                early_exit: true,
                ..Default::default()
            },
            &[
                (&[0], true, 5),
                (&[0, 1, 3], false, 3),
                (&[0, 2, 3], false, 2),
            ],
        );
        let s = function_stats(&f, &dag, &c);
        // Every path starts at b0, where the call exit (5) beats b1 (3): only the
        // path ending in the call is predicted.
        assert_eq!((s.paths, s.correct_paths, s.correct_executions), (3, 1, 5));
        assert_eq!(s.mispredicted_predicted.blocks, 3 + 2);
    }
}
