//! pathprof-core: the mathematics of block, edge and Ball-Larus path profiling,
//! with no knowledge of LLVM.
//!
//! Pipeline for one function: a [`Cfg`] goes to a planner ([`block`], [`edge`],
//! [`path`]) which returns an [`plan::FunctionPlan`] (what the LLVM side inserts)
//! and a [`layout::Layout`] (what reports need to read the counters back). The
//! [`derive`] module turns counters into block, edge and path counts.

pub mod cfg;
pub mod dag;
pub mod hash;
pub mod ids;
pub mod layout;
pub mod map;
pub mod plan;

pub use cfg::{Cfg, CfgEdge, CfgError};
pub use ids::{BlockId, DagEdgeId, EdgeId, FuncId, NodeId};
pub use plan::Mode;
