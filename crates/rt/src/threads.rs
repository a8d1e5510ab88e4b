//! Per-thread counters: every thread the runtime knows counts into a block
//! of its own, so that threads running the same code never share a counter
//! and plain load/add/store increments stay exact.
//!
//! Instrumented code adds the calling thread's *delta* (a thread-local
//! variable of its linked object, reached through `PpModule::thread_delta`,
//! loaded once per activation) to every counter address. Counters (slot and
//! array counters, hash states) are zero-initialised globals, so they lie in
//! the object's writable segments: from the lowest to the end of the
//! highest, its *region* here (found with `dl_iterate_phdr`). A *block* is a
//! zero-initialised, lazily backed mapping of the region's size, placed at
//! the same offset within a page as the region (so that both have the same
//! page structure, which `snapshot` reads through the page map); a thread
//! holding it has `delta = block - region`. Only the pages a thread counts
//! on are ever backed.
//!
//! Who gets a block:
//! * the thread that registers a region's first module (the main thread for
//!   modules loaded at startup; the thread calling `dlopen` otherwise);
//! * every thread started through the runtime's `pthread_create`
//!   ([`start_thread`], a block per region known at that moment).
//!
//! Everything else counts into the region itself (delta 0, the variable's
//! initial value): threads the runtime did not start (a raw `clone`, a
//! thread created before the runtime was installed or by a C library call
//! that does not go through `pthread_create`), and threads that were running
//! when a library was loaded, in that library's code. Those share the
//! region's counters without synchronisation: exact while at most one of
//! them counts at a time, and never a crash.
//!
//! A thread gives its blocks back from a thread-specific-data destructor
//! (after its C++ `thread_local` destructors, also after `pthread_exit`, in
//! the C library's last round of destructors), with its delta set back to
//! 0. Blocks are never unmapped and never cleared: a block given back keeps its counts, the next thread that takes
//! it adds to them, and a dump reads the sum of the region and all its
//! blocks (see `snapshot`), so nothing a thread counted is lost when it
//! ends, also while a dump runs. A process has as many blocks per region
//! as it ever had threads at once.
//!
//! Regions and blocks are [`List`]s, so that the dumper (also in a signal
//! handler) walks them without locks.

use crate::abi::{PpModule, ThreadDeltaFn, SEGMENT_GS};
use crate::heap::{self, HeapVec};
use crate::list::List;
use crate::mem::map_lazily;
use crate::once::OnceValue;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};

/// One linked object's writable segments, which hold its counters.
pub(crate) struct Region {
    start: usize,
    /// Their end (a library loaded again may be of another size).
    end: AtomicUsize,
    /// The object's `ThreadDeltaFn`, as a `usize` (0 never).
    delta_of: AtomicUsize,
    /// Registered, not retired modules of the region; 0 once its object was
    /// unloaded: its `delta_of` must not be called then.
    live: AtomicUsize,
    /// A module of the object has counters outside the region: no thread
    /// may count elsewhere than in the counters themselves.
    shared: AtomicBool,
    /// Every block mapped for the region, newest first.
    blocks: List<Block>,
    /// A module of the region increments through `%gs`
    /// (`PpModule::segment`): a thread's GS base is its delta here.
    gs: AtomicBool,
}

/// One thread's copy of a region's counters.
pub(crate) struct Block {
    /// `block - region start`: what the holding thread's delta is.
    delta: isize,
    /// The end of the region it copies (a library loaded again may have
    /// bigger segments: only blocks as big are used for it).
    end: usize,
    /// The mapping, for clearing it when its library is loaded again.
    mapping: *mut u8,
    mapping_len: usize,
    /// A live thread counts into it.
    busy: AtomicBool,
}

static REGIONS: List<Region> = List::new();

/// Every region ever registered, newest first.
fn regions() -> impl Iterator<Item = &'static Region> {
    REGIONS.iter()
}

