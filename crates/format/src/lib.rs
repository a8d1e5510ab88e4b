//! # pathprof-format: the raw profile file
//!
//! A raw profile holds the counters one or more runs of an instrumented
//! program left behind: per function its slot counters (block or edge
//! counts, or Ball-Larus path counters kept in an array), its
//! `(path id, count)` entries, and the *resumes* of both (below). The runtime
//! (`pathprof-rt`) writes and merges it; the tools read it against the map
//! file of the same build.
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
//! ## Layout (version 3)
//!
//! Every integer is little-endian; there is no padding.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PPROFRAW` |
//! | 8 | 4 | version, `3` |
//! | 12 | 4 | mode: 0 block, 1 edge, 2 path |
//! | 16 | 8 | build id (the map file's `build_id`) |
//! | 24 | 8 | processes: processes whose final write (exit, `_exit`, exec, abort, fatal signal) added to the file |
//! | 32 | 8 | forked: how many of those processes were fork children |
//! | 40 | 8 | threads: threads those processes started with `pthread_create` |
//! | 48 | 8 | function count F |
//! | 56 | … | F function records, indices strictly increasing |
//! | end − 8 | 8 | FNV-1a 64 of every byte before it |
//!
//! Version 1 (pathprof before the process facts) had no processes, forked
//! and threads fields, and version 2 had no resumes; reading either fails
//! with [`FormatError::OlderVersion`] (record the profile again).
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
//! * [`RawProfile`] / [`RawFunction`]: owned data, with [`RawProfile::encode`],
//!   [`RawProfile::decode`] and [`RawProfile::merge`]; [`is_profile`] sniffs.
//! * [`ProfileView`], [`Encoder`] and [`merge_into`]: the same file read,
//!   written and merged without allocating, for the runtime (it merges from a
//!   signal handler, where `malloc` is off limits).
//!
//! ```
//! use pathprof_format::{RawFunction, RawProfile};
//! let mut p = RawProfile {
//!     build_id: 0x1234,
//!     mode: 2,
//!     processes: 1,
//!     forked: 0,
//!     threads: 0,
//!     functions: vec![RawFunction {
//!         index: 0,
//!         hash: 7,
//!         slots: vec![3, 0],
//!         paths: vec![(1, 5)],
//!         slot_resumes: vec![(1, 2)],
//!         ..Default::default()
//!     }],
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
//! # Ok::<(), pathprof_format::FormatError>(())
//! ```

mod checksum;
mod encoder;
mod error;
mod merge;
mod view;

pub use checksum::fnv1a64;
pub use encoder::{Encoder, Sink};
pub use error::FormatError;
pub use merge::merge_into;
pub use view::{FunctionView, Functions, ProfileView};

/// The first 8 bytes of every raw profile.
pub const MAGIC: [u8; 8] = *b"PPROFRAW";
/// The format version this crate reads and writes.
pub const VERSION: u32 = 3;

/// The header's facts about the processes whose counts a profile holds.
/// Merging adds them (saturating).
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
}

impl Facts {
    /// Both facts added, field by field, saturating.
    pub fn saturating_add(self, other: Facts) -> Facts {
        Facts {
            processes: self.processes.saturating_add(other.processes),
            forked: self.forked.saturating_add(other.forked),
            threads: self.threads.saturating_add(other.threads),
        }
    }
}

/// The counters of one or more runs of one build.
///
/// Invariant (kept by [`decode`](Self::decode) and [`merge`](Self::merge)):
/// `functions` sorted by index, indices unique.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawProfile {
    /// The build id of the program (the map file's `build_id`).
    pub build_id: u64,
    /// The instrumentation mode: 0 block, 1 edge, 2 path.
    pub mode: u32,
    /// Processes whose final write (at exit, `_exit`, exec, abort or a fatal
    /// signal) added to this profile. For a program profiled from `main`,
    /// `processes - forked` is what `main`'s entry count should be; less
    /// means paths were lost when processes ended inside calls.
    pub processes: u64,
    /// How many of `processes` were fork children.
    pub forked: u64,
    /// Threads started with `pthread_create` in the processes that wrote to
    /// this profile; nonzero in a build without atomic updates means counts
    /// may have lost increments.
    pub threads: u64,
    /// The functions that have counts, by increasing index.
    pub functions: Vec<RawFunction>,
}

