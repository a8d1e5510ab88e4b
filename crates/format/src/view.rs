//! Zero-copy, allocation-free reading: [`ProfileView`] checks a whole file once
//! (structure, order rules, checksum) and then hands out its sections as
//! [`SectionView`]s and their functions as [`FunctionView`]s, all borrowing
//! the bytes. The runtime merges with it from a signal handler, where it must
//! not call `malloc`.

use crate::checksum::fnv1a64;
use crate::{Facts, FormatError, MAGIC, MAX_OBJECTS, OLDEST_READABLE_VERSION, VERSION};

/// Bytes of the file header (magic, version, reserved word, section count).
pub(crate) const FILE_HEADER_LEN: usize = 24;
/// Offset of the section count in the file header.
pub(crate) const SECTION_COUNT_AT: usize = 16;
/// Bytes of a section with no objects and no functions (its header: build
/// id, mode, flags, facts, object count; then the function count).
#[cfg(feature = "std")]
pub(crate) const SECTION_MIN_LEN: usize = OBJECT_COUNT_AT + 16;
/// The first version whose sections record the endings of the killed.
const ENDINGS_SINCE: u32 = 6;
/// Offset of the object count in a version 5 section (no endings of the
/// killed).
const OBJECT_COUNT_AT_V5: usize = 48;
/// Bytes of the smallest section of any version read.
const SMALLEST_SECTION_LEN: usize = OBJECT_COUNT_AT_V5 + 16;
/// Offset of the flags in a section.
pub(crate) const FLAGS_AT: usize = 12;
/// Offset of the process facts (processes, forked, threads, killed and
/// the killed's endings) in a section.
pub(crate) const FACTS_AT: usize = 16;
/// Offset of the object count in a section.
pub(crate) const OBJECT_COUNT_AT: usize = 72;
/// Bytes of an object path entry besides the path itself.
pub(crate) const OBJECT_MIN_LEN: usize = 8;
/// Bytes of a function record with no slots, paths or resumes.
pub(crate) const FUNCTION_MIN_LEN: usize = 4 + 8 + 8 + 8 + 8 + 8;
/// Bytes of the trailing checksum.
#[cfg(feature = "std")]
pub(crate) const CHECKSUM_LEN: usize = 8;
/// Section flag: more object paths were known than the section lists.
pub(crate) const FLAG_OBJECTS_TRUNCATED: u32 = 1;

/// Reads little-endian fields, failing with [`FormatError::Truncated`].
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FormatError> {
        let at = self.pos;
        let chunk = at
            .checked_add(n)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or(FormatError::Truncated {
                at: at as u64,
                what,
            })?;
        self.pos = at + n;
        Ok(chunk)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, FormatError> {
        let b = self.take(4, what)?;
        Ok(b.try_into().map(u32::from_le_bytes).unwrap_or(0))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, FormatError> {
        Ok(le_u64(self.take(8, what)?))
    }

    /// A count of records of at least `size` bytes each, which must fit in
    /// the rest of the file.
    fn count(&mut self, size: usize, what: &'static str) -> Result<u64, FormatError> {
        let at = self.pos;
        let n = self.u64(what)?;
        if n > (self.remaining() / size) as u64 {
            return Err(FormatError::Truncated {
                at: at as u64,
                what,
            });
        }
        Ok(n)
    }

    /// A count of `size`-byte items that must fit in the rest of the file.
    fn items(&mut self, size: usize, what: &'static str) -> Result<&'a [u8], FormatError> {
        let n = self.count(size, what)?;
        self.take(n as usize * size, what)
    }
}

/// The little-endian u64 in the first 8 bytes of `b` (0 if shorter).
pub(crate) fn le_u64(b: &[u8]) -> u64 {
    b.get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .unwrap_or(0)
}

/// A checked raw profile file, borrowing its bytes: its sections, one per
/// build, in increasing build id order.
#[derive(Debug, Clone, Copy)]
pub struct ProfileView<'a> {
    bytes: &'a [u8],
    version: u32,
    num_sections: u64,
}

/// One section of a [`ProfileView`]: the counts of one build.
#[derive(Debug, Clone, Copy)]
pub struct SectionView<'a> {
    /// The whole file.
    file: &'a [u8],
    /// Where the section starts, where its object count is (what follows
    /// the facts: the same in every version) and where it ends in `file`.
    start: usize,
    body_at: usize,
    end: usize,
    build_id: u64,
    mode: u32,
    flags: u32,
    facts: Facts,
    num_objects: u64,
    /// Where the first object path entry starts in `file`.
    objects_at: usize,
    num_functions: u64,
    /// Where the first function record starts in `file`.
    functions_at: usize,
}

