//! The runtime's build fingerprint (`PATHPROF_RT_FINGERPRINT`, see
//! `src/active.rs`): the crate version and every source file of the runtime,
//! hashed (FNV-1a, 64 bits). Two copies of the runtime in one process hand
//! their modules to one another only when their fingerprints are equal, so
//! copies of different pathprof builds never read each other's hash tables.

use std::path::PathBuf;

fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
    let mut files: Vec<PathBuf> = std::fs::read_dir("src")
        .expect("the runtime's src directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    fnv(&mut h, version.as_bytes());
    for f in &files {
        let name = f.file_name().unwrap_or_default().to_string_lossy();
        fnv(&mut h, name.as_bytes());
        fnv(&mut h, &[0]);
        fnv(&mut h, &std::fs::read(f).expect("a runtime source file"));
        fnv(&mut h, &[0]);
    }
    println!("cargo:rustc-env=PATHPROF_RT_FINGERPRINT={h:016x}");
}
