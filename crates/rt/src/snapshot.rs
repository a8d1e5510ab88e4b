//! What one dump of one module writes: the counts added since the last
//! successful dump, as the function records of the module's section of the
//! profile file, plus the commit log that marks them written once the file
//! is safely on disk.
//!
//! The runtime never writes the program's counters (apart from a fork
//! child's reset). Each counter has a "written" companion: the module's
//! shadow array for slot and array path counters, an entry's `written` word
//! for hash counters. A dump writes `count - written`, and only after the
//! profile file was written does [`commit`] set `written` to the count it
//! read. So an increment running in another thread, or interrupted by the
//! SIGUSR1 that triggered the dump, is neither lost nor counted twice, and a
//! failed write loses nothing (the counts are retried by the next dump).
//! Functions with nothing new are left out; the section header (build,
//! mode, facts, object path: see `dump`) always stays.
//!
//! Counts can also go *down*: an early-termination count made before a call
//! is undone when the call returns (docs/formats.md §1, `Call` sites; the
//! instrumented code's `-1`, `__pathprof_hash_uncount`). When the count was
//! written before it was undone, the file cannot take it back: a dump in the
//! middle of the call (SIGUSR1, `__pathprof_dump()`, another thread's dump),
//! or a fork child, for which everything counted before the fork is its
//! parent's to write (its marks start at the counters' values) and which
//! then returns from a call the parent was in. A counter below its mark
//! therefore writes the difference as *resumes* (the format's slot and path
//! resumes: activations that went on after that call although their count
//! there was written) and its mark comes down to the count. Over all dumps
//! and processes, counts minus resumes is exactly what the counters ended
//! at, and the reports derive edge counts from that.

use crate::abi::PATHS_ARRAY;
use crate::hash;
use crate::mem::MapVec;
use crate::registry::Node;
use crate::sums::{position, Copies, QuietChunks, QUIET_CHUNK};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use pathprof_format::{Encoder, FormatError, Sink};

/// The longest path array whose chunks of the module array a dump asks
/// about before reading it ([`QuietChunks`]): four pages of counters.
const ASK_CHUNKS: usize = 4 * QUIET_CHUNK;

/// "Set `written` to `value` once the profile is written" (and, in
/// continuous mode, the counter's region mark to what the program's own
/// counter held: see `live`).
#[derive(Clone, Copy)]
pub(crate) struct Commit {
    written: *const AtomicU64,
    value: u64,
    /// The region mark, or null.
    region: *const AtomicU64,
    region_value: u64,
}

impl Commit {
    /// A hash entry's (or any word's) move.
    fn plain(written: &AtomicU64, value: u64) -> Self {
        Commit {
            written,
            value,
            region: core::ptr::null(),
            region_value: 0,
        }
    }

    /// A slot or array counter's move: its mark `written` in `node`'s
    /// shadow, and its region mark to the counter's own value.
    fn counter(node: &Node, written: &AtomicU64, value: u64, counter: &AtomicU64) -> Self {
        Commit {
            written,
            value,
            region: node.region_mark(written),
            region_value: counter.load(Relaxed),
        }
    }

    /// The words this commit moves, as `(address, value)` pairs.
    pub(crate) fn moves(&self) -> impl Iterator<Item = crate::live::Move> + Clone {
        let region = (!self.region.is_null()).then_some((self.region, self.region_value));
        core::iter::once((self.written, self.value)).chain(region)
    }
}

/// One hash entry's news.
#[derive(Clone, Copy)]
struct Item {
    id: u64,
    delta: u64,
    resumes: u64,
    commit: Commit,
}

/// Why a snapshot could not be taken.
pub(crate) enum SnapshotError {
    /// No memory could be mapped.
    Memory,
    /// The encoder refused (a runtime bug; say so).
    Format(FormatError),
}

/// What a counter at `count` adds to a file that has `written` of it:
/// `(counts, resumes)`, at most one of them nonzero (see the module doc).
/// Either one is committed, moving the mark to `count`.
fn news(count: u64, written: u64) -> (u64, u64) {
    (count.saturating_sub(written), written.saturating_sub(count))
}

