//! One entry point for all modes: a function's CFG and options in, a plan and a
//! layout out.

use crate::block::plan_blocks;
use crate::cfg::Cfg;
use crate::dag::{Dag, DagError};
use crate::edge::{plan_edges, CallExits, EdgePlanError};
use crate::increments::ChordIncrements;
use crate::layout::Layout;
use crate::path::{chord_increments, plan_paths, PathOptions};
use crate::plan::{FunctionPlan, Mode};
use crate::weights::Weights;

/// Options for planning.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub path: PathOptions,
    /// Measured counts per CFG edge, to choose spanning trees (else estimated).
    pub edge_counts: Option<Vec<u64>>,
    /// Block mode: a counter at the top of every block (Weinberger's scheme)
    /// instead of counters on the chords of a spanning tree.
    pub every_block: bool,
    /// The function's entry count follows from its callers' block counts
    /// ([`crate::callers`]): block and edge plans leave one chord uncounted
    /// (the entry, or the one a known entry replaces), and a path plan with
    /// one path and no other counters counts nothing
    /// ([`Layout::takes_entry_from_callers`]).
    pub entry_from_callers: bool,
}

impl PlanOptions {
    pub fn with_max_paths(mut self, max_paths: u64) -> Self {
        self.path.dag.max_paths = max_paths;
        self
    }

    /// Count executions cut short inside calls (`exit`, `longjmp`): exact path and
    /// edge profiles for programs that end that way, at the price of a count and
    /// an uncount around every call.
    pub fn with_early_exit(mut self, early_exit: bool) -> Self {
        self.path.dag.early_exit = early_exit;
        self
    }

    /// Block mode with a counter in every block (see [`PlanOptions::every_block`]).
    pub fn with_every_block(mut self, every_block: bool) -> Self {
        self.every_block = every_block;
        self
    }

    /// The weights spanning trees are chosen by in `mode`: the measured
    /// counts when given (one per CFG edge of `cfg`), else the estimate
    /// that measured best for the mode ([`crate::weights`]).
    pub fn weights(&self, cfg: &Cfg, mode: Mode) -> Weights {
        match &self.edge_counts {
            Some(counts) if counts.len() == cfg.edges().len() => Weights::measured(cfg, counts),
            _ if mode == Mode::Path => Weights::estimate(cfg),
            _ => Weights::flow_estimate(cfg),
        }
    }
}

/// Why a function could not be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    #[error(transparent)]
    Dag(#[from] DagError),
    #[error(transparent)]
    Edge(#[from] EdgePlanError),
}

/// Plans one function in `mode`.
pub fn plan_function(
    cfg: &Cfg,
    mode: Mode,
    options: &PlanOptions,
) -> Result<(FunctionPlan, Layout), PlanError> {
    let weights = options.weights(cfg, mode);
    Ok(match mode {
        // Counted on a spanning tree's chords like edges; where unsplittable
        // edges leave a chord no code can hold, in every block.
        Mode::Block if !options.every_block => {
            plan_edges(cfg, &weights, CallExits::Net, options.entry_from_callers)
                .unwrap_or_else(|_| plan_blocks(cfg))
        }
        Mode::Block => plan_blocks(cfg),
        Mode::Edge => {
            let call_exits = if options.path.dag.early_exit {
                CallExits::Counted
            } else {
                CallExits::Ignored
            };
            plan_edges(cfg, &weights, call_exits, options.entry_from_callers)?
        }
        Mode::Path => {
            let (plan, layout) = plan_paths(cfg, &weights, &options.path)?;
            (given_entry(plan, &layout, options), layout)
        }
    })
}

/// A path plan whose one count is its entry count, when callers give that:
/// no probe at all.
fn given_entry(plan: FunctionPlan, layout: &Layout, options: &PlanOptions) -> FunctionPlan {
    if options.entry_from_callers && layout.takes_entry_from_callers() {
        FunctionPlan::uninstrumented()
    } else {
        plan
    }
}

/// Plans one function for preferential path profiling
/// ([`crate::path::plan_ppp`]): path mode's plan with the interesting paths
/// (Ball-Larus ids of its DAG) counted in slots, when their PPP interval is
/// at most `options.path.array_limit`.
pub fn plan_function_ppp(
    cfg: &Cfg,
    options: &PlanOptions,
    interesting: &[u64],
) -> Result<(FunctionPlan, Layout, crate::ppp::PppNumbering), crate::path::PppPlanError> {
    let (plan, layout, numbering) = crate::path::plan_ppp(
        cfg,
        &options.weights(cfg, Mode::Path),
        &options.path,
        interesting,
    )?;
    Ok((given_entry(plan, &layout, options), layout, numbering))
}

/// The chord increments (section 3.3) the path planner chose for `dag`, the
/// DAG of `cfg` in a map: maps record the DAG but not the spanning tree, and
/// the instrumenter plans without measured counts, so these are
/// [`chord_increments`] under the weights of [`PlanOptions::default`].
/// Reports that show increments ask here.
pub fn planned_increments(cfg: &Cfg, dag: &Dag) -> ChordIncrements {
    chord_increments(cfg, dag, &PlanOptions::default().weights(cfg, Mode::Path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::transcribe;
    use crate::regen::regenerate;

    fn graphs() -> Vec<Cfg> {
        vec![
            // diamond chain
            Cfg::from_edge_list(6, &[(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)])
                .unwrap(),
            // loop with a branch inside and a self loop
            Cfg::from_edge_list(
                7,
                &[
                    (0, 1),
                    (1, 2),
                    (1, 3),
                    (2, 4),
                    (3, 4),
                    (4, 4),
                    (4, 1),
                    (4, 5),
                    (5, 6),
                    (0, 6),
                ],
            )
            .unwrap(),
            // nested loops
            Cfg::from_edge_list(
                6,
                &[
                    (0, 1),
                    (1, 2),
                    (2, 3),
                    (3, 2),
                    (3, 4),
                    (4, 1),
                    (4, 5),
                    (2, 5),
                ],
            )
            .unwrap(),
        ]
    }

    #[test]
    fn planned_increments_are_the_planners() {
        let mut cases: Vec<(Cfg, PlanOptions)> = graphs()
            .into_iter()
            .map(|g| (g, PlanOptions::default()))
            .collect();
        for mut g in graphs() {
            // Calls that might not return in every other block.
            let calls = (0..g.num_blocks() as u32).map(|b| b % 2).collect();
            g.set_calls(calls).unwrap();
            cases.push((g, PlanOptions::default().with_early_exit(true)));
        }
        for (cfg, options) in cases {
            let dag = Dag::build(&cfg, options.path.dag).unwrap();
            let incs = planned_increments(&cfg, &dag);
            let mine = transcribe(&cfg, dag.clone(), &incs, &options.path);
            let planned = plan_function(&cfg, Mode::Path, &options).unwrap();
            assert_eq!(mine, planned);
            // And chord sums number the paths.
            for id in 0..dag.num_paths() {
                let p = regenerate(&dag, id).unwrap();
                let sum = p
                    .edges
                    .iter()
                    .fold(0i64, |acc, e| acc.wrapping_add(incs.inc[e.index()]));
                assert_eq!(sum as u64, id);
            }
        }
    }
}
