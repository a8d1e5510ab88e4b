//! `pathprof predict`: paths predicted from an edge profile versus the measured
//! path profile (Ball & Larus 1996, section 6: Table 2's "% Correct" and "Edge
//! Profile Paths" columns).
//!
//! Terms:
//! - The *edge profile* is the one derived from the path profile itself (every CFG
//!   edge's count, as `pathprof verify` checks against a real edge profile), so a
//!   single path-mode run answers the question.
//! - A measured path *starts* where its first DAG edge says: function entry, after
//!   a backedge or truncation cut, or after an unsplittable edge.
//! - The *prediction* from a start follows, at each block, the DAG out-edge whose
//!   CFG edge ran most often, until the path would end (return, a backedge or cut,
//!   before an unsplittable terminator). Ties go to the later successor slot: for
//!   a conditional branch that is the `false` successor, the nearest LLVM analogue
//!   of the paper's "not taken" edge. Self loops are not part of acyclic paths
//!   (section 4.1) and are never followed.
//! - A measured path is *predicted entirely correctly* when the prediction from
//!   its start is exactly that path. For a mispredicted path the prediction's
//!   *length up to the first misprediction* counts the blocks (and their
//!   instructions) the two share, up to and including the block whose out-edge
//!   was mispredicted.
//! - Averages are weighted by execution count, as in the paper. Functions that
//!   fell back to block counting (too many paths) have no paths and are left out.

use super::load::Loaded;
use anyhow::{bail, Result};
use pathprof_core::dag::{Dag, DagEdgeKind};
use pathprof_core::derive::FunctionCounts;
use pathprof_core::ids::{DagEdgeId, NodeId};
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFunction;
use pathprof_core::Mode;
use std::fmt::Write as _;

/// Execution-weighted lengths of a set of paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    fn add(&mut self, count: u64, blocks: u64, instructions: u64) {
        let c = count as u128;
        self.executions += c;
        self.blocks += c * blocks as u128;
        self.instructions += c * instructions as u128;
        self.longest_blocks = self.longest_blocks.max(blocks);
        self.longest_instructions = self.longest_instructions.max(instructions);
    }

    fn merge(&mut self, o: &Lengths) {
        self.executions += o.executions;
        self.blocks += o.blocks;
        self.instructions += o.instructions;
        self.longest_blocks = self.longest_blocks.max(o.longest_blocks);
        self.longest_instructions = self.longest_instructions.max(o.longest_instructions);
    }

    pub fn avg_blocks(&self) -> f64 {
        ratio(self.blocks, self.executions)
    }

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

fn percent(a: u128, b: u128) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// The comparison for one function or the whole program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
}

impl Stats {
    fn merge(&mut self, o: &Stats) {
        self.paths += o.paths;
        self.correct_paths += o.correct_paths;
        self.correct_executions += o.correct_executions;
        self.measured.merge(&o.measured);
        self.predicted.merge(&o.predicted);
        self.mispredicted_measured.merge(&o.mispredicted_measured);
        self.mispredicted_predicted.merge(&o.mispredicted_predicted);
    }
}

/// The whole comparison.
#[derive(Clone, Debug, Default)]
pub struct Prediction {
    pub total: Stats,
    /// `(function index, stats)` for every function with executed paths.
    pub functions: Vec<(usize, Stats)>,
    /// Functions of the map counted by blocks only (no paths to compare).
    pub block_only: usize,
}

/// How often each DAG edge ran according to the edge profile: a CFG edge's
/// count for the edges that stand for one; the calls for ENTRY→entry; for a path
/// ending inside a call that never returned (early-exit builds, where the edge
/// profile counts such exits too), how many did; for a block's return or its
/// end before an unsplittable terminator, the block's count less those.
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

