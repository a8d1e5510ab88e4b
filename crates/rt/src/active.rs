//! One active runtime per process.
//!
//! Every instrumented shared library that `pathprof cc -shared` links has a
//! hidden copy of this runtime (`--exclude-libs`), and so has the
//! executable. Left alone, each copy would keep its own list of modules and
//! install its own hooks, so the executable's `_exit`, exec, `abort`, signal
//! handlers and `__pathprof_dump` would write only the executable's modules.
//! Instead the copies meet at one symbol:
//!
//! * The executable's link exports [`__pathprof_runtime_v1`] (the driver adds
//!   `-Wl,--export-dynamic-symbol=__pathprof_runtime_v1`), a [`Runtime`]
//!   table: a layout number, a fingerprint of the runtime build (the crate
//!   version and a hash of every runtime source file, see `build.rs`), and
//!   the entry points another copy forwards to.
//! * At its first registration, a copy looks the symbol up with
//!   `dlsym(RTLD_DEFAULT, …)` (the executable comes first in that search; the
//!   libraries' own copies are hidden). If it finds a table that is not its
//!   own, lies in the executable (which is never unloaded) and has the same
//!   layout and fingerprint, the copy *hands over*: its
//!   `__pathprof_register`, `__pathprof_fini` and `__pathprof_dump`, and the
//!   final write of its own interposed `_exit`/`_Exit`/`exec*`/`abort`/`daemon`
//!   (calls from the library's own code bind to its hidden copy of those) and
//!   its `pthread_create` (the new thread's counter blocks and count), go to
//!   the active runtime; it
//!   installs no hooks, exit or fork handlers or signal handlers and starts no
//!   thread. The module code keeps calling its own copy's
//!   `__pathprof_hash_count*`/`uncount`: the tables they make live in the
//!   module's `PpHashState` and in `mmap`ed memory, with no state of the copy
//!   outside them (no allocator, no global tallies: lost counts are a word of
//!   the state), so the active runtime (the same code, by the fingerprint)
//!   reads, marks and dumps them like its own.
//! * A copy that finds its own table is the active one. A copy that finds
//!   no table (the executable is not instrumented, or was linked without the
//!   export; a static executable, where `dlsym` finds nothing), one outside
//!   the executable, or one of another layout or fingerprint, works on its
//!   own (see the crate documentation, "Several copies of the runtime in one
//!   process", for what it writes and loses).
//!
//! The decision is taken once per copy, at its first registration, and is
//! kept for the life of the copy (a library's, until `dlclose`). Library
//! constructors run before the executable's, so the active runtime may be
//! entered through its table before its own module registered: registration
//! initialises the runtime lazily (settings, hooks) whichever way it comes.

use crate::abi::PpModule;
use crate::msg::Line;
use core::sync::atomic::{AtomicUsize, Ordering::*};

/// The layout of [`Runtime`]: its first three fields (`abi`, `size`,
/// `fingerprint`) stay where they are in every layout; the rest may change
/// with this number.
pub const RUNTIME_ABI: u32 = 2;

/// This build's fingerprint (`build.rs`): copies hand over only to a runtime
/// of the same fingerprint.
pub const FINGERPRINT: u64 = match u64::from_str_radix(env!("PATHPROF_RT_FINGERPRINT"), 16) {
    Ok(v) => v,
    Err(_) => panic!("PATHPROF_RT_FINGERPRINT is not a hexadecimal number"),
};

