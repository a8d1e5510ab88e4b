//! Raw profile files: read and decoded (pathprof-format's decoding, a
//! section per build), with the file named in every error.

use pathprof_core::profile::ProfileError;
use pathprof_format::{FormatError, ProfileFile};
use std::path::Path;

/// Reads and decodes a raw profile file of any number of builds.
pub fn read_file(path: &Path) -> Result<ProfileFile, ProfileError> {
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
