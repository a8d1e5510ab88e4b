//! P3 guided by a training profile: the paper's own suggestion (Afraz et
//! al. 2015, section 6: "P3's distribution algorithm can be extended to get
//! benefit from [previously available profiling] information"; "better
//! selection strategy of profitable procedures and threshold").
//!
//! Probe counts say nothing of where a run spends its probes: on the suite
//! one function often takes a large share of them (Lua's `luaV_execute`,
//! zlib's `longest_match`, SQLite's `sqlite3VdbeExec`), and the paper's
//! rules leave it whole whenever it has two call sites, so its copy is the
//! slowest by far. With the path counts of a training run:
//! - a task's and a role's cost is what its probes would execute on the
//!   training paths ([`TrainedPaths::hits`]), plus its probe count so that
//!   untrained code still spreads;
//! - a function is partitioned when its share of the training's hits is more
//!   than a copy should carry ([`TrainedPaths::needs_split`]), whatever its
//!   call sites (the role of a copy does not depend on who calls);
//! - its partition refines the heaviest task first ([`refine_partition`]):
//!   the prefix-tree tasks of `find_partition`, but the prefix extended is
//!   the one whose paths carry the most training hits, until none carries
//!   more than a share, so the hot loop's paths split where they branch
//!   instead of wherever ENTRY's first branches are.
//!
//! Tasks keep `find_partition`'s shape (a prefix of reduced edges, then
//! everything reachable from where it ends), so each task is exactly the
//! paths that start with its prefix, and the merge stays exact whatever the
//! training was.

use super::edge_set::EdgeSet;
use super::reduce::{reduced_graph, REdge};
use super::role::Probes;
use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdgeKind};
use crate::ids::DagEdgeId;
use crate::regen::regenerate;
use crate::weights::Weights;

/// A function's training paths, regenerated: each path's DAG edges and how
/// often the training ran it.
#[derive(Clone, Debug, Default)]
pub struct TrainedPaths {
    paths: Vec<(Vec<DagEdgeId>, u64)>,
}

