//! Finding source files for listings: the path the debug info recorded,
//! relocated with `--source-root` when the tree moved (Rust's std, recorded
//! as `/rustc/<commit>/library/...`, found in the `rust-src` component), and
//! checked against the digest taken at build time so a changed file is
//! reported, not silently shown with wrong counts.

use pathprof_core::map::MapFile;
use std::path::{Path, PathBuf};

/// A source file's text, or why it is not shown.
pub enum Source {
    Text(Vec<String>),
    Missing(PathBuf),
    Changed(PathBuf, Vec<String>),
}

/// Where to look for sources.
#[derive(Clone, Debug, Default)]
pub struct SourceRoot(pub Option<PathBuf>);

impl SourceRoot {
    /// Candidate locations of `recorded`: itself, then under the root by ever
    /// shorter suffixes of its path (so `/build/x/src/a.c` is found as
    /// `ROOT/src/a.c` or `ROOT/a.c`).
    fn candidates(&self, recorded: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let p = Path::new(recorded);
        if let Some(root) = &self.0 {
            let parts: Vec<_> = p
                .components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .collect();
            for i in 0..parts.len() {
                out.push(parts[i..].iter().fold(root.clone(), |acc, c| acc.join(c)));
            }
        }
        out.push(p.to_path_buf());
        out.extend(in_rust_src(recorded));
        out
    }

    /// The first existing location of `recorded` (under the root first).
    pub fn locate(&self, recorded: &str) -> Option<PathBuf> {
        self.candidates(recorded).into_iter().find(|c| c.is_file())
    }

    /// Reads file `index` of `map`.
    pub fn read(&self, map: &MapFile, index: usize) -> Source {
        let recorded = &map.files[index];
        let digest = map.file_digests.get(index).copied().flatten();
        if let Some(candidate) = self.locate(recorded) {
            if let Ok(bytes) = std::fs::read(&candidate) {
                let lines = String::from_utf8_lossy(&bytes)
                    .lines()
                    .map(str::to_string)
                    .collect();
                if digest.is_some_and(|d| d != pathprof_core::hash::fnv64(&bytes)) {
                    return Source::Changed(candidate, lines);
                }
                return Source::Text(lines);
            }
        }
        Source::Missing(PathBuf::from(recorded))
    }
}

/// Where Rust's `rust-src` component holds a std source that rustc
/// recorded as `/rustc/<commit>/library/<file>`: under `$RUST_SRC_PATH`
/// (the `library` directory, as rust-analyzer reads it), else the active
/// toolchain's `lib/rustlib/src/rust/library`.
fn in_rust_src(recorded: &str) -> Option<PathBuf> {
    let file = pathprof_core::rust_std::library_file(recorded)?;
    Some(rust_src_library()?.join(file))
}

/// The `library` directory of the `rust-src` component (see [`in_rust_src`]).
fn rust_src_library() -> Option<PathBuf> {
    static LIBRARY: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            if let Some(dir) = std::env::var_os("RUST_SRC_PATH") {
                return Some(PathBuf::from(dir));
            }
            let out = std::process::Command::new("rustc")
                .args(["--print", "sysroot"])
                .output()
                .ok()?;
            let sysroot = String::from_utf8(out.stdout).ok()?;
            Some(Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library"))
        })
        .clone()
}

/// The warning for a source that is missing or changed, if any.
pub fn warning(source: &Source) -> Option<String> {
    match source {
        Source::Text(_) => None,
        Source::Missing(p) if in_rust_src(&p.to_string_lossy()).is_some() => Some(format!(
            "source {} (Rust's std) not found; install it with `rustup component add rust-src` \
             (or set RUST_SRC_PATH to its library directory)",
            p.display()
        )),
        Source::Missing(p) => Some(format!(
            "source {} not found; pass --source-root DIR if the tree moved",
            p.display()
        )),
        Source::Changed(p, _) => Some(format!(
            "source {} changed since the program was built; counts may not match its lines",
            p.display()
        )),
    }
}