/// One function record of a [`SectionView`].
#[derive(Debug, Clone, Copy)]
pub struct FunctionView<'a> {
    index: u32,
    hash: u64,
    slots: &'a [u8],
    paths: &'a [u8],
    slot_resumes: &'a [u8],
    path_resumes: &'a [u8],
}

/// The sections of a [`ProfileView`], in build id order.
#[derive(Debug, Clone)]
pub struct Sections<'a> {
    file: &'a [u8],
    version: u32,
    pos: usize,
    left: u64,
}

/// The object paths of a [`SectionView`], in increasing (byte) order.
#[derive(Debug, Clone)]
pub struct Objects<'a> {
    file: &'a [u8],
    pos: usize,
    left: u64,
}

/// The function records of a [`SectionView`], in index order.
#[derive(Debug, Clone)]
pub struct Functions<'a> {
    file: &'a [u8],
    pos: usize,
    left: u64,
}

fn read_function<'a>(r: &mut Reader<'a>) -> Result<FunctionView<'a>, FormatError> {
    let index = r.u32("function index")?;
    let hash = r.u64("function hash")?;
    let slots = r.items(8, "slot counters")?;
    let paths = r.items(16, "path entries")?;
    let slot_resumes = r.items(16, "slot resumes")?;
    let path_resumes = r.items(16, "path resumes")?;
    Ok(FunctionView {
        index,
        hash,
        slots,
        paths,
        slot_resumes,
        path_resumes,
    })
}

/// Records `what` at `at` as the problem of `slot`, unless it has one.
fn note(slot: &mut Option<&mut Option<FormatError>>, at: usize, what: &'static str) {
    if let Some(slot) = slot.as_deref_mut() {
        if slot.is_none() {
            *slot = Some(FormatError::Malformed {
                at: at as u64,
                what,
            });
        }
    }
}

/// Reads the section at `r`'s position. With `problem`, also checks the
/// section's order rules and records the first one broken there (unless one
/// was recorded already); structural damage is returned as an error.
fn read_section<'a>(
    r: &mut Reader<'a>,
    version: u32,
    mut problem: Option<&mut Option<FormatError>>,
) -> Result<SectionView<'a>, FormatError> {
    let start = r.pos;
    let build_id = r.u64("build id")?;
    let mode = r.u32("mode")?;
    let flags = r.u32("section flags")?;
    let mut facts = Facts {
        processes: r.u64("process count")?,
        forked: r.u64("fork child count")?,
        threads: r.u64("thread count")?,
        killed: r.u64("killed process count")?,
        ..Facts::default()
    };
    if version >= ENDINGS_SINCE {
        facts.killed_at_exit = r.u64("killed-at-exit count")?;
        facts.killed_in_signal = r.u64("killed-in-signal count")?;
        facts.killed_signals = r.u64("killed signals")?;
    }
    let body_at = r.pos;
    if flags & !FLAG_OBJECTS_TRUNCATED != 0 {
        note(&mut problem, start, "a section has unknown flags set");
    }
    let num_objects = r.count(OBJECT_MIN_LEN, "object paths")?;
    if num_objects > MAX_OBJECTS as u64 {
        note(
            &mut problem,
            start,
            "a section lists more than 32 object paths",
        );
    }
    let objects_at = r.pos;
    let mut last: Option<&[u8]> = None;
    for _ in 0..num_objects {
        let at = r.pos;
        let path = r.items(1, "object path")?;
        if path.is_empty() {
            note(&mut problem, at, "an object path is empty");
        } else if core::str::from_utf8(path).is_err() {
            note(&mut problem, at, "an object path is not UTF-8");
        } else if last.is_some_and(|l| path <= l) {
            note(&mut problem, at, "object paths are not strictly increasing");
        }
        last = Some(path);
    }
    let num_functions = r.count(FUNCTION_MIN_LEN, "function records")?;
    let functions_at = r.pos;
    let mut last_index: Option<u32> = None;
    for _ in 0..num_functions {
        let at = r.pos as u64;
        let f = read_function(r)?;
        if let Some(slot) = problem.as_deref_mut() {
            if slot.is_none() {
                *slot = f.rule_broken(last_index, at);
            }
        }
        last_index = Some(f.index);
    }
    Ok(SectionView {
        file: r.bytes,
        start,
        body_at,
        end: r.pos,
        build_id,
        mode,
        flags,
        facts,
        num_objects,
        objects_at,
        num_functions,
        functions_at,
    })
}

