//! When dumps happen and what a fork does: the `atexit` handler, the SIGUSR1
//! handler, and the `pthread_atfork` child handler, installed once, at the
//! first registration.
//!
//! SIGUSR1 is taken only if its disposition is still the default (a program
//! that installed a handler, or ignores the signal, keeps it; one that
//! installs a handler later replaces ours). The handler runs with
//! `SA_RESTART`, so a system call it interrupts is restarted, and keeps
//! `errno`.

use crate::dump::{self, Trigger};
use crate::registry;
use crate::{hash, os};
use std::panic::catch_unwind;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Once;

static INSTALL: Once = Once::new();

/// Installs the handlers (once per process).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        // Safety: registering plain extern "C" functions of ours; failure
        // only means no dump at exit or after fork resets, never a crash.
        unsafe {
            libc::atexit(on_exit);
            libc::pthread_atfork(None, None, Some(on_fork_child));
        }
        install_sigusr1();
    });
}

fn install_sigusr1() {
    // Safety: sigaction with a null new action only reads the current one
    // into a zeroed struct of ours.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // Safety: as above.
    if unsafe { libc::sigaction(libc::SIGUSR1, std::ptr::null(), &mut old) } != 0
        || old.sa_sigaction != libc::SIG_DFL
    {
        return;
    }
    // Safety: a zeroed sigaction is a valid start; sigemptyset initialises the mask.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_sigusr1 as extern "C" fn(libc::c_int) as usize;
    sa.sa_flags = libc::SA_RESTART;
    // Safety: the mask is ours; installing a handler of ours for SIGUSR1.
    unsafe {
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
}

extern "C" fn on_exit() {
    let _ = catch_unwind(|| dump::dump(Trigger::Exit));
}

extern "C" fn on_sigusr1(_sig: libc::c_int) {
    let saved = os::errno();
    let _ = catch_unwind(|| dump::dump(Trigger::Signal));
    os::set_errno(saved);
}

/// Zeroes every counter in a fork child, so pre-fork counts are written once,
/// by the parent. The child has one thread here.
extern "C" fn on_fork_child() {
    let _ = catch_unwind(|| {
        for node in registry::nodes() {
            // Safety: registered modules are valid and live forever.
            for f in unsafe { node.module().functions() } {
                if !f.is_valid() {
                    continue;
                }
                // Safety: `f` is valid; the child's only thread is here, so
                // resetting the hash state cannot race with a count.
                unsafe {
                    f.slot_counters().iter().for_each(|c| c.store(0, Relaxed));
                    f.array_counters().iter().for_each(|c| c.store(0, Relaxed));
                    if let Some(state) = f.hash_state() {
                        hash::reset(state);
                    }
                }
            }
            node.reset_shadow();
        }
        dump::reset_after_fork();
    });
}
