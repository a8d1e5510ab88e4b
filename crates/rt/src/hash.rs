//! Hash-table path counters (`path_kind` 2): `__pathprof_hash_count(state, id)`
//! and `__pathprof_hash_uncount(state, id)`.
//!
//! The 64-byte zeroed `PpHashState` in the program's data holds:
//!
//! | word | meaning |
//! |---|---|
//! | 0 `HEAD` | the newest table (null until the first count) |
//! | 1, 5, 6, 7 `CACHE` | the entry last counted, per id modulo 4 (Ball-Larus' PP keeps the last path's slot; four keep loops that alternate a few paths off the table) |
//! | 2 `MAX_COUNT` | the count of id `u64::MAX` (its key would be 0, the empty key) |
//! | 3 `MAX_WRITTEN` | how much of `MAX_COUNT` has been written to a profile |
//! | 4 `LOST` | counts dropped because no memory could be mapped for a table |
//!
//! After the state in its global come a word that stays 0 (the cache's
//! *base*) and the `HASH_CACHE_SLOTS` (16384) slots of the instrumented
//! code's inline cache (docs/formats.md §2): by the id's Fibonacci hash, an
//! entry's address less the base's, which the code reads to increment the
//! entry's count itself (an empty slot leads it to the base, whose 0 is no
//! entry's key); `__pathprof_hash_count_cached` ([`count_cached`]) fills a
//! slot on a miss when the slot is empty or the missing id has run at least
//! as often as the slot's entry (so a rarely run path never evicts a hot
//! one). The runtime reads no other slot, and dumps none. Entries therefore
//! begin with `key` and `count`, in that order, and are never moved or freed.
//!
//! A table is an `mmap`ed open-addressing array (linear probing, Fibonacci
//! hashing) of entries `{key = id + 1, count, written}`. Everything is
//! lock-free, so the table is thread-safe and safe to re-enter from a signal
//! handler of the instrumented program: a key is claimed with one
//! compare-and-swap and never changes afterwards. Counts are saturating
//! compare-and-swap loops for programs built with atomic updates
//! (`__pathprof_hash_count_atomic`, exact across threads) and a relaxed load and
//! store otherwise (`__pathprof_hash_count`, as array counters: a lock prefix
//! per path costs several times the path itself). When a table is 3/4 full a table twice its size is
//! pushed in front of it (`prev` links the older ones); tables are never
//! moved or freed while the process runs, so
//! the cache and the dumper may hold entry pointers without locks. Counting
//! looks for the id in the newest table only and claims a key there when it is
//! absent, so an id counted before a growth has entries in several tables
//! (and so may one that two threads raced past a growth); the dumper adds an
//! id's entries up. Hot paths thus cost one probe sequence, however many times
//! the table grew. Growth is unbounded apart from memory.
//!
//! Uncounting (the undo of an early-termination count once its call returned,
//! docs/formats.md §1 `Call` sites) takes one off the id's entry with the same
//! kind of compare-and-swap loop: never below zero, never from a saturated
//! count (`u64::MAX`: the count it undoes did not add anything). It never
//! creates an entry: an id that is not there is left alone, except that when
//! counts were dropped for lack of memory (`LOST`) one of those is taken back,
//! since the count being undone is then one of them. (A fork child keeps its
//! parent's tables, with every `written` set to its count, so undoing a
//! pre-fork count there takes it below `written`: a resume, see `snapshot`.)
//! When an id
//! has entries in two tables, the first one found with a count above 0 loses
//! the count, looking as counting does: the cached entry, then newest table first.
//!
//! `written` is touched only by the dumper (under its lock) and a fork child's
//! atfork handler: a dump writes `count - written` (or, below it, the
//! difference as resumes) and, once the file is written, sets `written` to the
//! count it read. Counters are never written by the dumper, so an increment
//! that a signal interrupts is never lost or counted twice. Because uncounting
//! makes counts go down, `written` is a high-water mark (see `snapshot`).

use crate::mem::{map_zeroed, unmap};
use core::sync::atomic::{AtomicU64, Ordering::*};
use pathprof_format::abi::FIBONACCI_MULTIPLIER;

const HEAD: usize = 0;
/// The cache words; an id uses `CACHE[id % 4]`.
const CACHE: [usize; 4] = [1, 5, 6, 7];

fn cache_slot(state: &[AtomicU64; 8], id: u64) -> &AtomicU64 {
    &state[CACHE[(id & 3) as usize]]
}
const MAX_COUNT: usize = 2;
const MAX_WRITTEN: usize = 3;
const LOST: usize = 4;

