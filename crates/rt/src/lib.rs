//! # pathprof-rt: the runtime linked into profiled programs
//!
//! Implements the C ABI of `docs/formats.md` section 2:
//!
//! ```c
//! void __pathprof_register(const struct PpModule *m);         // from a constructor
//! void __pathprof_fini(const struct PpModule *m);             // from a destructor
//! void __pathprof_hash_count(uint64_t *state, uint64_t id);   // one execution of path id
//! void __pathprof_hash_count_atomic(uint64_t *state, uint64_t id); // the same, exact across threads
//! void __pathprof_hash_count_cached(uint64_t *state, uint64_t *slot, uint64_t id); // an inline cache's miss
//! void __pathprof_hash_count_cached_atomic(uint64_t *state, uint64_t *slot, uint64_t id);
//! void __pathprof_hash_uncount(uint64_t *state, uint64_t id); // undo one (Call sites)
//! void __pathprof_dump(void);                                 // write (merge) now
//! ```
//!
//! Link a program with `libpathprof_rt.a -lpthread -ldl` (with glibc ≥ 2.34
//! both are part of libc anyway). The archive is this crate without std
//! (`#![no_std]` on libc, built with the `archive` feature under the
//! workspace's `runtime` profile: panic=abort, fat LTO), so every symbol but
//! the C ABI and the functions it interposes is local and C, C++ and Rust
//! programs link the same archive.
//!
//! ## Environment
//!
//! * `PATHPROF_FILE`: the profile's name (default `default.pprof`), with `%p`
//!   (process id), `%h` (host name) and `%%` expanded at each dump; a
//!   relative name is relative to the working directory at dump time. Read
//!   once, at the first registration.
//! * `PATHPROF_VERBOSE=1`: one line on stderr per file written.
//! * `PATHPROF_DUMP_INTERVAL=N`: also write every N seconds (a thread of the
//!   runtime, started at the first registration and again in each fork
//!   child, all signals blocked, not counted in the profile's `threads`),
//!   for programs that may be killed with SIGKILL: such a process loses only
//!   what it counted since the last write. Each write that has something
//!   new rewrites the profile file, so choose N in seconds to minutes.
//! * `PATHPROF_CONTINUOUS=1`: continuous mode (`live`): every counter a
//!   thread counts into lives in the process's live file beside the
//!   profile, mapped shared, so a process killed by SIGKILL loses nothing;
//!   the next writer merges the live files of killed processes (`dead`).
//!   Unset (or empty), the default of the first module registered is
//!   taken (`pathprof cc --continuous`); another value (`0`) turns it off.
//! * `PATHPROF_TEST_WRITE_DELAY_US=N` (for tests): pause N µs twice while
//!   holding a profile's lock, to widen the window in which a writer can be
//!   killed.
//!
//! ## What happens
//!
//! * **Registration** (`registry`): modules (a program, its shared
//!   libraries, or each translation unit) register from their constructors,
//!   with the process's active runtime (`active`: the executable's, when a
//!   library's copy of the runtime finds it);
//!   the first registration reads `PATHPROF_FILE` and `PATHPROF_VERBOSE` and
//!   installs the hooks (`hooks`). Each registration also finds the file
//!   the module was loaded from (`dladdr`, or `/proc/self/exe` for the main
//!   executable), which its section of the profile names.
//! * **Counting**: slot and array counters are the program's own globals,
//!   counted per thread (`threads`: each thread the runtime starts, and the
//!   one that loads an object, counts into a copy of its own, and dumps
//!   read the sum, `sums`); hash-table paths go through `hash` (lock-free,
//!   re-entrant from signal handlers, unbounded; each thread's copy of a
//!   hash state is a table of its own).
//! * **Uncounting**: with early-exit counting, the instrumented code counts
//!   the path in progress before each call that might not return and takes
//!   the count back when the call returns (`-1` on its own counters,
//!   `__pathprof_hash_uncount` for hash-table paths), so a count survives only
//!   in a process that ended inside the call (`exit`, `longjmp` out of it). A
//!   count written before its undo (a dump during the call, or a fork child
//!   returning from a call its parent was in at the fork) cannot be taken
//!   out of the file: the undo is written as a *resume* of that counter
//!   instead (see `snapshot`), and readers subtract it.
//! * **Dumps** (`dump`) at normal exit (`atexit`, `at_quick_exit`), before
//!   `_exit`, `_Exit`, every `exec*` and `abort` (`interpose`), on SIGHUP,
//!   SIGINT, SIGQUIT, SIGABRT, SIGPIPE, SIGALRM and SIGTERM when they have
//!   their default action (write, then restore it and raise the signal
//!   again: the process dies by it as it would have), on `SIGUSR1` (the
//!   program keeps running), on `__pathprof_dump()`, and periodically with
//!   `PATHPROF_DUMP_INTERVAL`: the counts every module added since the last
//!   dump (`snapshot`), each in the section of its build (one section per
//!   build id; modules of one build added into one), are merged into the one
//!   file (`names`, `output`) in one write, under an exclusive `flock`,
//!   through a temporary file renamed over it, so a writer killed at any
//!   point (SIGKILL) leaves the previous file intact and no lock held. A
//!   section of a build the file does not hold yet is inserted; any number
//!   of programs and libraries write into one file. An existing file of an
//!   older format version, or a damaged one, is never overwritten: the
//!   counts go to a side file named in a one-line warning on stderr starting
//!   `pathprof:`.
//! * **Process facts** (`process`): the first *final* write of a process
//!   (exit, `_exit`, exec, abort, fatal signal) into a build's section
//!   counts the process there (`processes`, and `forked` for a fork child),
//!   in every section it writes; the threads the program started through
//!   `pthread_create` (taken over by the runtime and forwarded) are added by
//!   any write. A failed exec's process goes on;
//!   its later writes add only new counts and do not count it again. A
//!   `vfork` child (same memory as its parent) writes nothing.
//! * **Not written**: what a process counted since its last write when it is
//!   killed by SIGKILL, dies by a fault (SIGSEGV, SIGBUS, …), or dies by a
//!   signal whose handler the program installed and which does not exit
//!   through `exit`/`_exit`. Use SIGUSR1 or `PATHPROF_DUMP_INTERVAL` for
//!   programs that are killed.
//!   Nothing is printed on success (unless `PATHPROF_VERBOSE=1`), stdout and
//!   the exit status are never touched.
//! * **Reset**: after a dump the counters count from zero for the next one.
//!   The reset is logical: the runtime never writes the program's counters
//!   (it records, per counter, how much has been written, and writes the
//!   difference next time), which keeps dumps exact under concurrent and
//!   interrupted increments. A failed write keeps the counts for the next dump.
//! * **fork**: the child marks everything its counters hold as written
//!   (`pthread_atfork`), so what was counted before the fork is written once,
//!   by the parent; the child is marked a fork child. (A child made by a raw `clone` or `_Fork`, which
//!   run no fork handlers, writes nothing.)
//! * **Exit**: the `atexit` handler is registered by the first registration
//!   (a constructor), so it runs after the exit handlers and C++ static
//!   destructors registered later, and sees their counts. Destructors in
//!   `.fini_array` (`__attribute__((destructor))`) run after it; each
//!   module's own destructor, the last of its object, writes what they
//!   counted (`__pathprof_fini`).
//!
//! ## SIGUSR1: what is and is not guaranteed
//!
//! The handler is installed at the first registration, and only if SIGUSR1
//! still has its default disposition (a program's own handler, or SIG_IGN,
//! is kept; a handler the program installs later replaces ours).
//!
//! Guaranteed:
//! * The dump runs inside the handler, so it happens even while the program
//!   is blocked in a system call; the handler has `SA_RESTART` (reads,
//!   writes, waits on pipes and sockets resume) and preserves `errno`. Calls
//!   Linux never restarts (`nanosleep`, `poll`, `select`, `epoll_wait`, …)
//!   return `EINTR`, as for any handled signal.
//! * No `malloc` (dump memory is `mmap`ed, see `mem`; a test counts the
//!   malloc family around a dump), no stdio, no lock the program can hold:
//!   the only lock is the runtime's own dump try-lock, never waited for in the
//!   handler. System calls used: `open`, `flock`, `fstat`, `stat`, `lstat`,
//!   `readlink`, `pread`, `pwrite`, `fchmod`, `fchown`, `rename`, `unlink`,
//!   `getdents64`, `kill(pid, 0)`, `fallocate`, `ftruncate` (those two only
//!   when the directory is closed to temporary files), `close`, `mmap`,
//!   `munmap`, `nanosleep`, `uname`, `getpid`, `rt_sigprocmask`, `write` to
//!   fd 2 (warnings only).
//! * Exact counts: the dumper only reads counters (it remembers what it
//!   wrote, see `snapshot`), so an increment the signal interrupts is neither
//!   lost nor written twice; a test sends ~1,500 SIGUSR1 into a hot loop and
//!   checks the exact total. After the dump the program continues; the next
//!   dump writes only what was counted since.
//!
//! Not guaranteed:
//! * A SIGUSR1 that arrives while a dump is running (in any thread, also the
//!   one the signal interrupts) does not dump by itself: the running dump
//!   repeats once when it finishes, so the counts are written shortly after,
//!   not before the handler returns.
//! * `flock`, `fallocate`, `mmap`, `readlink`, `fchown` and `uname` are not
//!   on POSIX's async-signal-safe list (on Linux they are plain system calls).
//! * The handler can block while another process holds the profile's lock;
//!   after 30 s it gives up on that file and writes a side file.
//! * With early-exit counting, a dump counts every call in progress as an
//!   execution that ended there (that is what a dump at exit must do). For a
//!   SIGUSR1 or explicit dump the program then goes on, the calls return,
//!   and the next dump writes those undos as resumes, so the final profile
//!   is exact; a profile read between the two shows the calls in progress as
//!   ended there.
//! * A shared library's counts made in code another object's destructors
//!   run after that library's own destructor are lost (`dlclose` writes and
//!   retires the library's module; see `registry`).
//!
//! ## Taking over libc calls
//!
//! See `interpose`: `_exit`, `_Exit`, `execve`, `execv`, `execvp`,
//! `execvpe`, `execl`, `execle`, `execlp`, `fexecve`, `abort`,
//! `pthread_create` (which gives each new thread its counter blocks first)
//! and `daemon` are defined by the runtime as weak symbols (x86-64 and
//! AArch64), so an executable linked with it uses them without linker flags,
//! and a static link whose C library brings strong definitions still links.
//! The runtime's other exported names all start with `__pathprof`. In a
//! fully static executable the C library's `pthread_create` is kept out of
//! the link, so thread creation fails there (with a warning): link programs
//! that start threads dynamically.
//!
//! ## Several builds in one process
//!
//! Every module writes into the one file, in the section of its build:
//! each dump writes all of them at once, and a module's destructor
//! (`__pathprof_fini`, at exit or `dlclose`) writes that module only.
//!
//! ## Several copies of the runtime in one process
//!
//! Each instrumented shared library links a hidden copy of this static
//! library (`pathprof cc -shared` passes `--exclude-libs`), and so does the
//! executable. One of them is the *active* runtime (`active`): the
//! executable's, which its link exports as `__pathprof_runtime_v1`. The
//! libraries' copies find it at their first registration and hand over
//! (registration, last writes, `__pathprof_dump`, the final write of the
//! library's own `_exit`/exec/`abort` calls, its thread count): one list of
//! modules, one set of hooks, one fork handler, one interval thread, and
//! every dump writes every module of the process. Library constructors run
//! before the executable's, so the active runtime starts (settings, hooks)
//! at whichever registration reaches it first.
//!
//! A copy that finds no such runtime, because the executable is not
//! instrumented (a plain test driver, `python` loading an instrumented
//! extension), was linked without the export (by hand, or with the symbol
//! hidden by `--exclude-libs,ALL` or a version script), is static, or was
//! linked with the runtime of another pathprof build (another fingerprint),
//! works on its own, into the same file through the same locking: its
//! modules are written at normal exit and `quick_exit` (its own exit
//! handlers), by their destructors (exit, `dlclose`), by `__pathprof_dump()`
//! and `_exit`/`_Exit`/exec/`abort`/`daemon` called from that library's own
//! code, by its own interval thread, and by SIGUSR1 and the fatal signals
//! (SIGABRT also from another object's `abort`) only if this copy registered
//! first among those that install handlers (a signal has one handler; the
//! others find it taken). Lost: what it counted since its last write when
//! the process ends by `_exit`, `_Exit` or exec called from any other object
//! (a forked child's usual `_exit`), or by a signal another copy took. Fork
//! handling is exact in every copy.

