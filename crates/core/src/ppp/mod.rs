//! Preferential path profiling (Vaswani, Nori & Chilimbi, POPL 2007): a second
//! numbering of a function's acyclic paths under which a chosen set of
//! *interesting* paths gets unique, compact ids, so that their counters fit in
//! an array even where Ball-Larus ids would need a hash table.
//!
//! It works on the very DAG path mode numbers ([`crate::dag::Dag`]: backedges,
//! dummy edges, truncation cuts, unsplittable and early-exit cuts), names
//! interesting paths by their Ball-Larus ids and keeps Ball-Larus numbering as a
//! second register, so any path, interesting or not, is known exactly at its
//! end (section 2.3 and section 5).
//!
//! What each part owns:
//! - [`numbering`]: Figure 10, `computePPPIncrements` (section 3.1): the PPP
//!   weight of every DAG edge, the interesting paths' PPP ids, the interval and
//!   the compactness measures δ and γ;
//! - [`classify`]: what the instrumented code decides at a path's end from its
//!   two registers (section 5's range checks), and what its array must hold;
//! - [`chords`]: both registers updated on the chords of path mode's spanning
//!   tree only (section 5, "counter optimizations");
//! - [`packing`]: both registers in one 64-bit word where their ranges fit;
//! - [`list`]: the interesting-path list file, read and written;
//! - [`select`]: choosing interesting paths from a training path profile.

pub mod chords;
pub mod classify;
pub mod list;
pub mod numbering;
pub mod packing;
pub mod select;

pub use classify::PathClass;
pub use list::{InterestingList, ListEntry, ListError, StaleEntry};
pub use numbering::{Numbered, PppError, PppNumbering};
pub use packing::Packing;
pub use select::{select_paths, Selection, SelectionError};

#[cfg(test)]
mod tests;
