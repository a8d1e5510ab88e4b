//! Map fragments in files: a `.ppmap` file (fragments one after another),
//! or the `.pathprof.map` section of an executable, shared library or
//! object file built by `pathprof cc`. The fragments' bytes are
//! pathprof-core's ([`MapFile::to_bytes`], [`MapFile::fragments_from_bytes`]).

use pathprof_core::map::{MapError, MapFile, MAP_SECTION};
use std::path::Path;

/// Reads the fragments of `path`: a `.ppmap` file, or an executable, shared
/// library or object file built by `pathprof cc` (its `.pathprof.map` section).
pub fn read_fragments(path: &Path) -> Result<Vec<MapFile>, MapError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| MapError::Io {
        path: shown.clone(),
        error,
    })?;
    if !crate::elf::is_elf(&bytes) {
        return MapFile::fragments_from_bytes(&bytes, &shown);
    }
    match crate::elf::section(&bytes, MAP_SECTION) {
        Ok(Some(section)) => MapFile::fragments_from_bytes(&section, &shown),
        Ok(None) => Err(MapError::NoMapSection { path: shown }),
        Err(detail) => Err(MapError::Malformed {
            path: shown,
            detail,
        }),
    }
}

/// Writes fragments as one `.ppmap` file.
pub fn write_fragments(path: &Path, fragments: &[MapFile]) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for f in fragments {
        bytes.extend_from_slice(&f.to_bytes());
    }
    crate::output::write_new(path, &bytes)
}

/// Writes one map as a `.ppmap` file.
pub fn write(map: &MapFile, path: &Path) -> std::io::Result<()> {
    write_fragments(path, std::slice::from_ref(map))
}
