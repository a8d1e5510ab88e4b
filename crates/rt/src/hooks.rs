//! When dumps happen and what a fork does: the `atexit` and `at_quick_exit`
//! handler, the SIGUSR1 handler, the fatal-signal handlers, the periodic dump
//! thread and the `pthread_atfork` child handler, installed once, at the
//! first registration (with the interposed calls of `interpose`).
//!
//! A signal is taken only if its disposition is still the default (a program
//! that installed a handler, or ignores the signal, keeps it; one that
//! installs a handler later replaces ours).
//!
//! * SIGUSR1: dump and go on. The handler runs with `SA_RESTART`, so a
//!   system call it interrupts is restarted, and keeps `errno`.
//! * SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGPIPE, SIGALRM, SIGTERM, and the
//!   faults SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGXCPU, SIGXFSZ (whose
//!   default action ends the process): a final dump, then the default action
//!   is restored and the signal raised again, so the process dies by the
//!   same signal (exit status, core dump) as it would have without pathprof.
//!   A fault from a stack overflow cannot run the handler (no alternate
//!   stack is installed): it ends the process without a dump.
//! * `PATHPROF_DUMP_INTERVAL=N`: a thread of the runtime (all signals
//!   blocked, not counted among the program's threads) dumps every N
//!   seconds; a fork child starts its own.

use crate::dump::{self, Trigger};
use crate::msg::Line;
use crate::once::Once;
use crate::registry;
use crate::{interpose, os, process, snapshot};
use core::ffi::c_void;
use pathprof_format::live as live_layout;

/// The signals whose default action ends the process and which get a final
/// dump: those sent to end it, and the faults (a crash writes what was counted
/// up to it; the faulting instruction runs again once the default action is
/// back, and the process dies by it).
const FATAL: [libc::c_int; 14] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGABRT,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGSYS,
    libc::SIGXCPU,
    libc::SIGXFSZ,
];

extern "C" {
    fn at_quick_exit(f: extern "C" fn()) -> libc::c_int;
}

static INSTALL: Once = Once::new();

/// Installs the handlers (once per process).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        process::install();
        interpose::resolve_all();
        // Safety: registering plain extern "C" functions of ours; failure
        // only means no dump at exit or after fork resets, never a crash.
        unsafe {
            libc::atexit(on_exit);
            at_quick_exit(on_exit);
            libc::pthread_atfork(None, None, Some(on_fork_child));
        }
        take_signal(libc::SIGUSR1, on_sigusr1);
        for sig in FATAL {
            take_signal(sig, on_fatal);
        }
        start_interval_thread();
    });
}

/// Installs `handler` for `sig` if `sig` still has its default action.
fn take_signal(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // Safety: sigaction with a null new action only reads the current one
    // into a zeroed struct of ours.
    let mut old: libc::sigaction = unsafe { core::mem::zeroed() };
    // Safety: as above.
    if unsafe { libc::sigaction(sig, core::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    // Safety: a zeroed sigaction is a valid start; sigemptyset initialises the mask.
    let mut sa: libc::sigaction = unsafe { core::mem::zeroed() };
    sa.sa_sigaction = handler as usize;
    sa.sa_flags = libc::SA_RESTART;
    // Safety: the mask is ours; installing a handler of ours.
    unsafe {
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, core::ptr::null_mut());
    }
}

extern "C" fn on_exit() {
    crate::live::set_ending(live_layout::ENDING_EXIT);
    dump::dump(Trigger::Exit);
    crate::live::finish();
}

/// A signal whose default action ends the process: write, then die by it.
extern "C" fn on_fatal(sig: libc::c_int) {
    let saved = os::errno();
    crate::live::set_ending(live_layout::ENDING_SIGNAL + sig as u64);
    dump::dump(Trigger::Final);
    // It is blocked while its handler runs: pending until the unblock, then
    // its default action ends the process.
    os::raise_with_default_action(sig);
    // Still alive (the signal was blocked elsewhere, or is handled now):
    // go on as a handler that returns.
    os::set_errno(saved);
}

/// Starts the periodic dump thread if `PATHPROF_DUMP_INTERVAL` asks for one.
fn start_interval_thread() {
    let Some(cfg) = registry::config() else {
        return;
    };
    if cfg.interval_s == 0 {
        return;
    }
    let mut tid: libc::pthread_t = 0;
    // Safety: an uncounted thread of ours running `interval_main`, detached;
    // failure only means no periodic dumps.
    unsafe {
        if interpose::create_thread(
            &mut tid,
            core::ptr::null(),
            interval_main,
            core::ptr::null_mut(),
        ) == 0
        {
            libc::pthread_detach(tid);
        }
    }
}

extern "C" fn interval_main(_: *mut c_void) -> *mut c_void {
    // Every signal blocked in this thread of ours, so the program's
    // signals go to its own threads.
    os::block_all_signals();
    if let Some(cfg) = registry::config() {
        loop {
            os::sleep_us(cfg.interval_s.saturating_mul(1_000_000));
            dump::dump(Trigger::Interval);
        }
    }
    core::ptr::null_mut()
}

extern "C" fn on_sigusr1(_sig: libc::c_int) {
    let saved = os::errno();
    dump::dump(Trigger::Signal);
    os::set_errno(saved);
}

/// In a fork child: everything counted so far is the parent's to write, so
/// the child's marks start at its counters (see `snapshot`); the process is
/// marked a fork child with no threads started (for the profile's facts).
/// The child has one thread here.
extern "C" fn on_fork_child() {
    process::on_fork_child();
    // Before any mark is set: the child's own live file (continuous mode).
    let live = crate::live::after_fork_in_child();
    if !live {
        Line::new()
            .text("fork child: no live file of its own; continuous mode is off in it")
            .emit();
    }
    crate::threads::after_fork_in_child();
    registry::forget_all_writes();
    for node in registry::nodes() {
        snapshot::cut_after_fork(node);
    }
    for node in registry::nodes() {
        if !snapshot::mark_all_written(node) {
            node.retire();
            Line::new()
                .text(
                    "fork child: no memory to set its counts apart from its parent's; \
                     build ",
                )
                .hex(node.module().build_id)
                .text(" writes nothing from this process")
                .emit();
        }
    }
    crate::live::publish();
    dump::reset_after_fork();
    start_interval_thread();
}
