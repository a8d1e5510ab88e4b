//! The K copies' partial profiles into one exact Ball-Larus path profile
//! (Afraz et al. 2015, section 1: "merely collating the partial profiles"),
//! refusing what copies that ran differently would produce.
//!
//! Per function, a copy that instruments it counted an id for *every* path
//! that ran (each path's end counts, interesting or not); an id is kept only
//! when it stands for a path the copy profiles ([`Role::ball_larus_id`]),
//! under the function's Ball-Larus id. A path several copies profile must
//! have one count in all of them, 0 included; every copy that counts every
//! path's end must have counted as many path executions in all as the
//! merged profile holds (every path is profiled by some copy, so a path no
//! copy that profiles it saw shows there); and a PSPP copy that leaves out
//! the counts only uninteresting paths reach ([`super::role`]) must have
//! counted exactly the runs of the merged paths it counts
//! ([`MergeError::Ended`]). A path run only its own copy counts then shows
//! only in flow. A function's slots
//! (self loops, resumes, early-exit calls) come from the copy that counts
//! them ([`ProgramPlan::slot_copy`]). [`check_flow`] then checks flow
//! conservation of the result as path mode's reader does.
//!
//! Resumes (counts a process took back, [`crate::derive::Resumes`]) are not
//! merged here.

use super::program::{Function, ProgramPlan};
use super::role::Role;
use crate::cfg::Cfg;
use crate::counts::sum_by_id;
use crate::derive::{derive, DeriveError, FunctionCounts, Imbalance};
use crate::ids::FuncId;
use crate::layout::Layout;
use crate::regen::regenerate;
use std::collections::{BTreeMap, BTreeSet};

/// One function's counters in one profile: slots, and path counts by id
/// (a copy's own ids in a copy's profile, Ball-Larus ids once merged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawCounts {
    pub slots: Vec<u64>,
    pub paths: Vec<(u64, u64)>,
}

/// Why the copies' profiles do not merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    #[error("expected the counts of {copies} copies of {functions} functions each")]
    Shape { copies: usize, functions: usize },
    #[error("copy {copy} counted function {func}, which it does not instrument")]
    NotInstrumented { copy: usize, func: FuncId },
    #[error("copy {copy} counted slots of function {func}, which copy {owner} counts")]
    Slots {
        copy: usize,
        func: FuncId,
        owner: usize,
    },
    #[error("copy {copy} counted path id {id} of function {func}, which has {num_paths} paths (profile from another build?)")]
    OutOfRange {
        copy: usize,
        func: FuncId,
        id: u64,
        num_paths: u64,
    },
    #[error("the copies diverge: path {path} of function {func} ran {first_count} times in copy {first} but {second_count} times in copy {second}")]
    Divergence {
        func: FuncId,
        path: u64,
        first: usize,
        first_count: u64,
        second: usize,
        second_count: u64,
    },
    #[error("the copies diverge: function {func} ended a path {first_total} times in copy {first} but {second_total} times in copy {second}")]
    Totals {
        func: FuncId,
        first: usize,
        first_total: u128,
        second: usize,
        second_total: u128,
    },
    #[error("function {func} ended a path {counted} times in every copy, but the paths the copies profile ran {profiled} times (a path no copy profiles)")]
    Unprofiled {
        func: FuncId,
        counted: u128,
        profiled: u128,
    },
    #[error("the copies diverge: copy {copy} ended a path of function {func} {counted} times, but the paths it counts ran {expected} times in the merged profile")]
    Ended {
        func: FuncId,
        copy: usize,
        counted: u128,
        expected: u128,
    },
    #[error("the merged counts of function {func} break flow conservation ({} unbalanced nodes)", imbalance.nodes.len())]
    Flow { func: FuncId, imbalance: Imbalance },
    #[error("function {func}: {source}")]
    Derive { func: FuncId, source: DeriveError },
}

