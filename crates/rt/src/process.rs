//! What the runtime knows about the process it runs in, for the profile's
//! facts (`pathprof_format::Facts`): which process it is (so a `vfork` child,
//! which shares our memory, writes nothing), whether it is a fork child, and
//! how many threads the program started.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The pid the runtime was installed in (updated in fork children); 0 before.
static PID: AtomicU32 = AtomicU32::new(0);
/// This process is a fork child (set by the `pthread_atfork` child handler).
static FORKED: AtomicBool = AtomicBool::new(false);
/// Threads the program started with `pthread_create` in this process.
static THREADS: AtomicU64 = AtomicU64::new(0);

/// Records the process the runtime runs in (at installation).
pub(crate) fn install() {
    PID.store(crate::os::pid(), Relaxed);
}

/// In a fork child: a new process, a fork child, no threads started yet.
pub(crate) fn on_fork_child() {
    PID.store(crate::os::pid(), Relaxed);
    FORKED.store(true, Relaxed);
    THREADS.store(0, Relaxed);
}

/// Whether the calling process is the one whose counters these are: false
/// in a `vfork` child (or a child of a raw `clone`/`_Fork`, which runs no
/// fork handlers), which must leave the writing to its parent.
pub(crate) fn is_ours() -> bool {
    let pid = PID.load(Relaxed);
    pid == 0 || pid == crate::os::pid()
}

/// Whether this process is a fork child.
pub(crate) fn forked() -> bool {
    FORKED.load(Relaxed)
}

/// One more thread started by the program.
pub(crate) fn note_thread() {
    let n = THREADS.fetch_add(1, Relaxed) + 1;
    crate::live::set_header(pathprof_format::live::header::THREADS, n);
}

/// Threads the program started in this process.
pub(crate) fn threads() -> u64 {
    THREADS.load(Relaxed)
}
