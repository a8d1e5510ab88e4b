//! The owned profile: [`RawProfile`] (one build's section) and [`ProfileFile`]
//! (a whole file), decoded into vectors, normalised, encoded; for the tools
//! (the runtime writes through [`crate::Encoder`] and [`crate::merge_into`]).

use crate::encoder::{Encoder, Sink};
use crate::view::{self, ProfileView, SectionView};
use crate::{Facts, FormatError, MAX_OBJECTS};
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

/// The counters of one or more runs of one build: one section of a file.
///
/// Invariant (kept by [`decode`](Self::decode) and [`merge`](Self::merge)):
/// `functions` sorted by index, indices unique; `objects` nonempty strings,
/// strictly increasing, at most [`MAX_OBJECTS`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawProfile {
    /// The build id of the program (the map file's `build_id`).
    pub build_id: u64,
    /// The instrumentation mode: [`crate::abi::MODE_BLOCK`] (0), [`crate::abi::MODE_EDGE`]
    /// (1) or [`crate::abi::MODE_PATH`] (2).
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
    /// How many of `processes` died without their final write (SIGKILL, a
    /// fault) and were merged from their live files (continuous mode).
    pub killed: u64,
    /// How they ended, where known ([`Facts::killed_at_exit`],
    /// [`Facts::killed_in_signal`], [`Facts::killed_signals`]).
    pub killed_at_exit: u64,
    pub killed_in_signal: u64,
    pub killed_signals: u64,
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

impl RawProfile {
    /// An empty profile of `build_id` and `mode`.
    pub fn new(build_id: u64, mode: u32) -> Self {
        RawProfile {
            build_id,
            mode,
            processes: 0,
            forked: 0,
            threads: 0,
            killed: 0,
            killed_at_exit: 0,
            killed_in_signal: 0,
            killed_signals: 0,
            objects: Vec::new(),
            objects_truncated: false,
            functions: Vec::new(),
        }
    }

    /// The process facts (`processes`, `forked`, `threads`, `killed` and
    /// the killed's endings).
    pub fn facts(&self) -> Facts {
        Facts {
            processes: self.processes,
            forked: self.forked,
            threads: self.threads,
            killed: self.killed,
            killed_at_exit: self.killed_at_exit,
            killed_in_signal: self.killed_in_signal,
            killed_signals: self.killed_signals,
        }
    }

    /// Sets the process facts.
    pub fn set_facts(&mut self, f: Facts) {
        self.processes = f.processes;
        self.forked = f.forked;
        self.threads = f.threads;
        self.killed = f.killed;
        self.killed_at_exit = f.killed_at_exit;
        self.killed_in_signal = f.killed_in_signal;
        self.killed_signals = f.killed_signals;
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
        let mut raw = RawProfile {
            objects: view.objects().map(str::to_string).collect(),
            objects_truncated: view.objects_truncated(),
            functions,
            ..RawProfile::new(view.build_id(), view.mode())
        };
        raw.set_facts(view.facts());
        raw
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
        for f in core::mem::take(&mut self.functions) {
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
        for s in core::mem::take(&mut self.sections) {
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
