//! Live files (continuous mode, `PATHPROF_CONTINUOUS=1`): the layout the
//! runtime keeps a running process's counters in, and [`decode`], which
//! turns the live file of a process that died without its final write
//! (SIGKILL, a fault) into the profile sections it did not write.
//!
//! A live file is the memory of one *arena*: a range the runtime maps from
//! the file (`MAP_SHARED`) at `base` and hands out with a bump pointer, so
//! every byte the process counts into it is in the file (the page cache) the
//! moment it is counted. The arena holds every thread's counter blocks
//! (copies of an object's counters at `delta` bytes from them), the hash
//! tables of those blocks, the modules' marks (how much of each counter is
//! in the profile already) and a record of what is where. Addresses inside
//! it are the writer's (`base` + file offset); [`decode`] rebases them.
//!
//! Words are little-endian `u64`s (the runtime's targets are).
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `PPLIVE01` |
//! | 8 | [`LIVE_VERSION`] |
//! | 16 | base: the arena's address in the writer |
//! | 24 | process id |
//! | 32 | flags: bit 0 the process is a fork child |
//! | 40 | threads the process started with `pthread_create` |
//! | 48 | the newest record's offset (0: none); records link to older ones |
//! | 56 | journal tag: the checksum of the profile whose write the journal belongs to (0: none) |
//! | 64 | journal offset, 72 its entry count: `(address of a mark, value)` pairs |
//! | 80 | merged tag: the checksum of the profile this file was merged into by a reader (0: not merged) |
//! | 88 | ending: 0 running, `1000 + signal` once a fatal signal's (or `abort`'s) final write began, 1 once the final write of `exit`, `_exit` or an exec began (back to 0 when an exec fails) |
//!
//! A *write* of the profile by a live process goes: its commits (marks to
//! move up) are put in the journal with the tag of the profile about to be
//! renamed into place; the rename; the marks moved; the tag cleared; all
//! under the profile's lock. A reader of a dead file applies the journal
//! when the profile's checksum is its tag (the rename happened), and
//! ignores it otherwise, so the counts are merged exactly once wherever the
//! writer was killed. A reader that merges a dead file sets its merged tag
//! before its own rename and removes the file after it, under the lock: a
//! file whose merged tag is the profile's checksum was merged already.
//!
//! Records (each starts with the next older record's offset and a kind):
//!
//! * [`RECORD_MODULE`]: `next, kind, build id, mode, function count,
//!   region start, marks address, region marks address, marks length,
//!   flags (bit 0 the process was counted in the build's section, bit 1
//!   retired: written for good), threads written, object path length`, the
//!   path padded to 8 bytes, then per function [`FUNCTION_WORDS`] words:
//!   `index | path kind << 32, hash, slot count, slots address, path count,
//!   paths address, slot marks offset, path marks offset`. A counter's
//!   count is the sum of its copies in the region's blocks plus its region
//!   mark (what the program's own counters, outside the file, held when it
//!   was last written); its news are that less its mark.
//! * [`RECORD_BLOCK`]: `next, kind, region start, region end, delta`.

use crate::abi::{PATHS_ARRAY, PATHS_HASH};
use crate::encoder::{Encoder, Sink};
use crate::text::Text;
use crate::Facts;

/// The first 8 bytes of a live file.
pub const LIVE_MAGIC: [u8; 8] = *b"PPLIVE01";
/// The live file layout's version.
pub const LIVE_VERSION: u64 = 1;
/// Bytes of the header (the arena's first page holds it).
pub const HEADER_BYTES: usize = 4096;

