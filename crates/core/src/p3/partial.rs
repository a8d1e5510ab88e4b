//! The K copies' partial profiles, as their runtimes wrote them (a raw
//! profile section each, under the copy's build id,
//! [`super::build::copy_build_id`]), into one raw profile section of the
//! map's build: path mode's profile of the same run, which every report
//! reads as it reads a path-mode profile.
//!
//! Before [`super::merge::merge`] sees the counts, each copy's
//! section must be the copy's (its build id and mode), every function record
//! one of the map's (index and shape hash), and the copies must tell the
//! same story about their processes (`processes`, `forked`, `threads`):
//! copies that forked or started threads differently ran differently. Then
//! the merge's checks (divergence, totals, what no copy profiled) and flow
//! conservation of every merged function ([`check_flow`]) decide.
//!
//! The result has the facts and object paths of copy 0 (the copies agree
//! on the facts; the objects name copy 0's executable), and per function the
//! merged path counts with the slot copy's slots and slot resumes. Path
//! resumes (a fork child returning from a call its parent was in, with
//! `--early-exit`) are refused: each copy counts them by its own ids, and
//! their merge is not written yet.

use super::build::MapProgram;
use super::merge::{check_flow, merge, MergeError, RawCounts};
use super::program::ProgramPlan;
use crate::ids::FuncId;
use crate::layout::Layout;
use crate::profile::mode_number;
use crate::Mode;
use pathprof_format::{Facts, RawFunction, RawProfile};

/// Why the copies' partial profiles do not make a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartialError {
    #[error("expected the partial profiles of {expected} copies, not {found}")]
    Copies { expected: usize, found: usize },
    #[error("copy {copy}'s profile is of build {found:016x}, not the copy's ({expected:016x}): written by another build of the program?")]
    OtherBuild {
        copy: usize,
        found: u64,
        expected: u64,
    },
    #[error("copy {copy}'s profile does not hold path counters (mode {found})")]
    Mode { copy: usize, found: u32 },
    #[error("copy {copy}'s profile has counts of function #{index}, which the map does not have")]
    UnknownFunction { copy: usize, index: u32 },
    #[error("copy {copy}'s profile has counts of function {name} with another shape than the map's: written by another build of the program?")]
    Hash { copy: usize, name: String },
    #[error("copy {copy}'s profile has resumed paths in function {name} (a fork child returned from a call its parent was in): P3 cannot merge those yet; profile this program in path mode")]
    Resumes { copy: usize, name: String },
    #[error(
        "the copies diverge: copy {copy} recorded {found} {what} but copy 0 recorded {expected}"
    )]
    Facts {
        copy: usize,
        what: &'static str,
        expected: u64,
        found: u64,
    },
    #[error("in function {name}: {source}")]
    Merge { name: String, source: MergeError },
}

impl PartialError {
    /// Whether the copies ran differently (their facts or counts disagree),
    /// rather than their profiles being of another build.
    pub fn is_divergence(&self) -> bool {
        match self {
            PartialError::Facts { .. } => true,
            PartialError::Merge { source, .. } => source.is_divergence(),
            _ => false,
        }
    }

    /// The copy the error is about, when it is one copy's.
    pub fn copy(&self) -> Option<usize> {
        match self {
            PartialError::Copies { .. } => None,
            PartialError::OtherBuild { copy, .. }
            | PartialError::Mode { copy, .. }
            | PartialError::UnknownFunction { copy, .. }
            | PartialError::Hash { copy, .. }
            | PartialError::Resumes { copy, .. }
            | PartialError::Facts { copy, .. } => Some(*copy),
            PartialError::Merge { source, .. } => source.copy(),
        }
    }
}