impl Region {
    fn blocks(&self) -> impl Iterator<Item = &'static Block> {
        self.blocks.iter()
    }

    fn contains(&self, addr: usize, len: usize) -> bool {
        addr >= self.start
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= self.end.load(Acquire))
    }

    /// The calling thread's delta variable (the object must be loaded).
    fn delta_variable(&self) -> *mut i64 {
        let f = self.delta_of.load(Acquire);
        // Safety: a `ThreadDeltaFn` stored by `add_module`.
        let f = unsafe { core::mem::transmute::<usize, ThreadDeltaFn>(f) };
        // Safety: the object is loaded (callers check `live`).
        unsafe { f() }
    }

    /// A free block, taken for the calling thread: one given back, or a new
    /// mapping. `None` without memory.
    fn take_block(&'static self) -> Option<&'static Block> {
        if self.shared.load(Acquire) {
            return None;
        }
        let end = self.end.load(Acquire);
        if let Some(b) = self.blocks().find(|b| {
            b.end >= end
                && b.busy
                    .compare_exchange(false, true, AcqRel, Relaxed)
                    .is_ok()
        }) {
            return Some(b);
        }
        let page = crate::os::page_size();
        let lead = self.start % page;
        let len = (lead + (end - self.start)).div_ceil(page) * page;
        // Continuous mode: in the live file (`live`).
        let mapping = crate::live::alloc(len).or_else(|| map_lazily(len))?;
        let delta = (mapping as usize + lead).wrapping_sub(self.start) as isize;
        if crate::live::contains(mapping as usize) {
            crate::live::record_block(self.start, end, delta);
        }
        Some(self.blocks.push(Block {
            delta,
            end,
            mapping,
            mapping_len: len,
            busy: AtomicBool::new(true),
        }))
    }
}

/// The blocks a thread holds: (region, block) pairs.
struct Held {
    blocks: HeapVec<(&'static Region, &'static Block)>,
    /// The rounds of thread-specific destructors run so far ([`give_back`]).
    rounds: u32,
}

/// How many rounds of destructors the C library runs at most (its
/// `PTHREAD_DESTRUCTOR_ITERATIONS`, 4 in glibc and musl).
fn destructor_rounds() -> u32 {
    // Safety: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_THREAD_DESTRUCTOR_ITERATIONS) };
    u32::try_from(n).ok().filter(|&n| n >= 1).unwrap_or(1)
}

/// The key whose value is a thread's `Held` (its destructor gives the
/// blocks back).
static KEY: OnceValue<libc::pthread_key_t> = OnceValue::new();

fn key() -> Option<libc::pthread_key_t> {
    KEY.get_or_init(|| {
        let mut k: libc::pthread_key_t = 0;
        // Safety: creating a key with a plain extern "C" destructor of ours.
        if unsafe { libc::pthread_key_create(&mut k, Some(give_back)) } != 0 {
            return libc::pthread_key_t::MAX;
        }
        k
    });
    KEY.get()
        .copied()
        .filter(|&k| k != libc::pthread_key_t::MAX)
}

/// The calling thread's `Held`, created (and set as its key's value) if
/// `create`.
fn held(create: bool) -> Option<&'static mut Held> {
    let key = key()?;
    // Safety: the key's values are `Held`s of this thread (or null).
    let p = unsafe { libc::pthread_getspecific(key) }.cast::<Held>();
    if !p.is_null() {
        // Safety: this thread's own record, only used by this thread.
        return Some(unsafe { &mut *p });
    }
    if !create {
        return None;
    }
    let p = heap::boxed(Held {
        blocks: HeapVec::new(),
        rounds: 0,
    })?;
    // Safety: setting this thread's value to a record it owns.
    if unsafe { libc::pthread_setspecific(key, p.as_ptr().cast()) } != 0 {
        // Safety: ours, never published.
        drop(unsafe { heap::unbox(p) });
        return None;
    }
    // Safety: just created, this thread's own.
    Some(unsafe { &mut *p.as_ptr() })
}

/// Gives the calling thread a block of `region` (keeping the one it holds)
/// and points its delta at it. Without memory the thread counts into the
/// region itself.
fn enter(region: &'static Region, held: &mut Held) {
    let block = match held
        .blocks
        .as_slice()
        .iter()
        .find(|(r, _)| ptr::eq(*r, region))
    {
        Some(&(_, b)) => b,
        None => {
            let Some(b) = region.take_block() else {
                return;
            };
            if !held.blocks.push((region, b)) {
                b.busy.store(false, Release);
                return;
            }
            b
        }
    };
    if block.end < region.end.load(Acquire) {
        return; // a block of the segments before they grew: count into the region
    }
    // Safety: the object is loaded (the caller registers or saw it live).
    unsafe { point(region, block.delta) };
}

