//! Pairs a map file with a raw profile: finds the section of the map's build
//! in a profile file, checks they come from one build and interprets every
//! function's counters ([`crate::derive`]).

use crate::derive::{derive_with_resumes, DeriveError, FunctionCounts, Resumes};
use crate::map::MapFile;
use pathprof_format::{abi, FormatError, RawProfile};

/// Why a profile could not be read against a map.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileError {
    #[error("cannot read profile {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {error}")]
    Format { path: String, error: FormatError },
    #[error("profile {profile} was written by another build ({}) than map {map} (build id {expected:016x}); {}", builds(.found), advice(.found))]
    OtherBuild {
        profile: String,
        map: String,
        /// The builds the profile holds (one section each).
        found: Vec<u64>,
        expected: u64,
    },
    #[error("{map} holds objects built in {first} mode and in {other} mode; report on each mode's objects separately")]
    MixedModes {
        map: String,
        first: &'static str,
        other: &'static str,
    },
    #[error("profile {profile} records {found} counters but map {map} is for {expected} mode")]
    Mode {
        profile: String,
        map: String,
        found: String,
        expected: &'static str,
    },
    #[error("profile {profile} has counts for function #{index}, which map {map} does not have (damaged profile?)")]
    UnknownFunction {
        profile: String,
        map: String,
        index: u32,
    },
    #[error("profile {profile}: function {name} has another shape (hash {found:016x}, map says {expected:016x}); profile and map are from different builds")]
    FunctionHash {
        profile: String,
        name: String,
        found: u64,
        expected: u64,
    },
    #[error("profile {profile}, function {name}: {error}")]
    Derive {
        profile: String,
        name: String,
        error: DeriveError,
    },
}

/// "build id X", "build ids X, Y", or "no build" for an empty file.
fn builds(found: &[u64]) -> String {
    let ids: Vec<String> = found.iter().map(|b| format!("{b:016x}")).collect();
    match ids.len() {
        0 => "no build".to_string(),
        1 => format!("build id {}", ids[0]),
        _ => format!("build ids {}", ids.join(", ")),
    }
}

/// What to do about a profile of other builds than the map's.
fn advice(found: &[u64]) -> &'static str {
    if found.len() > 1 {
        "pass the .ppmap written when one of those was built"
    } else {
        "use the .ppmap written when that program was built"
    }
}

/// The mode number a runtime records for a map's mode (and the instrumenter
/// writes into `PpModule::mode`): `pathprof_format::abi`'s.
pub fn mode_number(mode: crate::Mode) -> u32 {
    match mode {
        crate::Mode::Block => abi::MODE_BLOCK,
        crate::Mode::Edge => abi::MODE_EDGE,
        crate::Mode::Path => abi::MODE_PATH,
    }
}

/// Interprets `raw` against `map`: one [`FunctionCounts`] per map function
/// (functions that never ran count zero). Names are for messages.
pub fn interpret(
    map: &MapFile,
    map_name: &str,
    raw: &RawProfile,
    profile_name: &str,
) -> Result<Vec<FunctionCounts>, ProfileError> {
    if raw.build_id != map.build_id {
        return Err(ProfileError::OtherBuild {
            profile: profile_name.into(),
            map: map_name.into(),
            found: vec![raw.build_id],
            expected: map.build_id,
        });
    }
    if raw.mode != mode_number(map.mode) {
        return Err(ProfileError::Mode {
            profile: profile_name.into(),
            map: map_name.into(),
            found: raw.mode.to_string(),
            expected: map.mode.name(),
        });
    }
    let mut by_index: Vec<Option<&pathprof_format::RawFunction>> = vec![None; map.functions.len()];
    for f in &raw.functions {
        let slot =
            by_index
                .get_mut(f.index as usize)
                .ok_or_else(|| ProfileError::UnknownFunction {
                    profile: profile_name.into(),
                    map: map_name.into(),
                    index: f.index,
                })?;
        let mf = &map.functions[f.index as usize];
        if f.hash != mf.hash {
            return Err(ProfileError::FunctionHash {
                profile: profile_name.into(),
                name: mf.name.clone(),
                found: f.hash,
                expected: mf.hash,
            });
        }
        *slot = Some(f);
    }
    // Callers first: a function whose entry count its callers give
    // (`crate::callers`) is derived after them.
    let mut counts: Vec<Option<FunctionCounts>> = vec![None; map.functions.len()];
    for i in crate::callers::callers_first(&map.functions) {
        let mf = &map.functions[i];
        let (slots, paths, resumes) =
            by_index[i].map_or((&[][..], &[][..], Resumes::default()), |f| {
                let resumes = Resumes {
                    slots: &f.slot_resumes,
                    paths: &f.path_resumes,
                };
                (&f.slots[..], &f.paths[..], resumes)
            });
        let (known_entry, doubt) = match &mf.entry_calls[..] {
            [] => (None, None),
            sites => {
                let (entry, doubt) = crate::callers::entry_count(sites, &counts);
                (Some(entry), doubt)
            }
        };
        let mut derived =
            derive_with_resumes(&mf.cfg, &mf.layout, slots, paths, resumes, known_entry).map_err(
                |error| ProfileError::Derive {
                    profile: profile_name.into(),
                    name: mf.name.clone(),
                    error,
                },
            )?;
        derived.imbalance.nodes.extend(doubt);
        counts[i] = Some(derived);
    }
    Ok(counts
        .into_iter()
        .map(|c| c.expect("callers_first orders every function"))
        .collect())
}
