//! A P3 build as its map records it: path mode's map of the linked program
//! (each function's CFG and DAG) plus K and the call sites
//! ([`P3Build`]). From it the compiler driver that makes the copies,
//! `pathprof p3 run` that merges their profiles and `pathprof p3 stats`
//! compute the same [`ProgramPlan`] ([`plan_program`] is a function of
//! exactly these); and here are each copy's plans and the build id its
//! counters register under.
//!
//! A copy's counters are not a profile of the map's build (a PSPP copy
//! counts its own ids, and only some functions), so each copy registers
//! under a build id of its own ([`copy_build_id`]): no report reads a
//! partial profile as the map's, and `pathprof merge` keeps them apart.
//! [`super::partial`] turns them into the map's profile.

use super::program::{plan_program, Function, ProgramPlan, Strategy};
use super::role::plan_copy;
use crate::hash::Fnv64;
use crate::ids::FuncId;
use crate::layout::Layout;
use crate::map::{MapFile, P3Build};
use crate::path::PathOptions;
use crate::plan::FunctionPlan;

/// Why a map is no P3 build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    #[error(
        "the map records no P3 build: build the program with `pathprof cc --mode=p3 --copies=K`"
    )]
    NotP3,
    #[error("expected {expected} call-site counts, one per function, not {found}")]
    CallSites { expected: usize, found: usize },
    #[error("expected {expected} training path lists, one per function, not {found}")]
    Trained { expected: usize, found: usize },
    #[error("function {name} was not planned in path mode (see the build's warnings; a lower --max-paths plans it), so P3 cannot profile it")]
    NotPath { name: String },
    #[error("copy {copy}'s plan of function {name} has another counter layout than path mode's (a pathprof bug)")]
    Layout { copy: usize, name: String },
}

/// A map's program as P3 plans it.
#[derive(Clone, Debug)]
pub struct MapProgram<'a> {
    pub map: &'a MapFile,
    /// Per map function: its CFG, DAG and call sites.
    pub functions: Vec<Function<'a>>,
}

impl<'a> MapProgram<'a> {
    /// The program of `map` (path mode's) with these call-site counts and
    /// training paths (none, or one list per function).
    pub fn new(
        map: &'a MapFile,
        call_sites: &[u32],
        trained: &'a [Vec<(u64, u64)>],
    ) -> Result<Self, BuildError> {
        if call_sites.len() != map.functions.len() {
            return Err(BuildError::CallSites {
                expected: map.functions.len(),
                found: call_sites.len(),
            });
        }
        if !trained.is_empty() && trained.len() != map.functions.len() {
            return Err(BuildError::Trained {
                expected: map.functions.len(),
                found: trained.len(),
            });
        }
        let functions = map
            .functions
            .iter()
            .zip(call_sites)
            .enumerate()
            .map(|(i, (f, &call_sites))| match &f.layout {
                Layout::Path { dag, .. } => Ok(Function {
                    cfg: &f.cfg,
                    dag,
                    call_sites,
                    trained: trained.get(i).map_or(&[], Vec::as_slice),
                }),
                _ => Err(BuildError::NotPath {
                    name: f.shown_name().to_string(),
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok(MapProgram { map, functions })
    }

    /// The program a P3 build's map records, with its record.
    pub fn recorded(map: &'a MapFile) -> Result<(Self, &'a P3Build), BuildError> {
        let p3 = map.p3.as_ref().ok_or(BuildError::NotP3)?;
        Ok((MapProgram::new(map, &p3.call_sites, &p3.trained)?, p3))
    }

    /// Its plan for `copies` copies.
    pub fn plan(&self, copies: usize, strategy: Strategy) -> ProgramPlan {
        plan_program(&self.functions, copies, strategy)
    }

    /// Copy `copy`'s plan of each function under `plan` (a plan of this
    /// program): [`plan_copy`] where the copy instruments the function,
    /// counting its slots when it is the function's slot copy, else nothing.
    /// Every instrumented function's layout is checked to be the map's, the
    /// promise that lets one map read every copy.
    pub fn copy_plans(
        &self,
        plan: &ProgramPlan,
        copy: usize,
        options: &PathOptions,
    ) -> Result<Vec<FunctionPlan>, BuildError> {
        self.functions
            .iter()
            .zip(&self.map.functions)
            .enumerate()
            .map(|(i, (f, mf))| {
                // Its callers' counts give its one path's count: no copy counts it.
                if !mf.entry_calls.is_empty() {
                    return Ok(FunctionPlan::uninstrumented());
                }
                let id = FuncId::new(i);
                let counts_slots = plan.slot_copy(id) == Some(copy);
                let role = plan.role(copy, id);
                match plan_copy(f.cfg, f.dag, role, &f.weights(), options, counts_slots) {
                    None => Ok(FunctionPlan::uninstrumented()),
                    Some((_, layout)) if layout != mf.layout => Err(BuildError::Layout {
                        copy,
                        name: mf.shown_name().to_string(),
                    }),
                    Some((plan, _)) => Ok(plan),
                }
            })
            .collect()
    }

    /// The build id copy `copy` of this build's `copies` registers its
    /// counters under ([`copy_build_id`]).
    pub fn copy_build_id(&self, copies: usize, copy: usize) -> u64 {
        copy_build_id(self.map.build_id, copies, copy)
    }
}

/// The build id of copy `copy` of `copies` of the build `build_id`: a hash
/// of the three, never the build's own.
pub fn copy_build_id(build_id: u64, copies: usize, copy: usize) -> u64 {
    let mut h = Fnv64::new();
    h.write_str("p3");
    h.write_u64(build_id);
    h.write_u64(copies as u64);
    h.write_u64(copy as u64);
    match h.finish() {
        id if id == build_id => !id,
        id => id,
    }
}