/// Where a module's marks are in its shadow. The module array's come first,
/// in the array's own order, so that its news can be found a chunk at a
/// time ([`QuietChunks`]) rather than function by function; then each
/// function's counters outside it (path arrays of their own).
struct ShadowLayout {
    /// Each function's `(slot marks, array marks)` offsets (module order):
    /// for counters in the module array, their index there.
    offsets: MapVec<(usize, usize)>,
    /// `(index, position)` of the valid functions, sorted by index.
    order: MapVec<(u32, u32)>,
    /// The shadow's length.
    total: usize,
}

/// The module array of `m` (empty when it has none).
fn module_array(m: &crate::abi::PpModule) -> &'static [AtomicU64] {
    if m.slots.is_null() || m.num_slots == 0 {
        return &[];
    }
    // Safety: a valid module's array is `num_slots` aligned counters that
    // live as long as the module (checked by `PpModule::is_valid`).
    unsafe { core::slice::from_raw_parts(m.slots.cast::<AtomicU64>(), m.num_slots as usize) }
}

fn shadow_layout(m: &crate::abi::PpModule) -> Result<ShadowLayout, SnapshotError> {
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { m.functions() };
    let array = module_array(m);
    let mut offsets: MapVec<(usize, usize)> = MapVec::new();
    let mut order: MapVec<(u32, u32)> = MapVec::new();
    // One mapping each, not one per doubling.
    if !offsets.reserve(funcs.len()) || !order.reserve(funcs.len()) {
        return Err(SnapshotError::Memory);
    }
    let mut total = array.len();
    let mut place = |counters: &[AtomicU64]| match position(array, counters) {
        Some(ids) => Ok(ids.start),
        None => {
            let at = total;
            total = total
                .checked_add(counters.len())
                .ok_or(SnapshotError::Memory)?;
            Ok(at)
        }
    };
    for (pos, f) in funcs.iter().enumerate() {
        let at = if f.is_valid() {
            // Safety: `f` is valid.
            let (slots, paths) = unsafe { (f.slot_counters(), f.array_counters()) };
            (place(slots)?, place(paths)?)
        } else {
            (0, 0)
        };
        if !offsets.push(at) || (f.is_valid() && !order.push((f.index, pos as u32))) {
            return Err(SnapshotError::Memory);
        }
    }
    order.as_mut_slice().sort_unstable();
    Ok(ShadowLayout {
        offsets,
        order,
        total,
    })
}

/// A fork child's start: everything the counters hold was counted before the
/// fork and is the parent's to write, so every mark is set to its counter
/// (not to zero: a call in progress at the fork that returns in the child
/// takes its early-exit count back below the mark, which the child then
/// writes as a resume). False if the shadow could not be mapped (the child
/// then writes nothing for the module rather than its parent's counts twice).
///
/// Only the fork child's atfork handler calls this (one thread).
pub(crate) fn mark_all_written(node: &Node) -> bool {
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { node.module().functions() };
    let Ok(ShadowLayout {
        offsets,
        order,
        total,
    }) = shadow_layout(node.module())
    else {
        return false;
    };
    let Some(shadow) = node.shadow(total) else {
        return false;
    };
    let pagemap = crate::os::open_pagemap();
    let mut copies = Copies::new();
    for &(_, pos) in order.as_slice() {
        let f = &funcs[pos as usize];
        let (slot_base, array_base) = offsets.as_slice()[pos as usize];
        // Safety: `f` is valid (only valid functions are in `order`).
        let (slots, array, state) =
            unsafe { (f.slot_counters(), f.array_counters(), f.hash_state()) };
        if !copies.of(slots) {
            return false;
        }
        for (k, c) in slots.iter().enumerate() {
            Commit::counter(node, &shadow[slot_base + k], copies.sum(c), c).make();
        }
        let marks = &shadow[array_base..][..array.len()];
        if !copies.of(array)
            || !copies.for_each_changed(array, marks, pagemap.as_ref(), |id, count| {
                Commit::counter(node, &marks[id], count, &array[id]).make()
            })
        {
            return false;
        }
        if let Some(state) = state {
            if !copies.of(&state[..]) {
                return false;
            }
            for copy in copies.states(state) {
                hash::for_each(copy, |_, count, w| w.store(count, Relaxed));
            }
        }
    }
    true
}

