//! Finding the tools pathprof drives: clang 22, its pass plugin and the
//! runtime library.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// The C (or C++) compiler driver to run: `$PATHPROF_CLANG` / `$PATHPROF_CLANGXX`,
/// else `clang-22` / `clang++-22` from LLVM 22's directory or `PATH`.
pub fn clang(cxx: bool) -> PathBuf {
    let (var, name) = if cxx {
        ("PATHPROF_CLANGXX", "clang++")
    } else {
        ("PATHPROF_CLANG", "clang")
    };
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let llvm = Path::new("/usr/lib/llvm-22/bin").join(name);
    if llvm.exists() {
        return llvm;
    }
    PathBuf::from(format!("{name}-22"))
}

/// An LLVM 22 tool (`llvm-ar`, `ld.lld`...): from LLVM 22's directory, else
/// `NAME-22` or `NAME` from `PATH`.
pub fn llvm_tool(name: &str) -> PathBuf {
    let llvm = Path::new("/usr/lib/llvm-22/bin").join(name);
    if llvm.exists() {
        return llvm;
    }
    let versioned = format!("{name}-22");
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(&versioned).exists()));
    PathBuf::from(if on_path { versioned } else { name.to_string() })
}

/// The runtime archive `libpathprof_rt.a`: `$PATHPROF_RT`, else beside the
/// `pathprof` executable (where pathprof's build script puts it), else its
/// `../lib`, else where that build made it.
pub fn runtime() -> Result<PathBuf> {
    beside_pathprof(
        "libpathprof_rt.a",
        "PATHPROF_RT",
        "pathprof",
        Some(Path::new(env!("PATHPROF_RT_BUILT"))),
    )
}

/// clang's pass plugin `libpathprof_plugin.so`, which instruments each
/// translation unit: `$PATHPROF_PLUGIN`, else found as the runtime is.
pub fn plugin() -> Result<PathBuf> {
    beside_pathprof(
        "libpathprof_plugin.so",
        "PATHPROF_PLUGIN",
        "pathprof-plugin",
        None,
    )
}

/// The file `name` that cargo builds beside `pathprof` from `package`:
/// `$variable` if set, else beside the executable, in its parent or `../lib`,
/// else at `built`.
fn beside_pathprof(
    name: &str,
    variable: &str,
    package: &str,
    built: Option<&Path>,
) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(variable) {
        let p = PathBuf::from(p);
        if !p.exists() {
            bail!("{variable} names {}, which does not exist", p.display());
        }
        return Ok(p);
    }
    let exe = std::env::current_exe()?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let candidates = [
        dir.join(name),
        dir.join("..").join(name),
        dir.join("../lib").join(name),
    ];
    for c in candidates.iter().map(PathBuf::as_path).chain(built) {
        if c.exists() {
            return Ok(c.to_path_buf());
        }
    }
    bail!(
        "cannot find {name} next to {}; build it with `cargo build -p {package}` (same profile as pathprof) or set {variable}",
        exe.display()
    )
}

/// Libraries the runtime needs, after it on the link line: the C library's
/// threads and dynamic loading (part of libc itself from glibc 2.34 on; the
/// runtime has no Rust standard library, unwinder or math inside).
pub const RUNTIME_LIBS: &[&str] = &["-lpthread", "-ldl"];
