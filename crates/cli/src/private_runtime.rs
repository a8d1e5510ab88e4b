//! The runtime for programs with a Rust standard library of their own.
//!
//! The runtime is a Rust static library: besides its own code it holds a
//! copy of std, whose symbols are global. Linked into a Rust program that
//! defines the same symbols (a fat-LTO build with std's bitcode inside, a
//! program from another rustc), the two copies clash. The private runtime
//! is the same code with its std kept to itself: one relocatable object,
//! partially linked from what the runtime's own code needs of the archive,
//! in which every symbol but the runtime's C ABI and the libc functions it
//! interposes is local, packed as an archive so that a shared library's
//! link can still hide it (`--exclude-libs`). It is made once per runtime
//! build and kept in the user's cache directory.

use crate::toolchain;
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The private runtime archive (made now if it is not cached yet).
pub fn private_runtime() -> Result<PathBuf> {
    let runtime = toolchain::runtime()?;
    let meta = std::fs::metadata(&runtime)?;
    let stamp = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    // The runtime's size and time of writing name its build.
    let key = format!("{:x}-{stamp:x}", meta.len());
    let dir = cache_dir().join(format!("rt-{key}"));
    let archive = dir.join("libpathprof_rt.a");
    if archive.exists() {
        return Ok(archive);
    }
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the cache directory {}", dir.display()))?;
    let work = tempfile::Builder::new()
        .prefix("pathprof-rt-")
        .tempdir_in(&dir)?;
    make(&runtime, work.path())?;
    // Another link may have made it meanwhile: either copy is the same.
    std::fs::rename(work.path().join("libpathprof_rt.a"), &archive)?;
    Ok(archive)
}

/// `$XDG_CACHE_HOME/pathprof`, `~/.cache/pathprof`, or the temporary
/// directory's `pathprof-cache`.
fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .map(|d| d.join("pathprof"))
        .unwrap_or_else(|| std::env::temp_dir().join("pathprof-cache"))
}

/// Makes `work/libpathprof_rt.a` from the runtime archive `runtime`.
fn make(runtime: &Path, work: &Path) -> Result<()> {
    let keep = exported_symbols(runtime)?;
    if keep.is_empty() {
        bail!("{} defines no __pathprof_ symbols", runtime.display());
    }
    let list = work.join("keep.txt");
    std::fs::write(&list, keep.join("\n") + "\n")?;
    let object = work.join("pathprof_rt.o");
    let mut link = Command::new(toolchain::llvm_tool("ld.lld"));
    link.arg("-r").arg("-o").arg(&object);
    for symbol in &keep {
        link.arg(format!("--undefined={symbol}"));
    }
    run(link.arg(runtime))?;
    run(Command::new(toolchain::llvm_tool("llvm-objcopy"))
        .arg(format!("--keep-global-symbols={}", list.display()))
        .arg(&object))?;
    run(Command::new(toolchain::llvm_tool("llvm-ar"))
        .arg("rcs")
        .arg(work.join("libpathprof_rt.a"))
        .arg(&object))
}

/// The symbols the private runtime keeps global: those the runtime's own
/// code defines with C names (its ABI, `__pathprof_*`, and the functions it
/// interposes: `fork`, `_exit`, `pthread_create`...).
fn exported_symbols(runtime: &Path) -> Result<Vec<String>> {
    let out = Command::new(toolchain::llvm_tool("llvm-nm"))
        .args([
            "--defined-only",
            "--extern-only",
            "--format=just-symbols",
            "-A",
        ])
        .arg(runtime)
        .output()
        .context("cannot run llvm-nm (install llvm-22)")?;
    if !out.status.success() {
        bail!(
            "llvm-nm failed on {}: {}",
            runtime.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut keep: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            // `archive:member: symbol`
            let (member, symbol) = line.rsplit_once(": ")?;
            let member = member.rsplit(':').next()?;
            let own = member.starts_with("pathprof_rt-");
            let c_name = !symbol.starts_with("_ZN") && !symbol.starts_with("_R");
            (own && c_name).then(|| symbol.to_string())
        })
        .collect();
    keep.sort();
    keep.dedup();
    Ok(keep)
}

/// Runs `command`, failing with its output when it fails.
fn run(command: &mut Command) -> Result<()> {
    let out = command
        .output()
        .with_context(|| format!("cannot run {:?}", command.get_program()))?;
    if !out.status.success() {
        bail!(
            "{:?} failed making the private runtime: {}",
            command.get_program(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}