impl<'a> ProfileView<'a> {
    /// A view of bytes that an [`Encoder`](crate::Encoder) of this process
    /// has just `finish`ed, to merge them or copy their sections: only the
    /// header is read, and the body is trusted rather than checked again
    /// (which [`parse`](Self::parse) does with a pass for the structure and
    /// one for the checksum: most of what a short process's dump costs,
    /// done for each encoding it reads back). Anything read from elsewhere
    /// goes through [`parse`](Self::parse). Never panics and never
    /// allocates; a body that is not what the encoder writes ends the
    /// iteration of its sections or functions early.
    pub fn parse_own(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let (mut r, version) = Self::header(bytes)?;
        r.u32("reserved header word")?;
        let num_sections = r.count(SMALLEST_SECTION_LEN, "sections")?;
        Ok(ProfileView {
            bytes,
            version,
            num_sections,
        })
    }

    /// Reads the magic and the version of `bytes`: a reader at the reserved
    /// header word, and the version.
    fn header(bytes: &'a [u8]) -> Result<(Reader<'a>, u32), FormatError> {
        if bytes.len() < MAGIC.len() && MAGIC.starts_with(bytes) {
            return Err(FormatError::Truncated {
                at: 0,
                what: "magic",
            });
        }
        if !bytes.starts_with(&MAGIC) {
            return Err(FormatError::NotAProfile);
        }
        let mut r = Reader {
            bytes,
            pos: MAGIC.len(),
        };
        let version = r.u32("version")?;
        if version < OLDEST_READABLE_VERSION {
            return Err(FormatError::OlderVersion { found: version });
        }
        if version > VERSION {
            return Err(FormatError::UnsupportedVersion { found: version });
        }
        Ok((r, version))
    }

    /// Checks `bytes` completely and returns a view of them. Never panics and
    /// never allocates.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let (mut r, version) = Self::header(bytes)?;
        // Order rules are checked after the checksum, so that damage is reported as damage.
        let mut problem: Option<FormatError> = None;
        if r.u32("reserved header word")? != 0 {
            problem = Some(FormatError::Malformed {
                at: 12,
                what: "the reserved header word is not zero",
            });
        }
        let num_sections = r.count(SMALLEST_SECTION_LEN, "sections")?;
        let mut last_build: Option<u64> = None;
        for _ in 0..num_sections {
            let at = r.pos as u64;
            let s = read_section(&mut r, version, Some(&mut problem))?;
            if problem.is_none() && last_build.is_some_and(|l| s.build_id <= l) {
                problem = Some(FormatError::Malformed {
                    at,
                    what: "section build ids are not strictly increasing",
                });
            }
            last_build = Some(s.build_id);
        }
        let body_end = r.pos;
        let stored = r.u64("checksum")?;
        if r.remaining() != 0 {
            return Err(FormatError::TrailingBytes {
                at: r.pos as u64,
                extra: r.remaining() as u64,
            });
        }
        let computed = fnv1a64(bytes.get(..body_end).unwrap_or(&[]));
        if computed != stored {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        if let Some(p) = problem {
            return Err(p);
        }
        Ok(ProfileView {
            bytes,
            version,
            num_sections,
        })
    }