/// A fork child's hash tables, after its arena was copied (`live`): the
/// chains and inline caches of its thread blocks' states are cut where they
/// reach past the copy (`hash::cut_after_fork`).
pub(crate) fn cut_after_fork(node: &Node) {
    if !crate::live::on() {
        return;
    }
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { node.module().functions() };
    let mut copies = Copies::new();
    let words = pathprof_format::abi::HASH_GLOBAL_WORDS;
    for f in funcs.iter().filter(|f| f.is_valid()) {
        // Safety: `f` is valid.
        let Some(state) = (unsafe { f.hash_state() }) else {
            continue;
        };
        // Safety: a hash function's global is HASH_GLOBAL_WORDS words.
        let global = unsafe { core::slice::from_raw_parts(state.as_ptr(), words) };
        if !copies.of(global) {
            continue;
        }
        for copy in copies.states(state) {
            if !crate::live::contains(copy.as_ptr() as usize) {
                continue;
            }
            let at = copy.as_ptr();
            // Safety: the copy's global, in a block covering the whole of it.
            let cache = unsafe { core::slice::from_raw_parts(at.add(9), words - 9) };
            let base = at.wrapping_add(8) as u64;
            crate::hash::cut_after_fork(copy, cache, base);
        }
    }
}

/// What one function has to write, gathered before any of it is encoded, so
/// that a function with nothing new (most, in most dumps: every function at
/// the exit's second dump) costs a read of its counters and nothing more.
struct Gathered {
    /// Every slot's count (its sum over the copies), in slot order; empty
    /// when they all equal their marks.
    slots: MapVec<u64>,
    /// Whether some slot's count is not its mark.
    slot_news: bool,
    /// The array paths whose count is not their mark: `(id, count)`.
    paths: MapVec<(usize, u64)>,
    /// The hash entries with news.
    items: MapVec<Item>,
}

impl Gathered {
    fn any(&self) -> bool {
        self.slot_news || !self.paths.as_slice().is_empty() || !self.items.as_slice().is_empty()
    }
}

