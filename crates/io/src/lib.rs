//! Reading and writing pathprof's files, the only file I/O of the tools'
//! libraries (the runtime writes profiles itself): pathprof-core encodes and
//! decodes a map fragment's bytes and pathprof-format a profile's; this
//! crate finds those bytes in files.
//!
//! - [`map`]: map fragments, from a `.ppmap` file or from the
//!   `.pathprof.map` section of an executable, shared library or object
//!   file built by `pathprof cc`, and written as one `.ppmap` file.
//! - [`elf`]: one named section of an ELF file, through the `object` crate.
//! - [`profile`]: raw profile files, of one build or of many.
//! - [`output`]: writing a file as a new one renamed over the name, never
//!   through a link planted there.

pub mod elf;
pub mod live;
pub mod map;
pub mod output;
pub mod profile;