    /// The format version the file was written in (what it reads as is
    /// the same: [`SectionView::facts`] gives a version 5 file's endings
    /// of the killed as zero).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// How many sections (builds) the file holds.
    pub fn num_sections(&self) -> u64 {
        self.num_sections
    }

    /// The sections, in increasing build id order.
    pub fn sections(&self) -> Sections<'a> {
        Sections {
            file: self.bytes,
            version: self.version,
            pos: FILE_HEADER_LEN,
            left: self.num_sections,
        }
    }

    /// The section of `build_id`, if the file has one.
    pub fn section(&self, build_id: u64) -> Option<SectionView<'a>> {
        self.sections().find(|s| s.build_id == build_id)
    }

    /// The whole file.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a> Iterator for Sections<'a> {
    type Item = SectionView<'a>;

    fn next(&mut self) -> Option<SectionView<'a>> {
        if self.left == 0 {
            return None;
        }
        let mut r = Reader {
            bytes: self.file,
            pos: self.pos,
        };
        // The view was checked (or is the encoder's own, `parse_own`), so
        // this cannot fail; stop quietly if it does.
        let s = read_section(&mut r, self.version, None).ok()?;
        self.pos = r.pos;
        self.left -= 1;
        Some(s)
    }
}

impl<'a> SectionView<'a> {
    /// The build id of the module whose counts these are (the map file's
    /// `build_id`).
    pub fn build_id(&self) -> u64 {
        self.build_id
    }

    /// The instrumentation mode (0 block, 1 edge, 2 path).
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// The process facts: how many processes ended with a final write into
    /// this section, how many of them were fork children, how many threads
    /// they started (see [`Facts`]).
    pub fn facts(&self) -> Facts {
        self.facts
    }

    /// How many object paths the section lists (at most 32).
    pub fn num_objects(&self) -> u64 {
        self.num_objects
    }

    /// The executables and shared libraries the build was loaded from when
    /// its counts were written, in increasing byte order.
    pub fn objects(&self) -> Objects<'a> {
        Objects {
            file: self.file,
            pos: self.objects_at,
            left: self.num_objects,
        }
    }

    /// Whether more object paths were known than the section lists (a merge
    /// keeps the first 32 in sort order).
    pub fn objects_truncated(&self) -> bool {
        self.flags & FLAG_OBJECTS_TRUNCATED != 0
    }

    /// How many function records the section holds.
    pub fn num_functions(&self) -> u64 {
        self.num_functions
    }

    /// The function records, in increasing index order.
    pub fn functions(&self) -> Functions<'a> {
        Functions {
            file: self.file,
            pos: self.functions_at,
            left: self.num_functions,
        }
    }

    /// The section's bytes, as they are in the file.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.file.get(self.start..self.end).unwrap_or(&[])
    }

    /// The section's bytes from its object count on: the same layout in
    /// every version read (an [`Encoder`](crate::Encoder) copying a section
    /// writes its own header before them).
    pub(crate) fn body(&self) -> &'a [u8] {
        self.file.get(self.body_at..self.end).unwrap_or(&[])
    }

    /// The section's flags word.
    pub(crate) fn flags(&self) -> u32 {
        self.flags
    }
}

impl<'a> Iterator for Objects<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.left == 0 {
            return None;
        }
        let mut r = Reader {
            bytes: self.file,
            pos: self.pos,
        };
        // Checked by the view: cannot fail; stop quietly if it does.
        let path = core::str::from_utf8(r.items(1, "object path").ok()?).ok()?;
        self.pos = r.pos;
        self.left -= 1;
        Some(path)
    }
}

impl<'a> Iterator for Functions<'a> {
    type Item = FunctionView<'a>;