/// Points the calling thread's counters of `region` at the copy `delta`
/// bytes away (0: the counters themselves): its delta variable and, where
/// the region counts through `%gs`, its GS base.
///
/// # Safety
/// The region's object is loaded.
unsafe fn point(region: &Region, delta: isize) {
    // Safety: by the contract; the variable is this thread's.
    unsafe { region.delta_variable().write(delta as i64) };
    if region.gs.load(Acquire) {
        crate::segment::set_gs_base(delta);
    }
}

/// Says when the calling thread's GS base is not what the runtime set for
/// an executable counted through `%gs` (its delta there): see
/// `segment::check_gs_base`.
pub(crate) fn check_gs_base() {
    for region in regions().filter(|r| r.gs.load(Acquire) && r.live.load(Acquire) > 0) {
        // Safety: the region's object is loaded; the variable is this thread's.
        let delta = unsafe { region.delta_variable().read() };
        crate::segment::check_gs_base(delta as isize);
    }
}

/// The address of one of `module`'s counters, if it has any.
fn some_counter(module: &PpModule) -> Option<usize> {
    // Safety: registered modules are valid (the caller checked).
    unsafe { module.functions() }
        .iter()
        .filter(|f| f.is_valid())
        .find_map(|f| [f.slots, f.paths].into_iter().find(|p| !p.is_null()))
        .map(|p| p as usize)
}

/// The region of the object `module` was loaded from, with its counters
/// (`None` when the module has none, or they lie in no writable segment).
fn region_of(module: &PpModule) -> Option<(usize, usize)> {
    let mut found = (some_counter(module)?, 0usize, 0usize);
    /// Looks for the object whose writable segments hold `found.0`; sets
    /// `found.1..found.2` to their span.
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        // Safety: dl_iterate_phdr passes a valid info and our `found`.
        let (info, found) = unsafe { (&*info, &mut *data.cast::<(usize, usize, usize)>()) };
        let (mut lo, mut hi, mut holds) = (usize::MAX, 0usize, false);
        for k in 0..usize::from(info.dlpi_phnum) {
            // Safety: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(k) };
            if ph.p_type != libc::PT_LOAD || ph.p_flags & libc::PF_W == 0 {
                continue;
            }
            let start = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            let end = start.wrapping_add(ph.p_memsz as usize);
            lo = lo.min(start);
            hi = hi.max(end);
            holds |= (start..end).contains(&found.0);
        }
        if holds {
            (found.1, found.2) = (lo, hi);
            return 1;
        }
        0
    }
    // Safety: our callback only reads what it is given.
    unsafe {
        libc::dl_iterate_phdr(
            Some(visit),
            (&mut found as *mut (usize, usize, usize)).cast(),
        )
    };
    (found.2 > found.1).then_some((found.1, found.2))
}

/// Whether every counter of `module` lies in `[start, end)`.
fn counters_within(module: &PpModule, start: usize, end: usize) -> bool {
    // Safety: registered modules are valid.
    unsafe { module.functions() }
        .iter()
        .filter(|f| f.is_valid())
        .all(|f| {
            // Safety: `f` is valid.
            let (slots, array, state) =
                unsafe { (f.slot_counters(), f.array_counters(), f.hash_state()) };
            let state: &[_] = state.map_or(&[], |s| &s[..]);
            [slots, array, state].iter().all(|c| {
                let at = c.as_ptr() as usize;
                c.is_empty() || (at >= start && at + core::mem::size_of_val(*c) <= end)
            })
        })
}

