//! The map file (`.ppmap`): what reports need to read a profile, written at
//! instrumentation time so that no report ever needs LLVM.
//!
//! On disk: one header line `pathprof-map <version> <fnv64 of the body, 16 hex>`,
//! then the body, a JSON [`MapFile`]. The checksum catches truncation and edits;
//! the `build_id` ties profiles to the build that made them.

use crate::cfg::Cfg;
use crate::hash::{fnv64, Fnv64};
use crate::layout::Layout;
use crate::plan::Mode;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The map format version this code reads and writes.
pub const MAP_VERSION: u32 = 1;
const MAP_MAGIC: &str = "pathprof-map";

/// Source position and size of one basic block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockInfo {
    /// Line of the block's first instruction with a debug location.
    pub line: Option<u32>,
    /// Instructions in the block (LLVM IR instructions, excluding debug records
    /// and pathprof's own probes).
    pub instructions: u32,
    /// Every source line the block's instructions come from, in first-seen order,
    /// with how many instructions each has.
    pub lines: Vec<LineSpan>,
}

/// Instructions of one block attributed to one source line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineSpan {
    /// Index into [`MapFile::files`].
    pub file: u32,
    pub line: u32,
    pub instructions: u32,
}

/// One instrumented function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapFunction {
    /// Linkage name (mangled for C++ and Rust).
    pub name: String,
    /// Demangled name, when it differs from `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Index into [`MapFile::files`] of the file holding the definition.
    pub file: Option<u32>,
    pub line: Option<u32>,
    /// [`Cfg::shape_hash`], checked against each profile record.
    pub hash: u64,
    pub cfg: Cfg,
    /// One per CFG block.
    pub blocks: Vec<BlockInfo>,
    /// How this function's counters map back to blocks, edges and paths.
    pub layout: Layout,
}

/// A whole instrumented program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapFile {
    pub mode: Mode,
    /// Identity of the build; every profile it writes records it.
    pub build_id: u64,
    /// Source files, as the debug info names them (absolute where the compiler
    /// knew the directory).
    pub files: Vec<String>,
    /// FNV-1a of each source file's bytes when the program was built (`None`
    /// when it could not be read then), to tell a reader the source changed.
    #[serde(default)]
    pub file_digests: Vec<Option<u64>>,
    pub functions: Vec<MapFunction>,
    /// Whether counters were updated atomically (`--atomic`): only then are
    /// counts exact when threads run the same code at once. Absent (false) in
    /// maps written before it was recorded.
    #[serde(default)]
    pub atomic: bool,
}

/// Why a map file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    #[error("cannot read map file {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path} is not a pathprof map file (it does not start with `pathprof-map`); pass the .ppmap written when the program was built")]
    NotAMap { path: String },
    #[error("{path} is a version {found} map file; this pathprof reads version {MAP_VERSION}. Rebuild the program with this pathprof")]
    Version { path: String, found: String },
    #[error("{path} is damaged (its checksum does not match its contents: truncated or edited?); rebuild the program to get a fresh map")]
    Checksum { path: String },
    #[error("{path} is damaged: {detail}")]
    Malformed { path: String, detail: String },
}

impl MapFile {
    /// Computes the build id from the functions' names and shapes and the mode.
    pub fn compute_build_id(mode: Mode, functions: &[MapFunction]) -> u64 {
        let mut h = Fnv64::new();
        h.write_str(mode.name());
        for f in functions {
            h.write_str(&f.name);
            h.write_u64(f.hash);
            h.write_u64(f.layout.identity());
        }
        h.finish()
    }

    /// The file's bytes: header line and JSON body.
    pub fn to_bytes(&self) -> Vec<u8> {
        let body = serde_json::to_vec(self).expect("map serializes");
        let mut out = format!("{MAP_MAGIC} {MAP_VERSION} {:016x}\n", fnv64(&body)).into_bytes();
        out.extend_from_slice(&body);
        out
    }

    /// Parses a map file's bytes; `path` is only used in messages.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Self, MapError> {
        let path_s = || path.to_string();
        let nl = bytes
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| MapError::NotAMap { path: path_s() })?;
        let header =
            std::str::from_utf8(&bytes[..nl]).map_err(|_| MapError::NotAMap { path: path_s() })?;
        let mut parts = header.split(' ');
        if parts.next() != Some(MAP_MAGIC) {
            return Err(MapError::NotAMap { path: path_s() });
        }
        let version = parts.next().unwrap_or("");
        if version != MAP_VERSION.to_string() {
            return Err(MapError::Version {
                path: path_s(),
                found: version.to_string(),
            });
        }
        let body = &bytes[nl + 1..];
        let sum = parts.next().and_then(|s| u64::from_str_radix(s, 16).ok());
        if sum != Some(fnv64(body)) {
            return Err(MapError::Checksum { path: path_s() });
        }
        serde_json::from_slice(body).map_err(|e| MapError::Malformed {
            path: path_s(),
            detail: e.to_string(),
        })
    }

    /// Writes the map to `path`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_bytes())
    }

    /// Reads and checks the map at `path`.
    pub fn read(path: &Path) -> Result<Self, MapError> {
        let bytes = std::fs::read(path).map_err(|error| MapError::Io {
            path: path.display().to_string(),
            error,
        })?;
        Self::from_bytes(&bytes, &path.display().to_string())
    }

    /// The name of a file index, or `None`.
    pub fn file_name(&self, file: Option<u32>) -> Option<&str> {
        file.and_then(|f| self.files.get(f as usize))
            .map(String::as_str)
    }
}