/// What a copy of the runtime offers the others (the symbol
/// [`__pathprof_runtime_v1`]).
#[repr(C)]
pub struct Runtime {
    /// [`RUNTIME_ABI`].
    pub abi: u32,
    /// `size_of::<Runtime>()`.
    pub size: u32,
    /// [`FINGERPRINT`].
    pub fingerprint: u64,
    /// Registers a module with this runtime (`__pathprof_register`'s work).
    pub register: unsafe extern "C" fn(*const PpModule),
    /// A module's last write and retirement (`__pathprof_fini`'s work).
    pub fini: unsafe extern "C" fn(*const PpModule),
    /// A dump of every module of this runtime: [`DUMP_CALL`] or [`DUMP_FINAL`].
    pub dump: extern "C" fn(u32),
    /// `pthread_create` for the program: the new thread gets its counter
    /// blocks (`threads`) and counts in the profile's facts.
    pub pthread_create: crate::interpose::CreateFn,
}

const _: () = assert!(core::mem::size_of::<Runtime>() == 48);

/// [`Runtime::dump`]: `__pathprof_dump()`.
pub const DUMP_CALL: u32 = 0;
/// [`Runtime::dump`]: the final write before `_exit`, exec or `abort`.
pub const DUMP_FINAL: u32 = 1;

/// The rendezvous symbol: exported by the executable, hidden in shared
/// libraries.
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static __pathprof_runtime_v1: Runtime = Runtime {
    abi: RUNTIME_ABI,
    size: core::mem::size_of::<Runtime>() as u32,
    fingerprint: FINGERPRINT,
    register: crate::register_here,
    fini: crate::fini_here,
    dump: dump_here,
    pthread_create: crate::interpose::create_program_thread,
};

extern "C" fn dump_here(how: u32) {
    own();
    let trigger = if how == DUMP_FINAL {
        crate::dump::Trigger::Final
    } else {
        crate::dump::Trigger::Call
    };
    crate::dump::dump(trigger);
}

/// Not decided yet.
const UNDECIDED: usize = 0;
/// This copy does the work itself (it is the active runtime, or it works on
/// its own).
const HERE: usize = 1;

/// [`UNDECIDED`], [`HERE`], or the address of the active runtime's table.
static ROUTE: AtomicUsize = AtomicUsize::new(UNDECIDED);

fn ours() -> *const Runtime {
    &__pathprof_runtime_v1
}

/// The table at `p` if a copy can hand over to it: not ours, same layout,
/// same fingerprint. Says why not (with `PATHPROF_VERBOSE=1`) otherwise.
fn usable(p: *const Runtime) -> Option<&'static Runtime> {
    // Only the executable's runtime is handed over to: it is never unloaded.
    // (A library linked by hand without `--exclude-libs` exports its table
    // too; it could be `dlclose`d under us.)
    if p.is_null() || core::ptr::eq(p, ours()) || !p.is_aligned() || !in_main_program(p.cast()) {
        return None;
    }
    // Safety: the symbol names a table of the stable header at least (every
    // layout starts with `abi`, `size`, `fingerprint`), in the executable,
    // which stays mapped as long as the process runs.
    let (abi, size, fingerprint) = unsafe { ((*p).abi, (*p).size, (*p).fingerprint) };
    if abi == RUNTIME_ABI
        && size as usize == core::mem::size_of::<Runtime>()
        && fingerprint == FINGERPRINT
    {
        // Safety: the same layout, checked above.
        return Some(unsafe { &*p });
    }
    if crate::registry::verbose() {
        Line::new()
            .text("the program's pathprof runtime is of another build (runtime fingerprint ")
            .hex(fingerprint)
            .text(", table ")
            .num(abi.into())
            .text("; this copy: ")
            .hex(FINGERPRINT)
            .text(", table ")
            .num(RUNTIME_ABI.into())
            .text("): this object's modules are written on their own")
            .emit();
    }
    None
}

/// Whether `addr` lies in the main executable: `dladdr` gives it the base of
/// the object `AT_PHDR` (the program's headers) lies in.
fn in_main_program(addr: *const libc::c_void) -> bool {
    let base = |a: *const libc::c_void| {
        // Safety: a zeroed Dl_info is valid; dladdr only fills it.
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // Safety: dladdr looks `a` up without touching it.
        (unsafe { libc::dladdr(a, &mut info) } != 0).then_some(info.dli_fbase)
    };
    // Safety: getauxval has no preconditions.
    let phdr = unsafe { libc::getauxval(libc::AT_PHDR) } as *const libc::c_void;
    !phdr.is_null() && base(phdr).is_some_and(|b| !b.is_null() && base(addr) == Some(b))
}