#![cfg_attr(not(test), no_std)]

pub mod abi;
pub mod active;
mod dead;
mod dump;
mod hash;
mod heap;
mod hooks;
mod interpose;
mod list;
mod live;
mod mem;
mod msg;
mod names;
mod once;
mod os;
mod output;
mod process;
mod registry;
mod segment;
mod snapshot;
mod sums;
mod threads;

use abi::PpModule;

/// A panic (a bug in the runtime) in the archive linked into programs: one
/// line on stderr, then `abort` (the archive is built with `panic=abort`
/// and without std, whose panic machinery would be most of its size).
#[cfg(feature = "archive")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    Line::new()
        .text("internal error in the runtime (a bug: please report it); aborting")
        .emit();
    // Safety: no preconditions.
    unsafe { libc::abort() }
}
use core::sync::atomic::AtomicU64;
use msg::Line;

/// Registers an instrumented module; called from its constructor. Modules of
/// another ABI version and null pointers are ignored (with a warning). In a
/// copy of the runtime that handed over to the process's active runtime
/// (`active`), the module is registered there.
///
/// # Safety
/// `m` is null or points to a `PpModule` whose function table and counters
/// live until the process exits.
#[no_mangle]
pub unsafe extern "C" fn __pathprof_register(m: *const PpModule) {
    match active::route() {
        // Safety: the active runtime's entry point, with our caller's module.
        Some(rt) => unsafe { (rt.register)(m) },
        // Safety: as for this function.
        None => unsafe { register_here(m) },
    }
}