/// Blocks and instructions of the first `n` edges' target blocks.
fn length(f: &MapFunction, dag: &Dag, edges: &[DagEdgeId]) -> (u64, u64) {
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
        let (mb, mi) = length(f, dag, measured);
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
            let (pb, pi) = length(f, dag, &measured[..agree]);
            s.predicted.add(p.count, pb, pi);
            s.mispredicted_measured.add(p.count, mb, mi);
            s.mispredicted_predicted.add(p.count, pb, pi);
        }
    }
    s
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
            out.functions.push((i, s));
        }
    }
    out.functions.sort_by(|a, b| {
        b.1.measured
            .executions
            .cmp(&a.1.measured.executions)
            .then(a.0.cmp(&b.0))
    });
    Ok(out)
}

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
    let max_paths = p.functions.iter().map(|(_, s)| s.paths).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n{} executions of {} distinct paths in {} executed functions (paths per function: max {}, avg {:.1})",
        t.measured.executions,
        t.paths,
        p.functions.len(),
        max_paths,
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
    for (i, s) in p.functions.iter().take(TOP_FUNCTIONS) {
        let f = &loaded.map.functions[*i];
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
            f.display_name.as_deref().unwrap_or(&f.name)
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
pub(crate) mod tests {
    use super::*;
    use pathprof_core::derive::derive;
    use pathprof_core::layout::Layout;
    use pathprof_core::map::{BlockInfo, LineSpan, MapFile, MapFunction};
    use pathprof_core::regen::regenerate;
    use pathprof_core::{BlockId, Cfg};

    /// A one-function path-mode `Loaded` from an edge list; block `b` is on line
    /// `10 + b` of `t.c` with `b + 1` instructions; `runs` gives executed paths as
    /// block sequences with counts, plus self-loop counts.
    pub(crate) fn loaded(
        blocks: usize,
        edges: &[(u32, u32)],
        runs: &[(&[u32], u64)],
        self_loop_counts: &[u64],
    ) -> Loaded {
        let cfg = Cfg::from_edge_list(blocks, edges).unwrap();
        let dag = Dag::build(&cfg, Default::default()).unwrap();
        let self_loops: Vec<_> = cfg
            .edge_ids()
            .filter(|e| dag.classes()[e.index()] == pathprof_core::dag::EdgeClass::SelfLoop)
            .collect();
        let paths: Vec<(u64, u64)> = runs
            .iter()
            .map(|(want, count)| (path_id_of(&dag, want), *count))
            .collect();
        let layout = Layout::Path {
            dag,
            self_loops,
            resumes: vec![],
            call_exits: vec![],
        };
        let counts = derive(&cfg, &layout, self_loop_counts, &paths).unwrap();
        let infos = (0..blocks as u32)
            .map(|b| BlockInfo {
                line: Some(10 + b),
                instructions: b + 1,
                lines: vec![LineSpan {
                    file: 0,
                    line: 10 + b,
                    instructions: b + 1,
                }],
            })
            .collect();
        let f = MapFunction {
            name: "f".into(),
            display_name: None,
            file: Some(0),
            line: Some(9),
            hash: cfg.shape_hash(),
            cfg,
            blocks: infos,
            layout,
        };
        let functions = vec![f];
        let map = MapFile {
            mode: Mode::Path,
            build_id: MapFile::compute_build_id(Mode::Path, &[], &functions),
            files: vec!["t.c".into()],
            file_digests: vec![None],
            functions,
            atomic: false,
        };
        Loaded {
            map,
            map_path: "t.ppmap".into(),
            counts: vec![counts],
            facts: Default::default(),
        }
    }

    /// The id of the path whose blocks are `want`, starting at the function entry
    /// when `want[0]` is 0 and after a backedge otherwise.
    pub(crate) fn path_id_of(dag: &Dag, want: &[u32]) -> u64 {
        let want: Vec<BlockId> = want.iter().map(|&b| BlockId(b)).collect();
        (0..dag.num_paths())
            .find(|&id| {
                let p = regenerate(dag, id).unwrap();
                p.blocks(dag) == want
                    && (want[0] != BlockId(0)
                        || matches!(dag.edge(p.edges[0]).kind, DagEdgeKind::Entry))
            })
            .unwrap_or_else(|| panic!("no path {want:?}"))
    }

    /// The `classify` shape: b0 tests, b1/b2 arms, b2 tests again, b3/b4 arms, b5
    /// returns.
    ///
    /// ```text
    ///      b0
    ///     /  \
    ///   b1    b2
    ///    |   /  \
    ///    |  b3   b4
    ///     \ |   /
    ///       b5
    /// ```
    fn diamond_chain() -> Loaded {
        // Edge slots: b0: 0->b1, 1->b2; b2: 0->b3, 1->b4.
        let edges = [(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)];
        loaded(
            6,
            &edges,
            &[
                (&[0, 1, 5], 3),    // 1 + 2 + 6 = 9 instructions
                (&[0, 2, 3, 5], 5), // 1 + 3 + 4 + 6 = 14
                (&[0, 2, 4, 5], 4), // 1 + 3 + 5 + 6 = 15
            ],
            &[],
        )
    }

    #[test]
    fn most_frequent_edge_predicts_the_hot_chain() {
        // b0: b1 3 < b2 9 -> b2; b2: b3 5 > b4 4 -> b3. Predicted: 0 2 3 5.
        let s = analyze(&diamond_chain()).unwrap().total;
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
    }

    #[test]
    fn ties_follow_the_later_slot() {
        // b0 -> b1 and b0 -> b2 both twice: the later slot (b2) is predicted.
        let edges = [(0, 1), (0, 2), (1, 3), (2, 3)];
        let l = loaded(4, &edges, &[(&[0, 1, 3], 2), (&[0, 2, 3], 2)], &[]);
        let s = analyze(&l).unwrap().total;
        assert_eq!(s.correct_paths, 1);
        let Layout::Path { dag, .. } = &l.map.functions[0].layout else {
            unreachable!()
        };
        let c = &l.counts[0];
        let counts = dag_edge_counts(dag, c, c.edges.as_ref().unwrap());
        let predicted = predict_path(&l.map.functions[0], dag, &counts, dag.succs(dag.entry())[0]);
        let blocks: Vec<u32> = predicted
            .iter()
            .filter_map(|&e| dag.block(dag.edge(e).to))
            .map(|b| b.0)
            .collect();
        assert_eq!(blocks, [0, 2, 3]);
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
    fn paths_ending_inside_calls_compete_with_the_other_edges() {
        // b0 calls something that may not return, then goes to b1 or b2.
        let cfg = {
            let mut c = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
            c.set_calls(vec![1, 0, 0, 0]).unwrap();
            c
        };
        let dag = Dag::build(
            &cfg,
            pathprof_core::dag::DagOptions {
                early_exit: true,
                ..Default::default()
            },
        )
        .unwrap();
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
        // 5 exits inside the call, 3 through b1, 2 through b2.
        let paths = [
            (id(&[0], true), 5),
            (id(&[0, 1, 3], false), 3),
            (id(&[0, 2, 3], false), 2),
        ];
        let layout = Layout::Path {
            dag: dag.clone(),
            self_loops: vec![],
            resumes: vec![],
            call_exits: vec![],
        };
        let counts = derive(&cfg, &layout, &[], &paths).unwrap();
        let mut l = loaded(4, &[(0, 1), (0, 2), (1, 3), (2, 3)], &[], &[]);
        l.map.functions[0].cfg = cfg;
        l.map.functions[0].layout = layout;
        l.counts[0] = counts;
        let s = analyze(&l).unwrap().total;
        // Every path starts at b0, where the call exit (5) beats b1 (3): only the
        // path ending in the call is predicted.
        assert_eq!((s.paths, s.correct_paths, s.correct_executions), (3, 1, 5));
        assert_eq!(s.mispredicted_predicted.blocks, 3 + 2);
    }

    #[test]
    fn report_reads_like_table_2() {
        let text = report(&diamond_chain()).unwrap();
        assert!(text.contains("12 executions of 3 distinct paths in 1 executed functions"));
        assert!(text.contains(
            "predicted entirely correctly: 41.7% of executions (5 of 12), 33.3% of distinct paths (1 of 3)"
        ));
        assert!(text.contains("1.6 / 3.6"), "{text}");
    }

    #[test]
    fn other_modes_are_refused() {
        let mut l = diamond_chain();
        l.map.mode = Mode::Edge;
        let err = report(&l).unwrap_err().to_string();
        assert!(err.contains("predict needs a path profile"), "{err}");
    }
}