/// Writes `node`'s counts added since the last commit as function records
/// into the section open in `e`, and appends to `log` how to mark them
/// written. Encoder errors are left in `e` (its `finish` returns them).
pub(crate) fn take<S: Sink>(
    node: &Node,
    e: &mut Encoder<S>,
    log: &mut MapVec<Commit>,
) -> Result<(), SnapshotError> {
    let m = node.module();
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { m.functions() };

    let ShadowLayout {
        offsets,
        order,
        total,
    } = shadow_layout(m)?;
    let shadow = node.shadow(total).ok_or(SnapshotError::Memory)?;

    let pagemap = crate::os::open_pagemap();
    let mut copies = Copies::new();
    // The module array's chunks with nothing new: the functions counting
    // only there (most) are passed over unread.
    let array = module_array(m);
    let mut quiet = QuietChunks::new(array, &shadow[..array.len()]).ok_or(SnapshotError::Memory)?;
    let mut gathered = Gathered {
        slots: MapVec::new(),
        slot_news: false,
        paths: MapVec::new(),
        items: MapVec::new(),
    };
    let mut slot_resumes: MapVec<(u64, u64)> = MapVec::new();
    let mut path_resumes: MapVec<(u64, u64)> = MapVec::new();
    let mut last_index = None;
    let mut ok = true;
    for &(index, pos) in order.as_slice() {
        if last_index == Some(index) {
            continue; // a duplicate index in one module: only the first counts
        }
        last_index = Some(index);
        let f = &funcs[pos as usize];
        let (slot_base, array_base) = offsets.as_slice()[pos as usize];
        // Safety: `f` is valid (only valid functions are in `order`).
        let (slots, paths, state) =
            unsafe { (f.slot_counters(), f.array_counters(), f.hash_state()) };
        let slot_marks = &shadow[slot_base..][..slots.len()];
        let path_marks = &shadow[array_base..][..paths.len()];
        // A long path array is read page by page where touched, which
        // costs less than asking about its chunks first when it has news.
        let slots_quiet = quiet.quiet(slot_base, slots.len());
        let paths_quiet = paths.len() <= ASK_CHUNKS && quiet.quiet(array_base, paths.len());
        if slots_quiet && paths_quiet && state.is_none() {
            continue;
        }

        // What is new, read once: what is encoded below is what was read.
        gathered.slots.clear();
        gathered.paths.clear();
        gathered.items.clear();
        gathered.slot_news = false;
        if !slots_quiet {
            ok &= copies.of(slots);
            if !copies.unchanged(slots, slot_marks) {
                for (c, w) in slots.iter().zip(slot_marks) {
                    let count = copies.sum(c);
                    gathered.slot_news |= count != w.load(Relaxed);
                    ok &= gathered.slots.push(count);
                }
            }
        }
        if f.path_kind == PATHS_ARRAY && !paths_quiet {
            let read = copies.of(paths)
                && copies.for_each_changed(paths, path_marks, pagemap.as_ref(), |id, count| {
                    ok &= gathered.paths.push((id, count));
                });
            ok &= read;
        }
        if let Some(state) = state {
            ok &= copies.of(&state[..]);
            for copy in copies.states(state) {
                hash::for_each(copy, |id, count, w| {
                    let (delta, resumes) = news(count, w.load(Relaxed));
                    if delta != 0 || resumes != 0 {
                        let commit = Commit::plain(w, count);
                        ok &= gathered.items.push(Item {
                            id,
                            delta,
                            resumes,
                            commit,
                        });
                    }
                });
            }
        }
        if !ok {
            return Err(SnapshotError::Memory);
        }
        if !gathered.any() {
            continue;
        }

        let mut any = false;
        let mut note = |log: &mut MapVec<Commit>, w: &AtomicU64, count: u64, c: &AtomicU64| {
            any = true;
            log.push(Commit::counter(node, w, count, c))
        };
        e.begin_function(index, f.hash, slots.len() as u64);
        slot_resumes.clear();
        path_resumes.clear();
        let counts = gathered.slots.as_slice();
        for (k, w) in slot_marks.iter().enumerate() {
            // Slots found unchanged were not read one by one: their counts
            // are their marks.
            let mark = w.load(Relaxed);
            let count = counts.get(k).copied().unwrap_or(mark);
            let (d, r) = news(count, mark);
            e.slot(d);
            if d != 0 || r != 0 {
                ok &= note(log, w, count, &slots[k]);
            }
            if r != 0 {
                ok &= slot_resumes.push((k as u64, r));
            }
        }
        for &(id, count) in gathered.paths.as_slice() {
            let w = &path_marks[id];
            let (d, r) = news(count, w.load(Relaxed));
            if d != 0 {
                e.path(id as u64, d);
            }
            ok &= note(log, w, count, &paths[id]);
            if r != 0 {
                ok &= path_resumes.push((id as u64, r));
            }
        }
        // The copies' entries of one id add up (each keeps its mark).
        gathered.items.as_mut_slice().sort_unstable_by_key(|i| i.id);
        let mut rest = gathered.items.as_slice();
        while let Some(first) = rest.first() {
            let n = rest.iter().take_while(|i| i.id == first.id).count();
            let (same, more) = rest.split_at(n);
            rest = more;
            let sum = |f: fn(&Item) -> u64| same.iter().map(f).fold(0, u64::saturating_add);
            let (delta, resumes) = (sum(|i| i.delta), sum(|i| i.resumes));
            if delta != 0 {
                e.path(first.id, delta);
            }
            any = true;
            for i in same {
                ok &= log.push(i.commit);
            }
            if resumes != 0 {
                ok &= path_resumes.push((first.id, resumes));
            }
        }
        for &(k, r) in slot_resumes.as_slice() {
            e.slot_resume(k, r);
        }
        for &(id, r) in path_resumes.as_slice() {
            e.path_resume(id, r);
        }
        e.end_function(!any);
        if !ok {
            return Err(SnapshotError::Memory);
        }
    }
    Ok(())
}