/// Header word offsets.
pub mod header {
    /// The magic.
    pub const MAGIC: usize = 0;
    /// The layout version.
    pub const VERSION: usize = 8;
    /// The arena's address in the writer.
    pub const BASE: usize = 16;
    /// The writer's process id.
    pub const PID: usize = 24;
    /// Flags ([`FLAG_FORKED`](super::FLAG_FORKED)).
    pub const FLAGS: usize = 32;
    /// Threads started with `pthread_create`.
    pub const THREADS: usize = 40;
    /// The newest record's offset.
    pub const RECORDS: usize = 48;
    /// The journal's tag.
    pub const JOURNAL_TAG: usize = 56;
    /// The journal's offset.
    pub const JOURNAL_AT: usize = 64;
    /// The journal's entry count.
    pub const JOURNAL_LEN: usize = 72;
    /// The merged tag.
    pub const MERGED_TAG: usize = 80;
    /// How the process ended, where known ([`ENDING_EXIT`](super::ENDING_EXIT), …).
    pub const ENDING: usize = 88;
}

/// Header flag: the process is a fork child.
pub const FLAG_FORKED: u64 = 1;
/// Ending: the exit's final write began.
pub const ENDING_EXIT: u64 = 1;
/// Ending: `ENDING_SIGNAL + n` once the final write of fatal signal `n` began.
pub const ENDING_SIGNAL: u64 = 1000;

/// A module record.
pub const RECORD_MODULE: u64 = 1;
/// A block record.
pub const RECORD_BLOCK: u64 = 2;
/// Words of a module record before its object path.
pub const MODULE_WORDS: usize = 12;
/// Words per function of a module record.
pub const FUNCTION_WORDS: usize = 8;
/// Module flag: the process was counted in the build's section.
pub const MODULE_COUNTED: u64 = 1;
/// Module flag: retired (its last write is in the profile).
pub const MODULE_RETIRED: u64 = 2;
/// Words of a block record.
pub const BLOCK_WORDS: usize = 5;

/// The runtime's hash tables, as [`decode`] walks them: the state's words,
/// a table's header, an entry.
pub mod hash {
    /// State word: the newest table's address.
    pub const HEAD: usize = 0;
    /// State word: the count of id `u64::MAX`.
    pub const MAX_COUNT: usize = 2;
    /// State word: how much of it was written.
    pub const MAX_WRITTEN: usize = 3;
    /// State word: counts dropped for lack of memory.
    pub const LOST: usize = 4;
    /// Bytes of a table's header: `prev` address at 0, capacity at 8.
    pub const TABLE_HEADER: usize = 64;
    /// Bytes of an entry: `key = id + 1`, count, written.
    pub const ENTRY: usize = 24;
}

/// Whether the directory entry `entry` is a live file of the profile whose
/// file name is `base`: `<base>.<pid>-<16 hex digits>.live`.
pub fn is_live_file_of(entry: &[u8], base: &[u8]) -> bool {
    let Some(rest) = entry
        .strip_prefix(base)
        .and_then(|r| r.strip_prefix(b"."))
        .and_then(|r| r.strip_suffix(b".live"))
    else {
        return false;
    };
    let Some(dash) = rest.iter().position(|&b| b == b'-') else {
        return false;
    };
    let (pid, hex) = (&rest[..dash], &rest[dash + 1..]);
    !pid.is_empty()
        && pid.iter().all(u8::is_ascii_digit)
        && hex.len() == 16
        && hex.iter().all(u8::is_ascii_hexdigit)
}

/// The trailing checksum of a profile file's bytes (0 for none): the tag
/// the journal and the merged mark compare with.
pub fn profile_checksum(file: &[u8]) -> u64 {
    file.len()
        .checked_sub(8)
        .and_then(|at| file.get(at..))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// What is wrong with a live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveError {
    /// The byte offset where it is wrong.
    pub at: u64,
    /// What is wrong there.
    pub what: &'static str,
}

impl LiveError {
    /// Writes the error for a person.
    pub fn describe(&self, out: &mut dyn Text) {
        out.str("damaged live file (");
        out.str(self.what);
        out.str(" at byte ");
        out.dec(self.at);
        out.str("); its counts cannot be recovered: delete it");
    }
}

impl core::fmt::Display for LiveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut out = crate::text::Formatted(f, Ok(()));
        self.describe(&mut out);
        out.1
    }
}

