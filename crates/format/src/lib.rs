//! # pathprof-format: the raw profile file
//!
//! A raw profile holds the counters one or more runs of instrumented
//! programs left behind, one section per build (below): per function its
//! slot counters (block or edge counts, or Ball-Larus path counters kept in
//! an array), its `(path id, count)` entries, and the *resumes* of both
//! (below). The runtime (`pathprof-rt`) writes and merges it; the tools read
//! each section against the map file of the same build.
//!
//! ## Resumes
//!
//! With early-exit counting, instrumented code counts a path (or a slot
//! counter) just before a call and takes the count back when the call
//! returns. When the count was already written before it was taken back (a
//! dump in the middle of the call, or a fork child, whose parent owns the
//! counts from before the fork, that then returns from the call), the file
//! cannot subtract it; instead it records how many times each counter was
//! taken back below what was written: its *resumes*. Readers subtract them
//! (each resume is an activation that resumed after that call; the report
//! derives the edge counts accordingly). All counts stay unsigned: merging
//! adds resumes like counts, and a function with resumes but no counts is
//! kept.
//!
//! ## Sections
//!
//! One file holds the counts of any number of builds (instrumented modules:
//! an executable, its shared libraries, or one translation unit each), one
//! *section* per build id, in increasing build id order. Every program and
//! library of a test suite can write into one file. A section records,
//! besides its counts, the process facts of the processes that wrote it and
//! the *object paths* (executables and shared libraries) the build was
//! loaded from when they wrote it: each path once, sorted by bytes, at most
//! [`MAX_OBJECTS`] (32). A merge keeps the union; beyond 32 paths it keeps
//! the first 32 in sort order and sets the section's *objects truncated*
//! flag, which then stays set (it says "more objects wrote this section
//! than are listed", not how many).
//!
//! ## Layout (version 6)
//!
//! Every integer is little-endian; there is no padding.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PPROFRAW` |
//! | 8 | 4 | version, `6` |
//! | 12 | 4 | reserved, `0` |
//! | 16 | 8 | section count N |
//! | 24 | … | N sections, build ids strictly increasing |
//! | end − 8 | 8 | FNV-1a 64 of every byte before it |
//!
//! A section:
//!
//! | offset in the section | size | field |
//! |---|---|---|
//! | 0 | 8 | build id (the map file's `build_id`) |
//! | 8 | 4 | mode: 0 block, 1 edge, 2 path |
//! | 12 | 4 | flags: bit 0 = objects truncated (more object paths were known than listed); other bits 0 |
//! | 16 | 8 | processes: processes whose final write (exit, `_exit`, exec, abort, fatal signal) added to the section |
//! | 24 | 8 | forked: how many of those processes were fork children |
//! | 32 | 8 | threads: threads those processes started with `pthread_create` |
//! | 40 | 8 | killed: how many of those processes died without their final write (SIGKILL, a fault) and were merged from their live files (continuous mode) |
//! | 48 | 8 | killed at exit: how many of the killed had begun their final write at exit |
//! | 56 | 8 | killed in a signal: how many of the killed had begun their final write for a fatal signal |
//! | 64 | 8 | killed signals: those fatal signals, bit n − 1 for signal n |
//! | 72 | 8 | object path count O, at most 32 |
//! | 80 | … | O object paths: each a length L (8 bytes) and L bytes of UTF-8, nonempty, strictly increasing by bytes |
//! | … | 8 | function count F |
//! | … | … | F function records, indices strictly increasing |
//!
//! Version 1 (pathprof before the process facts) had no processes, forked
//! and threads fields, version 2 had no resumes, version 3 held one
//! build only, with no object paths, and version 4 had no killed field; reading any of them fails with
//! [`FormatError::OlderVersion`] (record the profile again). Version 5 had
//! no endings of the killed (offsets 48 to 71): it is read, its killed
//! processes' endings unknown (zero), and merging into it writes version 6.
//!
//! A function record:
//!
//! | size | field |
//! |---|---|
//! | 4 | index (the function's index in the map file) |
//! | 8 | hash (the function's CFG shape hash) |
//! | 8 | slot count S |
//! | 8 × S | slot counters |
//! | 8 | path entry count P |
//! | 16 × P | `(id u64, count u64)` pairs, ids strictly increasing, counts nonzero |
//! | 8 | slot resume count R_s |
//! | 16 × R_s | `(slot index u64, count u64)` pairs, slot indices strictly increasing and < S, counts nonzero |
//! | 8 | path resume count R_p |
//! | 16 × R_p | `(path id u64, count u64)` pairs, ids strictly increasing, counts nonzero |
//!
//! A path resume's id need not have a path entry in the same record (its
//! count may have been written by another process or an earlier dump).
//!
//! A file is valid only if it ends exactly after its checksum. Decoding never
//! panics and never allocates more than the file's size justifies: every
//! count is checked against the bytes that remain before anything is
//! reserved. Any single changed byte and any cut fails to decode (FNV-1a
//! changes with any single byte).
//!
//! ## Entry points
//!
//! * [`ProfileFile`]: a whole file, its sections as [`RawProfile`]s, with
//!   [`ProfileFile::encode`], [`ProfileFile::decode`], [`ProfileFile::merge`]
//!   (section by section) and [`ProfileFile::section`].
//! * [`RawProfile`] / [`RawFunction`]: one section (owned data), with
//!   [`RawProfile::encode`] (a file of that one section),
//!   [`RawProfile::decode`] (a file of exactly one section) and
//!   [`RawProfile::merge`] (one build); [`is_profile`] sniffs.
//! * [`ProfileView`] / [`SectionView`], [`Encoder`] and [`merge_into`]: the
//!   same files read, written and merged without allocating, for the
//!   runtime (it merges from a signal handler, where `malloc` is off limits).
//! * [`abi`]: the numbers the instrumenter and the runtime share (the ABI
//!   version, the mode numbers sections record, the path counter kinds);
//!   [`fnv1a64`] / [`Fnv64`]: the one stable hash.
//!
//! ```
//! use pathprof_format::{ProfileFile, RawFunction, RawProfile};
//! let mut p = RawProfile {
//!     build_id: 0x1234,
//!     mode: 2,
//!     processes: 1,
//!     objects: vec!["/usr/bin/prog".into()],
//!     functions: vec![RawFunction {
//!         index: 0,
//!         hash: 7,
//!         slots: vec![3, 0],
//!         paths: vec![(1, 5)],
//!         slot_resumes: vec![(1, 2)],
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//! let bytes = p.encode();
//! assert!(pathprof_format::is_profile(&bytes));
//! let again = RawProfile::decode(&bytes)?;
//! p.merge(&again)?;
//! assert_eq!(p.functions[0].slots, vec![6, 0]);
//! assert_eq!(p.functions[0].paths, vec![(1, 10)]);
//! assert_eq!(p.functions[0].slot_resumes, vec![(1, 4)]);
//! assert!(p.functions[0].path_resumes.is_empty());
//! assert_eq!(p.processes, 2);
//!
//! // Another build's section joins the same file.
//! let mut file = ProfileFile::from(p.clone());
//! file.merge(&ProfileFile::from(RawProfile::new(0x99, 0)))?;
//! let file = ProfileFile::decode(&file.encode())?;
//! assert_eq!(file.sections.len(), 2);
//! assert_eq!(file.sections[0].build_id, 0x99);
//! assert_eq!(file.section(0x1234), Some(&p));
//! # Ok::<(), pathprof_format::FormatError>(())
//! ```

