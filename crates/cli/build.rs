//! Builds the runtime archive `libpathprof_rt.a`: the `pathprof-rt` crate as
//! a static library under the workspace's `runtime` profile (no std,
//! `panic=abort`, fat LTO: what a profiled program links is the runtime's
//! own code and the little of `core` it uses), with its `archive` feature
//! (the panic handler). A profile's `panic` setting cannot be given to one
//! package, so the archive is a cargo build of its own, into a target
//! directory under `OUT_DIR` (no contention with this build's lock; the
//! jobserver is shared). The archive is copied beside the `pathprof`
//! executable (`target/<profile>/`, where the driver and installs look for
//! it) and its path is compiled in as `PATHPROF_RT_BUILT`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let root = manifest_dir.join("../..");
    for input in [
        "Cargo.toml",
        "Cargo.lock",
        "crates/rt/Cargo.toml",
        "crates/rt/build.rs",
        "crates/rt/src",
        "crates/format/Cargo.toml",
        "crates/format/src",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let target_dir = out_dir.join("runtime-build");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "rustc",
            "--lib",
            "-p",
            "pathprof-rt",
            "--crate-type",
            "staticlib",
        ])
        .args([
            "--profile",
            "runtime",
            "--features",
            "archive",
            "--target",
            &target,
        ])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        // `cargo clippy` wraps the workspace's rustc: the archive is built
        // by rustc itself (clippy lints the crate in the outer build).
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("cannot run cargo to build the runtime archive");
    if !output.status.success() {
        panic!(
            "building the runtime archive (cargo rustc -p pathprof-rt --profile runtime) failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let archive = target_dir
        .join(&target)
        .join("runtime")
        .join("libpathprof_rt.a");
    assert!(archive.exists(), "{} was not built", archive.display());
    println!("cargo:rustc-env=PATHPROF_RT_BUILT={}", archive.display());
    // OUT_DIR is target/<profile>/build/pathprof-<hash>/out.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        copy_atomically(&archive, &profile_dir.join("libpathprof_rt.a"));
    }
}

/// Copies `from` to `to` through a temporary file renamed over it, so that a
/// link running meanwhile sees the old archive or the new one, never half.
fn copy_atomically(from: &Path, to: &Path) {
    let temp = to.with_extension("a.tmp");
    std::fs::copy(from, &temp)
        .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", from.display(), temp.display()));
    std::fs::rename(&temp, to)
        .unwrap_or_else(|e| panic!("cannot rename {} to {}: {e}", temp.display(), to.display()));
}