/// Registers the region of `module` (its object's first module registers
/// it; a library loaded again revives it with its blocks cleared) and gives
/// the calling thread a block of it. The region's start, if the module
/// counts per thread.
pub(crate) fn add_module(module: &PpModule) -> Option<usize> {
    let delta_of = module.thread_delta?;
    let (start, end) = region_of(module)?;
    let region = regions().find(|r| r.start == start).unwrap_or_else(|| {
        REGIONS.push(Region {
            start,
            end: AtomicUsize::new(end),
            delta_of: AtomicUsize::new(delta_of as usize),
            live: AtomicUsize::new(0),
            shared: AtomicBool::new(false),
            blocks: List::new(),
            gs: AtomicBool::new(false),
        })
    });
    if module.segment == SEGMENT_GS {
        region.gs.store(true, Release);
    }
    if region.live.fetch_add(1, AcqRel) == 0 && region.blocks().next().is_some() {
        // Loaded again where it was: what the blocks hold was written when
        // it went away, and no thread counts into them (its old variables
        // went with it).
        region.shared.store(false, Release);
        for b in region.blocks() {
            if crate::live::contains(b.mapping as usize) {
                crate::live::clear(b.mapping, b.mapping_len);
                continue;
            }
            // Safety: our own anonymous mapping; dropping its pages makes
            // them read as zero again.
            unsafe { libc::madvise(b.mapping.cast(), b.mapping_len, libc::MADV_DONTNEED) };
        }
    }
    region.end.store(end, Release);
    region.delta_of.store(delta_of as usize, Release);
    if !counters_within(module, start, end) {
        // Never seen (zero-initialised globals are in writable segments),
        // but a thread must never count outside its block.
        region.shared.store(true, Release);
        // Safety: the object is being loaded.
        unsafe { point(region, 0) };
        crate::msg::Line::new()
            .text("module of build ")
            .hex(module.build_id)
            .text(
                " has counters outside its object's data; \
                 its object's threads count into shared counters",
            )
            .emit();
        return None;
    }
    if let Some(held) = held(true) {
        enter(region, held);
    }
    Some(start)
}

/// One module of the region of `module` went away (after its last write):
/// when it was the last, the object is gone and its delta variables with it.
pub(crate) fn retire_module(module: &PpModule) {
    if module.thread_delta.is_none() {
        return;
    }
    let Some(counter) = some_counter(module) else {
        return;
    };
    if let Some(r) = regions().find(|r| r.contains(counter, 8)) {
        let _ = r.live.fetch_update(AcqRel, Acquire, |n| n.checked_sub(1));
    }
}

/// The start of a thread started through the runtime's `pthread_create`: a
/// block of every region.
pub(crate) fn start_thread() {
    // The creator's GS base until a block sets it: counters themselves.
    if regions().any(|r| r.gs.load(Acquire)) {
        crate::segment::set_gs_base(0);
    }
    let Some(held) = held(true) else {
        return;
    };
    for region in regions().filter(|r| r.live.load(Acquire) > 0) {
        enter(region, held);
    }
}

/// The key's destructor: the thread ends; its delta goes back to 0 (code of
/// later destructors counts into the region) and its blocks are free. The C library calls the
/// destructors of a thread's keys in rounds, as long as one of them sets a
/// value again, at most `PTHREAD_DESTRUCTOR_ITERATIONS` times: this one
/// sets its value again until the last round, so that what the other keys'
/// destructors count is still the thread's.
extern "C" fn give_back(p: *mut c_void) {
    {
        // Safety: the key's values are `Held`s of this thread.
        let held = unsafe { &mut *p.cast::<Held>() };
        held.rounds += 1;
        if held.rounds < destructor_rounds() {
            if let Some(key) = key() {
                // Safety: this thread's own record, set again as its value.
                if unsafe { libc::pthread_setspecific(key, p) } == 0 {
                    return;
                }
            }
        }
    }
    // Safety: the key's values are boxed `Held`s, given up once (here).
    let Some(p) = ptr::NonNull::new(p.cast::<Held>()) else {
        return;
    };
    let held = unsafe { heap::unbox(p) };
    for &(region, block) in held.blocks.as_slice() {
        if region.live.load(Acquire) > 0 {
            // Safety: the object is loaded.
            unsafe { point(region, 0) };
        }
        block.busy.store(false, Release);
    }
}

/// In a fork child (one thread): the blocks of the parent's other threads
/// are free (their counts stay, marked written by `snapshot`).
pub(crate) fn after_fork_in_child() {
    let mine = held(false);
    let mine = mine.map_or(&[][..], |h| h.blocks.as_slice());
    for region in regions() {
        for b in region.blocks() {
            let held_here = mine.iter().any(|(_, m)| ptr::eq(*m, b));
            b.busy.store(held_here, Release);
        }
    }
}

/// The deltas of every copy of the counters at `[addr, addr + len)` bytes:
/// 0 (the counters themselves) and, if they lie in a region, each of its
/// blocks' that covers them. `f` is called once per copy.
pub(crate) fn copies(addr: usize, len: usize, mut f: impl FnMut(isize)) {
    f(0);
    let Some(end) = addr.checked_add(len) else {
        return;
    };
    if let Some(region) = regions().find(|r| r.contains(addr, len)) {
        for b in region.blocks().filter(|b| b.end >= end) {
            f(b.delta);
        }
    }
}
