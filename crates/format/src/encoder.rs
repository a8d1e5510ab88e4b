//! [`Encoder`]: writes a raw profile record by record into a [`Sink`],
//! checking the order rules as it goes. It allocates nothing itself, so the
//! runtime can use it over memory it maps on its own.

use crate::checksum::fnv1a64;
use crate::view::{le_u64, FACTS_AT, FUNCTION_COUNT_AT};
use crate::{Facts, FormatError, MAGIC, VERSION};

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

impl Sink for Vec<u8> {
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

/// Writes one raw profile into a [`Sink`]:
/// `new`, optionally `facts`, then per function (in increasing index order)
/// `begin_function`, exactly `num_slots` calls of `slot`, any number of
/// `path` calls with non-decreasing ids, any number of `slot_resume` calls
/// with strictly increasing slot indices below `num_slots`, any number of
/// `path_resume` calls with non-decreasing ids, `end_function`; then
/// `finish`.
///
/// The first misuse or refused append is remembered and returned by `finish`;
/// every later call does nothing. The encoder allocates nothing itself.
///
/// ```
/// use pathprof_format::{Encoder, RawProfile};
/// let mut e = Encoder::new(Vec::new(), 0xabc, 2);
/// e.begin_function(3, 0x77, 1);
/// e.slot(5);
/// e.path(9, 2);
/// e.path(9, 1); // the same id again adds up
/// e.slot_resume(0, 1);
/// e.path_resume(4, 1);
/// e.end_function(false);
/// let bytes = e.finish()?;
/// let p = RawProfile::decode(&bytes)?;
/// assert_eq!(p.functions[0].paths, vec![(9, 3)]);
/// assert_eq!(p.functions[0].slot_resumes, vec![(0, 1)]);
/// assert_eq!(p.functions[0].path_resumes, vec![(4, 1)]);
/// # Ok::<(), pathprof_format::FormatError>(())
/// ```
#[derive(Debug)]
pub struct Encoder<S: Sink> {
    sink: S,
    /// Where the profile starts in the sink.
    start: usize,
    functions: u64,
    last_index: Option<u32>,
    open: Option<Open>,
    error: Option<FormatError>,
}

impl<S: Sink> Encoder<S> {
    /// Starts a profile of `build_id` and `mode` at the end of `sink`.
    pub fn new(mut sink: S, build_id: u64, mode: u32) -> Self {
        let start = sink.written().len();
        let mut e = Encoder {
            sink,
            start,
            functions: 0,
            last_index: None,
            open: None,
            error: None,
        };
        e.put(&MAGIC);
        e.put(&VERSION.to_le_bytes());
        e.put(&mode.to_le_bytes());
        e.put(&build_id.to_le_bytes());
        e.put(&[0u8; 24]); // process facts, zero unless set with `facts`
        e.put(&0u64.to_le_bytes()); // function count, patched by finish
        e
    }

    /// Sets the header's process facts (zero until set); may be called at
    /// any time before [`finish`](Self::finish).
    pub fn facts(&mut self, facts: Facts) {
        let at = self.start + FACTS_AT;
        self.patch(at, facts.processes);
        self.patch(at + 8, facts.forked);
        self.patch(at + 16, facts.threads);
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
        if self.error.is_some() {
            return;
        }
        match self.sink.written().get_mut(at..at + 8) {
            Some(b) => b.copy_from_slice(&value.to_le_bytes()),
            None => self.fail(FormatError::InvalidInput {
                what: "the sink lost bytes already written",
            }),
        }
    }

    /// Starts the record of function `index` with `num_slots` slot counters.
    pub fn begin_function(&mut self, index: u32, hash: u64, num_slots: u64) {
        if self.open.is_some() {
            return self.fail(FormatError::InvalidInput {
                what: "begin_function before end_function",
            });
        }
        if self.last_index.is_some_and(|l| index <= l) {
            return self.fail(FormatError::InvalidInput {
                what: "function indices must be strictly increasing",
            });
        }
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
        self.functions += 1;
        self.last_index = Some(self.index_at(o.start));
    }

    fn index_at(&mut self, at: usize) -> u32 {
        self.sink
            .written()
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .unwrap_or(0)
    }

    /// Writes the function count and the checksum and returns the sink.
    pub fn finish(mut self) -> Result<S, FormatError> {
        if self.open.is_some() {
            self.fail(FormatError::InvalidInput {
                what: "finish with a function still open",
            });
        }
        self.patch(self.start + FUNCTION_COUNT_AT, self.functions);
        let sum = fnv1a64(self.sink.written().get(self.start..).unwrap_or(&[]));
        self.put(&sum.to_le_bytes());
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.sink),
        }
    }
}