/// Entries of the first table.
const FIRST_CAPACITY: u64 = 256;

/// A table's header, followed by `capacity` entries.
#[repr(C)]
struct Table {
    /// The next older table, or null.
    prev: *mut Table,
    /// A power of two.
    capacity: u64,
    /// `64 - log2(capacity)`, for Fibonacci hashing.
    shift: u32,
    /// Keys claimed in this table.
    used: AtomicU64,
    /// Bytes mapped for the table.
    map_len: usize,
}

/// One path id's counter (`key` then `count`: the layout the inline cache
/// reads, docs/formats.md §2).
#[repr(C)]
pub(crate) struct Entry {
    /// `id + 1`; 0 while the entry is free.
    key: AtomicU64,
    count: AtomicU64,
    written: AtomicU64,
}

const HEADER: usize = 64;
const _: () = assert!(core::mem::size_of::<Table>() <= HEADER);

impl Table {
    fn entry(&self, i: u64) -> &Entry {
        // Safety: `i < capacity` (callers mask with capacity - 1) and the
        // table was mapped with room for `capacity` entries after the header.
        unsafe {
            &*(self as *const Table)
                .cast::<u8>()
                .add(HEADER)
                .cast::<Entry>()
                .add(i as usize)
        }
    }

    /// The entry of `key`; with `claim`, takes a free one for it.
    #[inline]
    fn probe(&self, key: u64, claim: bool) -> Probe<'_> {
        let mask = self.capacity - 1;
        let mut i = key.wrapping_mul(FIBONACCI_MULTIPLIER) >> self.shift;
        for _ in 0..self.capacity {
            let e = self.entry(i & mask);
            let mut k = e.key.load(Acquire);
            if k == 0 {
                if !claim {
                    return Probe::Absent;
                }
                match e.key.compare_exchange(0, key, AcqRel, Acquire) {
                    Ok(_) => {
                        self.used.fetch_add(1, Relaxed);
                        return Probe::Found(e);
                    }
                    Err(actual) => k = actual,
                }
            }
            if k == key {
                return Probe::Found(e);
            }
            i = i.wrapping_add(1);
        }
        Probe::Full
    }

    fn crowded(&self) -> bool {
        self.used.load(Relaxed).saturating_mul(4) >= self.capacity * 3
    }
}

enum Probe<'a> {
    Found(&'a Entry),
    Absent,
    Full,
}

fn add_saturating(c: &AtomicU64, n: u64) {
    let _ = c.fetch_update(Relaxed, Relaxed, |v| {
        (v != u64::MAX).then(|| v.saturating_add(n))
    });
}

/// Takes one off `c` unless it is 0 or saturated; false if it was 0.
fn sub_one(c: &AtomicU64) -> bool {
    match c.fetch_update(Relaxed, Relaxed, |v| {
        (v != 0 && v != u64::MAX).then(|| v - 1)
    }) {
        Ok(_) => true,
        Err(v) => v != 0,
    }
}

fn head(state: &[AtomicU64; 8]) -> *mut Table {
    state[HEAD].load(Acquire) as *mut Table
}

/// Pushes a new table in front of `old` unless another thread already did.
/// False if no memory could be mapped.
fn grow(state: &[AtomicU64; 8], old: *mut Table) -> bool {
    let capacity = if old.is_null() {
        FIRST_CAPACITY
    } else {
        // Safety: published tables live until the process ends.
        unsafe { (*old).capacity.saturating_mul(2) }
    };
    let Some(bytes) = usize::try_from(capacity)
        .ok()
        .and_then(|c| c.checked_mul(core::mem::size_of::<Entry>()))
        .and_then(|b| b.checked_add(HEADER))
    else {
        return false;
    };
    // A thread block's state (continuous mode) keeps its tables in the live
    // file too.
    let live = crate::live::contains(state.as_ptr() as usize);
    let Some(mem) = (if live {
        crate::live::alloc(bytes)
    } else {
        map_zeroed(bytes)
    }) else {
        return false;
    };
    let t = mem.cast::<Table>();
    // Safety: fresh zeroed memory of ours, not yet shared.
    unsafe {
        t.write(Table {
            prev: old,
            capacity,
            shift: 64 - capacity.trailing_zeros(),
            used: AtomicU64::new(0),
            map_len: bytes,
        })
    };
    if state[HEAD]
        .compare_exchange(old as u64, t as u64, AcqRel, Acquire)
        .is_err()
    {
        if live {
            // Never published: its pages go back to the file system.
            crate::live::clear(mem, bytes);
        } else {
            // Safety: the table was never published.
            unsafe { unmap(mem, bytes) };
        }
    }
    true
}

