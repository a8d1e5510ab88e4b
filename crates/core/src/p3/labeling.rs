//! The three steps that selective path profiling (SPP, Apiwattanapong &
//! Harrold 2002) and precise SPP (PSPP, Afraz et al. 2015, Algorithm 1) share,
//! over path mode's DAG ([`crate::dag::Dag`]: backedges, dummy edges, cuts,
//! unsplittable and early-exit edges), and the labeling they produce.
//!
//! Terms (section 2.1): the *interesting edges* `EI` are a set of DAG edges;
//! the *interesting paths* are the ENTRY→EXIT paths within `EI`. A path's id is
//! the sum of its edges' labels; a labeling is *valid* when (a) interesting
//! paths have distinct ids and (b) no other path has an interesting path's id
//! ([`Labeling::check_valid`] checks both by enumeration).
//!
//! The steps:
//! 1. *initial* (lines 4–13): in reverse topological order, at each node the
//!    uninteresting out-edges first, then the interesting ones in an order the
//!    caller chooses (`Order`); each edge gets the number of paths of the
//!    edges visited before it (Ball-Larus' Figure 5); `v.min`, the smallest
//!    partial id of an interesting path from `v`, is kept along;
//! 2. *propagation* (lines 14–21): in topological order, a node with one
//!    in-edge moves that edge's label onto all its out-edges;
//! 3. *absorption* (line 22): every uninteresting edge's label becomes 0.
//!
//! Two choices, neither of which changes the final labeling:
//! - `EI` is first *trimmed* to the edges of interesting paths (the paper's
//!   `EI` is "edges appearing in interesting paths"; an edge of `EI` on no
//!   path within `EI` would otherwise be ordered as interesting);
//! - step 1 gives uninteresting edges their Ball-Larus values where Algorithm
//!   1 gives them 0 (line 7; `N_v` grows the same either way, so interesting
//!   edges get the same values). The difference only ever moves, by
//!   propagation, onto edges all of whose paths pass an uninteresting edge:
//!   uninteresting edges of the trimmed `EI`, zeroed by absorption. In exchange
//!   step 1 is a genuine Ball-Larus numbering of every path (the *initial*
//!   ids, [`Labeling::initial`]), which regeneration needs.
//!
//! Since propagation keeps every path's sum and absorption touches no edge of
//! an interesting path, an interesting path's final id is its initial id.

use super::edge_set::EdgeSet;
use crate::dag::Dag;
use crate::ids::DagEdgeId;
use crate::regen::{regenerate, regenerate_by, Path};

/// The order of a node's interesting out-edges in step 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Order {
    /// As the DAG lists them (SPP leaves the order open).
    AsListed,
    /// By decreasing `w.min` of their targets `w` (PSPP, line 9), ties as
    /// listed.
    DecreasingMin,
}

/// An edge labeling of one DAG for one set of interesting edges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labeling {
    interesting: EdgeSet,
    initial: Vec<u64>,
    val: Vec<u64>,
}

/// Why a labeling is not valid (section 2.1), or could not be checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Invalid {
    #[error(
        "interesting paths {first} and {second} (Ball-Larus ids) both get id {id}: condition (a)"
    )]
    SameId { first: u64, second: u64, id: u64 },
    #[error("uninteresting path {other} gets the id {id} of interesting path {interesting} (Ball-Larus ids): condition (b)")]
    Alias {
        interesting: u64,
        other: u64,
        id: u64,
    },
    #[error("the DAG has {0} paths, more than the check enumerates")]
    TooManyPaths(u64),
}

impl Labeling {
    /// Runs the three steps on `dag` for `interesting` (a set of its edges).
    pub(super) fn compute(dag: &Dag, interesting: &EdgeSet, order: Order) -> Labeling {
        assert_eq!(
            interesting.universe(),
            dag.edges().len(),
            "a set of this DAG"
        );
        let interesting = trim(dag, interesting);
        let initial = initial_values(dag, &interesting, order);
        let mut val = initial.clone();
        propagate(dag, &mut val);
        for e in dag.edge_ids().filter(|&e| !interesting.contains(e)) {
            val[e.index()] = 0;
        }
        Labeling {
            interesting,
            initial,
            val,
        }
    }

    /// The interesting edges: those of the paths within the given set.
    pub fn interesting(&self) -> &EdgeSet {
        &self.interesting
    }

    /// An edge's final label.
    pub fn val(&self, e: DagEdgeId) -> u64 {
        self.val[e.index()]
    }

    /// Every edge's final label, by [`DagEdgeId`].
    pub fn values(&self) -> &[u64] {
        &self.val
    }

    /// An edge's label after step 1 (a Ball-Larus numbering).
    pub fn initial(&self, e: DagEdgeId) -> u64 {
        self.initial[e.index()]
    }

    /// The final id of a path given as DAG edges.
    pub fn path_id(&self, edges: &[DagEdgeId]) -> u64 {
        edges.iter().map(|&e| self.val(e)).sum()
    }

