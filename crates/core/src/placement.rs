//! Where path-profiling code goes on the DAG: Ball-Larus 1996 Figure 8 (section
//! 3.4), with one extension for edges that cannot carry code.
//!
//! Figure 8: the first loop walks forward from ENTRY over tree edges into blocks
//! with one in-edge; a chord met on the way *initialises* the register
//! (`r = Inc`), any other edge out of the walked region gets `r = 0`. The second
//! loop walks backward from EXIT over tree edges out of blocks with one out-edge; a
//! chord met on the way *counts* (`count[r + Inc]++`), any other edge into the
//! walked region gets `count[r]++`. Every remaining chord adds (`r += Inc`).
//!
//! Extension: [`DagEdgeKind::UnsplitEntry`] edges are *pinned*: always tree edges,
//! never given code. Their `r = 0` is done by the caller before the unsplittable
//! terminator; when the second loop would count on a pinned edge into `w`, the
//! count moves to the top of `w` for all of `w`'s in-edges instead (valid because
//! every path from `w` then runs chord-free to EXIT).

use crate::dag::{Dag, DagEdgeKind};
use crate::ids::{DagEdgeId, NodeId};
use crate::increments::ChordIncrements;

/// The Figure 8 decision for one DAG edge, applied in the order init, add, count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeCode {
    /// `r = Inc(e)` (for tree edges `r = 0`).
    pub init: bool,
    /// `r += Inc(e)` when not initialising; applied as part of `count` when set.
    pub add: bool,
    /// `count[r]++` after the update.
    pub count: bool,
}

impl EdgeCode {
    pub fn is_empty(&self) -> bool {
        !self.init && !self.add && !self.count
    }
}

/// The placement of one function.
#[derive(Clone, Debug)]
pub struct Placement {
    pub code: Vec<EdgeCode>,
    /// Nodes whose every entry counts the path (`count[r]++` at the block's top).
    pub count_at_top: Vec<bool>,
}

/// Runs Figure 8.
pub fn place(dag: &Dag, incs: &ChordIncrements) -> Placement {
    let pinned = |e: DagEdgeId| matches!(dag.edge(e).kind, DagEdgeKind::UnsplitEntry(_));
    let mut code = vec![EdgeCode::default(); dag.edges().len()];
    let mut count_at_top = vec![false; dag.num_nodes()];

    // Register initialisation.
    let mut work: Vec<NodeId> = vec![dag.entry()];
    while let Some(v) = work.pop() {
        for &e in dag.succs(v) {
            let w = dag.edge(e).to;
            if incs.is_chord(e) {
                code[e.index()].init = true;
            } else if dag.preds(w).len() == 1 {
                work.push(w);
            } else {
                code[e.index()].init = true;
            }
        }
    }

    // Memory increments.
    let mut work: Vec<NodeId> = vec![dag.exit()];
    while let Some(w) = work.pop() {
        let preds = dag.preds(w);
        let needs_count_on_pinned = preds
            .iter()
            .any(|&e| pinned(e) && !incs.is_chord(e) && dag.succs(dag.edge(e).from).len() != 1);
        if needs_count_on_pinned {
            count_at_top[w.index()] = true;
            continue;
        }
        for &e in preds {
            let v = dag.edge(e).from;
            if incs.is_chord(e) {
                code[e.index()].count = true;
            } else if dag.succs(v).len() == 1 {
                work.push(v);
            } else {
                code[e.index()].count = true;
            }
        }
    }

    // Register increments on the other chords.
    for e in dag.edge_ids() {
        if incs.is_chord(e) && !code[e.index()].init && incs.inc[e.index()] != 0 {
            code[e.index()].add = true;
        }
    }
    for e in dag.edge_ids().filter(|&e| pinned(e)) {
        assert!(!incs.is_chord(e), "pinned edges are tree edges");
        assert!(!code[e.index()].count && !code[e.index()].add);
    }
    Placement { code, count_at_top }
}
