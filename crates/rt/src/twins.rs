//! Thread-local slot twins: in an executable (x86-64, without atomic
//! updates), a module's slot array (`PpModule::slots`) has a local-exec
//! thread-local twin (`PpModule::thread_slots`) which the probes count
//! into: one `incq %fs:k` per probe, with no thread delta and no register
//! (inside a loop `incq %fs:k(,%reg,8)`, the register holding zero).
//! Every thread has its own twin, zeroed by the C library when the thread
//! starts and gone when it ends; this module makes their counts part of
//! what the runtime reads.
//!
//! * A twinned module ([`add_module`]) records the twin's offset from the
//!   thread pointer (the same in every thread: local-exec).
//! * A *counting* thread ([`enter`]: the thread that registers the
//!   executable's modules, and every thread started through the runtime's
//!   `pthread_create`) is listed by its thread pointer; a read of a slot
//!   (`threads::copies`) adds the twin of every counting thread.
//! * A thread that ends ([`leave`], from the thread-specific-data
//!   destructor that gives its blocks back) adds its twins to the slot
//!   arrays and leaves the list, both while no dump runs (under the dump
//!   lock), so a dump reads its counts once: in its twin or in the array.
//! * A fork child ([`after_fork_in_child`]) adds the twins of the parent's
//!   other threads (still mapped in the child, no longer running) to the
//!   arrays, so its sums stay what they were at the fork (and its marks
//!   with them).
//!
//! Not read: threads the runtime did not start (a raw `clone` with a thread
//! pointer of its own, a thread another library started before the runtime
//! was installed, bypassing its `pthread_create`), and what an ending thread
//! counts after pathprof's destructor (destructors of keys created after
//! it). Their slot counts are lost; build with `--atomic` where they
//! matter (no twins, every thread counts the arrays).

use crate::abi::PpModule;
use crate::list::List;
use crate::sums::any_count;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};

/// A module whose slots are counted in a thread-local twin.
struct Twinned {
    /// Its slot array, `[start, start + len)` bytes.
    start: usize,
    len: usize,
    /// The twin's address minus the thread pointer, in every thread.
    offset: isize,
}

impl Twinned {
    /// The twin of the array in the thread whose pointer is `tp`, as plain
    /// memory: only that thread counts in it, and it does not run while
    /// this is read (it is the caller, ending, or gone in a fork child).
    fn twin_of(&self, tp: usize) -> &'static [u64] {
        let at = tp.wrapping_add_signed(self.offset) as *const u64;
        // Safety: the thread's memory is mapped (it is alive, or this is a
        // fork child), its twin is `len` bytes of its static thread-local
        // data, 8-aligned like the array, and nothing writes it meanwhile
        // (see above).
        unsafe { core::slice::from_raw_parts(at, self.len / 8) }
    }

    /// The array itself.
    fn array(&self) -> &'static [AtomicU64] {
        // Safety: a registered module's slot array, which lives as long as
        // the executable.
        unsafe { core::slice::from_raw_parts(self.start as *const AtomicU64, self.len / 8) }
    }

    /// Adds the twin of thread `tp` (which does not run: see
    /// [`twin_of`](Self::twin_of)) to the array, eight counters at a time
    /// tested for zero first (most are).
    fn fold(&self, tp: usize) {
        let twin = self.twin_of(tp);
        let array = self.array();
        let add = |counters: &[AtomicU64], counts: &[u64]| {
            for (counter, &n) in counters.iter().zip(counts) {
                if n != 0 {
                    counter.fetch_add(n, Relaxed);
                }
            }
        };
        let (twin8, array8) = (twin.chunks_exact(8), array.chunks_exact(8));
        add(array8.remainder(), twin8.remainder());
        for (counters, eight) in array8.zip(twin8) {
            if any_count(eight) {
                add(counters, eight);
            }
        }
    }
}

/// A counting thread: its thread pointer, 0 while the entry is free.
pub(crate) struct Counting {
    tp: AtomicUsize,
}

static TWINNED: List<Twinned> = List::new();
static COUNTING: List<Counting> = List::new();

/// The calling thread's pointer (`%fs:0` on x86-64, the only target whose
/// modules have twins).
fn thread_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: usize;
        // Safety: reads the thread control block's self pointer.
        unsafe {
            core::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags))
        };
        tp
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// The bytes of every twin: what the C library carves out of each thread's
/// stack for them.
fn twin_bytes() -> usize {
    TWINNED.iter().map(|t| t.len).sum()
}

