//! The live files of killed processes (continuous mode,
//! `PATHPROF_CONTINUOUS=1`), folded into their profile by the tools that
//! read it, with the runtime's protocol (`pathprof-rt`'s `dead` module):
//! under the profile's `flock`, each `<profile>.<pid>-<16 hex>.live` whose
//! own lock can be taken (its process is gone) is decoded
//! (`pathprof_format::live::decode`), merged in, tagged with the new
//! profile's checksum before the rename and removed after it. A live file
//! already merged (its tag is the profile's checksum) is only removed; a
//! damaged one is left with a warning; one of a process killed while it
//! set the file up (no magic yet) is removed.

use pathprof_core::profile::ProfileError;
use pathprof_format::live::{self as layout, header};
use pathprof_format::ProfileFile;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The live files beside `profile`.
fn live_files(profile: &Path) -> Vec<PathBuf> {
    let (Some(base), dir) = (
        profile.file_name().and_then(|b| b.to_str()),
        profile.parent(),
    ) else {
        return Vec::new();
    };
    let dir = match dir {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| layout::is_live_file_of(e.file_name().as_encoded_bytes(), base.as_bytes()))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The profile, opened (created if absent) and locked: the inode its name
/// refers to (a writer may rename a new file over it while we wait).
fn lock_profile(path: &Path) -> std::io::Result<File> {
    loop {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        f.lock()?;
        let (held, named) = (f.metadata()?, std::fs::metadata(path)?);
        if (held.dev(), held.ino()) == (named.dev(), named.ino()) {
            return Ok(f);
        }
    }
}

/// Merges the live files of killed processes beside `path` into it; how
/// many processes' files were merged. Nothing to do costs one directory
/// listing. A profile that does not decode is left as it is (its reader
/// reports it).
pub fn fold(path: &Path) -> Result<u64, ProfileError> {
    if live_files(path).is_empty() {
        return Ok(0);
    }
    let io = |error| ProfileError::Io {
        path: path.display().to_string(),
        error,
    };
    let profile = lock_profile(path).map_err(io)?;
    let bytes = std::fs::read(path).map_err(io)?;
    let mut file = if bytes.is_empty() {
        ProfileFile::default()
    } else {
        match ProfileFile::decode(&bytes) {
            Ok(f) => f,
            Err(_) => return Ok(0),
        }
    };
    let on_disk = layout::profile_checksum(&bytes);
    let (mut merged, mut gone, mut tagged) = (0u64, Vec::new(), Vec::new());
    for live in live_files(path) {
        let Ok(f) = OpenOptions::new().read(true).write(true).open(&live) else {
            continue;
        };
        match f.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => continue, // alive
            Err(TryLockError::Error(_)) => continue,
        }
        let Ok(mut data) = std::fs::read(&live) else {
            continue;
        };
        if data.is_empty() {
            continue; // maybe a process between creating and locking it
        }
        if layout::peek(&data).is_none() {
            if data.len() >= layout::HEADER_BYTES && data[..8] != layout::LIVE_MAGIC {
                gone.push(live); // killed while setting it up: nothing in it
            } else {
                eprintln!(
                    "pathprof: warning: {} is not a live file pathprof can read; left alone",
                    live.display()
                );
            }
            continue;
        }
        let mut sections = Vec::new();
        let decoded = layout::decode(&mut data, on_disk, Vec::new, |s| {
            sections.push(ProfileFile::decode(&s)?);
            Ok(())
        });
        match decoded {
            Ok(Ok(summary)) if summary.merged_already => gone.push(live),
            Ok(Ok(summary)) => {
                let mut all = file.clone();
                if sections.iter().try_for_each(|s| all.merge(s)).is_err() {
                    eprintln!(
                        "pathprof: warning: the live file {} does not merge into {} (another build of the same id?); left alone",
                        live.display(),
                        path.display()
                    );
                    continue;
                }
                file = all;
                merged += 1;
                if summary.lost > 0 {
                    eprintln!(
                        "pathprof: warning: process {} dropped {} path executions for lack of memory",
                        summary.pid, summary.lost
                    );
                }
                tagged.push((f, live));
            }
            Ok(Err(e)) => eprintln!("pathprof: warning: {}: {e}; left alone", live.display()),
            Err(e) => eprintln!("pathprof: warning: {}: {e}", live.display()),
        }
    }
    if merged > 0 {
        let out = file.encode();
        let checksum = layout::profile_checksum(&out);
        for (f, _) in &tagged {
            f.write_at(&checksum.to_le_bytes(), header::MERGED_TAG as u64)
                .map_err(io)?;
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let mut temp =
            tempfile::NamedTempFile::new_in(dir.unwrap_or(Path::new("."))).map_err(io)?;
        std::io::Write::write_all(&mut temp, &out).map_err(io)?;
        let perms = profile.metadata().map_err(io)?.permissions();
        let _ = temp.as_file().set_permissions(perms);
        temp.persist(path).map_err(|e| io(e.error))?;
        eprintln!(
            "pathprof: merged the live files of {merged} killed process{} into {}",
            if merged == 1 { "" } else { "es" },
            path.display()
        );
    }
    for live in gone.iter().chain(tagged.iter().map(|(_, l)| l)) {
        let _ = std::fs::remove_file(live);
    }
    drop(profile);
    Ok(merged)
}