/// A module built with `--continuous` registered in a process whose first
/// module was not, and the runtime said so (once per process, not per
/// module: every translation unit of a build is one).
static CONTINUOUS_DEFAULT_REFUSED: core::sync::atomic::AtomicBool =
    core::sync::atomic::AtomicBool::new(false);

/// The registration itself, in this copy (also the entry point of our
/// `active::Runtime` table): the first one reads the settings and installs
/// the hooks.
///
/// # Safety
/// As for [`__pathprof_register`].
pub(crate) unsafe extern "C" fn register_here(m: *const PpModule) {
    active::own();
    // Safety: by the contract, `m` is null or a live module.
    let Some(module) = (unsafe { m.as_ref() }) else {
        return;
    };
    if !module.is_valid() {
        Line::new()
            .text("ignoring a module of build ")
            .hex(module.build_id)
            .text(": it was built for runtime ABI ")
            .num(module.abi_version.into())
            .text(" (this runtime speaks ")
            .num(abi::ABI_VERSION.into())
            .text(") or its function table is broken; rebuild it with this pathprof")
            .emit();
        return;
    }
    // Safety: the module is valid and lives forever.
    let bad = unsafe { module.functions() }
        .iter()
        .filter(|f| !f.is_valid())
        .count();
    if bad > 0 {
        Line::new()
            .text("module of build ")
            .hex(module.build_id)
            .text(": ")
            .num(bad as u64)
            .text(" function entries are malformed; their counts are ignored")
            .emit();
    }
    let cfg = registry::init_config(module.continuous_by_default());
    if cfg.continuous {
        live::start(cfg);
    } else if module.continuous_by_default()
        && !cfg.continuous_from_env
        && !CONTINUOUS_DEFAULT_REFUSED.swap(true, core::sync::atomic::Ordering::Relaxed)
    {
        Line::new()
            .text("module of build ")
            .hex(module.build_id)
            .text(" was built with --continuous, but the process's first instrumented module was not: continuous mode is off (build them alike, or set PATHPROF_CONTINUOUS=1)")
            .emit();
    }
    if registry::add(m, registry::object_of(m)) {
        hooks::install();
    }
    let region = threads::add_module(module);
    if live::on() {
        if let Some(node) = registry::find(m).filter(|n| n.record_word(0).is_none()) {
            match region {
                Some(start) => snapshot::record_live(node, start),
                None => Line::new()
                    .text("continuous mode: build ")
                    .hex(module.build_id)
                    .text(" counts into counters shared by all threads, which are not in the live file; its counts are written at exit and on signals only")
                    .emit(),
            }
        }
    }
}