    /// The initial id of a path given as DAG edges.
    pub fn initial_id(&self, edges: &[DagEdgeId]) -> u64 {
        edges.iter().map(|&e| self.initial(e)).sum()
    }

    /// The path whose initial id is `id` (`None` past the path count).
    pub fn regenerate_initial(&self, dag: &Dag, id: u64) -> Option<Path> {
        regenerate_by(dag, id, |e| self.initial(e)).ok()
    }

    /// Whether a path (DAG edges) is interesting.
    pub fn is_interesting(&self, edges: &[DagEdgeId]) -> bool {
        self.interesting.contains_path(edges)
    }

    /// The paper's `overhead`: edges with a non-zero final label.
    pub fn nonzero_edges(&self) -> usize {
        self.val.iter().filter(|&&v| v != 0).count()
    }

    /// Checks conditions (a) and (b) on every path of `dag`, when it has at
    /// most `limit` paths.
    pub fn check_valid(&self, dag: &Dag, limit: u64) -> Result<(), Invalid> {
        let n = dag.num_paths();
        if n > limit {
            return Err(Invalid::TooManyPaths(n));
        }
        // (id, interesting?, Ball-Larus id), interesting first among equal ids.
        let mut ids: Vec<(u64, bool, u64)> = (0..n)
            .map(|bl| {
                let path = regenerate(dag, bl).expect("ids below the path count");
                let interesting = self.is_interesting(&path.edges);
                (self.path_id(&path.edges), !interesting, bl)
            })
            .collect();
        ids.sort_unstable();
        for pair in ids.windows(2) {
            let ((id, other_a, a), (next, other_b, b)) = (pair[0], pair[1]);
            match (id == next, other_a, other_b) {
                (true, false, false) => {
                    return Err(Invalid::SameId {
                        first: a,
                        second: b,
                        id,
                    })
                }
                (true, false, true) => {
                    return Err(Invalid::Alias {
                        interesting: a,
                        other: b,
                        id,
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The edges of `set` on some ENTRY→EXIT path within `set`.
fn trim(dag: &Dag, set: &EdgeSet) -> EdgeSet {
    let order = dag.topological_order();
    let mut from_entry = vec![false; dag.num_nodes()];
    from_entry[dag.entry().index()] = true;
    for &v in order {
        if from_entry[v.index()] {
            for &e in dag.succs(v).iter().filter(|&&e| set.contains(e)) {
                from_entry[dag.edge(e).to.index()] = true;
            }
        }
    }
    let mut to_exit = vec![false; dag.num_nodes()];
    to_exit[dag.exit().index()] = true;
    for &v in order.iter().rev() {
        to_exit[v.index()] |= dag
            .succs(v)
            .iter()
            .any(|&e| set.contains(e) && to_exit[dag.edge(e).to.index()]);
    }
    EdgeSet::from_bits(
        dag.edge_ids()
            .map(|e| {
                let edge = dag.edge(e);
                set.contains(e) && from_entry[edge.from.index()] && to_exit[edge.to.index()]
            })
            .collect(),
    )
}

/// Step 1: the initial values (see the module doc for the uninteresting
/// edges'). `min` is `u64::MAX` (∞) at nodes with no interesting path to EXIT.
fn initial_values(dag: &Dag, interesting: &EdgeSet, order: Order) -> Vec<u64> {
    let mut initial = vec![0u64; dag.edges().len()];
    let mut min = vec![u64::MAX; dag.num_nodes()];
    min[dag.exit().index()] = 0;
    let target = |e: DagEdgeId| dag.edge(e).to;
    let mut out: Vec<DagEdgeId> = Vec::new();
    for &v in dag.topological_order().iter().rev() {
        if v == dag.exit() {
            continue;
        }
        out.clear();
        out.extend(dag.succs(v).iter().filter(|&&e| !interesting.contains(e)));
        let first_interesting = out.len();
        out.extend(dag.succs(v).iter().filter(|&&e| interesting.contains(e)));
        if order == Order::DecreasingMin {
            out[first_interesting..].sort_by_key(|&e| std::cmp::Reverse(min[target(e).index()]));
        }
        let mut n = 0u64;
        for (i, &e) in out.iter().enumerate() {
            initial[e.index()] = n;
            n += dag.node_paths(target(e));
            if i >= first_interesting {
                let through = min[target(e).index()].saturating_add(initial[e.index()]);
                min[v.index()] = min[v.index()].min(through);
            }
        }
        debug_assert_eq!(n, dag.node_paths(v));
    }
    initial
}

/// Step 2: in topological order, a node with exactly one in-edge moves that
/// edge's label onto its out-edges. Every path's sum stays.
fn propagate(dag: &Dag, val: &mut [u64]) {
    for &v in dag.topological_order() {
        let [e_in] = dag.preds(v) else { continue };
        let moved = std::mem::take(&mut val[e_in.index()]);
        if v == dag.exit() || moved == 0 {
            val[e_in.index()] = moved;
            continue;
        }
        for &e_out in dag.succs(v) {
            val[e_out.index()] += moved;
        }
    }
}