/// Counts dropped by `node`'s hash tables (all their copies) for lack of
/// memory.
pub(crate) fn lost(node: &Node) -> u64 {
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { node.module().functions() };
    let mut copies = Copies::new();
    funcs
        .iter()
        .filter(|f| f.is_valid())
        // Safety: `f` is valid.
        .filter_map(|f| unsafe { f.hash_state() })
        .map(|state| {
            if copies.of(&state[..]) {
                copies.lost(state)
            } else {
                0
            }
        })
        .fold(0u64, u64::saturating_add)
}

/// Marks the counts of `log` as written (the profile file holding them is
/// on disk).
pub(crate) fn commit(log: &[Commit]) {
    for c in log {
        c.make();
    }
}

impl Commit {
    /// Moves the words.
    fn make(&self) {
        for (w, value) in self.moves() {
            // Safety: `written` points into a shadow or a hash entry, and
            // `region` into the shadow's region marks, all of which live
            // until the module is retired; only the dumper (which holds the
            // dump lock) gets here, and a fork child never does with a log
            // taken before the fork (the lock is reset there).
            unsafe { (*w).store(value, Relaxed) };
        }
    }
}

/// Writes `node`'s record into the live file (continuous mode, at
/// registration): its functions and where their counters and marks are,
/// for a reader of the file of a process that was killed. Nothing without
/// memory (the module is then not in the file: a warning says so).
pub(crate) fn record_live(node: &Node, region_start: usize) {
    use pathprof_format::live::{FUNCTION_WORDS, MODULE_WORDS, RECORD_MODULE};
    let m = node.module();
    // Safety: registered modules are valid, and mapped until retired.
    let funcs = unsafe { m.functions() };
    let mut words: MapVec<u64> = MapVec::new();
    let object = node.object().unwrap_or("").as_bytes();
    let Ok(layout) = shadow_layout(m) else {
        return say_unrecorded(node);
    };
    let mut ok =
        words.reserve(MODULE_WORDS + object.len().div_ceil(8) + funcs.len() * FUNCTION_WORDS);
    ok &= words.extend_from_slice(&[
        0,
        RECORD_MODULE,
        m.build_id,
        m.mode.into(),
        0, // functions, below
        region_start as u64,
        0, // marks, set when the shadow is mapped (`Node::shadow`)
        0,
        0,
        0,
        0,
        object.len() as u64,
    ]);
    for chunk in object.chunks(8) {
        let mut path = [0u8; 8];
        path[..chunk.len()].copy_from_slice(chunk);
        ok &= words.push(u64::from_le_bytes(path));
    }
    // By index, each once (a section's rule), as dumps write them.
    let mut n = 0u64;
    let mut last_index = None;
    for &(index, pos) in layout.order.as_slice() {
        if last_index == Some(index) {
            continue;
        }
        last_index = Some(index);
        let f = &funcs[pos as usize];
        let (slot_marks, path_marks) = layout.offsets.as_slice()[pos as usize];
        n += 1;
        ok &= words.extend_from_slice(&[
            u64::from(f.index) | u64::from(f.path_kind) << 32,
            f.hash,
            f.num_slots.into(),
            f.slots as u64,
            f.num_paths,
            f.paths as u64,
            slot_marks as u64,
            path_marks as u64,
        ]);
    }
    if !ok {
        return say_unrecorded(node);
    }
    words.as_mut_slice()[4] = n;
    match crate::live::push_record(words.as_slice(), &[]) {
        Some(record) => node.set_record(record),
        None => say_unrecorded(node),
    }
}

fn say_unrecorded(node: &Node) {
    crate::msg::Line::new()
        .text("continuous mode: no room in the live file for build ")
        .hex(node.build_id())
        .text("; its counts are written at exit and on signals only")
        .emit();
}