/// What [`decode`] found besides the counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSummary {
    /// The writer's process id.
    pub pid: u64,
    /// How it ended, where known (the header's ending word).
    pub ending: u64,
    /// A reader merged the file into the profile already (its merged tag is
    /// the profile's checksum): nothing was decoded.
    pub merged_already: bool,
    /// Sections decoded (one per module with something to add).
    pub sections: u64,
    /// Hash-table counts the process dropped for lack of memory.
    pub lost: u64,
}

/// The words of a live file, bounds-checked.
struct Words<'a> {
    bytes: &'a [u8],
    base: u64,
}

impl Words<'_> {
    fn at(&self, off: u64, what: &'static str) -> Result<u64, LiveError> {
        usize::try_from(off)
            .ok()
            .and_then(|o| self.bytes.get(o..o.checked_add(8)?))
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .ok_or(LiveError { at: off, what })
    }

    /// The word at the writer's address `addr`.
    fn addr(&self, addr: u64, what: &'static str) -> Result<u64, LiveError> {
        let off = addr
            .checked_sub(self.base)
            .ok_or(LiveError { at: 0, what })?;
        self.at(off, what)
    }
}

/// A module record, read.
struct Module {
    build_id: u64,
    mode: u32,
    functions: u64,
    region: u64,
    marks: u64,
    region_marks: u64,
    marks_len: u64,
    flags: u64,
    threads_written: u64,
    object: (usize, usize),
    functions_at: u64,
}

fn write_word(bytes: &mut [u8], off: u64, value: u64) -> Result<(), LiveError> {
    let slot = usize::try_from(off)
        .ok()
        .and_then(|o| bytes.get_mut(o..o.checked_add(8)?))
        .ok_or(LiveError {
            at: off,
            what: "a journal entry outside the file",
        })?;
    slot.copy_from_slice(&value.to_le_bytes());
    Ok(())
}

/// Reads the header of `bytes`; the base address.
fn check_header(bytes: &[u8]) -> Result<u64, LiveError> {
    if bytes.len() < HEADER_BYTES || bytes[..8] != LIVE_MAGIC {
        return Err(LiveError {
            at: 0,
            what: "no live file header",
        });
    }
    let w = Words { bytes, base: 0 };
    if w.at(header::VERSION as u64, "version")? != LIVE_VERSION {
        return Err(LiveError {
            at: header::VERSION as u64,
            what: "a live file version this pathprof does not read",
        });
    }
    w.at(header::BASE as u64, "base")
}

/// Applies the journal of `bytes` (a private copy of a dead live file) when
/// its tag is `profile_checksum`: the write it belongs to reached the
/// profile, so its marks count as moved.
fn replay_journal(bytes: &mut [u8], base: u64, profile_checksum: u64) -> Result<(), LiveError> {
    let w = Words { bytes, base };
    let tag = w.at(header::JOURNAL_TAG as u64, "journal tag")?;
    if tag == 0 || tag != profile_checksum {
        return Ok(());
    }
    let at = w.at(header::JOURNAL_AT as u64, "journal offset")?;
    let len = w.at(header::JOURNAL_LEN as u64, "journal length")?;
    if len > bytes.len() as u64 / 16 {
        return Err(LiveError {
            at: header::JOURNAL_LEN as u64,
            what: "a journal longer than the file",
        });
    }
    for k in 0..len {
        let entry = at.saturating_add(k * 16);
        let (addr, value) = {
            let w = Words { bytes, base };
            (
                w.at(entry, "journal entry")?,
                w.at(entry + 8, "journal entry")?,
            )
        };
        let off = addr.checked_sub(base).ok_or(LiveError {
            at: entry,
            what: "a journal entry outside the file",
        })?;
        write_word(bytes, off, value)?;
    }
    Ok(())
}

/// The header's merged tag, ending and pid, without decoding anything
/// (`None`: not a live file).
pub fn peek(bytes: &[u8]) -> Option<LiveSummary> {
    check_header(bytes).ok()?;
    let w = Words { bytes, base: 0 };
    Some(LiveSummary {
        pid: w.at(header::PID as u64, "pid").ok()?,
        ending: w.at(header::ENDING as u64, "ending").ok()?,
        ..LiveSummary::default()
    })
}

