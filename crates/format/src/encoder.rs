//! [`Encoder`]: writes a raw profile file section by section and record by
//! record into a [`Sink`], checking the order rules as it goes. It allocates
//! nothing itself, so the runtime can use it over memory it maps on its own.

use crate::checksum::fnv1a64;
use crate::view::{
    le_u64, SectionView, FACTS_AT, FLAGS_AT, FLAG_OBJECTS_TRUNCATED, OBJECT_COUNT_AT,
    SECTION_COUNT_AT,
};
use crate::{Facts, FormatError, MAGIC, MAX_OBJECTS, VERSION};

// A section's process facts ([`Facts::words`]) fill its header from the
// facts' offset to the object count's.
const _: () = assert!(OBJECT_COUNT_AT - FACTS_AT == 8 * 7);

/// Where an [`Encoder`] puts its bytes. Implemented for `Vec<u8>`; the runtime
/// implements it for memory it maps itself.
pub trait Sink {
    /// Appends `bytes`; returns false if there is no room for them.
    fn append(&mut self, bytes: &[u8]) -> bool;
    /// Everything appended so far.
    fn written(&mut self) -> &mut [u8];
    /// Forgets everything after the first `len` bytes.
    fn truncate_to(&mut self, len: usize);
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn append(&mut self, bytes: &[u8]) -> bool {
        (**self).append(bytes)
    }

    fn written(&mut self) -> &mut [u8] {
        (**self).written()
    }

    fn truncate_to(&mut self, len: usize) {
        (**self).truncate_to(len)
    }
}

#[cfg(feature = "std")]
impl Sink for alloc::vec::Vec<u8> {
    fn append(&mut self, bytes: &[u8]) -> bool {
        if self.try_reserve(bytes.len()).is_err() {
            return false;
        }
        self.extend_from_slice(bytes);
        true
    }

    fn written(&mut self) -> &mut [u8] {
        self
    }

    fn truncate_to(&mut self, len: usize) {
        self.truncate(len);
    }
}

/// The lists of a function record, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Slots,
    Paths,
    SlotResumes,
    PathResumes,
}

/// The function record being written.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Where the record starts.
    start: usize,
    /// The declared slot count.
    num_slots: u64,
    /// Slots declared but not yet written.
    slots_left: u64,
    /// Whether any slot was nonzero, or any path or resume entry written.
    any: bool,
    /// The list being written.
    part: Part,
    /// Where that list's entry count is (for every part after the slots).
    count_at: usize,
    /// Entries of that list written.
    entries: u64,
    /// The last key (path id, slot index) of that list written.
    last_key: Option<u64>,
}

/// The section being written.
#[derive(Debug, Clone, Copy)]
struct Section {
    /// Where the section starts.
    start: usize,
    /// Function records written.
    functions: u64,
    /// The index of the last function record written.
    last_index: Option<u32>,
    /// Object paths written.
    objects: u64,
    /// Where the last object path written is in the sink: (start, length).
    last_object: Option<(usize, usize)>,
    /// Where the function count is, once written (at the first function,
    /// or at the end of the section).
    function_count_at: Option<usize>,
}

/// Writes one raw profile file into a [`Sink`]: `new`; then per section (in
/// strictly increasing build id order) `begin_section`, optionally `facts`,
/// `object` paths (strictly increasing, before the functions; beyond 32 they
/// are left out and the section marked truncated) and `objects_truncated`,
/// then per function (in increasing index order) `begin_function`, exactly
/// `num_slots` calls of `slot`, any number of `path` calls with
/// non-decreasing ids, any number of `slot_resume` calls with strictly
/// increasing slot indices below `num_slots`, any number of `path_resume`
/// calls with non-decreasing ids, `end_function`; then `end_section` (also
/// done by the next `begin_section`, `copy_section` or `finish`); a whole
/// checked section can be copied with `copy_section`; then `finish`.
///
/// The first misuse or refused append is remembered and returned by `finish`;
/// every later call does nothing. The encoder allocates nothing itself.
///
/// ```
/// use pathprof_format::{Encoder, ProfileFile, RawProfile};
/// let mut e = Encoder::new(Vec::new());
/// e.begin_section(0xabc, 2);
/// e.object("/usr/bin/prog");
/// e.begin_function(3, 0x77, 1);
/// e.slot(5);
/// e.path(9, 2);
/// e.path(9, 1); // the same id again adds up
/// e.slot_resume(0, 1);
/// e.path_resume(4, 1);
/// e.end_function(false);
/// e.begin_section(0xdef, 0); // a second build in the same file
/// let bytes = e.finish()?;
/// let file = ProfileFile::decode(&bytes)?;
/// assert_eq!(file.sections.len(), 2);
/// let p = file.section(0xabc).unwrap();
/// assert_eq!(p.objects, vec!["/usr/bin/prog".to_string()]);
/// assert_eq!(p.functions[0].paths, vec![(9, 3)]);
/// assert_eq!(p.functions[0].slot_resumes, vec![(0, 1)]);
/// assert_eq!(p.functions[0].path_resumes, vec![(4, 1)]);
/// // A file of several builds is not one RawProfile.
/// assert!(RawProfile::decode(&bytes).is_err());
/// # Ok::<(), pathprof_format::FormatError>(())
/// ```
#[derive(Debug)]
pub struct Encoder<S: Sink> {
    sink: S,
    /// Where the file starts in the sink.
    start: usize,
    /// Sections written (closed or copied).
    sections: u64,
    /// The build id of the last section begun.
    last_build: Option<u64>,
    section: Option<Section>,
    open: Option<Open>,
    error: Option<FormatError>,
}