    fn next(&mut self) -> Option<FunctionView<'a>> {
        if self.left == 0 {
            return None;
        }
        let mut r = Reader {
            bytes: self.file,
            pos: self.pos,
        };
        // The view was checked, so this cannot fail; stop quietly if it does.
        let f = read_function(&mut r).ok()?;
        self.pos = r.pos;
        self.left -= 1;
        Some(f)
    }
}

impl<'a> FunctionView<'a> {
    /// The function's index in the map file.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The function's shape hash.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many slot counters the function has.
    pub fn num_slots(&self) -> u64 {
        (self.slots.len() / 8) as u64
    }

    /// The slot counters, in slot order.
    pub fn slots(&self) -> impl Iterator<Item = u64> + 'a {
        self.slots.chunks_exact(8).map(le_u64)
    }

    /// How many path entries the function has.
    pub fn num_paths(&self) -> u64 {
        (self.paths.len() / 16) as u64
    }

    /// The `(path id, count)` entries, ids increasing, counts nonzero.
    pub fn paths(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.paths)
    }

    /// How many slot resume entries the function has.
    pub fn num_slot_resumes(&self) -> u64 {
        (self.slot_resumes.len() / 16) as u64
    }

    /// The `(slot index, resumes)` entries: how many times each slot
    /// counter was taken back below what was written (see the crate doc).
    /// Slot indices increasing and below [`num_slots`](Self::num_slots),
    /// counts nonzero.
    pub fn slot_resumes(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.slot_resumes)
    }

    /// How many path resume entries the function has.
    pub fn num_path_resumes(&self) -> u64 {
        (self.path_resumes.len() / 16) as u64
    }

    /// The `(path id, resumes)` entries: how many times each path's count
    /// was taken back below what was written (see the crate doc). Ids
    /// increasing, counts nonzero.
    pub fn path_resumes(&self) -> impl Iterator<Item = (u64, u64)> + 'a {
        pairs(self.path_resumes)
    }

    /// The first order rule this record breaks, if any.
    fn rule_broken(&self, last_index: Option<u32>, at: u64) -> Option<FormatError> {
        if last_index.is_some_and(|l| self.index <= l) {
            return Some(FormatError::Malformed {
                at,
                what: "function indices are not strictly increasing",
            });
        }
        let malformed = |what| Some(FormatError::Malformed { at, what });
        match pairs_rule_broken(self.paths()) {
            Some(Broken::Order) => return malformed("path ids are not strictly increasing"),
            Some(Broken::Zero) => return malformed("a path entry has a zero count"),
            None => {}
        }
        match pairs_rule_broken(self.slot_resumes()) {
            Some(Broken::Order) => {
                return malformed("slot resume indices are not strictly increasing")
            }
            Some(Broken::Zero) => return malformed("a slot resume has a zero count"),
            None => {}
        }
        if self
            .slot_resumes()
            .last()
            .is_some_and(|(k, _)| k >= self.num_slots())
        {
            return malformed("a slot resume names a slot the function does not have");
        }
        match pairs_rule_broken(self.path_resumes()) {
            Some(Broken::Order) => malformed("path resume ids are not strictly increasing"),
            Some(Broken::Zero) => malformed("a path resume has a zero count"),
            None => None,
        }
    }
}

/// The `(u64, u64)` pairs of `bytes` (16 bytes each).
fn pairs(bytes: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    bytes
        .chunks_exact(16)
        .map(|e| (le_u64(e), le_u64(e.get(8..).unwrap_or(&[]))))
}

/// Which rule of a `(key, count)` list is broken.
enum Broken {
    /// Keys not strictly increasing.
    Order,
    /// A zero count.
    Zero,
}

/// The first rule `list` breaks: keys strictly increasing, counts nonzero.
fn pairs_rule_broken(list: impl Iterator<Item = (u64, u64)>) -> Option<Broken> {
    let mut last: Option<u64> = None;
    for (key, count) in list {
        if last.is_some_and(|l| key <= l) {
            return Some(Broken::Order);
        }
        if count == 0 {
            return Some(Broken::Zero);
        }
        last = Some(key);
    }
    None
}
