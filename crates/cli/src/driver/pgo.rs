//! `pathprof cc --profile-use=FILE`: an optimised build that takes its
//! counts from a profile of an instrumented build. The profile is indexed
//! once per build (cached per user; or given indexed, `pathprof index`); each compile
//! step runs clang with pathprof's pass plugin, which gives every function
//! of the translation unit its counts at the point where instrumentation
//! counted them (`pathprof_llvm::annotate`) and records what it used in the
//! object's note section; the link is the user's own, with no runtime, and
//! says in one note what the linked objects' notes add up to.

use super::args::Invocation;
use super::{file_name, output_of};
use anyhow::{bail, Context as _, Result};
use pathprof_core::pgo::{Index, UseNote, NOTE_SECTION};
use pathprof_llvm::timings::{self, Phase};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

/// The indexed profile this invocation's compile steps read.
static INDEX: OnceLock<PathBuf> = OnceLock::new();

/// The profile `--profile-use` names, indexed for this invocation.
pub(super) struct Prepared {
    /// The index as read, for the link's note.
    index: Index,
    /// Where no cache could be used: the index written for this invocation
    /// alone, removed when it ends.
    _made: Option<tempfile::NamedTempFile>,
}

/// Indexes the profile `--profile-use` names (a raw profile is read with
/// `--profile-map`'s maps, or those its sections name) for the compile
/// steps of this invocation. A raw profile's index is kept in the cache
/// ([`cache_file`]) under the identity of the profile and the maps, so that
/// the compile steps of one build index it once.
pub(super) fn prepare(inv: &Invocation, profile: &Path) -> Result<Prepared> {
    let mut made = None;
    let (path, index) = if pathprof_report::pgo::is_index_file(profile) {
        (
            profile.to_path_buf(),
            pathprof_report::pgo::read_index(profile)?,
        )
    } else {
        raw_profile_indexed(profile, &inv.options.profile_map, &mut made)?
    };
    if index.functions.is_empty() {
        bail!(
            "--profile-use={}: the profile has counts of no function; run the instrumented \
             program (its profile is written when it ends), then build again",
            profile.display()
        );
    }
    INDEX.get_or_init(|| path);
    Ok(Prepared { index, _made: made })
}

/// The index of the raw `profile` read with `maps`, from the cache or made
/// (and cached; where there is no cache, written to a temporary file `made`
/// holds); where it lies.
fn raw_profile_indexed(
    profile: &Path,
    maps: &[PathBuf],
    made: &mut Option<tempfile::NamedTempFile>,
) -> Result<(PathBuf, Index)> {
    let cached = cache_file(profile, maps);
    if let Some(c) = &cached {
        if let Ok(index) = pathprof_report::pgo::read_index(c) {
            return Ok((c.clone(), index));
        }
    }
    let index = pathprof_report::pgo::index_of_profiles(maps, &[profile.to_path_buf()])
        .with_context(|| format!("--profile-use={}", profile.display()))?;
    let bytes = index.to_bytes();
    if let Some(c) = cached {
        if pathprof_io::output::write_new(&c, &bytes).is_ok() {
            return Ok((c, index));
        }
    }
    let mut file = tempfile::Builder::new()
        .prefix("pathprof-index-")
        .suffix(".ppdata")
        .tempfile()?;
    std::io::Write::write_all(&mut file, &bytes)?;
    let path = file.path().to_path_buf();
    *made = Some(file);
    Ok((path, index))
}

/// Where the index of `profile` read with `maps` is cached:
/// `$TMPDIR/pathprof-<uid>/<hash>.ppdata`, the hash of the files' names,
/// inodes, sizes and modification times (a profile written again, or other
/// maps, is another entry). `None` when that directory cannot be made this
/// user's alone (it exists as a link, or belongs to another user, or others
/// may write it).
fn cache_file(profile: &Path, maps: &[PathBuf]) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let dir = std::env::temp_dir().join(format!("pathprof-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    if !meta.file_type().is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let mut h = pathprof_core::hash::Fnv64::new();
    for file in std::iter::once(profile).chain(maps.iter().map(PathBuf::as_path)) {
        let m = std::fs::metadata(file).ok()?;
        let name = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        h.write_str(&name.display().to_string());
        for v in [
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime() as u64,
            m.mtime_nsec() as u64,
        ] {
            h.write_u64(v);
        }
    }
    Some(dir.join(format!("{:016x}.ppdata", h.finish())))
}

impl Prepared {
    /// The profile, indexed.
    pub(super) fn index(&self) -> &Index {
        &self.index
    }
}

/// The link step of an optimised build: `args` (objects in the place of
/// the sources) linked as they are, with no runtime, after the check that
/// the profile is this program's, then the note of what the objects used.
pub(super) fn link(
    clang: &Path,
    inv: &Invocation,
    prepared: &Prepared,
    args: Vec<String>,
) -> Result<ExitCode> {
    check_before_link(inv, prepared, &args)?;
    let code = timings::time(Phase::Link, || super::exec(clang, &args))?;
    if code == ExitCode::SUCCESS {
        report_link(inv, prepared);
    }
    Ok(code)
}

/// The indexed profile [`prepare`] made ready (`None` without
/// `--profile-use`).
pub(super) fn index_path() -> Option<&'static Path> {
    INDEX.get().map(PathBuf::as_path)
}