impl<S: Sink> Encoder<S> {
    /// Starts a profile file at the end of `sink`.
    pub fn new(mut sink: S) -> Self {
        let start = sink.written().len();
        let mut e = Encoder {
            sink,
            start,
            sections: 0,
            last_build: None,
            section: None,
            open: None,
            error: None,
        };
        e.put(&MAGIC);
        e.put(&VERSION.to_le_bytes());
        e.put(&0u32.to_le_bytes()); // reserved
        e.put(&0u64.to_le_bytes()); // section count, patched by finish
        e
    }

    fn fail(&mut self, err: FormatError) {
        if self.error.is_none() {
            self.error = Some(err);
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none() && !self.sink.append(bytes) {
            let at = self.sink.written().len() as u64;
            self.fail(FormatError::OutOfSpace { at });
        }
    }

    fn patch(&mut self, at: usize, value: u64) {
        self.patch_bytes(at, &value.to_le_bytes());
    }

    fn patch_bytes(&mut self, at: usize, value: &[u8]) {
        if self.error.is_some() {
            return;
        }
        match self.sink.written().get_mut(at..at + value.len()) {
            Some(b) => b.copy_from_slice(value),
            None => self.fail(FormatError::InvalidInput {
                what: "the sink lost bytes already written",
            }),
        }
    }

    /// Whether the build id `build_id` may start the next section; records
    /// the misuse if not.
    fn next_build(&mut self, build_id: u64) -> bool {
        if self.open.is_some() {
            self.fail(FormatError::InvalidInput {
                what: "a section begun with a function still open",
            });
            return false;
        }
        self.end_section();
        if self.last_build.is_some_and(|l| build_id <= l) {
            self.fail(FormatError::InvalidInput {
                what: "section build ids must be strictly increasing",
            });
            return false;
        }
        self.error.is_none()
    }

    /// Starts the section of build `build_id` (strictly above the previous
    /// section's) counted in `mode`, closing the open section, if any.
    pub fn begin_section(&mut self, build_id: u64, mode: u32) {
        if !self.next_build(build_id) {
            return;
        }
        let start = self.sink.written().len();
        // Flags and facts zero unless set (`objects_truncated`, `facts`).
        self.section_header(build_id, mode, 0, Facts::default());
        self.put(&0u64.to_le_bytes()); // object count, patched as objects come
        self.last_build = Some(build_id);
        self.section = Some(Section {
            start,
            functions: 0,
            last_index: None,
            objects: 0,
            last_object: None,
            function_count_at: None,
        });
    }

    /// A section's header in this version's layout, up to its object count.
    fn section_header(&mut self, build_id: u64, mode: u32, flags: u32, facts: Facts) {
        self.put(&build_id.to_le_bytes());
        self.put(&mode.to_le_bytes());
        self.put(&flags.to_le_bytes());
        for word in facts.words() {
            self.put(&word.to_le_bytes());
        }
    }

    /// The open section, or the misuse `what` recorded.
    fn open_section(&mut self, what: &'static str) -> Option<Section> {
        let s = self.section;
        if s.is_none() {
            self.fail(FormatError::InvalidInput { what });
        }
        s
    }

    /// Sets the open section's process facts (zero until set); may be called
    /// at any time before the section ends.
    pub fn facts(&mut self, facts: Facts) {
        let Some(s) = self.open_section("facts outside a section") else {
            return;
        };
        for (i, word) in facts.words().into_iter().enumerate() {
            self.patch(s.start + FACTS_AT + 8 * i, word);
        }
    }

    /// Adds an object path (an executable or shared library the build was
    /// loaded from) to the open section, before its functions. Paths must be
    /// nonempty and strictly increasing (byte order); beyond the 32nd they
    /// are left out and the section is marked truncated instead.
    pub fn object(&mut self, path: &str) {
        let Some(s) = self.open_section("an object path outside a section") else {
            return;
        };
        if s.function_count_at.is_some() {
            return self.fail(FormatError::InvalidInput {
                what: "an object path after a function",
            });
        }
        if path.is_empty() {
            return self.fail(FormatError::InvalidInput {
                what: "an empty object path",
            });
        }
        if let Some((at, len)) = s.last_object {
            let last = self.sink.written().get(at..at + len).unwrap_or(&[]);
            if path.as_bytes() <= last {
                return self.fail(FormatError::InvalidInput {
                    what: "object paths must be strictly increasing",
                });
            }
        }
        if s.objects >= MAX_OBJECTS as u64 {
            return self.objects_truncated();
        }
        self.put(&(path.len() as u64).to_le_bytes());
        let at = self.sink.written().len();
        self.put(path.as_bytes());
        let objects = s.objects + 1;
        self.patch(s.start + OBJECT_COUNT_AT, objects);
        if let Some(ref mut s) = self.section {
            s.objects = objects;
            s.last_object = Some((at, path.len()));
        }
    }

    /// Marks the open section's object list as truncated: more objects were
    /// known than it lists.
    pub fn objects_truncated(&mut self) {
        let Some(s) = self.open_section("objects_truncated outside a section") else {
            return;
        };
        let at = s.start + FLAGS_AT;
        let flags = self
            .sink
            .written()
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes);
        self.patch_bytes(at, &(flags | FLAG_OBJECTS_TRUNCATED).to_le_bytes());
    }