/// The module's last write, from its destructor (`llvm.global_dtors`,
/// priority 0: after the program's own destructors, at exit or at
/// `dlclose`): what it counted since the last dump is written, then the
/// runtime forgets the module, whose counters may be unmapped next. A module
/// that is not registered is ignored. In a copy that handed over, the active
/// runtime does this.
///
/// # Safety
/// `m` is null or a module passed to [`__pathprof_register`], still mapped.
#[no_mangle]
pub unsafe extern "C" fn __pathprof_fini(m: *const PpModule) {
    match active::forwarded() {
        // Safety: the active runtime's entry point, with our caller's module.
        Some(rt) => unsafe { (rt.fini)(m) },
        // Safety: as for this function.
        None => unsafe { fini_here(m) },
    }
}

/// The last write and retirement, in this copy (also an entry point of our
/// `active::Runtime` table).
///
/// # Safety
/// As for [`__pathprof_fini`].
pub(crate) unsafe extern "C" fn fini_here(m: *const PpModule) {
    if let Some(node) = registry::find(m) {
        dump::retire(node);
        threads::retire_module(node.module());
    }
}

/// Counts one execution of path `id` in a hash-table function.
///
/// # Safety
/// `state` is null or points to the function's 64-byte, 8-aligned,
/// zero-initialised `PpHashState`, which lives forever and is used by nothing
/// but this runtime.
///
/// The count itself is a plain (relaxed load and store) saturating increment,
/// like array counters without `--atomic`: instrumented code passes its
/// thread's copy of the state (`threads`), so only threads sharing counters
/// (ones the runtime did not start) can lose a count. The table itself is
/// always thread-safe.
#[no_mangle]
pub unsafe extern "C" fn __pathprof_hash_count(state: *mut u64, id: u64) {
    // Safety: by the contract.
    if let Some(state) = unsafe { hash_state(state) } {
        hash::count(state, id, 1, hash::Update::Plain);
    }
}