/// Walks the records newest first, calling `f(offset, kind)`.
fn records(
    w: &Words<'_>,
    mut f: impl FnMut(u64, u64) -> Result<(), LiveError>,
) -> Result<(), LiveError> {
    let mut at = w.at(header::RECORDS as u64, "records")?;
    let mut left = w.bytes.len() / 16;
    while at != 0 {
        if left == 0 || at < HEADER_BYTES as u64 {
            return Err(LiveError {
                at,
                what: "records that loop or point into the header",
            });
        }
        left -= 1;
        f(at, w.at(at + 8, "record kind")?)?;
        at = w.at(at, "record link")?;
    }
    Ok(())
}

fn read_module(w: &Words<'_>, at: u64) -> Result<Module, LiveError> {
    let word = |k: u64| w.at(at + 8 * k, "module record");
    let object_len = word(11)?;
    let object_at = at + 8 * MODULE_WORDS as u64;
    let functions_at = object_len
        .div_ceil(8)
        .checked_mul(8)
        .and_then(|n| object_at.checked_add(n))
        .ok_or(LiveError {
            at,
            what: "a module record's object path is too long",
        })?;
    let (start, end) = (object_at as usize, (object_at + object_len) as usize);
    if w.bytes.get(start..end).is_none() {
        return Err(LiveError {
            at,
            what: "a module record's object path is cut",
        });
    }
    Ok(Module {
        build_id: word(2)?,
        mode: word(3)? as u32,
        functions: word(4)?,
        region: word(5)?,
        marks: word(6)?,
        region_marks: word(7)?,
        marks_len: word(8)?,
        flags: word(9)?,
        threads_written: word(10)?,
        object: (start, end),
        functions_at,
    })
}

/// What a counter at `count` adds to a profile holding `written` of it:
/// `(counts, resumes)`, as the runtime's dumps compute it.
fn news(count: u64, written: u64) -> (u64, u64) {
    (count.saturating_sub(written), written.saturating_sub(count))
}

/// Scratch records of `N` words in a [`Sink`] (the decoder allocates
/// nothing itself: the runtime's sinks are its own mappings).
struct Scratch<S: Sink, const N: usize> {
    sink: S,
    len: usize,
}

impl<S: Sink, const N: usize> Scratch<S, N> {
    fn new(sink: S) -> Self {
        Scratch { sink, len: 0 }
    }

    fn push(&mut self, record: [u64; N]) -> bool {
        let mut bytes = [0u8; 24];
        for (k, w) in record.iter().enumerate() {
            bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        let ok = self.sink.append(&bytes[..8 * N]);
        self.len += usize::from(ok);
        ok
    }

    fn get(&mut self, i: usize) -> [u64; N] {
        let bytes = &self.sink.written()[i * 8 * N..(i + 1) * 8 * N];
        core::array::from_fn(|k| {
            u64::from_le_bytes(bytes[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]))
        })
    }

    fn swap(&mut self, i: usize, j: usize) {
        let (a, b) = (self.get(i), self.get(j));
        let bytes = self.sink.written();
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            bytes[i * 8 * N + 8 * k..][..8].copy_from_slice(&y.to_le_bytes());
            bytes[j * 8 * N + 8 * k..][..8].copy_from_slice(&x.to_le_bytes());
        }
    }

    /// Sorts the records by their first word (heap sort: in place).
    fn sort(&mut self) {
        let n = self.len;
        let key = |s: &mut Self, i: usize| s.get(i)[0];
        let sift = |s: &mut Self, mut root: usize, end: usize| loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && key(s, child + 1) > key(s, child) {
                child += 1;
            }
            if key(s, root) >= key(s, child) {
                return;
            }
            s.swap(root, child);
            root = child;
        };
        for start in (0..n / 2).rev() {
            sift(self, start, n);
        }
        for end in (1..n).rev() {
            self.swap(0, end);
            sift(self, 0, end);
        }
    }
}

