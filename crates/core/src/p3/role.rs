//! What one copy does with one function (Afraz et al. 2015, Algorithm 2
//! lines 17–21), what that costs, and the plan the LLVM side inserts for it.
//!
//! A copy profiles the paths within a set of the function's DAG edges: none
//! ([`Role::None`]: not instrumented), all ([`Role::BallLarus`]: path mode's
//! plan, counting Ball-Larus ids), or some ([`Role::Pspp`]: PSPP's labeling,
//! counting PSPP ids, read back by [`Role::ball_larus_id`]).
//!
//! Either labeling goes onto the chords of a spanning tree by event counting
//! ([`crate::increments`]) and Figure 8 places the code
//! ([`crate::placement`]), exactly as path mode does; only the tree differs
//! for PSPP, the cheaper under the weights ([`Probes::weighted`]) of two:
//! path mode's own tree (the hottest edges free, whatever their labels), or
//! one taking the 0-labeled edges first (the hotter first), then the others
//! by weight, so that with every tree edge labeled 0 the potentials vanish
//! and each chord's increment is its label. Early-exit edges stay last as in
//! path mode: they carry a count whatever the tree.
//!
//! A PSPP copy leaves out the counts only uninteresting paths reach (on an
//! edge outside the interesting set, or at the top of a block entered only
//! by such edges): those paths' ids are read by nobody, and every
//! interesting path keeps its count. Such a copy counts fewer path runs than
//! ran; [`Probes::counts`] says which, and the merge checks exactly those.
//!
//! A *probe* is a DAG edge that counts the path or whose chord increment is
//! not 0, or a count at a block's top ([`Probes`]): the paper's non-zero
//! labels, as placed, plus the counts the paper leaves implicit. Figure 8's
//! `r = 0` initialisations are not probes: once `r` is an SSA value they are
//! constants, no code. `T.Cost` is the number of probes, the paper's hit
//! count their executions ([`super::hits`]). Self-loop, resume and
//! early-exit-call slots are path mode's; a function's slots are counted by
//! one copy only ([`plan_copy`]'s `counts_slots`).

use super::edge_set::EdgeSet;
use super::pspp::Pspp;
use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdgeKind};
use crate::ids::{DagEdgeId, NodeId};
use crate::increments::ChordIncrements;
use crate::layout::Layout;
use crate::path::{chord_increments, dag_weight, transcribe_placed, PathOptions};
use crate::placement::{place, Placement};
use crate::plan::{FunctionPlan, Op};
use crate::spantree::{max_spanning_tree, TreeEdge};
use crate::weights::Weights;

/// How one copy instruments one function.
#[derive(Clone, Debug, PartialEq, Eq)]
// A role per copy and function; boxing the labeling would only add a hop.
#[allow(clippy::large_enum_variant)]
pub enum Role {
    /// Profiles none of its paths: not instrumented.
    None,
    /// Profiles all its paths: path mode's plan and ids.
    BallLarus,
    /// Profiles the paths within the labeling's interesting edges.
    Pspp(Pspp),
}

/// Where a role's probes are (see the module doc): per DAG edge, whether it
/// counts or adds a non-zero increment; per DAG node, whether entering it
/// counts the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probes {
    pub edges: Vec<bool>,
    pub at_top: Vec<bool>,
    /// Per DAG edge: whether a path that takes it is counted there (on it
    /// or at its target's top).
    pub counts: Vec<bool>,
    /// Whether every path is counted (no count was left out).
    pub complete: bool,
}

impl Probes {
    /// The number of probes: `T.Cost`.
    pub fn count(&self) -> u64 {
        let n = self
            .edges
            .iter()
            .chain(&self.at_top)
            .filter(|&&p| p)
            .count();
        n as u64
    }

    /// How many probes run along a path (DAG edges).
    pub fn along(&self, dag: &Dag, path: &[DagEdgeId]) -> u64 {
        path.iter()
            .map(|&e| {
                u64::from(self.edges[e.index()]) + u64::from(self.at_top[dag.edge(e).to.index()])
            })
            .sum()
    }
}

impl Role {
    /// The role that profiles the paths within `edges` (a set of `dag`'s).
    pub fn for_edges(dag: &Dag, edges: &EdgeSet) -> Role {
        if edges.is_full() {
            return Role::BallLarus;
        }
        let pspp = Pspp::compute(dag, edges);
        if pspp.interesting().is_empty() {
            Role::None
        } else if pspp.interesting().is_full() {
            Role::BallLarus
        } else {
            Role::Pspp(pspp)
        }
    }