/// In a fork child whose arena was copied while its parent's other threads
/// went on (`live`): tables pushed after the copy was taken lie past it
/// and are cut from the chains, and so are the inline cache's entries in
/// them (`cache` is the state's cache, `base` its base word's address).
/// The copy's counts there were its parent's anyway.
pub(crate) fn cut_after_fork(state: &[AtomicU64; 8], cache: &[AtomicU64], base: u64) {
    let kept = |t: u64| t == 0 || crate::live::contains(t as usize);
    if !kept(state[HEAD].load(Relaxed)) {
        state[HEAD].store(0, Relaxed);
    }
    let mut t = head(state);
    while !t.is_null() {
        // Safety: a table below the copy's end: in the child's file.
        let table = unsafe { &mut *t };
        if !kept(table.prev as u64) {
            table.prev = core::ptr::null_mut();
        }
        t = table.prev;
    }
    for c in state.iter().skip(1).take(1).chain(&state[5..8]) {
        if !kept(c.load(Relaxed)) {
            c.store(0, Relaxed);
        }
    }
    for slot in cache {
        let at = slot.load(Relaxed);
        if at != 0 && !crate::live::contains(base.wrapping_add(at) as usize) {
            slot.store(0, Relaxed);
        }
    }
}

/// The entry counting `key`, creating it if needed; None if out of memory.
/// The common case, an id the newest table holds, is one probe sequence in
/// the caller; the rest is out of line, so that a miss of the inline cache
/// takes no frame for it (the creation's register saves and stack frame
/// would otherwise cost every miss, measured on xz's `lzma_decode` with
/// `bench/callgrind.py`).
#[inline]
fn entry_for(state: &[AtomicU64; 8], key: u64) -> Option<&Entry> {
    let h = head(state);
    if !h.is_null() {
        // Safety: published tables live until the process ends.
        if let Probe::Found(e) = unsafe { &*h }.probe(key, false) {
            return Some(e);
        }
    }
    created_entry(state, key)
}

/// [`entry_for`] past its common case: creates the entry, growing the
/// tables as needed.
#[inline(never)]
fn created_entry(state: &[AtomicU64; 8], key: u64) -> Option<&Entry> {
    loop {
        let h = head(state);
        if h.is_null() {
            if !grow(state, h) {
                return None;
            }
            continue;
        }
        // Safety: published tables live until the process ends.
        let t = unsafe { &*h };
        if let Probe::Found(e) = t.probe(key, false) {
            return Some(e);
        }
        // Older tables are not searched: an id counted there before a growth
        // gets a fresh entry here, so a hot path costs one probe sequence in the
        // newest table, not one per table; the dumper adds an id's entries up.
        if !t.crowded() {
            if let Probe::Found(e) = t.probe(key, true) {
                return Some(e);
            }
        }
        if !grow(state, h) {
            // Out of memory: keep filling the current table while it has room.
            return match t.probe(key, true) {
                Probe::Found(e) => Some(e),
                _ => None,
            };
        }
    }
}

/// How a count is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Update {
    /// A relaxed load and store: fast; concurrent counts of one path may be lost.
    Plain,
    /// A compare-and-swap loop: exact across threads.
    Atomic,
}

/// Adds `n` executions of path `id` (saturating).
pub(crate) fn count(state: &[AtomicU64; 8], id: u64, n: u64, update: Update) {
    if id == u64::MAX {
        return update.add(&state[MAX_COUNT], n);
    }
    let cache = cache_slot(state, id);
    let cached = cache.load(Acquire) as *const Entry;
    if !cached.is_null() {
        // Safety: the cache only ever points to entries of published tables.
        let e = unsafe { &*cached };
        if e.key.load(Relaxed) == id + 1 {
            return update.add(&e.count, n);
        }
    }
    count_remembered(state, cache, 0, id, n, update);
}

/// [`count`] from the instrumented code's inline cache (docs/formats.md §2):
/// called when `slot`, the cache word the id hashes to, holds no entry or
/// another id's entry. Adds `n` to the id's entry and, when [`takes_slot`],
/// leaves the entry's address less `base` (the cache's base word's) in
/// `slot`, so the id's next executions count inline; the runtime's own cache
/// words are neither read nor written.
pub(crate) fn count_cached(
    state: &[AtomicU64; 8],
    base: u64,
    slot: &AtomicU64,
    id: u64,
    n: u64,
    update: Update,
) {
    if id == u64::MAX {
        return update.add(&state[MAX_COUNT], n);
    }
    let Some(e) = entry_for(state, id + 1) else {
        return add_saturating(&state[LOST], n);
    };
    update.add(&e.count, n);
    if takes_slot(slot, base, e) {
        slot.store((e as *const Entry as u64).wrapping_sub(base), Release);
    }
}