/// The attributes to start a thread with, given the program's `attr`: the
/// C library places a thread's static thread-local data (the twins among
/// it) in its stack, so a stack size the program chose (a small one would
/// not even hold the twins: `EINVAL`) gets the twins' bytes on top, in a
/// copy made in `copy`. A default stack, or one the program placed itself,
/// is left alone.
///
/// # Safety
/// `attr` is null or points to initialised attributes.
pub(crate) unsafe fn stack_with_room(
    attr: *const libc::pthread_attr_t,
    copy: &mut core::mem::MaybeUninit<libc::pthread_attr_t>,
) -> *const libc::pthread_attr_t {
    let extra = twin_bytes();
    if attr.is_null() || extra == 0 {
        return attr;
    }
    let (mut low, mut len, mut size) = (core::ptr::null_mut::<libc::c_void>(), 0, 0);
    // Safety: initialised attributes, by the contract. glibc gives a stack
    // the program did not place as ending at address 0 (its `stackaddr`,
    // the top, is null), and the default size when none was chosen.
    let placed = unsafe { libc::pthread_attr_getstack(attr, &mut low, &mut len) } != 0
        || low.wrapping_byte_add(len) as usize != 0;
    // Safety: as above.
    if placed || unsafe { libc::pthread_attr_getstacksize(attr, &mut size) } != 0 {
        return attr;
    }
    // Safety: a bitwise copy of glibc's attributes is attributes with the
    // same settings (their extension is shared, read only), and the copy's
    // size is only set, never destroyed.
    unsafe {
        let copy = copy.write(core::ptr::read(attr));
        if libc::pthread_attr_setstacksize(copy, size.saturating_add(extra)) != 0 {
            return attr;
        }
        copy
    }
}

/// Registers `module`'s twin, if it has one (true then).
pub(crate) fn add_module(module: &PpModule) -> bool {
    let Some(here) = module.thread_slots else {
        return false;
    };
    let tp = thread_pointer();
    let start = module.slots as usize;
    if tp == 0 || TWINNED.iter().any(|t| t.start == start) {
        return tp != 0;
    }
    // Safety: the module's own accessor, called in a thread of its process.
    let twin = unsafe { here() } as usize;
    TWINNED.push(Twinned {
        start,
        len: (module.num_slots as usize).saturating_mul(8),
        offset: twin.wrapping_sub(tp) as isize,
    });
    true
}

/// Lists the calling thread as counting (a free entry, or a new one).
pub(crate) fn enter() -> Option<&'static Counting> {
    let tp = thread_pointer();
    if tp == 0 {
        return None;
    }
    let free = COUNTING
        .iter()
        .find(|c| c.tp.compare_exchange(0, tp, AcqRel, Relaxed).is_ok());
    Some(free.unwrap_or_else(|| {
        COUNTING.push(Counting {
            tp: AtomicUsize::new(tp),
        })
    }))
}

/// The calling thread ends: its twins go into the arrays and it leaves the
/// list, while no dump runs.
pub(crate) fn leave(me: &'static Counting) {
    crate::dump::excluding_dumps(|| {
        let tp = me.tp.load(Acquire);
        for t in TWINNED.iter() {
            t.fold(tp);
        }
        me.tp.store(0, Release);
    });
}

/// In a fork child (one thread): the twins of every other thread go into
/// the arrays, and those threads leave the list.
pub(crate) fn after_fork_in_child() {
    let mine = thread_pointer();
    for c in COUNTING.iter() {
        let tp = c.tp.load(Acquire);
        if tp != 0 && tp != mine {
            for t in TWINNED.iter() {
                t.fold(tp);
            }
            c.tp.store(0, Release);
        }
    }
}

/// Calls `f` with the delta of every counting thread's twin of the slots
/// at `[addr, addr + len)` bytes, if they lie in a twinned array; returns
/// whether they do.
pub(crate) fn copies(addr: usize, len: usize, mut f: impl FnMut(isize)) -> bool {
    let Some(t) = TWINNED
        .iter()
        .find(|t| addr >= t.start && addr.saturating_add(len) <= t.start + t.len)
    else {
        return false;
    };
    for c in COUNTING.iter() {
        let tp = c.tp.load(Acquire);
        if tp != 0 {
            f(tp.wrapping_add_signed(t.offset).wrapping_sub(t.start) as isize);
        }
    }
    true
}
