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
//! ## Layout (version 4)
//!
//! Every integer is little-endian; there is no padding.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `PPROFRAW` |
//! | 8 | 4 | version, `4` |
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
//! | 40 | 8 | object path count O, at most 32 |
//! | 48 | … | O object paths: each a length L (8 bytes) and L bytes of UTF-8, nonempty, strictly increasing by bytes |
//! | … | 8 | function count F |
//! | … | … | F function records, indices strictly increasing |
//!
//! Version 1 (pathprof before the process facts) had no processes, forked
//! and threads fields, version 2 had no resumes, and version 3 held one
//! build only, with no object paths; reading any of them fails with
//! [`FormatError::OlderVersion`] (record the profile again).
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
//!     forked: 0,
//!     threads: 0,
//!     objects: vec!["/usr/bin/prog".into()],
//!     objects_truncated: false,
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

pub mod abi;
mod checksum;
mod encoder;
mod error;
pub mod map_schema;
mod merge;
mod view;

pub use checksum::{fnv1a64, Fnv64};
pub use encoder::{Encoder, Sink};
pub use error::FormatError;
pub use merge::merge_into;
pub use view::{FunctionView, Functions, Objects, ProfileView, SectionView, Sections};

/// The first 8 bytes of every raw profile.
pub const MAGIC: [u8; 8] = *b"PPROFRAW";
/// The format version this crate reads and writes.
pub const VERSION: u32 = 4;
/// The most object paths a section lists (see the crate doc).
pub const MAX_OBJECTS: usize = 32;

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