/// The `PpHashState` at `state`, unless it is null or misaligned.
///
/// # Safety
/// As for [`__pathprof_hash_count`].
unsafe fn hash_state<'a>(state: *mut u64) -> Option<&'a [AtomicU64; 8]> {
    // Safety: by the contract; AtomicU64 has the layout of u64.
    (!state.is_null() && state.is_aligned()).then(|| unsafe { &*state.cast::<[AtomicU64; 8]>() })
}

/// Counts one execution of path `id` in a hash-table function whose
/// instrumented code keeps an inline cache (docs/formats.md §2): `slot` is the
/// cache word `id` hashes to, which held no entry or another id's. The
/// count goes to the id's entry as with [`__pathprof_hash_count`], and the
/// entry's address, less the address of the cache's base word (the word
/// after the state, which stays 0), is left in `slot` (the entry's first
/// word is `id + 1`, its second the count), so the next execution of `id`
/// counts inline, unless the slot's entry has run more often than `id`'s
/// (it stays: a rare path never evicts a hot one).
///
/// # Safety
/// As for [`__pathprof_hash_count`]; `slot` is null or an 8-aligned word
/// the instrumented code reads entry addresses from and nothing else writes.
#[no_mangle]
pub unsafe extern "C" fn __pathprof_hash_count_cached(state: *mut u64, slot: *mut u64, id: u64) {
    // Safety: by the contract.
    unsafe { count_cached(state, slot, id, hash::Update::Plain) }
}

/// [`__pathprof_hash_count_cached`] with atomic updates (exact across
/// threads).
///
/// # Safety
/// As for [`__pathprof_hash_count_cached`].
#[no_mangle]
pub unsafe extern "C" fn __pathprof_hash_count_cached_atomic(
    state: *mut u64,
    slot: *mut u64,
    id: u64,
) {
    // Safety: by the contract.
    unsafe { count_cached(state, slot, id, hash::Update::Atomic) }
}

/// # Safety
/// As for [`__pathprof_hash_count_cached`].
unsafe fn count_cached(state: *mut u64, slot: *mut u64, id: u64, update: hash::Update) {
    // Safety: by the contract.
    let Some(state) = (unsafe { hash_state(state) }) else {
        return;
    };
    if slot.is_null() || !slot.is_aligned() {
        return hash::count(state, id, 1, update);
    }
    // Safety: by the contract; AtomicU64 has the layout of u64.
    let slot = unsafe { &*slot.cast::<AtomicU64>() };
    // The cache's base word follows the state (docs/formats.md §2).
    let base = state.as_ptr_range().end as u64;
    hash::count_cached(state, base, slot, id, 1, update);
}

/// [`__pathprof_hash_count`] for programs instrumented with atomic updates: the
/// count is a compare-and-swap loop, exact across threads.
///
/// # Safety
/// As for [`__pathprof_hash_count`].
#[no_mangle]
pub unsafe extern "C" fn __pathprof_hash_count_atomic(state: *mut u64, id: u64) {
    // Safety: by the contract.
    if let Some(state) = unsafe { hash_state(state) } {
        hash::count(state, id, 1, hash::Update::Atomic);
    }
}

/// Undoes one [`__pathprof_hash_count`] of path `id` (after a call returned,
/// docs/formats.md §1 `Call` sites): the count goes down by one, but never below
/// zero and never from `u64::MAX` (saturated); an id with no count is left
/// alone.
///
/// # Safety
/// As for [`__pathprof_hash_count`].
#[no_mangle]
pub unsafe extern "C" fn __pathprof_hash_uncount(state: *mut u64, id: u64) {
    // Safety: by the contract.
    if let Some(state) = unsafe { hash_state(state) } {
        hash::uncount(state, id);
    }
}

/// Writes (merges) every registered module's new counts now; the counts
/// then start again from zero for the next dump. In a copy that handed over,
/// the active runtime writes every module of the process.
#[no_mangle]
pub extern "C" fn __pathprof_dump() {
    match active::forwarded() {
        Some(rt) => (rt.dump)(active::DUMP_CALL),
        None => {
            dump::dump(dump::Trigger::Call);
        }
    }
}