#![no_std]

#[cfg(feature = "std")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod abi;
mod checksum;
mod encoder;
mod error;
pub mod live;
#[cfg(feature = "std")]
pub mod map_schema;
mod merge;
#[cfg(feature = "std")]
mod raw;
#[cfg(feature = "std")]
mod raw_merge;
mod text;
mod view;

pub use checksum::{fnv1a64, Fnv64};
pub use encoder::{Encoder, Sink};
pub use error::FormatError;
pub use merge::merge_into;
#[cfg(feature = "std")]
pub use raw::{ProfileFile, RawFunction, RawProfile};
pub use text::{decimal, Text};
pub use view::{FunctionView, Functions, Objects, ProfileView, SectionView, Sections};

/// The first 8 bytes of every raw profile.
pub const MAGIC: [u8; 8] = *b"PPROFRAW";
/// The format version this crate reads and writes.
pub const VERSION: u32 = 6;
/// The oldest version this crate reads (version 5 sections lack the killed
/// processes' endings, which read as unknown); it writes [`VERSION`] only.
pub const OLDEST_READABLE_VERSION: u32 = 5;
/// The most object paths a section lists (see the crate doc).
pub const MAX_OBJECTS: usize = 32;

/// The header's facts about the processes whose counts a profile holds.
/// Merging adds them (saturating; the signal set is a union).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// Processes whose final write (at exit, `_exit`, exec, abort or a fatal
    /// signal) added to the profile; interim dumps (SIGUSR1,
    /// `__pathprof_dump`, the periodic dump) do not count a process.
    pub processes: u64,
    /// How many of those processes were fork children.
    pub forked: u64,
    /// Threads started with `pthread_create` by the processes that wrote
    /// to the profile (0 if none ever started one).
    pub threads: u64,
    /// How many of `processes` died without their final write (SIGKILL, a
    /// fault) and were merged from their live files (continuous mode).
    pub killed: u64,
    /// How many of `killed` had begun their final write at exit when they
    /// died (killed while exiting); the others but `killed_in_signal` died
    /// running, by a signal no handler sees (SIGKILL, the OOM killer, a
    /// fault the handler could not run for).
    pub killed_at_exit: u64,
    /// How many of `killed` had begun their final write for a fatal signal
    /// when they died.
    pub killed_in_signal: u64,
    /// Those fatal signals: bit `n - 1` for signal `n` (1 to 64). Merging
    /// keeps the union.
    pub killed_signals: u64,
}

impl Facts {
    /// The facts in their order in a section (from offset 16).
    pub(crate) fn words(self) -> [u64; 7] {
        [
            self.processes,
            self.forked,
            self.threads,
            self.killed,
            self.killed_at_exit,
            self.killed_in_signal,
            self.killed_signals,
        ]
    }

    /// Both facts added, field by field, saturating.
    pub fn saturating_add(self, other: Facts) -> Facts {
        Facts {
            processes: self.processes.saturating_add(other.processes),
            forked: self.forked.saturating_add(other.forked),
            threads: self.threads.saturating_add(other.threads),
            killed: self.killed.saturating_add(other.killed),
            killed_at_exit: self.killed_at_exit.saturating_add(other.killed_at_exit),
            killed_in_signal: self.killed_in_signal.saturating_add(other.killed_in_signal),
            killed_signals: self.killed_signals | other.killed_signals,
        }
    }
}

/// Whether `bytes` start like a raw profile (the magic). Says nothing about
/// whether the rest is intact: [`RawProfile::decode`] checks that.
pub fn is_profile(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}