    /// Writes the open section's function count placeholder if it is not
    /// there yet.
    fn function_count(&mut self) {
        if let Some(s) = self.section {
            if s.function_count_at.is_none() {
                let at = self.sink.written().len();
                self.put(&0u64.to_le_bytes());
                if let Some(ref mut s) = self.section {
                    s.function_count_at = Some(at);
                }
            }
        }
    }

    /// Closes the open section, if any (a function still open is a misuse).
    pub fn end_section(&mut self) {
        if self.open.is_some() {
            return self.fail(FormatError::InvalidInput {
                what: "end_section with a function still open",
            });
        }
        self.function_count();
        let Some(s) = self.section.take() else {
            return;
        };
        if let Some(at) = s.function_count_at {
            self.patch(at, s.functions);
        }
        self.sections += 1;
    }

    /// Appends a whole section of a checked file as it is (closing the open
    /// section first; its header in this version's layout, whatever the
    /// file's); its build id must be above the previous section's.
    pub fn copy_section(&mut self, section: &SectionView<'_>) {
        if !self.next_build(section.build_id()) {
            return;
        }
        self.section_header(
            section.build_id(),
            section.mode(),
            section.flags(),
            section.facts(),
        );
        self.put(section.body());
        self.last_build = Some(section.build_id());
        self.sections += 1;
    }

    /// Starts the record of function `index` with `num_slots` slot counters.
    pub fn begin_function(&mut self, index: u32, hash: u64, num_slots: u64) {
        if self.open.is_some() {
            return self.fail(FormatError::InvalidInput {
                what: "begin_function before end_function",
            });
        }
        let Some(section) = self.open_section("a function outside a section") else {
            return;
        };
        if section.last_index.is_some_and(|l| index <= l) {
            return self.fail(FormatError::InvalidInput {
                what: "function indices must be strictly increasing",
            });
        }
        self.function_count();
        let start = self.sink.written().len();
        self.put(&index.to_le_bytes());
        self.put(&hash.to_le_bytes());
        self.put(&num_slots.to_le_bytes());
        self.open = Some(Open {
            start,
            num_slots,
            slots_left: num_slots,
            any: false,
            part: Part::Slots,
            count_at: 0,
            entries: 0,
            last_key: None,
        });
    }

    /// Writes the next slot counter of the open function.
    pub fn slot(&mut self, count: u64) {
        match self.open {
            Some(ref mut o) if o.slots_left > 0 && o.part == Part::Slots => {
                o.slots_left -= 1;
                o.any |= count != 0;
            }
            _ => {
                return self.fail(FormatError::InvalidInput {
                    what: "more slots than declared, or a slot after a path or resume",
                })
            }
        }
        self.put(&count.to_le_bytes());
    }

    /// Moves the open function on to the list `to`: closes the lists before
    /// it (patching their entry counts) and writes the entry count
    /// placeholders of the lists up to it. False, with the error remembered,
    /// if there is no open function, `to` was passed already, or fewer slots
    /// were written than declared.
    fn enter(&mut self, to: Part, misuse: &'static str) -> bool {
        let Some(o) = self.open else {
            self.fail(FormatError::InvalidInput {
                what: "path, resume or end_function without begin_function",
            });
            return false;
        };
        if o.part > to {
            self.fail(FormatError::InvalidInput { what: misuse });
            return false;
        }
        if o.part == to {
            return self.error.is_none();
        }
        if o.slots_left != 0 {
            self.fail(FormatError::InvalidInput {
                what: "fewer slots than declared",
            });
            return false;
        }
        let mut part = o.part;
        let mut count_at = o.count_at;
        let mut entries = o.entries;
        while part < to {
            if part != Part::Slots {
                self.patch(count_at, entries);
            }
            part = match part {
                Part::Slots => Part::Paths,
                Part::Paths => Part::SlotResumes,
                Part::SlotResumes | Part::PathResumes => Part::PathResumes,
            };
            count_at = self.sink.written().len();
            entries = 0;
            self.put(&0u64.to_le_bytes());
        }
        if let Some(ref mut o) = self.open {
            o.part = to;
            o.count_at = count_at;
            o.entries = 0;
            o.last_key = None;
        }
        self.error.is_none()
    }

