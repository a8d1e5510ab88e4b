//! FNV-1a 64, the one stable hash pathprof uses for function identities, build
//! ids and file checksums (stable across Rust versions and platforms, unlike
//! `std`'s). It is defined once, in `pathprof-format` (which closes every raw
//! profile with it); this module only gives it core's names.

pub use pathprof_format::{fnv1a64 as fnv64, Fnv64};
