//! Loading what every report reads: a map file and one or more profiles of its
//! build (summed), interpreted into per-function counts.

use anyhow::{bail, Context as _, Result};
use pathprof_core::derive::FunctionCounts;
use pathprof_core::map::MapFile;
use pathprof_core::profile::{interpret, read_raw};
use pathprof_format::RawProfile;
use std::path::{Path, PathBuf};

/// A map with the counts of its profile(s).
pub struct Loaded {
    pub map: MapFile,
    pub map_path: PathBuf,
    pub counts: Vec<FunctionCounts>,
}

/// Reads and sums `profiles` (at least one) of the build of `map`.
pub fn load(map_path: &Path, profiles: &[PathBuf]) -> Result<Loaded> {
    let map = MapFile::read(map_path)?;
    let raw = read_profiles(profiles)?;
    let counts = interpret(
        &map,
        &map_path.display().to_string(),
        &raw,
        &profiles[0].display().to_string(),
    )?;
    let lost: u64 = counts.iter().map(|c| c.lost).fold(0, u64::saturating_add);
    if lost > 0 {
        eprintln!(
            "pathprof: note: {lost} execution(s) ended inside a call that never returned (exit, longjmp); \
             their last partial paths were not counted. Rebuild with --early-exit to count them."
        );
    }
    Ok(Loaded {
        map,
        map_path: map_path.to_path_buf(),
        counts,
    })
}

/// Reads and merges raw profiles, refusing to mix builds.
pub fn read_profiles(profiles: &[PathBuf]) -> Result<RawProfile> {
    let Some((first, rest)) = profiles.split_first() else {
        bail!("no profile given: name the .pprof file(s) the program wrote");
    };
    let mut raw = read_raw(first)?;
    for p in rest {
        let other = read_raw(p)?;
        raw.merge(&other)
            .with_context(|| format!("cannot add {} to {}", p.display(), first.display()))?;
    }
    Ok(raw)
}

/// Splits arguments into profiles (files that are, or look like, profiles:
/// they start with the profile magic, or do not exist and end in `.pprof`) and
/// the rest (source file names).
pub fn split_profiles(args: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<String>) {
    let mut profiles = Vec::new();
    let mut others = Vec::new();
    for a in args {
        let is_profile = match std::fs::File::open(&a) {
            Ok(mut f) => {
                let mut magic = [0u8; 8];
                std::io::Read::read_exact(&mut f, &mut magic).is_ok()
                    && pathprof_format::is_profile(&magic)
            }
            Err(_) => a.extension().is_some_and(|e| e == "pprof"),
        };
        if is_profile || profiles.is_empty() {
            profiles.push(a);
        } else {
            others.push(a.display().to_string());
        }
    }
    (profiles, others)
}
