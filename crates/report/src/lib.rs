//! The typed model every pathprof report renders, computed once from a map
//! and its counts, never from LLVM:
//!
//! - [`load`]: a map (or several: programs, libraries, `.ppmap` files) and its
//!   profile(s), read and combined into per-function counts, with what the
//!   counts say about themselves ([`load::Facts`], [`load::Loaded::notes`]).
//! - [`lines`]: per-line counts and instructions executed.
//! - [`summary`]: per-function, per-file and program totals and coverage.
//! - [`lookup`]: functions by name, with suggestions for a typo.
//! - [`names`]: the names a person reads, qualified where one source
//!   function was built in two shapes or one name is in two places.
//! - [`dot`]: a function's graph (the Ball-Larus DAG with `Val` and `Inc`,
//!   or the CFG) with its counts, for `pathprof dot`.
//! - [`info`]: what profile files hold, per build and per program
//!   (`pathprof info`), without a map.
//! - [`json`]: the JSON report's types (`pathprof report --format json`).
//! - [`p3`]: the hit counts of SBL, PBL and P3 and the profitable
//!   procedures (`pathprof p3 stats`, Afraz et al. 2015).
//! - [`ppp`]: the interesting paths of a training profile and the check of
//!   an interesting-path list against a program (preferential path
//!   profiling).
//! - [`predict`]: paths predicted from the edge profile versus measured
//!   (`pathprof predict`, Ball & Larus 1996 Table 2).
//! - [`diff`]: the paths of two profiles of one build compared
//!   (`pathprof diff`, Table 3).
//!
//! - [`pgo`]: a profile indexed for an optimised build (`pathprof index`,
//!   `pathprof cc --profile-use`).
//! - [`verify`]: a path profile's derived edge counts against an edge
//!   profile, and where counts do not balance (`pathprof verify`).
//!
//! The `pathprof` binary's renderers (text, LCOV, HTML, DOT) format these.

pub mod diff;
pub mod dot;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod info;
pub mod json;
pub mod lines;
pub mod load;
pub mod lookup;
pub mod names;
pub mod p3;
pub mod pgo;
pub mod ppp;
pub mod predict;
pub mod summary;
pub mod verify;

/// The last component of a path (`/src/t.c` is `t.c`), as reports name a
/// file in little room.
pub fn short_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// `a` as a percentage of `b` with one decimal, `-` when `b` is 0.
pub fn percent(a: u128, b: u128) -> String {
    if b == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}