/// Out of scratch memory.
const NO_MEMORY: LiveError = LiveError {
    at: 0,
    what: "no memory to decode it (out of memory)",
};

/// One module's counters, read out of the file.
struct Reader<'w, 'a, S: Sink> {
    w: &'w Words<'a>,
    m: &'w Module,
    /// The region's blocks: `(delta, end of the region they copy)`.
    blocks: Scratch<S, 2>,
}

impl<S: Sink> Reader<'_, '_, S> {
    fn mark(&self, array: u64, k: u64) -> Result<u64, LiveError> {
        if array == 0 || k >= self.m.marks_len {
            return Ok(0);
        }
        self.w.addr(array + 8 * k, "a mark")
    }

    /// Counter `addr`'s count: its copies in the blocks plus its region mark
    /// (`mark_at` is its index in the marks).
    fn count(&mut self, addr: u64, mark_at: u64) -> Result<u64, LiveError> {
        let mut sum = self.mark(self.m.region_marks, mark_at)?;
        for b in 0..self.blocks.len {
            let [delta, end] = self.blocks.get(b);
            if addr.checked_add(8).is_some_and(|e| e <= end) {
                let copy = addr.wrapping_add(delta);
                sum = sum.saturating_add(self.w.addr(copy, "a block counter")?);
            }
        }
        Ok(sum)
    }

    /// Counter `addr`'s news: `(counts, resumes)`.
    fn news(&mut self, addr: u64, mark_at: u64) -> Result<(u64, u64), LiveError> {
        let count = self.count(addr, mark_at)?;
        Ok(news(count, self.mark(self.m.marks, mark_at)?))
    }

    /// Every hash entry of the state at `state` (in each block's copy) with
    /// news, as `(id, counts, resumes)` records sorted by id; the counts
    /// the copies dropped for lack of memory.
    fn hash_news(&mut self, state: u64, out: &mut Scratch<S, 3>) -> Result<u64, LiveError> {
        let w = self.w;
        let mut lost = 0u64;
        let mut push = |id: u64, count: u64, written: u64| {
            let (d, r) = news(count, written);
            if (d != 0 || r != 0) && !out.push([id, d, r]) {
                return Err(NO_MEMORY);
            }
            Ok(())
        };
        for b in 0..self.blocks.len {
            let [delta, end] = self.blocks.get(b);
            if state.checked_add(64).is_none_or(|s| s > end) {
                continue;
            }
            let copy = state.wrapping_add(delta);
            let word = |k: usize| w.addr(copy + 8 * k as u64, "a hash state");
            lost = lost.saturating_add(word(hash::LOST)?);
            push(u64::MAX, word(hash::MAX_COUNT)?, word(hash::MAX_WRITTEN)?)?;
            let mut table = word(hash::HEAD)?;
            let mut left = w.bytes.len() / hash::TABLE_HEADER;
            while table != 0 {
                let here = table.wrapping_sub(w.base);
                if left == 0 {
                    return Err(LiveError {
                        at: here,
                        what: "hash tables that loop",
                    });
                }
                left -= 1;
                let capacity = w.addr(table + 8, "a hash table")?;
                if capacity > (w.bytes.len() / hash::ENTRY) as u64 {
                    return Err(LiveError {
                        at: here,
                        what: "a hash table bigger than the file",
                    });
                }
                for i in 0..capacity {
                    let entry = table + hash::TABLE_HEADER as u64 + i * hash::ENTRY as u64;
                    let key = w.addr(entry, "a hash entry")?;
                    if key != 0 {
                        let count = w.addr(entry + 8, "a hash entry")?;
                        let written = w.addr(entry + 16, "a hash entry")?;
                        push(key - 1, count, written)?;
                    }
                }
                table = w.addr(table, "a hash table")?;
            }
        }
        out.sort();
        Ok(lost)
    }
}