impl TrainedPaths {
    /// The paths of `trained` (Ball-Larus id and count pairs) in `dag`; ids
    /// the DAG does not have (a list checked against another build) are
    /// left out.
    pub fn new(dag: &Dag, trained: &[(u64, u64)]) -> TrainedPaths {
        TrainedPaths {
            paths: trained
                .iter()
                .filter(|&&(_, n)| n > 0)
                .filter_map(|&(id, n)| Some((regenerate(dag, id).ok()?.edges, n)))
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The edge frequencies the training paths give `cfg` (a backedge runs
    /// as often as paths end by it), as spanning-tree weights: trained
    /// copies keep the hot edges free of probes, as Ball and Larus place
    /// them with a profile. `None` without paths.
    pub fn weights(&self, cfg: &Cfg, dag: &Dag) -> Option<Weights> {
        if self.paths.is_empty() {
            return None;
        }
        let mut counts = vec![0u64; cfg.edges().len()];
        for (path, n) in &self.paths {
            for &e in path {
                if let DagEdgeKind::Cfg(c) | DagEdgeKind::BackExit(c) = dag.edge(e).kind {
                    counts[c.index()] = counts[c.index()].saturating_add(*n);
                }
            }
        }
        Some(Weights::measured(cfg, &counts))
    }

    /// What `probes` would execute on the training paths.
    pub fn hits(&self, dag: &Dag, probes: &Probes) -> u64 {
        (0..self.paths.len())
            .map(|i| self.path_hits(i, dag, probes))
            .fold(0, u64::saturating_add)
    }

    /// Training path `i`'s hits under `probes`.
    pub fn path_hits(&self, i: usize, dag: &Dag, probes: &Probes) -> u64 {
        let (path, n) = &self.paths[i];
        n.saturating_mul(probes.along(dag, path))
    }

    /// Whether a function with `hits` training hits (under Ball-Larus) out of
    /// the program's `total` is worth partitioning over `copies` copies:
    /// more than half a copy's fair share, so that it can be spread.
    pub fn needs_split(hits: u64, total: u64, copies: usize) -> bool {
        copies > 1 && hits > 0 && hits as u128 * 2 * copies as u128 > total as u128
    }
}

/// The tasks of `dag` (their DAG edge sets) for the training paths
/// `trained`, each path weighing `weight(i)` (its hits under Ball-Larus).
///
/// A task is a prefix of reduced edges ending at a node, and some of that
/// node's out-edges (its *branches*): the paths that start with the prefix
/// and go on by a branch, whose edges are the prefix, the branches and all
/// that is reachable from them. It starts as the one task of every path (no
/// prefix, ENTRY's out-edges); the heaviest task that weighs more than
/// `target` is split, one task per branch some training path takes (its
/// prefix extended by the branch, all the next node's out-edges its
/// branches) and one for the branches none takes, until no task weighs more
/// or there would be more than `max_tasks`.
pub fn refine_partition(
    dag: &Dag,
    trained: &TrainedPaths,
    weight: impl Fn(usize) -> u64,
    target: u64,
    max_tasks: usize,
) -> Vec<EdgeSet> {
    let universe = dag.edges().len();
    let g = reduced_graph(dag);
    if g.entry() == g.exit() {
        return vec![EdgeSet::full(universe)];
    }
    let reduced_paths: Vec<Vec<REdge>> = trained
        .paths
        .iter()
        .map(|(path, _)| path.iter().filter_map(|&e| g.reduced_edge(e)).collect())
        .collect();
    struct Open {
        prefix: Vec<REdge>,
        branches: Vec<REdge>,
        /// The training paths in the task.
        paths: Vec<usize>,
        weight: u64,
    }
    let weigh = |paths: &[usize]| {
        paths
            .iter()
            .map(|&p| weight(p))
            .fold(0, u64::saturating_add)
    };
    let all: Vec<usize> = (0..trained.paths.len()).collect();
    let mut tasks = vec![Open {
        prefix: Vec::new(),
        branches: g.succs(g.entry()).to_vec(),
        weight: weigh(&all),
        paths: all,
    }];
    while let Some((heaviest, _)) = tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.branches.is_empty() && t.weight > target)
        .max_by_key(|(i, t)| (t.weight, std::cmp::Reverse(*i)))
    {
        let open = tasks.swap_remove(heaviest);
        let depth = open.prefix.len();
        let (taken, cold): (Vec<REdge>, Vec<REdge>) = open.branches.iter().partition(|&&b| {
            open.paths
                .iter()
                .any(|&p| reduced_paths[p].get(depth) == Some(&b))
        });
        let children = taken.len() + usize::from(!cold.is_empty());
        if tasks.len() + children > max_tasks {
            tasks.push(open);
            break;
        }
        for b in taken {
            let paths: Vec<usize> = open
                .paths
                .iter()
                .copied()
                .filter(|&p| reduced_paths[p].get(depth) == Some(&b))
                .collect();
            let mut prefix = open.prefix.clone();
            prefix.push(b);
            tasks.push(Open {
                prefix,
                branches: g.succs(g.edge(b).to).to_vec(),
                weight: weigh(&paths),
                paths,
            });
        }
        if !cold.is_empty() {
            tasks.push(Open {
                prefix: open.prefix,
                branches: cold,
                paths: Vec::new(),
                weight: 0,
            });
        }
    }
    // In a fixed order, so that every reader plans the same.
    tasks.sort_by(|a, b| (&a.prefix, &a.branches).cmp(&(&b.prefix, &b.branches)));
    tasks
        .into_iter()
        .map(|t| {
            let mut es = vec![false; g.edges().len()];
            for &e in t.prefix.iter().chain(&t.branches) {
                es[e.index()] = true;
            }
            for &b in &t.branches {
                g.add_reachable_edges(g.edge(b).to, &mut es);
            }
            g.original_edges(&es, universe)
        })
        .collect()
}
