//! One entry point for all modes: a function's CFG and options in, a plan and a
//! layout out.

use crate::block::plan_blocks;
use crate::cfg::Cfg;
use crate::dag::DagError;
use crate::edge::{plan_edges, EdgePlanError};
use crate::layout::Layout;
use crate::path::{plan_paths, PathOptions};
use crate::plan::{FunctionPlan, Mode};
use crate::weights::Weights;

/// Options for planning.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    pub path: PathOptions,
    /// Measured counts per CFG edge, to choose spanning trees (else estimated).
    pub edge_counts: Option<Vec<u64>>,
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
    let weights = match &options.edge_counts {
        Some(counts) if counts.len() == cfg.edges().len() => Weights::measured(cfg, counts),
        _ => Weights::estimate(cfg),
    };
    Ok(match mode {
        Mode::Block => plan_blocks(cfg),
        Mode::Edge => plan_edges(cfg, &weights, options.path.dag.early_exit)?,
        Mode::Path => plan_paths(cfg, &weights, &options.path)?,
    })
}
