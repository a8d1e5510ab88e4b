//! Partitioned path profiling (P3, Afraz, Saha & Kanade, ESEC/FSE 2015): K
//! copies of a program run on the same input, each profiling a subset of
//! each function's acyclic paths, so that the slowest copy pays a fraction of
//! sequential Ball-Larus profiling; their partial profiles merge into the
//! exact Ball-Larus profile.
//!
//! It works on the very DAG path mode numbers ([`crate::dag::Dag`]:
//! backedges, dummy edges, truncation cuts, unsplittable and early-exit
//! cuts), so the merged profile is a path-mode profile, ids and all.
//!
//! What each part owns:
//! - [`edge_set`]: sets of a DAG's edges (interesting edges, tasks' edges);
//! - [`labeling`]: the three steps SPP and PSPP share and the labeling they
//!   produce, with the validity check of section 2.1;
//! - [`spp`](mod@spp): SPP (section 2.2), the reference that shows the flaw;
//! - [`pspp`]: PSPP (Algorithm 1), and reading its ids back;
//! - [`reduce`]: the DAG with its diamonds and triangles replaced;
//! - [`partition`]: `find_partition` (Algorithm 2, lines 24–52) into tasks;
//! - [`schedule`](mod@schedule): tasks onto copies, largest first (lines 12–16;
//!   [`program`] schedules with the loads of the roles copies end up with);
//! - [`role`]: what a copy does with a function (lines 17–21): its
//!   increments, probes and plan;
//! - [`program`]: the whole program's plan for K copies;
//! - [`build`]: a P3 build as its map records it: its plan again, each
//!   copy's plans and build id;
//! - [`merge`](mod@merge): the copies' profiles into one, refusing divergent ones;
//! - [`partial`]: the copies' raw profile sections into the map's;
//! - [`trained`]: P3 guided by a training run's path counts;
//! - [`hits`]: the hit counts of SBL, PBL and P3 (section 4.2).

pub mod build;
pub mod edge_set;
pub mod hits;
pub mod labeling;
pub mod merge;
pub mod partial;
pub mod partition;
pub mod program;
pub mod pspp;
pub mod reduce;
pub mod role;
pub mod schedule;
pub mod spp;
pub mod trained;

pub use build::{copy_build_id, BuildError, MapProgram};
pub use edge_set::EdgeSet;
pub use hits::{hit_counts, hit_table, sbl_hits, HitCounts, HitTable};
pub use labeling::{Invalid, Labeling};
pub use merge::{check_flow, merge, MergeError, RawCounts};
pub use partial::PartialError;
pub use partition::{find_partition, partition_paths, threshold, Task};
pub use program::{plan_program, Function, FunctionTasks, ProgramPlan, Strategy};
pub use pspp::Pspp;
pub use reduce::{reduced_graph, ReducedGraph};
pub use role::{plan_copy, Probes, Role};
pub use schedule::{schedule, Schedule};
pub use spp::spp;

#[cfg(test)]
mod tests;