    pub fn is_instrumented(&self) -> bool {
        !matches!(self, Role::None)
    }

    /// Whether the copy profiles a path (DAG edges).
    pub fn profiles(&self, path: &[DagEdgeId]) -> bool {
        match self {
            Role::None => false,
            Role::BallLarus => true,
            Role::Pspp(pspp) => pspp.labeling().is_interesting(path),
        }
    }

    /// The Ball-Larus id (path mode's, `dag`'s own numbering) of the path an
    /// id counted by this copy stands for; `None` when the id stands for no
    /// path the copy profiles (or is past the path count).
    pub fn ball_larus_id(&self, dag: &Dag, id: u64) -> Option<u64> {
        match self {
            Role::None => None,
            Role::BallLarus => (id < dag.num_paths()).then_some(id),
            Role::Pspp(pspp) => pspp.ball_larus_id(dag, id),
        }
    }

    /// The chord increments the copy's register adds (`None` when not
    /// instrumented): path mode's under `weights`, or PSPP's labels on a tree
    /// of its 0-labeled edges first (see the module doc).
    pub fn increments(&self, cfg: &Cfg, dag: &Dag, weights: &Weights) -> Option<ChordIncrements> {
        match self {
            Role::None => None,
            Role::BallLarus => Some(chord_increments(cfg, dag, weights)),
            Role::Pspp(pspp) => {
                let val = pspp.labeling().values();
                let with_tree =
                    |in_tree| ChordIncrements::with_tree_values(dag, in_tree, |e| val[e.index()]);
                let zero_first = with_tree(zero_first_tree(cfg, dag, weights, val));
                let hot_first = with_tree(chord_increments(cfg, dag, weights).in_tree);
                let cost = |incs: &ChordIncrements| {
                    Probes::of(dag, incs, place(dag, incs)).weighted(cfg, dag, weights)
                };
                Some(if cost(&hot_first) < cost(&zero_first) {
                    hot_first
                } else {
                    zero_first
                })
            }
        }
    }

    /// Figure 8's placement of the copy's increments, less the counts at
    /// the ends of uninteresting paths only (see the module doc); `None`
    /// when not instrumented.
    pub fn placement(
        &self,
        cfg: &Cfg,
        dag: &Dag,
        weights: &Weights,
    ) -> Option<(ChordIncrements, Placement)> {
        let incs = self.increments(cfg, dag, weights)?;
        let mut placement = place(dag, &incs);
        // Only paths through an edge outside the interesting set are
        // uninteresting ones: a count on it, or at the top of a block
        // entered only by such edges, counts none the copy reads.
        if let Role::Pspp(pspp) = self {
            let interesting = pspp.interesting();
            for e in dag.edge_ids().filter(|&e| !interesting.contains(e)) {
                let code = &mut placement.code[e.index()];
                if code.count {
                    code.count = false;
                    code.add = false;
                }
            }
            for (v, top) in placement.count_at_top.iter_mut().enumerate() {
                if dag
                    .preds(NodeId::new(v))
                    .iter()
                    .all(|&e| !interesting.contains(e))
                {
                    *top = false;
                }
            }
        }
        Some((incs, placement))
    }

    /// Where the copy's probes go (none when not instrumented).
    pub fn probes(&self, cfg: &Cfg, dag: &Dag, weights: &Weights) -> Probes {
        match self.placement(cfg, dag, weights) {
            Some((incs, placement)) => {
                let mut probes = Probes::of(dag, &incs, placement);
                if let Role::Pspp(_) = self {
                    let figure_8 = Probes::of(dag, &incs, place(dag, &incs));
                    probes.complete = probes.counts == figure_8.counts;
                }
                probes
            }
            None => Probes {
                edges: vec![false; dag.edges().len()],
                at_top: vec![false; dag.num_nodes()],
                counts: vec![false; dag.edges().len()],
                complete: true,
            },
        }
    }
}

impl Probes {
    /// The probes of these increments as `placement` places them.
    fn of(dag: &Dag, incs: &ChordIncrements, placement: Placement) -> Probes {
        Probes {
            edges: dag
                .edge_ids()
                .map(|e| {
                    // What transcription emits: a count, an add, or an
                    // initialisation to a non-zero increment.
                    let code = placement.code[e.index()];
                    code.count
                        || code.add
                        || (code.init && incs.is_chord(e) && incs.inc[e.index()] != 0)
                })
                .collect(),
            counts: dag
                .edge_ids()
                .map(|e| {
                    placement.code[e.index()].count
                        || placement.count_at_top[dag.edge(e).to.index()]
                })
                .collect(),
            at_top: placement.count_at_top,
            complete: true,
        }
    }

