//! `reduced_graph` and `get_original_edges` of Afraz et al. 2015, section
//! 3.2: a DAG with its diamonds and triangles (if-else and if statements whose
//! branches are straight-line code) each replaced by one *dummy* vertex, so
//! that P3's partition keeps all the paths through such a sequence of
//! conditionals in one task.
//!
//! Terms: a *diamond* is `{a, b, c, d}` with edges `a→b, a→c, b→d, c→d`; a
//! *triangle* is `{a, b, d}` with `a→b, a→d, b→d`; `a` is the *begin* vertex,
//! `d` the *end*. Only straight-line ones count: `a`'s out-edges are exactly
//! those two, `b` and `c` have no other in- or out-edges, and `d`'s in-edges
//! are exactly those two. So structures meet only where one's end is the
//! next one's begin (a *sequence* of conditionals, Figure 3's `v4, v7, v10`);
//! such a chain becomes one dummy vertex. A structure nested in a branch is
//! not straight-line, and its enclosing one stays (section 2.2: conditionals
//! "that do not have other conditionals nested within them").
//!
//! The reduced graph has a node per dummy vertex and per other DAG node, and
//! an edge per DAG edge that is not inside a dummy vertex (its `original`);
//! a dummy vertex keeps the DAG edges it *replaced*. Its in-edges all enter
//! the chain's first begin, its out-edges all leave the chain's last end, so
//! every DAG path maps to one reduced path and the reduced graph is acyclic.
//! `original(e)` of the paper is `e`'s original plus what its ends replaced.

use super::edge_set::EdgeSet;
use crate::dag::Dag;
use crate::ids::{id_type, DagEdgeId, NodeId};

id_type!(
    /// A node of a reduced graph.
    RNode,
    "r"
);
id_type!(
    /// An edge of a reduced graph.
    REdge,
    "q"
);

/// One edge of a reduced graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducedEdge {
    pub from: RNode,
    pub to: RNode,
    /// The DAG edge it stands for.
    pub original: DagEdgeId,
}

/// A DAG with its straight-line diamonds and triangles replaced by dummy
/// vertices (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducedGraph {
    /// Per DAG node: its reduced node.
    node_of: Vec<RNode>,
    /// Per reduced node: the DAG edges inside it (empty unless a dummy).
    replaced: Vec<Vec<DagEdgeId>>,
    edges: Vec<ReducedEdge>,
    /// Per DAG edge: the reduced edge standing for it (`None` inside a
    /// dummy vertex).
    reduced_of: Vec<Option<REdge>>,
    succs: Vec<Vec<REdge>>,
    topo: Vec<RNode>,
    exit: RNode,
}

/// The reduced graph of `dag`.
pub fn reduced_graph(dag: &Dag) -> ReducedGraph {
    let n = dag.num_nodes();
    let mut group: Vec<usize> = (0..n).collect();
    fn find(group: &mut [usize], mut x: usize) -> usize {
        while group[x] != x {
            group[x] = group[group[x]];
            x = group[x];
        }
        x
    }
    for members in structures(dag) {
        for pair in members.windows(2) {
            let (a, b) = (
                find(&mut group, pair[0].index()),
                find(&mut group, pair[1].index()),
            );
            group[a] = b;
        }
    }
    // Reduced nodes numbered in the DAG's topological order; a chain comes
    // where its first begin does (all its in-edges enter there).
    let mut id_of_root: Vec<Option<RNode>> = vec![None; n];
    let mut topo = Vec::new();
    for &v in dag.topological_order() {
        let root = find(&mut group, v.index());
        if id_of_root[root].is_none() {
            let r = RNode::new(topo.len());
            id_of_root[root] = Some(r);
            topo.push(r);
        }
    }
    let node_of: Vec<RNode> = (0..n)
        .map(|v| id_of_root[find(&mut group, v)].expect("every node is in the order"))
        .collect();
    let mut replaced = vec![Vec::new(); topo.len()];
    let mut edges = Vec::new();
    let mut reduced_of = vec![None; dag.edges().len()];
    let mut succs = vec![Vec::new(); topo.len()];
    for e in dag.edge_ids() {
        let (from, to) = (
            node_of[dag.edge(e).from.index()],
            node_of[dag.edge(e).to.index()],
        );
        if from == to {
            replaced[from.index()].push(e);
        } else {
            reduced_of[e.index()] = Some(REdge::new(edges.len()));
            succs[from.index()].push(REdge::new(edges.len()));
            edges.push(ReducedEdge {
                from,
                to,
                original: e,
            });
        }
    }
    ReducedGraph {
        exit: node_of[dag.exit().index()],
        node_of,
        replaced,
        edges,
        reduced_of,
        succs,
        topo,
    }
}