/// Whether `e`, just counted, takes its cache slot from the entry there: when
/// the slot is empty or `e` has run at least as often (in this thread's
/// table). A path run a few times then never evicts a hot one, which would
/// miss at its next execution: a function such as xz's `lzma_decode` runs
/// tens of thousands of distinct paths, a few thousand of them nearly all
/// of its path ends, so evicting on every miss would cost two misses per
/// rare path. The price: a path that turns hot after another ran more often
/// in its slot misses until it has caught up, at most as many times as the
/// other has run, and two hot paths sharing a slot leave only the hotter
/// cached (with eviction on every miss, alternating, both would miss every
/// time).
fn takes_slot(slot: &AtomicU64, base: u64, e: &Entry) -> bool {
    let resident = slot.load(Relaxed);
    if resident == 0 {
        return true;
    }
    // Safety: a nonzero slot holds the address, less `base`, of an entry of
    // a published table of this state (only this function stores there).
    let resident = unsafe { &*(base.wrapping_add(resident) as *const Entry) };
    e.count.load(Relaxed) >= resident.count.load(Relaxed)
}

/// Adds `n` to the entry of `id` (`< u64::MAX`), creating it, and stores
/// its address less `base` in `memo`; counts the executions as lost without
/// memory.
fn count_remembered(
    state: &[AtomicU64; 8],
    memo: &AtomicU64,
    base: u64,
    id: u64,
    n: u64,
    update: Update,
) {
    match entry_for(state, id + 1) {
        Some(e) => {
            update.add(&e.count, n);
            memo.store((e as *const Entry as u64).wrapping_sub(base), Release);
        }
        None => add_saturating(&state[LOST], n),
    }
}

impl Update {
    /// Adds `n` to `c`, saturating.
    fn add(self, c: &AtomicU64, n: u64) {
        match self {
            Update::Plain => add_saturating_plain(c, n),
            Update::Atomic => add_saturating(c, n),
        }
    }
}

/// `add_saturating` without the compare-and-swap (see [`Update::Plain`]).
fn add_saturating_plain(c: &AtomicU64, n: u64) {
    let v = c.load(Relaxed);
    if v != u64::MAX {
        c.store(v.saturating_add(n), Relaxed);
    }
}

/// Undoes one execution of path `id` (see the module doc): minus one on its
/// entry, unless the count is 0 or saturated; nothing if the id has no entry
/// (but one dropped count less, if any were dropped).
pub(crate) fn uncount(state: &[AtomicU64; 8], id: u64) {
    if id == u64::MAX {
        sub_one(&state[MAX_COUNT]);
        return;
    }
    let key = id + 1;
    let cached = cache_slot(state, id).load(Acquire) as *const Entry;
    if !cached.is_null() {
        // Safety: the cache only ever points to entries of published tables.
        let e = unsafe { &*cached };
        if e.key.load(Relaxed) == key && sub_one(&e.count) {
            return;
        }
    }
    let mut found = false;
    let mut t = head(state);
    while !t.is_null() {
        // Safety: published tables live until the process ends.
        let table = unsafe { &*t };
        if let Probe::Found(e) = table.probe(key, false) {
            found = true;
            if sub_one(&e.count) {
                return;
            }
        }
        t = table.prev;
    }
    if !found {
        sub_one(&state[LOST]);
    }
}

/// Calls `f(id, count, written)` for every entry (an id may come twice).
pub(crate) fn for_each(state: &[AtomicU64; 8], mut f: impl FnMut(u64, u64, &AtomicU64)) {
    let max = state[MAX_COUNT].load(Relaxed);
    if max != 0 || state[MAX_WRITTEN].load(Relaxed) != 0 {
        f(u64::MAX, max, &state[MAX_WRITTEN]);
    }
    let mut t = head(state);
    while !t.is_null() {
        // Safety: published tables live until the process ends.
        let table = unsafe { &*t };
        for i in 0..table.capacity {
            let e = table.entry(i);
            let key = e.key.load(Acquire);
            if key != 0 {
                f(key - 1, e.count.load(Relaxed), &e.written);
            }
        }
        t = table.prev;
    }
}