/// Whether `inv` asks for assembly or IR text of its sources (`-S`, with
/// or without `-emit-llvm`), which `--profile-use` compiles with the
/// profile's counts (as clang's `-fprofile-use` does); every other
/// pass-through (`-E`, `-M`...) stays clang's own.
pub(super) fn is_assembly_output(inv: &Invocation) -> bool {
    let has = |flag: &str| inv.args.iter().any(|a| a == flag);
    has("-S") && !["-E", "-M", "-MM", "-fsyntax-only"].into_iter().any(has)
}

/// Before a link with `--profile-use`: refuses when the output is a
/// program the profile ran but none of the functions of the objects and
/// archives on the link line (`args`) is in the profile: a profile of
/// another program of that name, which would leave a build without counts
/// (and, linked over the instrumented program, the profile without its map).
fn check_before_link(inv: &Invocation, prepared: &Prepared, args: &[String]) -> Result<()> {
    let mut note = UseNote::default();
    for arg in args.iter().filter(|a| !a.starts_with('-')) {
        let Ok(bytes) = std::fs::read(arg) else {
            continue;
        };
        let members: Vec<&[u8]> = match super::archive::members(&bytes) {
            Ok(members) => members.iter().map(|m| m.data).collect(),
            Err(_) => vec![&bytes[..]],
        };
        // Relocatable objects only: a shared library's notes are its own
        // program's.
        for data in members
            .into_iter()
            .filter(|d| pathprof_io::elf::is_relocatable(d))
        {
            if let Ok(Some(section)) = pathprof_io::elf::section(data, NOTE_SECTION) {
                note.add(&UseNote::sum_of(&section));
            }
        }
    }
    let output = output_of(inv);
    let name = file_name(output);
    if note.matched == 0 && note.functions > 0 && prepared.index.programs.contains(&name) {
        bail!(
            "{} is not a profile of this build of {name}: none of the {} functions of its \
             objects is in it (the profile's {name} is another program, or all of it changed); \
             run this build's instrumented {name} and use its profile",
            profile_name(inv),
            note.functions
        );
    }
    Ok(())
}

/// After a link with `--profile-use`: one note of what the objects linked
/// into the output used (functions changed since the profile; branches
/// `--every-block` counts leave undetermined; no function in the profile;
/// the tails `--duplicate-hot-paths` copied).
fn report_link(inv: &Invocation, prepared: &Prepared) {
    let output = output_of(inv);
    let Ok(bytes) = std::fs::read(output) else {
        return;
    };
    let Ok(Some(section)) = pathprof_io::elf::section(&bytes, NOTE_SECTION) else {
        return; // nothing compiled with the profile in it
    };
    let note = UseNote::sum_of(&section);
    let profile = profile_name(inv);
    if note.matched == 0 && note.functions > 0 {
        eprintln!(
            "pathprof: note: {output}: none of its {} functions is in the profile {profile} (of \
             {}); built without counts",
            note.functions,
            prepared.index.programs.join(", ")
        );
        return;
    }
    if !note.changed.is_empty() {
        const SHOWN: usize = 10;
        let mut names = note.changed[..note.changed.len().min(SHOWN)].join(", ");
        if note.changed.len() > SHOWN {
            names.push_str(&format!(" and {} more", note.changed.len() - SHOWN));
        }
        eprintln!(
            "pathprof: note: {output}: {} function{} changed since the profile: {names}; built \
             without counts there: rebuild the profile",
            note.changed.len(),
            if note.changed.len() == 1 { "" } else { "s" }
        );
    }
    if note.undetermined > 0 {
        eprintln!(
            "pathprof: note: {output}: the profile's block counts (--every-block) leave {} branches of profiled \
             functions undetermined, built without weights (an edge or path mode profile gives \
             every branch)",
            note.undetermined
        );
    }
    if inv.options.duplicate_hot_paths {
        let has_paths = prepared
            .index
            .functions
            .iter()
            .any(|f| !f.profile.paths.is_empty());
        if has_paths {
            eprintln!(
                "pathprof: note: {output}: {} tail{} of hot paths copied ({} instructions) where \
                 the paths show correlated branches",
                note.copied_tails,
                if note.copied_tails == 1 { "" } else { "s" },
                note.copied_instructions
            );
        } else {
            eprintln!(
                "pathprof: note: {output}: --duplicate-hot-paths needs a path-mode profile, and \
                 {profile} has no paths: nothing copied (train a --mode=path build)"
            );
        }
    }
}

fn profile_name(inv: &Invocation) -> String {
    inv.options
        .profile_use
        .as_ref()
        .map_or_else(String::new, |p| p.display().to_string())
}