impl MergeError {
    /// Whether the copies ran differently (their counts disagree or break
    /// flow), rather than being of another shape or plan.
    pub fn is_divergence(&self) -> bool {
        matches!(
            self,
            MergeError::Divergence { .. }
                | MergeError::Totals { .. }
                | MergeError::Unprofiled { .. }
                | MergeError::Ended { .. }
                | MergeError::Flow { .. }
        )
    }

    /// The copy whose counts do not merge, when it is one copy's (of two
    /// that disagree, the second).
    pub fn copy(&self) -> Option<usize> {
        match self {
            MergeError::NotInstrumented { copy, .. }
            | MergeError::Slots { copy, .. }
            | MergeError::OutOfRange { copy, .. }
            | MergeError::Ended { copy, .. } => Some(*copy),
            MergeError::Divergence { second, .. } | MergeError::Totals { second, .. } => {
                Some(*second)
            }
            _ => None,
        }
    }

    /// The function the copies' counts do not merge in, if it is one.
    pub fn func(&self) -> Option<FuncId> {
        match self {
            MergeError::Shape { .. } => None,
            MergeError::NotInstrumented { func, .. }
            | MergeError::Slots { func, .. }
            | MergeError::OutOfRange { func, .. }
            | MergeError::Divergence { func, .. }
            | MergeError::Totals { func, .. }
            | MergeError::Unprofiled { func, .. }
            | MergeError::Ended { func, .. }
            | MergeError::Flow { func, .. }
            | MergeError::Derive { func, .. } => Some(*func),
        }
    }
}

/// Merges `counts[copy][function]` (the copies' counters, by their own ids)
/// into each function's Ball-Larus profile.
pub fn merge(
    functions: &[Function],
    plan: &ProgramPlan,
    counts: &[Vec<RawCounts>],
) -> Result<Vec<RawCounts>, MergeError> {
    let shape = MergeError::Shape {
        copies: plan.copies(),
        functions: functions.len(),
    };
    if counts.len() != plan.copies()
        || plan.num_functions() != functions.len()
        || counts.iter().any(|c| c.len() != functions.len())
    {
        return Err(shape);
    }
    functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let func = FuncId::new(i);
            let of_copies: Vec<&RawCounts> = counts.iter().map(|c| &c[i]).collect();
            Ok(RawCounts {
                slots: merge_slots(plan, func, &of_copies)?,
                paths: merge_paths(f, plan, func, &of_copies)?,
            })
        })
        .collect()
}

/// The slot copy's slots; no other copy may have counted any.
fn merge_slots(
    plan: &ProgramPlan,
    func: FuncId,
    counts: &[&RawCounts],
) -> Result<Vec<u64>, MergeError> {
    let owner = plan.slot_copy(func);
    for (copy, c) in counts.iter().enumerate() {
        if Some(copy) == owner || c.slots.iter().all(|&n| n == 0) {
            continue;
        }
        return Err(match owner {
            Some(owner) => MergeError::Slots { copy, func, owner },
            None => MergeError::NotInstrumented { copy, func },
        });
    }
    Ok(owner.map_or_else(Vec::new, |c| counts[c].slots.clone()))
}