/// Encodes module `m`'s news as one section into `e`; the hash counts it
/// dropped for lack of memory.
fn encode_module<S: Sink>(
    w: &Words<'_>,
    hw: &Words<'_>,
    m: &Module,
    facts: Facts,
    e: &mut Encoder<S>,
    sink: &mut impl FnMut() -> S,
) -> Result<u64, LiveError> {
    let mut blocks = Scratch::<S, 2>::new(sink());
    let mut ok = true;
    if m.region != 0 {
        records(hw, |at, kind| {
            let word = |k: u64| hw.at(at + 8 * k, "block record");
            if kind == RECORD_BLOCK && word(2)? == m.region {
                ok &= blocks.push([word(4)?, word(3)?]);
            }
            Ok(())
        })?;
    }
    if !ok {
        return Err(NO_MEMORY);
    }
    let mut reader = Reader { w, m, blocks };
    e.begin_section(m.build_id, m.mode);
    e.facts(facts);
    if let Ok(object) = core::str::from_utf8(&hw.bytes[m.object.0..m.object.1]) {
        if !object.is_empty() {
            e.object(object);
        }
    }
    let mut lost = 0u64;
    for k in 0..m.functions {
        let at = m.functions_at + k * 8 * FUNCTION_WORDS as u64;
        let word = |i: u64| hw.at(at + 8 * i, "function entry");
        let (head, hash) = (word(0)?, word(1)?);
        let (index, path_kind) = (head as u32, (head >> 32) as u32);
        let (num_slots, slots, num_paths, paths) = (word(2)?, word(3)?, word(4)?, word(5)?);
        let (slot_marks, path_marks) = (word(6)?, word(7)?);
        let array_paths = if path_kind == PATHS_ARRAY {
            num_paths
        } else {
            0
        };
        if num_slots > w.bytes.len() as u64 || array_paths > w.bytes.len() as u64 {
            return Err(LiveError {
                at,
                what: "a function entry with impossible counts",
            });
        }
        let mut hashed = Scratch::<S, 3>::new(sink());
        if path_kind == PATHS_HASH && paths != 0 {
            lost = lost.saturating_add(reader.hash_news(paths, &mut hashed)?);
        }
        // The record's lists in the encoder's order: slots, paths, slot
        // resumes, path resumes (each read again: reading is cheap, memory
        // is not the decoder's to take).
        e.begin_function(index, hash, num_slots);
        let mut any = false;
        for s in 0..num_slots {
            let (d, r) = reader.news(slots + 8 * s, slot_marks + s)?;
            e.slot(d);
            any |= d != 0 || r != 0;
        }
        for id in 0..array_paths {
            let (d, r) = reader.news(paths + 8 * id, path_marks + id)?;
            if d != 0 {
                e.path(id, d);
            }
            any |= d != 0 || r != 0;
        }
        // A hash id's records (one per copy and table) add up.
        let runs = |h: &mut Scratch<S, 3>, f: &mut dyn FnMut(u64, u64, u64)| {
            let mut i = 0;
            while i < h.len {
                let [id, mut d, mut r] = h.get(i);
                i += 1;
                while i < h.len && h.get(i)[0] == id {
                    let [_, d2, r2] = h.get(i);
                    (d, r) = (d.saturating_add(d2), r.saturating_add(r2));
                    i += 1;
                }
                f(id, d, r);
            }
        };
        runs(&mut hashed, &mut |id, d, r| {
            if d != 0 {
                e.path(id, d);
            }
            any |= d != 0 || r != 0;
        });
        for s in 0..num_slots {
            let (_, r) = reader.news(slots + 8 * s, slot_marks + s)?;
            if r != 0 {
                e.slot_resume(s, r);
            }
        }
        for id in 0..array_paths {
            let (_, r) = reader.news(paths + 8 * id, path_marks + id)?;
            if r != 0 {
                e.path_resume(id, r);
            }
        }
        runs(&mut hashed, &mut |id, _, r| {
            if r != 0 {
                e.path_resume(id, r);
            }
        });
        e.end_function(!any);
    }
    Ok(lost)
}

