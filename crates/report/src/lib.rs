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
//! - [`info`]: what profile files hold, per build and per program
//!   (`pathprof info`), without a map.
//! - [`json`]: the JSON report's types (`pathprof report --format json`).
//! - [`predict`]: paths predicted from the edge profile versus measured
//!   (`pathprof predict`, Ball & Larus 1996 Table 2).
//! - [`diff`]: the paths of two profiles of one build compared
//!   (`pathprof diff`, Table 3).
//!
//! The `pathprof` binary's renderers (text, LCOV, HTML, DOT) format these.

pub mod diff;
#[cfg(feature = "fixtures")]
pub mod fixtures;
pub mod info;
pub mod json;
pub mod lines;
pub mod load;
pub mod lookup;
pub mod names;
pub mod predict;
pub mod summary;
