//! The paper's *hit count* (Afraz et al. 2015, section 4.2): how many times
//! a copy's probes run on an input, computed from a path profile of that
//! input; a strategy's overhead is the largest over its copies (the slowest
//! copy), compared for SBL (sequential Ball-Larus: one copy profiling
//! everything), PBL (whole functions distributed over K copies) and P3.
//!
//! A path that ran `n` times adds to every copy that instruments its
//! function `n` times the probes along it in that copy ([`Probes::along`]),
//! whether the copy profiles the path or not: uninteresting paths pass
//! through a PSPP copy's probes too (but not its counts left out). Slot counters (self loops, resumes) are
//! not in a path profile and not counted, nor are early-exit counts made and
//! undone around every call: only the one of a path that ended in its call.

use super::program::{plan_program, Function, ProgramPlan, Strategy};
use super::role::Probes;
use crate::ids::FuncId;
use crate::regen::{regenerate, RegenError};

/// Probe executions per copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HitCounts {
    pub per_copy: Vec<u64>,
    /// Per function, per copy: the probe executions in that function (the
    /// parts of `per_copy`).
    pub per_function: Vec<Vec<u64>>,
}

impl HitCounts {
    /// The overhead of the strategy: its slowest copy's hits.
    pub fn max(&self) -> u64 {
        self.per_copy.iter().copied().max().unwrap_or(0)
    }
}

/// SBL, PBL and P3 on one profile for one K.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HitTable {
    pub sbl: HitCounts,
    pub pbl: HitCounts,
    pub p3: HitCounts,
}

/// The hits of `plan`'s copies on `profile` (per function: Ball-Larus id and
/// count pairs).
pub fn hit_counts(
    functions: &[Function],
    plan: &ProgramPlan,
    profile: &[Vec<(u64, u64)>],
) -> Result<HitCounts, RegenError> {
    assert_eq!(profile.len(), functions.len(), "a profile per function");
    let mut per_function = vec![vec![0u128; plan.copies()]; functions.len()];
    for (i, (f, paths)) in functions.iter().zip(profile).enumerate() {
        if paths.is_empty() {
            continue;
        }
        let weights = f.weights();
        let probes: Vec<Option<Probes>> = (0..plan.copies())
            .map(|c| {
                let role = plan.role(c, FuncId::new(i));
                role.is_instrumented()
                    .then(|| role.probes(f.cfg, f.dag, &weights))
            })
            .collect();
        for &(bl, n) in paths {
            let path = regenerate(f.dag, bl)?;
            for (hits, p) in per_function[i].iter_mut().zip(&probes) {
                if let Some(p) = p {
                    *hits += n as u128 * p.along(f.dag, &path.edges) as u128;
                }
            }
        }
    }
    let saturated = |h: u128| u64::try_from(h).unwrap_or(u64::MAX);
    let per_copy = (0..plan.copies())
        .map(|c| saturated(per_function.iter().map(|f| f[c]).sum()))
        .collect();
    Ok(HitCounts {
        per_copy,
        per_function: per_function
            .into_iter()
            .map(|f| f.into_iter().map(saturated).collect())
            .collect(),
    })
}

/// The hits of SBL on `profile`: path mode as built, one copy planned
/// without the functions' training (its static spanning trees).
pub fn sbl_hits(
    functions: &[Function],
    profile: &[Vec<(u64, u64)>],
) -> Result<HitCounts, RegenError> {
    let untrained: Vec<Function> = functions.iter().map(Function::untrained).collect();
    hit_counts(
        &untrained,
        &plan_program(&untrained, 1, Strategy::Pbl),
        profile,
    )
}

/// The hits of SBL, PBL and P3 with `copies` copies on `profile`.
pub fn hit_table(
    functions: &[Function],
    profile: &[Vec<(u64, u64)>],
    copies: usize,
) -> Result<HitTable, RegenError> {
    let hits = |copies, strategy| {
        hit_counts(
            functions,
            &plan_program(functions, copies, strategy),
            profile,
        )
    };
    Ok(HitTable {
        sbl: sbl_hits(functions, profile)?,
        pbl: hits(copies, Strategy::Pbl)?,
        p3: hits(copies, Strategy::P3)?,
    })
}
