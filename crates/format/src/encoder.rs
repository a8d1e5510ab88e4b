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

/// The function record being written.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Where the record starts.
    start: usize,
    /// Slots declared but not yet written.
    slots_left: u64,
    /// Whether any slot was nonzero.
    any_slot: bool,
    /// Where the path count is, once it is written.
    paths_at: Option<usize>,
    /// Path entries written.
    paths: u64,
    /// The last path id written.
    last_id: Option<u64>,
}

/// Writes one raw profile into a [`Sink`]:
/// `new`, optionally `facts`, then per function (in increasing index order) `begin_function`,
/// exactly `num_slots` calls of `slot`, any number of `path` calls with
/// non-decreasing ids, `end_function`; then `finish`.
///
/// The first misuse or refused append is remembered and returned by `finish`;
/// every later call does nothing.
///
/// ```
/// use pathprof_format::{Encoder, RawProfile};
/// let mut e = Encoder::new(Vec::new(), 0xabc, 2);
/// e.begin_function(3, 0x77, 1);
/// e.slot(5);
/// e.path(9, 2);
/// e.path(9, 1); // the same id again adds up
/// e.end_function(false);
/// let bytes = e.finish()?;
/// let p = RawProfile::decode(&bytes)?;
/// assert_eq!(p.functions[0].paths, vec![(9, 3)]);
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
            slots_left: num_slots,
            any_slot: false,
            paths_at: None,
            paths: 0,
            last_id: None,
        });
    }

    /// Writes the next slot counter of the open function.
    pub fn slot(&mut self, count: u64) {
        match self.open {
            Some(ref mut o) if o.slots_left > 0 && o.paths_at.is_none() => {
                o.slots_left -= 1;
                o.any_slot |= count != 0;
            }
            _ => {
                return self.fail(FormatError::InvalidInput {
                    what: "more slots than declared, or a slot after a path",
                })
            }
        }
        self.put(&count.to_le_bytes());
    }

    /// Ends the slots, writing the path count placeholder.
    fn start_paths(&mut self) -> bool {
        let Some(o) = self.open else {
            self.fail(FormatError::InvalidInput {
                what: "path or end_function without begin_function",
            });
            return false;
        };
        if o.paths_at.is_some() {
            return true;
        }
        if o.slots_left != 0 {
            self.fail(FormatError::InvalidInput {
                what: "fewer slots than declared",
            });
            return false;
        }
        let at = self.sink.written().len();
        self.put(&0u64.to_le_bytes());
        if let Some(ref mut o) = self.open {
            o.paths_at = Some(at);
        }
        self.error.is_none()
    }

    /// Adds `count` executions of path `id` to the open function. A zero count
    /// is ignored; an id equal to the previous one adds to it (saturating);
    /// ids must not decrease.
    pub fn path(&mut self, id: u64, count: u64) {
        if count == 0 || !self.start_paths() {
            return;
        }
        let Some(o) = self.open else { return };
        match o.last_id {
            Some(last) if id < last => self.fail(FormatError::InvalidInput {
                what: "path ids must not decrease",
            }),
            Some(last) if id == last => {
                let at = self.sink.written().len().saturating_sub(8);
                let old = le_u64(self.sink.written().get(at..).unwrap_or(&[]));
                self.patch(at, old.saturating_add(count));
            }
            _ => {
                self.put(&id.to_le_bytes());
                self.put(&count.to_le_bytes());
                if let Some(ref mut o) = self.open {
                    o.paths += 1;
                    o.last_id = Some(id);
                }
            }
        }
    }

    /// Closes the open function. With `drop_if_empty`, a function whose slots
    /// are all zero and which has no paths is left out of the file.
    pub fn end_function(&mut self, drop_if_empty: bool) {
        if !self.start_paths() {
            return;
        }
        let Some(o) = self.open.take() else { return };
        if drop_if_empty && !o.any_slot && o.paths == 0 {
            self.sink.truncate_to(o.start);
            return;
        }
        if let Some(at) = o.paths_at {
            self.patch(at, o.paths);
        }
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
