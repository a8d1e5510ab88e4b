//! Raw profile files: read and decoded (pathprof-format's decoding, a
//! section per build), with the file named in every error.

use pathprof_core::profile::ProfileError;
use pathprof_format::{FormatError, ProfileFile};
use std::path::Path;

/// Reads and decodes a raw profile file of any number of builds, after
/// merging into it the live files of processes killed in continuous mode
/// (`live`; a failure there is a warning: the profile is read as it is).
pub fn read_file(path: &Path) -> Result<ProfileFile, ProfileError> {
    if let Err(e) = crate::live::fold(path) {
        eprintln!("pathprof: warning: could not merge the live files of killed processes: {e}");
    }
    read_with(path, ProfileFile::decode)
}

/// Reads `path` and decodes it with `decode`, naming the file in errors.
fn read_with<T>(
    path: &Path,
    decode: impl FnOnce(&[u8]) -> Result<T, FormatError>,
) -> Result<T, ProfileError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| ProfileError::Io {
        path: p.clone(),
        error,
    })?;
    decode(&bytes).map_err(|error| ProfileError::Format { path: p, error })
}