/// The endings part of a killed process's facts, from its header's
/// ending word: killed while exiting, or while writing for fatal signal
/// `n` (a number outside 1 to 64 counts the process, not the signal).
fn killed_ending(ending: u64) -> Facts {
    match ending {
        ENDING_EXIT => Facts {
            killed_at_exit: 1,
            ..Facts::default()
        },
        e if e > ENDING_SIGNAL => Facts {
            killed_in_signal: 1,
            killed_signals: match e - ENDING_SIGNAL {
                n @ 1..=64 => 1 << (n - 1),
                _ => 0,
            },
            ..Facts::default()
        },
        _ => Facts::default(),
    }
}

/// Decodes the dead live file `bytes` (a private copy: the journal is applied
/// in it) against the profile whose trailing checksum is `profile_checksum`
/// (0 for none). Each module with something to add becomes a one-section
/// profile file, encoded into a `sink()` and handed to `emit` (modules of
/// one build each get a section; the process facts go in the first one's):
/// the counts since the process's last write, one process (a fork child if
/// it was one) killed, its threads not yet written. `sink()` also gives the
/// decoder its scratch memory. The outer error is damage to the live file;
/// the inner one what the encoder or `emit` refused.
pub fn decode<S: Sink>(
    bytes: &mut [u8],
    profile_checksum: u64,
    mut sink: impl FnMut() -> S,
    mut emit: impl FnMut(S) -> Result<(), crate::FormatError>,
) -> Result<Result<LiveSummary, crate::FormatError>, LiveError> {
    let base = check_header(bytes)?;
    let mut summary = peek(bytes).unwrap_or_default();
    let merged = Words { bytes, base: 0 }.at(header::MERGED_TAG as u64, "merged tag")?;
    if merged != 0 && merged == profile_checksum {
        summary.merged_already = true;
        return Ok(Ok(summary));
    }
    replay_journal(bytes, base, profile_checksum)?;
    let w = Words { bytes, base };
    let hw = Words { bytes, base: 0 };
    let forked = hw.at(header::FLAGS as u64, "flags")? & FLAG_FORKED != 0;
    let threads = hw.at(header::THREADS as u64, "threads")?;
    // Builds in increasing order (a section file's rule), found by passes
    // for the smallest build id above the last: modules are few.
    let mut last_build: Option<u64> = None;
    loop {
        let mut next: Option<u64> = None;
        records(&hw, |at, kind| {
            if kind == RECORD_MODULE {
                let m = read_module(&hw, at)?;
                if last_build.is_none_or(|l| m.build_id > l) && next.is_none_or(|n| m.build_id < n)
                {
                    next = Some(m.build_id);
                }
            }
            Ok(())
        })?;
        let Some(build) = next else { break };
        last_build = Some(build);
        let mut facts_given = false;
        let mut failure: Option<crate::FormatError> = None;
        records(&hw, |at, kind| {
            if kind != RECORD_MODULE {
                return Ok(());
            }
            let m = read_module(&hw, at)?;
            if m.build_id != build || m.flags & MODULE_RETIRED != 0 || failure.is_some() {
                return Ok(());
            }
            let facts = if facts_given {
                Facts::default()
            } else {
                facts_given = true;
                let counted = m.flags & MODULE_COUNTED == 0;
                let killed = Facts {
                    processes: 1,
                    forked: forked.into(),
                    killed: 1,
                    ..killed_ending(summary.ending)
                };
                Facts {
                    threads: threads.saturating_sub(m.threads_written),
                    ..if counted { killed } else { Facts::default() }
                }
            };
            let mut e = Encoder::new(sink());
            let lost = encode_module(&w, &hw, &m, facts, &mut e, &mut sink)?;
            summary.lost = summary.lost.saturating_add(lost);
            match e.finish().and_then(&mut emit) {
                Ok(()) => summary.sections += 1,
                Err(err) => failure = Some(err),
            }
            Ok(())
        })?;
        if let Some(err) = failure {
            return Ok(Err(err));
        }
    }
    Ok(Ok(summary))
}