/// The counters of one function.
///
/// Invariant: `paths` and `path_resumes` sorted by id, `slot_resumes` by slot
/// index, keys unique, no zero counts; every slot resume's index is below
/// `slots.len()`.
///
/// A counter's value is its count minus its resumes (see the crate doc); both
/// stay unsigned here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawFunction {
    /// The function's index in the map file.
    pub index: u32,
    /// The function's CFG shape hash.
    pub hash: u64,
    /// Slot counters (block, edge or array path counters, by slot).
    pub slots: Vec<u64>,
    /// `(path id, count)` entries.
    pub paths: Vec<(u64, u64)>,
    /// `(slot index, resumes)`: how many times a slot counter was taken back
    /// below what was written.
    pub slot_resumes: Vec<(u64, u64)>,
    /// `(path id, resumes)`: how many times a path's count was taken back
    /// below what was written.
    pub path_resumes: Vec<(u64, u64)>,
}

/// Whether `bytes` start like a raw profile (the magic). Says nothing about
/// whether the rest is intact: [`RawProfile::decode`] checks that.
pub fn is_profile(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

impl RawProfile {
    /// An empty profile of `build_id` and `mode`.
    pub fn new(build_id: u64, mode: u32) -> Self {
        RawProfile {
            build_id,
            mode,
            processes: 0,
            forked: 0,
            threads: 0,
            functions: Vec::new(),
        }
    }

    /// The process facts (`processes`, `forked`, `threads`).
    pub fn facts(&self) -> Facts {
        Facts {
            processes: self.processes,
            forked: self.forked,
            threads: self.threads,
        }
    }

    /// Sets `processes`, `forked` and `threads`.
    pub fn set_facts(&mut self, f: Facts) {
        self.processes = f.processes;
        self.forked = f.forked;
        self.threads = f.threads;
    }

    /// The file's bytes (see the crate doc for the layout).
    ///
    /// A profile that breaks the invariants is encoded as
    /// [`normalize`](Self::normalize) would fix it, so that the result always
    /// decodes.
    pub fn encode(&self) -> Vec<u8> {
        if !self.is_canonical() {
            let mut p = self.clone();
            p.normalize();
            return p.encode();
        }
        let size = view::HEADER_LEN
            + view::CHECKSUM_LEN
            + self
                .functions
                .iter()
                .map(|f| {
                    view::FUNCTION_MIN_LEN
                        + 8 * f.slots.len()
                        + 16 * (f.paths.len() + f.slot_resumes.len() + f.path_resumes.len())
                })
                .sum::<usize>();
        let mut e = Encoder::new(Vec::with_capacity(size), self.build_id, self.mode);
        e.facts(self.facts());
        for f in &self.functions {
            e.begin_function(f.index, f.hash, f.slots.len() as u64);
            f.slots.iter().for_each(|&s| e.slot(s));
            f.paths.iter().for_each(|&(id, c)| e.path(id, c));
            f.slot_resumes
                .iter()
                .for_each(|&(k, r)| e.slot_resume(k, r));
            f.path_resumes
                .iter()
                .for_each(|&(id, r)| e.path_resume(id, r));
            e.end_function(false);
        }
        // A canonical profile meets every rule of the encoder and a Vec only
        // refuses bytes when memory is exhausted.
        e.finish().unwrap_or_default()
    }

    /// Reads a file written by [`encode`](Self::encode) (or by the runtime).
    ///
    /// Errors: [`FormatError::NotAProfile`], [`FormatError::OlderVersion`],
    /// [`FormatError::UnsupportedVersion`],
    /// [`FormatError::Truncated`], [`FormatError::TrailingBytes`],
    /// [`FormatError::ChecksumMismatch`], [`FormatError::Malformed`].
    pub fn decode(bytes: &[u8]) -> Result<RawProfile, FormatError> {
        let view = ProfileView::parse(bytes)?;
        // Counts were checked against the file's length by `parse`.
        let mut functions = Vec::with_capacity(view.num_functions() as usize);
        for f in view.functions() {
            let mut slots = Vec::with_capacity(f.num_slots() as usize);
            slots.extend(f.slots());
            let mut paths = Vec::with_capacity(f.num_paths() as usize);
            paths.extend(f.paths());
            let mut slot_resumes = Vec::with_capacity(f.num_slot_resumes() as usize);
            slot_resumes.extend(f.slot_resumes());
            let mut path_resumes = Vec::with_capacity(f.num_path_resumes() as usize);
            path_resumes.extend(f.path_resumes());
            functions.push(RawFunction {
                index: f.index(),
                hash: f.hash(),
                slots,
                paths,
                slot_resumes,
                path_resumes,
            });
        }
        let facts = view.facts();
        Ok(RawProfile {
            build_id: view.build_id(),
            mode: view.mode(),
            processes: facts.processes,
            forked: facts.forked,
            threads: facts.threads,
            functions,
        })
    }

    /// Whether the invariants hold: functions strictly increasing by index,
    /// each function's paths, slot resumes and path resumes strictly
    /// increasing by key with nonzero counts, slot resumes only of slots the
    /// function has.
    pub fn is_canonical(&self) -> bool {
        self.functions.windows(2).all(|w| w[0].index < w[1].index)
            && self.functions.iter().all(|f| {
                is_canonical_list(&f.paths)
                    && is_canonical_list(&f.path_resumes)
                    && is_canonical_list(&f.slot_resumes)
                    && f.slot_resumes
                        .last()
                        .is_none_or(|&(k, _)| k < f.slots.len() as u64)
            })
    }

    /// Restores the invariants: sorts functions by index, paths and resumes
    /// by key, adds up duplicate keys (saturating), drops zero counts and
    /// resumes of slots the function does not have, and merges functions
    /// that share an index (into the first one; a later one with another
    /// hash or slot count is dropped).
    pub fn normalize(&mut self) {
        if self.is_canonical() {
            return;
        }
        for f in &mut self.functions {
            normalize_list(&mut f.paths);
            normalize_list(&mut f.path_resumes);
            normalize_list(&mut f.slot_resumes);
            let num_slots = f.slots.len() as u64;
            f.slot_resumes.retain(|&(k, _)| k < num_slots);
        }
        self.functions.sort_by_key(|f| f.index);
        let mut out: Vec<RawFunction> = Vec::with_capacity(self.functions.len());
        for f in std::mem::take(&mut self.functions) {
            match out.last_mut() {
                Some(last) if last.index == f.index => {
                    if last.hash == f.hash && last.slots.len() == f.slots.len() {
                        last.add(&f);
                    }
                }
                _ => out.push(f),
            }
        }
        self.functions = out;
    }
}

/// Whether `list` is strictly increasing by key with nonzero counts.
fn is_canonical_list(list: &[(u64, u64)]) -> bool {
    list.windows(2).all(|w| w[0].0 < w[1].0) && list.iter().all(|p| p.1 != 0)
}

/// Sorts `list` by key, adds up duplicate keys (saturating) and drops zero
/// counts.
fn normalize_list(list: &mut Vec<(u64, u64)>) {
    list.sort_by_key(|p| p.0);
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(list.len());
    for &(key, c) in list.iter() {
        match out.last_mut() {
            Some(last) if last.0 == key => last.1 = last.1.saturating_add(c),
            _ => out.push((key, c)),
        }
    }
    out.retain(|p| p.1 != 0);
    *list = out;
}
