//! Chord increments by event counting (Ball-Larus 1996 section 3.3; Ball 1994).
//!
//! Given `Val` on the DAG and a spanning tree of the DAG plus the EXIT→ENTRY edge
//! (always on the tree), give every node a potential `φ` with `φ(ENTRY) = 0` and
//! `φ(v) = φ(u) + Val(u→v)` along tree edges. Then `Inc(c) = Val(c) + φ(u) − φ(v)`
//! for a chord `c = u→v` makes every ENTRY→EXIT path's chord sum equal its `Val`
//! sum, because the potentials telescope and `φ(EXIT) = φ(ENTRY)`. Tree edges get
//! increment 0. Arithmetic wraps in 64 bits (increments may be negative).
//!
//! Nothing in the argument needs the values to be `Val`: any value per DAG edge
//! moves onto the chords the same way ([`ChordIncrements::with_tree_values`]).
//! Preferential path profiling uses that to put its second register's
//! increments on the chords of path mode's tree ([`crate::ppp`]).

use crate::dag::Dag;
use crate::ids::{DagEdgeId, NodeId};
use crate::spantree::{max_spanning_tree, TreeEdge};

/// A spanning tree of a DAG and the chord increments it implies.
#[derive(Clone, Debug)]
pub struct ChordIncrements {
    /// Per DAG edge: whether it is on the tree.
    pub in_tree: Vec<bool>,
    /// Per DAG edge: `Inc(e)`, 0 on tree edges.
    pub inc: Vec<i64>,
}

impl ChordIncrements {
    /// Computes the maximum spanning tree under `weight` (per DAG edge; `None`
    /// forces the edge onto the tree) and the increments.
    pub fn compute(dag: &Dag, weight: impl Fn(DagEdgeId) -> Option<f64>) -> ChordIncrements {
        let mut tree_edges: Vec<TreeEdge> = Vec::with_capacity(dag.edges().len() + 1);
        // The EXIT→ENTRY edge, forced first.
        tree_edges.push(TreeEdge {
            a: dag.exit().index(),
            b: dag.entry().index(),
            weight: 0.0,
            forced: true,
        });
        for id in dag.edge_ids() {
            let e = dag.edge(id);
            let w = weight(id);
            tree_edges.push(TreeEdge {
                a: e.from.index(),
                b: e.to.index(),
                weight: w.unwrap_or(0.0),
                forced: w.is_none(),
            });
        }
        let mut in_tree = max_spanning_tree(dag.num_nodes(), &tree_edges);
        assert!(in_tree[0], "EXIT->ENTRY is always on the tree");
        in_tree.remove(0);
        Self::with_tree(dag, in_tree)
    }

    /// The increments for a given tree (which must span ENTRY and EXIT together
    /// with the implicit EXIT→ENTRY edge).
    pub fn with_tree(dag: &Dag, in_tree: Vec<bool>) -> ChordIncrements {
        Self::with_tree_values(dag, in_tree, |id| dag.val(id))
    }

    /// Event counting for any edge values (taken modulo 2^64) instead of
    /// `Val`: on the chords of the given tree, increments whose sum along every
    /// ENTRY→EXIT path equals the sum of `value` along it.
    pub fn with_tree_values(
        dag: &Dag,
        in_tree: Vec<bool>,
        value: impl Fn(DagEdgeId) -> u64,
    ) -> ChordIncrements {
        let n = dag.num_nodes();
        let mut adj: Vec<Vec<DagEdgeId>> = vec![Vec::new(); n];
        for id in dag.edge_ids().filter(|id| in_tree[id.index()]) {
            let e = dag.edge(id);
            adj[e.from.index()].push(id);
            adj[e.to.index()].push(id);
        }
        let mut phi: Vec<Option<u64>> = vec![None; n];
        let mut stack: Vec<NodeId> = Vec::new();
        // ENTRY and EXIT are joined by the EXIT→ENTRY tree edge (Val 0).
        for start in [dag.entry(), dag.exit()] {
            if phi[start.index()].is_none() {
                phi[start.index()] = Some(0);
                stack.push(start);
            }
            while let Some(u) = stack.pop() {
                let pu = phi[u.index()].expect("visited");
                for &id in &adj[u.index()] {
                    let e = dag.edge(id);
                    let (other, phi_other) = if e.from == u {
                        (e.to, pu.wrapping_add(value(id)))
                    } else {
                        (e.from, pu.wrapping_sub(value(id)))
                    };
                    if phi[other.index()].is_none() {
                        phi[other.index()] = Some(phi_other);
                        stack.push(other);
                    }
                }
            }
        }
        let inc = dag
            .edge_ids()
            .map(|id| {
                if in_tree[id.index()] {
                    return 0;
                }
                let e = dag.edge(id);
                // Nodes off the tree are unreachable blocks; they have no edges.
                let pf = phi[e.from.index()].unwrap_or(0);
                let pt = phi[e.to.index()].unwrap_or(0);
                value(id).wrapping_add(pf).wrapping_sub(pt) as i64
            })
            .collect();
        ChordIncrements { in_tree, inc }
    }

    pub fn is_chord(&self, e: DagEdgeId) -> bool {
        !self.in_tree[e.index()]
    }
}