/// The counters of one or more runs of one build: one section of a file.
///
/// Invariant (kept by [`decode`](Self::decode) and [`merge`](Self::merge)):
/// `functions` sorted by index, indices unique; `objects` nonempty strings,
/// strictly increasing, at most [`MAX_OBJECTS`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawProfile {
    /// The build id of the program (the map file's `build_id`).
    pub build_id: u64,
    /// The instrumentation mode: [`abi::MODE_BLOCK`] (0), [`abi::MODE_EDGE`]
    /// (1) or [`abi::MODE_PATH`] (2).
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
    /// The executables and shared libraries the build was loaded from when
    /// its counts were written (absolute paths as the runtime found them),
    /// sorted, each once, at most [`MAX_OBJECTS`].
    pub objects: Vec<String>,
    /// More object paths were known than `objects` lists (a merge kept the
    /// first [`MAX_OBJECTS`] in sort order).
    pub objects_truncated: bool,
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
            objects: Vec::new(),
            objects_truncated: false,
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

    /// The bytes of a file holding this one section (see the crate doc for
    /// the layout).
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
        let size = view::FILE_HEADER_LEN + view::CHECKSUM_LEN + self.encoded_len();
        let mut e = Encoder::new(Vec::with_capacity(size));
        self.encode_section(&mut e);
        // A canonical profile meets every rule of the encoder and a Vec only
        // refuses bytes when memory is exhausted.
        e.finish().unwrap_or_default()
    }

    /// The size of this (canonical) section in a file.
    fn encoded_len(&self) -> usize {
        view::SECTION_MIN_LEN
            + self
                .objects
                .iter()
                .map(|o| view::OBJECT_MIN_LEN + o.len())
                .sum::<usize>()
            + self
                .functions
                .iter()
                .map(|f| {
                    view::FUNCTION_MIN_LEN
                        + 8 * f.slots.len()
                        + 16 * (f.paths.len() + f.slot_resumes.len() + f.path_resumes.len())
                })
                .sum::<usize>()
    }

    /// Writes this (canonical) profile as a section of `e`.
    fn encode_section<S: Sink>(&self, e: &mut Encoder<S>) {
        e.begin_section(self.build_id, self.mode);
        e.facts(self.facts());
        if self.objects_truncated {
            e.objects_truncated();
        }
        self.objects.iter().for_each(|o| e.object(o));
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
        e.end_section();
    }

    /// Reads a file of exactly one section, written by
    /// [`encode`](Self::encode) (or by the runtime).
    ///
    /// Errors: [`FormatError::NotAProfile`], [`FormatError::OlderVersion`],
    /// [`FormatError::UnsupportedVersion`],
    /// [`FormatError::Truncated`], [`FormatError::TrailingBytes`],
    /// [`FormatError::ChecksumMismatch`], [`FormatError::Malformed`], and
    /// [`FormatError::NotOneBuild`] for a file of no or several sections
    /// (read those with [`ProfileFile::decode`]).
    pub fn decode(bytes: &[u8]) -> Result<RawProfile, FormatError> {
        let view = ProfileView::parse(bytes)?;
        let mut sections = view.sections();
        match (sections.next(), view.num_sections()) {
            (Some(s), 1) => Ok(RawProfile::from_view(&s)),
            (_, n) => Err(FormatError::NotOneBuild { builds: n }),
        }
    }

    /// The owned copy of a checked section.
    fn from_view(view: &SectionView<'_>) -> RawProfile {
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
        RawProfile {
            build_id: view.build_id(),
            mode: view.mode(),
            processes: facts.processes,
            forked: facts.forked,
            threads: facts.threads,
            objects: view.objects().map(str::to_string).collect(),
            objects_truncated: view.objects_truncated(),
            functions,
        }
    }

    /// Whether the invariants hold: object paths nonempty, strictly
    /// increasing and at most [`MAX_OBJECTS`]; functions strictly increasing
    /// by index, each function's paths, slot resumes and path resumes
    /// strictly increasing by key with nonzero counts, slot resumes only of
    /// slots the function has.
    pub fn is_canonical(&self) -> bool {
        self.objects.len() <= MAX_OBJECTS
            && self.objects.windows(2).all(|w| w[0] < w[1])
            && self.objects.iter().all(|o| !o.is_empty())
            && self.functions.windows(2).all(|w| w[0].index < w[1].index)
            && self.functions.iter().all(|f| {
                is_canonical_list(&f.paths)
                    && is_canonical_list(&f.path_resumes)
                    && is_canonical_list(&f.slot_resumes)
                    && f.slot_resumes
                        .last()
                        .is_none_or(|&(k, _)| k < f.slots.len() as u64)
            })
    }

    /// Restores the invariants: sorts object paths, drops empty and
    /// repeated ones and keeps the first [`MAX_OBJECTS`] (setting
    /// `objects_truncated` if there were more); sorts functions by index,
    /// paths and resumes by key, adds up duplicate keys (saturating), drops
    /// zero counts and resumes of slots the function does not have, and
    /// merges functions that share an index (into the first one; a later one
    /// with another hash or slot count is dropped).
    pub fn normalize(&mut self) {
        if self.is_canonical() {
            return;
        }
        self.objects.retain(|o| !o.is_empty());
        self.objects.sort();
        self.objects.dedup();
        if self.objects.len() > MAX_OBJECTS {
            self.objects.truncate(MAX_OBJECTS);
            self.objects_truncated = true;
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

/// A whole raw profile file: one section per build, in increasing build id
/// order (see the crate doc).
///
/// Invariant (kept by [`decode`](Self::decode) and [`merge`](Self::merge)):
/// `sections` strictly increasing by build id, each section canonical
/// ([`RawProfile::is_canonical`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProfileFile {
    /// The sections, by increasing build id.
    pub sections: Vec<RawProfile>,
}

impl From<RawProfile> for ProfileFile {
    /// A file of that one section.
    fn from(p: RawProfile) -> Self {
        ProfileFile { sections: vec![p] }
    }
}

impl ProfileFile {
    /// The file's bytes (see the crate doc for the layout).
    ///
    /// A file that breaks the invariants is encoded as
    /// [`normalize`](Self::normalize) would fix it, so that the result
    /// always decodes.
    pub fn encode(&self) -> Vec<u8> {
        if !self.is_canonical() {
            let mut f = self.clone();
            f.normalize();
            return f.encode();
        }
        let size = view::FILE_HEADER_LEN
            + view::CHECKSUM_LEN
            + self
                .sections
                .iter()
                .map(RawProfile::encoded_len)
                .sum::<usize>();
        let mut e = Encoder::new(Vec::with_capacity(size));
        for s in &self.sections {
            s.encode_section(&mut e);
        }
        // As in `RawProfile::encode`.
        e.finish().unwrap_or_default()
    }

    /// Reads a file written by [`encode`](Self::encode),
    /// [`RawProfile::encode`] or the runtime.
    ///
    /// Errors: as [`RawProfile::decode`], except that any number of sections
    /// is fine.
    pub fn decode(bytes: &[u8]) -> Result<ProfileFile, FormatError> {
        let view = ProfileView::parse(bytes)?;
        // The section count was checked against the file's length by `parse`.
        let mut sections = Vec::with_capacity(view.num_sections() as usize);
        sections.extend(view.sections().map(|s| RawProfile::from_view(&s)));
        Ok(ProfileFile { sections })
    }

    /// The section of `build_id`, if the file has one.
    pub fn section(&self, build_id: u64) -> Option<&RawProfile> {
        match self
            .sections
            .binary_search_by_key(&build_id, |s| s.build_id)
        {
            Ok(i) => self.sections.get(i),
            // Not canonical: look everywhere.
            Err(_) => self.sections.iter().find(|s| s.build_id == build_id),
        }
    }

    /// The build ids of the sections, in file order.
    pub fn build_ids(&self) -> Vec<u64> {
        self.sections.iter().map(|s| s.build_id).collect()
    }

    /// Whether the invariants hold: sections strictly increasing by build id,
    /// each canonical.
    pub fn is_canonical(&self) -> bool {
        self.sections
            .windows(2)
            .all(|w| w[0].build_id < w[1].build_id)
            && self.sections.iter().all(RawProfile::is_canonical)
    }

    /// Restores the invariants: normalizes each section, sorts them by build
    /// id and merges sections of one build (into the first one; a later one
    /// that cannot merge, of another mode or with a function of another
    /// shape, is dropped).
    pub fn normalize(&mut self) {
        if self.is_canonical() {
            return;
        }
        for s in &mut self.sections {
            s.normalize();
        }
        self.sections.sort_by_key(|s| s.build_id);
        let mut out: Vec<RawProfile> = Vec::with_capacity(self.sections.len());
        for s in std::mem::take(&mut self.sections) {
            match out.last_mut() {
                Some(last) if last.build_id == s.build_id => {
                    // A refused merge leaves `last` unchanged: `s` is dropped.
                    let _ = last.merge(&s);
                }
                _ => out.push(s),
            }
        }
        self.sections = out;
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
