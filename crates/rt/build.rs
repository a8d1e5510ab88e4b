//! The runtime's build fingerprint (`PATHPROF_RT_FINGERPRINT`, see
//! `src/active.rs`): the crate version and every source file of the runtime,
//! hashed (FNV-1a, 64 bits). Two copies of the runtime in one process hand
//! their modules to one another only when their fingerprints are equal, so
//! copies of different pathprof builds never read each other's hash tables.
//! The hash is `pathprof-format`'s (a build-dependency: that crate has no
//! dependencies of its own and the runtime links it anyway).

use pathprof_format::Fnv64;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
    let mut files: Vec<PathBuf> = std::fs::read_dir("src")
        .expect("the runtime's src directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let mut h = Fnv64::new();
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    h.write(version.as_bytes());
    for f in &files {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        h.write(name.as_bytes());
        h.write(&[0]);
        h.write(&std::fs::read(f).expect("a runtime source file"));
        h.write(&[0]);
    }
    println!(
        "cargo:rustc-env=PATHPROF_RT_FINGERPRINT={:016x}",
        h.finish()
    );
}