/// The straight-line diamonds `[a, b, c, d]` and triangles `[a, b, d]` of
/// `dag`.
fn structures(dag: &Dag) -> Vec<Vec<NodeId>> {
    let to = |e: DagEdgeId| dag.edge(e).to;
    // A branch vertex's only successor, when it has one in- and one out-edge.
    let through = |m: NodeId| match (dag.preds(m), dag.succs(m)) {
        ([_], [out]) => Some(to(*out)),
        _ => None,
    };
    let joins_two = |d: NodeId| dag.preds(d).len() == 2;
    let mut found = Vec::new();
    for v in (0..dag.num_nodes()).map(NodeId::new) {
        let &[e1, e2] = dag.succs(v) else { continue };
        let (b, c) = (to(e1), to(e2));
        match (through(b), through(c)) {
            (Some(d), Some(d2)) if d == d2 && b != c && joins_two(d) => {
                found.push(vec![v, b, c, d])
            }
            (Some(d), _) if d == c && joins_two(c) => found.push(vec![v, b, c]),
            (_, Some(d)) if d == b && joins_two(b) => found.push(vec![v, c, b]),
            _ => {}
        }
    }
    found
}

impl ReducedGraph {
    pub fn num_nodes(&self) -> usize {
        self.topo.len()
    }

    /// The reduced node standing for a DAG node.
    pub fn node_of(&self, v: NodeId) -> RNode {
        self.node_of[v.index()]
    }

    /// The node of the DAG's ENTRY.
    pub fn entry(&self) -> RNode {
        self.topo[0]
    }

    /// The node of the DAG's EXIT.
    pub fn exit(&self) -> RNode {
        self.exit
    }

    pub fn edges(&self) -> &[ReducedEdge] {
        &self.edges
    }

    pub fn edge(&self, e: REdge) -> &ReducedEdge {
        &self.edges[e.index()]
    }

    /// The reduced edge standing for DAG edge `e` (`None` when `e` is inside
    /// a dummy vertex): a DAG path's reduced path is its edges' in order.
    pub fn reduced_edge(&self, e: DagEdgeId) -> Option<REdge> {
        self.reduced_of[e.index()]
    }

    /// Out-edges of `v`, in the DAG's order.
    pub fn succs(&self, v: RNode) -> &[REdge] {
        &self.succs[v.index()]
    }

    /// Nodes in topological order, ENTRY's first.
    pub fn topological_order(&self) -> &[RNode] {
        &self.topo
    }

    /// The DAG edges a dummy vertex replaced (empty for other nodes).
    pub fn replaced(&self, v: RNode) -> &[DagEdgeId] {
        &self.replaced[v.index()]
    }

    pub fn is_dummy(&self, v: RNode) -> bool {
        !self.replaced[v.index()].is_empty()
    }

    /// Adds to `set` (per reduced edge) every edge reachable from `v`.
    pub fn add_reachable_edges(&self, v: RNode, set: &mut [bool]) {
        let mut stack = vec![v];
        while let Some(u) = stack.pop() {
            for &e in self.succs(u) {
                if !std::mem::replace(&mut set[e.index()], true) {
                    stack.push(self.edge(e).to);
                }
            }
        }
    }

    /// `get_original_edges`: the DAG edges of reduced edges `es` (per
    /// reduced edge), each with what its ends replaced.
    pub fn original_edges(&self, es: &[bool], universe: usize) -> EdgeSet {
        let mut set = EdgeSet::empty(universe);
        for (edge, _) in self.edges.iter().zip(es).filter(|&(_, &taken)| taken) {
            set.insert(edge.original);
            for end in [edge.from, edge.to] {
                for &inner in self.replaced(end) {
                    set.insert(inner);
                }
            }
        }
        set
    }
}