    /// Whether a path (DAG edges) is counted where it ends: every path is
    /// but those a PSPP copy leaves uncounted.
    pub fn counts(&self, path: &[DagEdgeId]) -> bool {
        path.iter().any(|&e| self.counts[e.index()])
    }

    /// The estimated executions of the probes under `weights` (a probe at a
    /// block's top runs as often as the block's in-edges).
    pub fn weighted(&self, cfg: &Cfg, dag: &Dag, weights: &Weights) -> f64 {
        let weight = |e: DagEdgeId| dag_weight(cfg, dag, weights, e).unwrap_or(0.0);
        let edges: f64 = dag
            .edge_ids()
            .filter(|e| self.edges[e.index()])
            .map(weight)
            .sum();
        let tops: f64 = dag
            .edge_ids()
            .filter(|&e| self.at_top[dag.edge(e).to.index()])
            .map(weight)
            .sum();
        edges + tops
    }
}

/// A spanning tree (per DAG edge; EXIT→ENTRY implied) that takes, after the
/// edges path mode pins, the edges labeled 0 by decreasing weight, then the
/// rest by weight. Early-exit edges are never preferred.
fn zero_first_tree(cfg: &Cfg, dag: &Dag, weights: &Weights, val: &[u64]) -> Vec<bool> {
    let weight = |e: DagEdgeId| dag_weight(cfg, dag, weights, e);
    let free = |e: DagEdgeId| {
        val[e.index()] == 0 && !matches!(dag.edge(e).kind, DagEdgeKind::CallExit(..))
    };
    let pinned: Vec<DagEdgeId> = dag.edge_ids().filter(|&e| weight(e).is_none()).collect();
    let mut zero: Vec<DagEdgeId> = dag
        .edge_ids()
        .filter(|&e| weight(e).is_some() && free(e))
        .collect();
    zero.sort_by(|&a, &b| weight(b).unwrap().total_cmp(&weight(a).unwrap()));
    let rest = dag.edge_ids().filter(|&e| weight(e).is_some() && !free(e));
    // Forced edges are taken in this order, before the weighted rest.
    let order: Vec<Option<DagEdgeId>> = std::iter::once(None)
        .chain(pinned.into_iter().chain(zero).map(Some))
        .chain(rest.map(Some))
        .collect();
    let tree_edges: Vec<TreeEdge> = order
        .iter()
        .map(|&e| match e {
            None => TreeEdge {
                a: dag.exit().index(),
                b: dag.entry().index(),
                weight: 0.0,
                forced: true,
            },
            Some(e) => TreeEdge {
                a: dag.edge(e).from.index(),
                b: dag.edge(e).to.index(),
                weight: weight(e).unwrap_or(0.0),
                forced: weight(e).is_none() || free(e),
            },
        })
        .collect();
    let chosen = max_spanning_tree(dag.num_nodes(), &tree_edges);
    assert!(chosen[0], "EXIT->ENTRY is always on the tree");
    let mut in_tree = vec![false; dag.edges().len()];
    for (e, &taken) in order.iter().zip(&chosen) {
        if let Some(e) = e {
            in_tree[e.index()] = taken;
        }
    }
    in_tree
}

/// The plan and layout of one function in one copy, `None` when the copy
/// does not instrument it: path mode's transcription
/// ([`crate::path::transcribe`]) of the role's increments, so the same probe
/// semantics, storage and layout as path mode (the layout is path mode's,
/// ids by `dag`'s Ball-Larus numbering; the copy's counted ids go through
/// [`Role::ball_larus_id`]). Without `counts_slots` the plan counts no slots
/// (self loops, resumes, early-exit calls): another copy does.
pub fn plan_copy(
    cfg: &Cfg,
    dag: &Dag,
    role: &Role,
    weights: &Weights,
    options: &PathOptions,
    counts_slots: bool,
) -> Option<(FunctionPlan, Layout)> {
    let (incs, placement) = role.placement(cfg, dag, weights)?;
    let (mut plan, layout) = transcribe_placed(cfg, dag.clone(), &incs, placement, None, options);
    if !counts_slots {
        for probe in &mut plan.probes {
            probe.ops.retain(|op| !matches!(op, Op::CountSlot(_)));
        }
        plan.probes.retain(|p| !p.ops.is_empty());
        plan.num_slots = 0;
    }
    Some((plan, layout))
}