fn merge_paths(
    f: &Function,
    plan: &ProgramPlan,
    func: FuncId,
    counts: &[&RawCounts],
) -> Result<Vec<(u64, u64)>, MergeError> {
    let dag = f.dag;
    // Per copy: counts of the paths it profiles, by Ball-Larus id; and how
    // many path runs it counted in all.
    let mut profiled: Vec<BTreeMap<u64, u64>> = vec![BTreeMap::new(); counts.len()];
    let mut totals = vec![0u128; counts.len()];
    for (copy, c) in counts.iter().enumerate() {
        let role = plan.role(copy, func);
        for (id, n) in sum_by_id(c.paths.clone()) {
            if !role.is_instrumented() {
                return Err(MergeError::NotInstrumented { copy, func });
            }
            if id >= dag.num_paths() {
                return Err(MergeError::OutOfRange {
                    copy,
                    func,
                    id,
                    num_paths: dag.num_paths(),
                });
            }
            totals[copy] += n as u128;
            if let Some(bl) = role.ball_larus_id(dag, id) {
                profiled[copy].insert(bl, n);
            }
        }
    }
    let seen: BTreeSet<u64> = profiled.iter().flat_map(|p| p.keys().copied()).collect();
    let mut merged = Vec::with_capacity(seen.len());
    for bl in seen {
        let path = regenerate(dag, bl).expect("a counted Ball-Larus id").edges;
        let mut agreed: Option<(usize, u64)> = None;
        for copy in (0..counts.len()).filter(|&c| plan.role(c, func).profiles(&path)) {
            let n = profiled[copy].get(&bl).copied().unwrap_or(0);
            match agreed {
                None => agreed = Some((copy, n)),
                Some((first, m)) if m != n => {
                    return Err(MergeError::Divergence {
                        func,
                        path: bl,
                        first,
                        first_count: m,
                        second: copy,
                        second_count: n,
                    })
                }
                Some(_) => {}
            }
        }
        let (_, n) = agreed.expect("the copy that counted it profiles it");
        merged.push((bl, n));
    }
    // A copy counts every path but those a PSPP copy leaves uncounted
    // (paths of no interest to it, ending where only such paths end).
    let weights = f.weights();
    let mut all = Vec::new();
    for c in (0..counts.len()).filter(|&c| plan.role(c, func).is_instrumented()) {
        let probes = plan.role(c, func).probes(f.cfg, dag, &weights);
        if probes.complete {
            all.push(c);
            continue;
        }
        let mut expected = 0u128;
        for &(bl, n) in &merged {
            let path = regenerate(dag, bl).expect("a merged Ball-Larus id").edges;
            if probes.counts(&path) {
                expected += n as u128;
            }
        }
        if totals[c] != expected {
            return Err(MergeError::Ended {
                func,
                copy: c,
                counted: totals[c],
                expected,
            });
        }
    }
    let Some((&first, rest)) = all.split_first() else {
        return Ok(merged);
    };
    if let Some(&second) = rest.iter().find(|&&c| totals[c] != totals[first]) {
        return Err(MergeError::Totals {
            func,
            first,
            first_total: totals[first],
            second,
            second_total: totals[second],
        });
    }
    let profiled: u128 = merged.iter().map(|&(_, n)| n as u128).sum();
    if profiled != totals[first] {
        return Err(MergeError::Unprofiled {
            func,
            counted: totals[first],
            profiled,
        });
    }
    Ok(merged)
}

/// Reads merged counts as path mode's reader does ([`derive()`], `layout` being
/// path mode's for the function) and refuses them when flow is not
/// conserved.
pub fn check_flow(
    func: FuncId,
    cfg: &Cfg,
    layout: &Layout,
    merged: &RawCounts,
) -> Result<FunctionCounts, MergeError> {
    let counts = derive(cfg, layout, &merged.slots, &merged.paths)
        .map_err(|source| MergeError::Derive { func, source })?;
    if !counts.imbalance.is_balanced() {
        return Err(MergeError::Flow {
            func,
            imbalance: counts.imbalance,
        });
    }
    Ok(counts)
}

/// The ids a copy in `role` counts for a Ball-Larus profile of one function
/// (path mode's ids → the copy's): what the copy's instrumentation would
/// have counted, for tests and for simulating copies from a profile.
pub fn copy_ids(
    f: &Function,
    role: &Role,
    profile: &[(u64, u64)],
) -> Result<Vec<(u64, u64)>, crate::regen::RegenError> {
    let Role::Pspp(pspp) = role else {
        return Ok(if role.is_instrumented() {
            sum_by_id(profile.to_vec())
        } else {
            Vec::new()
        });
    };
    let probes = role.probes(f.cfg, f.dag, &f.weights());
    let mut out = Vec::with_capacity(profile.len());
    for &(bl, n) in profile {
        let path = regenerate(f.dag, bl)?;
        if probes.counts(&path.edges) {
            out.push((pspp.labeling().path_id(&path.edges), n));
        }
    }
    Ok(sum_by_id(out))
}
