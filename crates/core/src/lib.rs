//! pathprof-core: the mathematics of block, edge and Ball-Larus path profiling,
//! with no knowledge of LLVM.
//!
//! Pipeline for one function: a [`Cfg`] goes to a planner ([`block`], [`edge`],
//! [`path`], all behind [`planner::plan_function`]) which returns a
//! [`plan::FunctionPlan`] (what the LLVM side inserts) and a [`layout::Layout`]
//! (what reports need to read the counters back). [`derive`](mod@derive) turns
//! raw counters into block, edge and path counts; [`profile`] pairs a map file
//! with a profile; [`predict`] compares a function's measured paths with those
//! its edge profile predicts. [`ppp`] holds preferential path profiling's numbering of a
//! function's interesting paths and their list file. [`p3`] holds
//! partitioned path profiling: PSPP, the partition of paths into tasks, their
//! distribution over K copies, the merge of the copies' profiles and the hit
//! counts. [`pgo`] holds what an optimised build takes from a profile: each
//! function's counts indexed by name and shape, its edge counts, and the
//! profile summary.

pub mod block;
pub mod callers;
pub mod cfg;
pub mod combine;
pub mod counts;
pub mod dag;
pub mod deflated;
pub mod derive;
pub mod edge;
pub mod flow;
pub mod hash;
pub mod ids;
pub mod increments;
pub mod layout;
pub mod map;
pub mod materialize;
pub mod p3;
pub mod path;
pub mod pgo;
pub mod placement;
pub mod plan;
pub mod planner;
pub mod ppp;
pub mod predict;
pub mod profile;
pub mod regen;
pub mod rust_std;
pub mod source_names;
pub mod spantree;
pub mod weights;

pub use cfg::{Cfg, CfgEdge, CfgError};
pub use ids::{BlockId, DagEdgeId, EdgeId, FuncId, NodeId};
pub use plan::Mode;