    /// Adds `count` to the entry of `key` in the list being written: a new
    /// entry if `key` is above the last one, the last one again if equal
    /// (saturating).
    fn entry(&mut self, key: u64, count: u64) {
        let Some(o) = self.open else { return };
        if o.last_key == Some(key) {
            let at = self.sink.written().len().saturating_sub(8);
            let old = le_u64(self.sink.written().get(at..).unwrap_or(&[]));
            self.patch(at, old.saturating_add(count));
            return;
        }
        self.put(&key.to_le_bytes());
        self.put(&count.to_le_bytes());
        if let Some(ref mut o) = self.open {
            o.entries += 1;
            o.last_key = Some(key);
            o.any = true;
        }
    }

    /// Adds `count` executions of path `id` to the open function, after its
    /// slots and before its resumes. A zero count is ignored; an id equal to
    /// the previous one adds to it (saturating); ids must not decrease.
    pub fn path(&mut self, id: u64, count: u64) {
        if count == 0 || !self.enter(Part::Paths, "a path after a resume") {
            return;
        }
        if self
            .open
            .is_some_and(|o| o.last_key.is_some_and(|l| id < l))
        {
            return self.fail(FormatError::InvalidInput {
                what: "path ids must not decrease",
            });
        }
        self.entry(id, count);
    }

    /// Records that slot counter `slot` of the open function was taken back
    /// `count` times below what was written (see the crate doc), after the
    /// function's paths and before its path resumes. A zero count is
    /// ignored; slot indices must be strictly increasing and below the
    /// function's slot count.
    pub fn slot_resume(&mut self, slot: u64, count: u64) {
        if count == 0 || !self.enter(Part::SlotResumes, "a slot resume after a path resume") {
            return;
        }
        let Some(o) = self.open else { return };
        if slot >= o.num_slots {
            return self.fail(FormatError::InvalidInput {
                what: "a slot resume of a slot the function does not have",
            });
        }
        if o.last_key.is_some_and(|l| slot <= l) {
            return self.fail(FormatError::InvalidInput {
                what: "slot resume indices must be strictly increasing",
            });
        }
        self.entry(slot, count);
    }

    /// Records that the count of path `id` of the open function was taken
    /// back `count` times below what was written (see the crate doc), after
    /// the function's slot resumes. A zero count is ignored; an id equal to
    /// the previous one adds to it (saturating); ids must not decrease.
    pub fn path_resume(&mut self, id: u64, count: u64) {
        if count == 0 || !self.enter(Part::PathResumes, "records out of order") {
            return;
        }
        if self
            .open
            .is_some_and(|o| o.last_key.is_some_and(|l| id < l))
        {
            return self.fail(FormatError::InvalidInput {
                what: "path resume ids must not decrease",
            });
        }
        self.entry(id, count);
    }

    /// Closes the open function. With `drop_if_empty`, a function whose slots
    /// are all zero and which has no paths and no resumes is left out of the
    /// file.
    pub fn end_function(&mut self, drop_if_empty: bool) {
        if !self.enter(Part::PathResumes, "records out of order") {
            return;
        }
        let Some(o) = self.open.take() else { return };
        if drop_if_empty && !o.any {
            self.sink.truncate_to(o.start);
            return;
        }
        self.patch(o.count_at, o.entries);
        let index = self.index_at(o.start);
        if let Some(ref mut s) = self.section {
            s.functions += 1;
            s.last_index = Some(index);
        }
    }

    fn index_at(&mut self, at: usize) -> u32 {
        self.sink
            .written()
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .unwrap_or(0)
    }

    /// Closes the open section, writes the section count and the checksum
    /// and returns the sink.
    pub fn finish(mut self) -> Result<S, FormatError> {
        if self.open.is_some() {
            self.fail(FormatError::InvalidInput {
                what: "finish with a function still open",
            });
        }
        self.end_section();
        self.patch(self.start + SECTION_COUNT_AT, self.sections);
        let sum = fnv1a64(self.sink.written().get(self.start..).unwrap_or(&[]));
        self.put(&sum.to_le_bytes());
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.sink),
        }
    }
}
