//! `find_partition` (Afraz et al. 2015, Algorithm 2 lines 24–52): a
//! function's paths split into at most Δ *tasks*, disjoint sets of paths
//! that together hold every path, each given as the DAG edges of its paths
//! (`T.E`) with its cost in probes (`T.Cost`).
//!
//! On the reduced graph ([`super::reduce`]), path prefixes grow from ENTRY
//! in topological order: a node hands each of its prefixes, extended by the
//! edge, to the target of each of its out-edges in turn. The walk stops
//! before the number of tasks would exceed Δ, or when it reaches Δ. Then
//! every prefix `es` that ends at EXIT, or at a node `v` with out-edges not
//! yet taken, is a task: the paths that start with `es` and leave `v` by an
//! edge not taken (`es` plus those edges plus all edges reachable from them,
//! line 45). Prefixes differ at their first difference and leave `v` by an
//! edge no prefix took, so no path is in two tasks; a path's longest prefix
//! made of taken edges is one of the tasks', so every path is in one. Each
//! task's edges, mapped back to the DAG (`get_original_edges`), hold exactly
//! its paths, so PSPP on them profiles exactly the task.
//!
//! One change from the paper: it checks the threshold after each single
//! prefix crosses an edge, which can stop with some of a node's prefixes
//! moved along an edge and others not, and leave those others' paths through
//! it in no task. Here an edge is crossed by all of its node's prefixes or by
//! none, and the count is the number of tasks stopping then would make (a
//! node's prefixes stay tasks of their own until its last edge is crossed).
//!
//! Δ (section 4.1) is the larger of ENTRY's out-degree and the number of
//! copies ([`threshold`]); with Δ at least ENTRY's out-degree, ENTRY's edges
//! are always all crossed.

use super::edge_set::EdgeSet;
use super::reduce::{reduced_graph, REdge};
use super::role::Role;
use crate::cfg::Cfg;
use crate::dag::Dag;
use crate::weights::Weights;

/// One task: a set of a function's paths, the paths within `edges`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// `T.E`: the DAG edges of the task's paths.
    pub edges: EdgeSet,
    /// `T.Cost`: the probes profiling these paths takes (PSPP's, or
    /// Ball-Larus' when `edges` is every edge; see [`super::role`]).
    pub cost: u64,
}

/// Δ for a function's DAG and `copies` copies: the larger of ENTRY's
/// out-degree and `copies` (section 4.1).
pub fn threshold(dag: &Dag, copies: usize) -> usize {
    dag.succs(dag.entry()).len().max(copies).max(1)
}

/// `find_partition`: the tasks of `dag` (the DAG of `cfg`) for threshold
/// `delta`, each with its cost under `weights` (the number of probes of the
/// role that profiles exactly its paths, [`Role::for_edges`]).
pub fn find_partition(cfg: &Cfg, dag: &Dag, weights: &Weights, delta: usize) -> Vec<Task> {
    partition_paths(dag, delta)
        .into_iter()
        .map(|edges| Task {
            cost: Role::for_edges(dag, &edges)
                .probes(cfg, dag, weights)
                .count(),
            edges,
        })
        .collect()
}

/// Lines 24–47: the edge sets of the tasks of `dag` for threshold `delta`
/// (at least 1), in the order of their reduced nodes, then of their prefixes.
pub fn partition_paths(dag: &Dag, delta: usize) -> Vec<EdgeSet> {
    let universe = dag.edges().len();
    let g = reduced_graph(dag);
    if g.entry() == g.exit() {
        return vec![EdgeSet::full(universe)];
    }
    // Prefixes as a tree: entry `k` is its last edge and its parent's index.
    let mut arena: Vec<(REdge, Option<usize>)> = Vec::new();
    // Per reduced node: the prefixes that reach it (`None`: the empty one).
    let mut prefixes: Vec<Vec<Option<usize>>> = vec![Vec::new(); g.num_nodes()];
    prefixes[g.entry().index()].push(None);
    // Per reduced node: how many of its out-edges were crossed (`S`).
    let mut crossed = vec![0usize; g.num_nodes()];
    let mut tasks = 1usize;
    'walk: for &v in g.topological_order() {
        let out = g.succs(v);
        let here = prefixes[v.index()].len();
        for (i, &e) in out.iter().enumerate() {
            let last = i + 1 == out.len();
            let after = if last { tasks } else { tasks + here };
            if after > delta {
                break 'walk;
            }
            let moved = if last {
                std::mem::take(&mut prefixes[v.index()])
            } else {
                prefixes[v.index()].clone()
            };
            let w = g.edge(e).to;
            for parent in moved {
                prefixes[w.index()].push(Some(arena.len()));
                arena.push((e, parent));
            }
            crossed[v.index()] = i + 1;
            tasks = after;
            if tasks == delta {
                break 'walk;
            }
        }
    }
    let mut sets = Vec::with_capacity(tasks);
    for &v in g.topological_order() {
        let open = &g.succs(v)[crossed[v.index()]..];
        if v != g.exit() && open.is_empty() {
            continue;
        }
        for &prefix in &prefixes[v.index()] {
            let mut es = vec![false; g.edges().len()];
            let mut at = prefix;
            while let Some(k) = at {
                es[arena[k].0.index()] = true;
                at = arena[k].1;
            }
            for &e in open {
                es[e.index()] = true;
                g.add_reachable_edges(g.edge(e).to, &mut es);
            }
            sets.push(g.original_edges(&es, universe));
        }
    }
    debug_assert_eq!(sets.len(), tasks);
    sets
}