/// Counts dropped for lack of memory.
pub(crate) fn lost(state: &[AtomicU64; 8]) -> u64 {
    state[LOST].load(Relaxed)
}

/// Frees every table and zeroes the state (tests: a state on the stack).
///
/// # Safety
/// No other thread uses `state`.
#[cfg(test)]
unsafe fn reset(state: &[AtomicU64; 8]) {
    let mut t = head(state);
    for w in state {
        w.store(0, Relaxed);
    }
    while !t.is_null() {
        // Safety: by the contract nobody else sees the tables any more.
        unsafe {
            let prev = (*t).prev;
            unmap(t.cast(), (*t).map_len);
            t = prev;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_format::abi::FIBONACCI_MULTIPLIER_32;
    use std::collections::BTreeMap;

    fn totals(state: &[AtomicU64; 8]) -> BTreeMap<u64, u64> {
        let mut m = BTreeMap::new();
        for_each(state, |id, c, _| {
            let e = m.entry(id).or_insert(0u64);
            *e = e.saturating_add(c);
        });
        m
    }

    #[test]
    fn counts_grows_and_saturates() {
        let state: [AtomicU64; 8] = Default::default();
        for round in 0..3u64 {
            for id in 0..5000u64 {
                count(&state, id * 7919, round + 1, Update::Plain);
            }
        }
        count(&state, u64::MAX, 2, Update::Plain);
        count(&state, 3, u64::MAX - 1, Update::Plain);
        count(&state, 3, 5, Update::Plain);
        let m = totals(&state);
        assert_eq!(m.len(), 5002);
        assert_eq!(m[&(7919 * 4999)], 6);
        assert_eq!(m[&u64::MAX], 2);
        assert_eq!(m[&3], u64::MAX);
        assert_eq!(lost(&state), 0);
        // Safety: the state is local to this test.
        unsafe { reset(&state) };
        assert!(totals(&state).is_empty());
    }

    /// The slot `id` hashes to in the instrumented code's inline cache.
    fn slot_index(id: u64) -> usize {
        let low = id.wrapping_add(1) as u32;
        (low.wrapping_mul(FIBONACCI_MULTIPLIER_32)
            >> (32 - pathprof_format::abi::HASH_CACHE_SLOTS.trailing_zeros())) as usize
    }

    /// A zeroed hash state and its cache: the base word, then the slots.
    fn empty_state_and_cache() -> ([AtomicU64; 8], Vec<AtomicU64>) {
        let cache = (0..=pathprof_format::abi::HASH_CACHE_SLOTS)
            .map(|_| AtomicU64::new(0))
            .collect();
        (Default::default(), cache)
    }

    /// What the instrumented code's inline cache does (docs/formats.md §2):
    /// `cache[0]` is the base, the rest the slots; the slot's entry when its
    /// key is `id + 1`, else the runtime's miss.
    fn count_inline(state: &[AtomicU64; 8], cache: &[AtomicU64], id: u64) {
        let (base, slots) = cache.split_first().unwrap();
        let slot = &slots[slot_index(id)];
        let base = base as *const AtomicU64 as u64;
        let e = base.wrapping_add(slot.load(Relaxed)) as *const AtomicU64;
        // Safety: the slot holds 0 (so `e` is the base, 0) or an entry's
        // address less the base's; an entry's first two words are its key
        // and count.
        unsafe {
            if (*e).load(Relaxed) == id.wrapping_add(1) {
                let count = &*e.add(1);
                count.store(count.load(Relaxed) + 1, Relaxed);
                return;
            }
        }
        count_cached(state, base, slot, id, 1, Update::Plain);
    }

    #[test]
    fn the_inline_cache_counts_into_the_entries_the_dump_reads() {
        let (state, cache) = empty_state_and_cache();
        // Far more ids than slots and than the first table: slots are
        // refilled and tables grow while cached entries stay valid.
        for round in 0..3u64 {
            for id in 0..5000u64 {
                for _ in 0..=(id % 3) {
                    count_inline(&state, &cache, id * 104_729 + round % 2);
                }
            }
        }
        // Id u64::MAX (key 0) never reaches the inline code (ids are below
        // the path count, at most 2^62): the miss counts it.
        for _ in 0..2 {
            count_cached(&state, 0, &cache[1], u64::MAX, 1, Update::Plain);
        }
        let m = totals(&state);
        assert_eq!(m.len(), 10_001);
        assert_eq!(m[&(104_729 * 4999)], 2 * 2, "rounds 0 and 2, twice each");
        assert_eq!(m[&(104_729 * 4999 + 1)], 2, "round 1, twice");
        assert_eq!(m[&104_729], 2 * 2);
        assert_eq!(m[&u64::MAX], 2);
        assert!(cache[1..].iter().any(|s| s.load(Relaxed) != 0));
        assert_eq!(cache[0].load(Relaxed), 0, "the base stays 0");
        // The runtime's own cache words were left alone.
        assert!(CACHE.iter().all(|&w| state[w].load(Relaxed) == 0));
        // Safety: the state is local to this test.
        unsafe { reset(&state) };
    }

    #[test]
    fn a_path_takes_a_cache_slot_only_from_one_run_no_more_often() {
        let (state, cache) = empty_state_and_cache();
        let slot_of = |id: u64| slot_index(id) + 1;
        let (hot, rare) = (7, (8..).find(|&id| slot_of(id) == slot_of(7)).unwrap());
        let resident = || cache[slot_of(hot)].load(Relaxed);
        for _ in 0..3 {
            count_inline(&state, &cache, hot);
        }
        let hot_entry = resident();
        assert_ne!(hot_entry, 0);
        // (the id run next, whether the hot entry is still cached after it)
        for (id, hot_stays, why) in [
            (rare, true, "a path run once leaves the hot one cached"),
            (rare, true, "twice against three"),
            (rare, false, "as often as the resident: it takes the slot"),
            (hot, true, "four runs against three"),
        ] {
            count_inline(&state, &cache, id);
            assert_eq!(resident() == hot_entry, hot_stays, "{why}");
        }
        let m = totals(&state);
        assert_eq!((m[&hot], m[&rare], m.len()), (4, 3, 2));
        // Safety: the state is local to this test.
        unsafe { reset(&state) };
    }

    #[test]
    fn uncount_undoes_one_count_and_never_goes_below_zero() {
        let state: [AtomicU64; 8] = Default::default();
        uncount(&state, 7); // nothing counted yet: no table, no entry
        assert!(totals(&state).is_empty());
        assert_eq!(head(&state), core::ptr::null_mut());
        for id in 0..1000u64 {
            count(&state, id, 2, Update::Plain);
        }
        count(&state, u64::MAX, 1, Update::Plain);
        count(&state, 5000, u64::MAX, Update::Plain);
        for id in (0..1000u64).step_by(2) {
            uncount(&state, id);
        }
        uncount(&state, 3);
        uncount(&state, 3);
        uncount(&state, 3); // already 0: stays
        uncount(&state, u64::MAX);
        uncount(&state, u64::MAX);
        uncount(&state, 5000); // saturated: stays
        uncount(&state, 123_456); // absent: nothing, and no entry made
        let m = totals(&state);
        assert_eq!(m.len(), 1001);
        assert_eq!(m[&0], 1);
        assert_eq!(m[&1], 2);
        assert_eq!(m[&3], 0);
        assert_eq!(m[&998], 1);
        assert!(!m.contains_key(&u64::MAX), "counted once, undone twice: 0");
        assert_eq!(m[&5000], u64::MAX);
        assert!(!m.contains_key(&123_456));
        assert_eq!(lost(&state), 0);

        // An undone count that had been dropped for lack of memory.
        state[LOST].store(2, Relaxed);
        uncount(&state, 123_456);
        assert_eq!(lost(&state), 1);
        // Safety: the state is local to this test.
        unsafe { reset(&state) };
    }

    #[test]
    fn threads_count_and_uncount_exactly() {
        let state: &'static [AtomicU64; 8] = Box::leak(Box::default());
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..100_000u64 {
                        let id = (i * 31 + t) % 5_000;
                        count(state, id, 1, Update::Atomic);
                        count(state, id + 10_000, 1, Update::Atomic);
                        uncount(state, id + 10_000);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let m = totals(state);
        assert_eq!(m.len(), 10_000);
        assert!(m
            .iter()
            .all(|(&id, &c)| c == if id < 10_000 { 80 } else { 0 }));
    }

    #[test]
    fn threads_count_exactly() {
        let state: &'static [AtomicU64; 8] = Box::leak(Box::default());
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                std::thread::spawn(move || {
                    for i in 0..200_000u64 {
                        count(state, (i * 31 + t) % 20_000, 1, Update::Atomic);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let m = totals(state);
        assert_eq!(m.len(), 20_000);
        assert!(m.values().all(|&c| c == 40));
    }
}