/// Where this copy's registrations go: `Some(active)` to hand them over,
/// `None` to do the work here. Decided at the first call (the first
/// registration), then kept.
pub(crate) fn route() -> Option<&'static Runtime> {
    match ROUTE.load(Acquire) {
        UNDECIDED => {}
        HERE => return None,
        p => {
            // Safety: only usable tables are stored.
            return Some(unsafe { &*(p as *const Runtime) });
        }
    }
    // Safety: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the
    // executable first, then the libraries (whose copies are hidden).
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__pathprof_runtime_v1".as_ptr()) };
    let found = usable(p.cast());
    let value = found.map_or(HERE, |rt| rt as *const Runtime as usize);
    match ROUTE.compare_exchange(UNDECIDED, value, AcqRel, Acquire) {
        Ok(_) => found,
        // Decided meanwhile (another thread, or this copy became active by
        // a call through its table): that stands.
        Err(_) => forwarded(),
    }
}

/// The active runtime this copy handed over to, if it did (never decides:
/// a copy that has not registered anything yet works on its own).
pub(crate) fn forwarded() -> Option<&'static Runtime> {
    match ROUTE.load(Acquire) {
        UNDECIDED | HERE => None,
        // Safety: only usable tables are stored.
        p => Some(unsafe { &*(p as *const Runtime) }),
    }
}

/// Called through our table: another copy handed over to this one, which is
/// therefore the active runtime.
pub(crate) fn own() {
    let _ = ROUTE.compare_exchange(UNDECIDED, HERE, AcqRel, Acquire);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_ours_and_names_this_build() {
        let t = &__pathprof_runtime_v1;
        assert_eq!(t.abi, RUNTIME_ABI);
        assert_eq!(t.size as usize, core::mem::size_of::<Runtime>());
        assert_eq!(t.fingerprint, FINGERPRINT);
        assert_ne!(FINGERPRINT, 0);
        // Our own table is never one to hand over to.
        assert!(usable(ours()).is_none());
        assert!(usable(core::ptr::null()).is_none());
    }

    const fn table(abi: u32, size: u32, fingerprint: u64) -> Runtime {
        Runtime {
            abi,
            size,
            fingerprint,
            register: crate::register_here,
            fini: crate::fini_here,
            dump: dump_here,
            pthread_create: crate::interpose::create_program_thread,
        }
    }
    const SIZE: u32 = core::mem::size_of::<Runtime>() as u32;
    static SAME: Runtime = table(RUNTIME_ABI, SIZE, FINGERPRINT);
    static OTHER_BUILD: Runtime = table(RUNTIME_ABI, SIZE, FINGERPRINT ^ 1);
    static OTHER_LAYOUT: Runtime = table(RUNTIME_ABI + 1, SIZE, FINGERPRINT);
    static OTHER_SIZE: Runtime = table(RUNTIME_ABI, SIZE + 8, FINGERPRINT);

    #[test]
    fn only_a_table_of_this_build_in_the_executable_is_handed_over_to() {
        // In the executable (this test program), of this build and layout.
        assert!(usable(&SAME).is_some());
        for t in [&OTHER_BUILD, &OTHER_LAYOUT, &OTHER_SIZE] {
            assert!(usable(t).is_none());
        }
        // The same table outside the executable (a library's could be
        // unloaded): refused.
        let elsewhere: &'static Runtime =
            Box::leak(Box::new(table(RUNTIME_ABI, SIZE, FINGERPRINT)));
        assert!(usable(elsewhere).is_none());
    }
}