impl MapProgram<'_> {
    /// Merges `partials` (copy `i`'s section at `i`) of the copies `plan`
    /// (this program's) made into a section of the map's build.
    pub fn merge_partials(
        &self,
        plan: &ProgramPlan,
        partials: &[RawProfile],
    ) -> Result<RawProfile, PartialError> {
        let copies = plan.copies();
        if partials.len() != copies {
            return Err(PartialError::Copies {
                expected: copies,
                found: partials.len(),
            });
        }
        let n = self.functions.len();
        let mut counts: Vec<Vec<RawCounts>> = vec![vec![RawCounts::default(); n]; copies];
        let mut records: Vec<Vec<Option<&RawFunction>>> = vec![vec![None; n]; copies];
        for (copy, section) in partials.iter().enumerate() {
            self.check_section(copies, copy, section, &partials[0].facts())?;
            for f in &section.functions {
                let i = f.index as usize;
                counts[copy][i] = RawCounts {
                    slots: f.slots.clone(),
                    paths: f.paths.clone(),
                };
                records[copy][i] = Some(f);
            }
        }
        let merged = merge(&self.functions, plan, &counts).map_err(|e| self.named(e))?;
        let mut out = RawProfile::new(self.map.build_id, mode_number(Mode::Path));
        out.set_facts(partials[0].facts());
        out.objects = partials[0].objects.clone();
        out.objects_truncated = partials[0].objects_truncated;
        for (i, m) in merged.into_iter().enumerate() {
            let func = FuncId::new(i);
            let mf = &self.map.functions[i];
            check_flow(func, &mf.cfg, &mf.layout, &m).map_err(|e| self.named(e))?;
            let slot_resumes = plan
                .slot_copy(func)
                .and_then(|c| records[c][i])
                .map_or_else(Vec::new, |f| f.slot_resumes.clone());
            let empty = m.paths.is_empty() && slot_resumes.is_empty();
            if empty && m.slots.iter().all(|&s| s == 0) {
                continue;
            }
            // The slot copy records no function it counted nothing of
            // (its paths' ends may all be other copies'): zero slots then.
            let mut slots = m.slots;
            if let Layout::Path {
                self_loops,
                resumes,
                call_exits,
                ..
            } = &mf.layout
            {
                if slots.is_empty() {
                    slots = vec![0; self_loops.len() + resumes.len() + call_exits.len()];
                }
            }
            out.functions.push(RawFunction {
                index: i as u32,
                hash: mf.hash,
                slots,
                paths: m.paths,
                slot_resumes,
                path_resumes: Vec::new(),
            });
        }
        out.normalize();
        Ok(out)
    }

    /// That copy `copy`'s section is the copy's, its functions the map's,
    /// and its facts those of copy 0 (`first`).
    fn check_section(
        &self,
        copies: usize,
        copy: usize,
        section: &RawProfile,
        first: &Facts,
    ) -> Result<(), PartialError> {
        let expected = self.copy_build_id(copies, copy);
        if section.build_id != expected {
            return Err(PartialError::OtherBuild {
                copy,
                found: section.build_id,
                expected,
            });
        }
        if section.mode != mode_number(Mode::Path) {
            return Err(PartialError::Mode {
                copy,
                found: section.mode,
            });
        }
        let facts = section.facts();
        for (what, expected, found) in [
            ("processes", first.processes, facts.processes),
            ("forked processes", first.forked, facts.forked),
            ("threads", first.threads, facts.threads),
        ] {
            if expected != found {
                return Err(PartialError::Facts {
                    copy,
                    what,
                    expected,
                    found,
                });
            }
        }
        for f in &section.functions {
            let Some(mf) = self.map.functions.get(f.index as usize) else {
                return Err(PartialError::UnknownFunction {
                    copy,
                    index: f.index,
                });
            };
            let name = || mf.shown_name().to_string();
            if f.hash != mf.hash {
                return Err(PartialError::Hash { copy, name: name() });
            }
            if !f.path_resumes.is_empty() {
                return Err(PartialError::Resumes { copy, name: name() });
            }
        }
        Ok(())
    }

    /// `e` with the name of the function it is about.
    fn named(&self, e: MergeError) -> PartialError {
        let name = e.func().map_or_else(String::new, |f| {
            self.map.functions[f.index()].shown_name().to_string()
        });
        PartialError::Merge { name, source: e }
    }
}
