//! Profile-guided optimisation: what an optimised build takes from a
//! profile. Each function's exact counts, keyed by linkage name, source file
//! and CFG shape ([`index`]); its edge counts, from any mode's counts
//! ([`edges`]), scaled into the 32-bit weights LLVM's `branch_weights` hold;
//! and the profile summary LLVM's hot and cold decisions read ([`summary`]);
//! and, from path mode's paths, the tails worth copying so that correlated
//! branches get the weights of the paths that reach them ([`duplicate`]).
//! The LLVM side (`pathprof-llvm`'s `profile_use`) matches functions and
//! writes the metadata, and each object says what it used ([`note`]);
//! nothing here knows LLVM.

pub mod duplicate;
pub mod edges;
pub mod index;
pub mod note;
pub mod summary;

pub use edges::{scale_to_u32, FunctionProfile, ProfiledPath};
pub use index::{is_index, Index, IndexError, IndexedFunction, Lookup};
pub use note::{UseNote, NOTE_SECTION};
pub use summary::Summary;
