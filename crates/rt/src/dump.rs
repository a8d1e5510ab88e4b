//! Dumping: one dump at a time per process, for every registered module,
//! taken from `atexit` (and `at_quick_exit`), the SIGUSR1 handler,
//! `__pathprof_dump()`, the periodic dump thread, and before the process
//! ends otherwise (`_exit`, exec, `abort`, a fatal signal: see `interpose`
//! and `hooks`).
//!
//! The dump lock is an atomic word holding the dumping thread's id. A SIGUSR1
//! dump requested while another runs is never waited for (it runs in a
//! signal handler, maybe on the thread that holds the lock): it sets
//! `PENDING`, and the dumping thread runs once more before it lets go. Other
//! dumps from other threads wait for the lock, then dump themselves. While a
//! thread dumps, every signal is blocked in it, so no handler of ours or of
//! the program runs on top of a dump in that thread: a fatal signal that
//! arrives meanwhile is handled right after the dump, and its own dump then
//! finds only what is new.
//!
//! A *final* dump (at exit, `_exit`, exec, `abort`, a fatal signal) counts
//! the process in each profile's facts the first time one succeeds; later
//! ones (the exit of a process whose exec failed) write only new counts.
//! Nothing is counted twice: the counts of every dump are marked written
//! (`snapshot`). A dump with nothing new for a file this process already
//! wrote leaves the file alone. In a process that is not the one the runtime
//! was installed in or forked into (a `vfork` child, which shares its
//! parent's memory) dumps do nothing: the parent writes those counts.

use crate::mem::MapVec;
use crate::msg::{Errno, Line};
use crate::names;
use crate::output::{self, Outcome, WriteError};
use crate::registry::{self, Config, Node};
use crate::snapshot::{self, SnapshotError};
use crate::{os, process};
use pathprof_format::ProfileView;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

/// Who asked for the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The atexit (or at_quick_exit) handler.
    Exit,
    /// The SIGUSR1 handler.
    Signal,
    /// `__pathprof_dump()`.
    Call,
    /// The periodic dump thread (`PATHPROF_DUMP_INTERVAL`).
    Interval,
    /// The process ends or replaces its image without `exit`: `_exit`,
    /// `_Exit`, exec, `abort`, a fatal signal.
    Final,
}

impl Trigger {
    /// Whether the process ends after this dump (it then counts in the facts).
    fn is_final(self) -> bool {
        matches!(self, Trigger::Exit | Trigger::Final)
    }
}

/// The id of the thread dumping, 0 if none.
static OWNER: AtomicU64 = AtomicU64::new(0);
/// A dump was asked for while one was running.
static PENDING: AtomicBool = AtomicBool::new(false);
/// Hash counts dropped for lack of memory that were already reported.
static LOST_REPORTED: AtomicU64 = AtomicU64::new(0);

fn thread_id() -> u64 {
    // Safety: pthread_self cannot fail (it reads the thread pointer).
    (unsafe { libc::pthread_self() } as u64).max(1)
}

/// Writes every registered module's new counts now (see the module doc for
/// what happens when a dump is already running).
pub(crate) fn dump(trigger: Trigger) {
    if !process::is_ours() {
        return;
    }
    let old = os::block_all_signals();
    dump_locked(trigger);
    os::restore_signals(&old);
}

/// The last write of a module that goes away (its destructor: at exit after
/// the program's own destructors and the `atexit` dump, or at `dlclose`):
/// writes what it counted since the last dump as a final write (the process
/// counts once in its file, as at exit), then retires it so no later dump or
/// fork handler reads its counters.
pub(crate) fn retire(node: &Node) {
    if !process::is_ours() {
        return;
    }
    let old = os::block_all_signals();
    if lock(thread_id(), false) {
        if let Some(cfg) = registry::config() {
            let mut path = MapVec::new();
            let mut side = MapVec::new();
            dump_module(cfg, node, true, &mut path, &mut side);
        }
        node.retire();
        unlock_and_repeat_pending(thread_id(), false);
    } else {
        // This thread is inside a dump already (a destructor run from
        // within one cannot happen; be safe): retire without writing.
        node.retire();
    }
    os::restore_signals(&old);
}

/// Takes the dump lock for thread `me`. A signal dump never waits: if the
/// lock is taken it asks the holder to repeat and returns false; so does a
/// thread that already holds it.
fn lock(me: u64, signal: bool) -> bool {
    loop {
        if signal {
            PENDING.store(true, SeqCst);
        }
        match OWNER.compare_exchange(0, me, SeqCst, SeqCst) {
            Ok(_) => return true,
            Err(owner) if signal || owner == me => {
                PENDING.store(true, SeqCst);
                return false;
            }
            Err(_) => os::sleep_us(200),
        }
    }
}

/// Lets go of the dump lock, first running the dumps asked for meanwhile.
fn unlock_and_repeat_pending(me: u64, last: bool) {
    OWNER.store(0, SeqCst);
    while PENDING.load(SeqCst) && OWNER.compare_exchange(0, me, SeqCst, SeqCst).is_ok() {
        PENDING.store(false, SeqCst);
        dump_all(last);
        OWNER.store(0, SeqCst);
    }
}

fn dump_locked(trigger: Trigger) {
    let me = thread_id();
    if !lock(me, trigger == Trigger::Signal) {
        return;
    }
    let last = trigger.is_final();
    PENDING.store(false, SeqCst);
    dump_all(last);
    unlock_and_repeat_pending(me, last);
}

/// A fork child starts with no dump running (the parent's dumping thread,
/// if any, does not exist in the child).
pub(crate) fn reset_after_fork() {
    OWNER.store(0, SeqCst);
    PENDING.store(false, SeqCst);
}

fn dump_all(last: bool) {
    let Some(cfg) = registry::config() else {
        return;
    };
    let mut path = MapVec::new();
    let mut side = MapVec::new();
    let mut lost = 0u64;
    for node in registry::nodes() {
        dump_module(cfg, node, last, &mut path, &mut side);
        lost = lost.saturating_add(snapshot::lost(node));
    }
    let reported = LOST_REPORTED.swap(lost, SeqCst);
    if lost > reported {
        Line::new()
            .text(format_args!(
                "{} path executions were not counted: no memory for hash tables",
                lost - reported
            ))
            .emit();
    }
}

fn write_error(l: &mut Line, e: &WriteError) {
    match e {
        WriteError::Io { op, errno } => l.text(format_args!("cannot {op} it: {}", Errno(*errno))),
        WriteError::Busy => l.text(format_args!(
            "another process held its lock for more than 30 s"
        )),
        WriteError::Foreign(f) => l.text(format_args!("{f}")),
        WriteError::Memory => l.text(format_args!("out of memory")),
    };
}

/// A NUL-terminated name without its NUL, for messages.
fn shown(p: &MapVec<u8>) -> &[u8] {
    let s = p.as_slice();
    s.strip_suffix(&[0]).unwrap_or(s)
}

fn dump_module(
    cfg: &Config,
    node: &Node,
    last: bool,
    path: &mut MapVec<u8>,
    side: &mut MapVec<u8>,
) {
    let m = node.module();
    let snap = match snapshot::take(node, last) {
        Ok(s) => s,
        Err(e) => {
            let mut l = Line::new();
            l.text(format_args!(
                "could not collect the counts of build {:016x}: ",
                m.build_id
            ));
            match e {
                SnapshotError::Memory => l.text(format_args!("out of memory")),
                SnapshotError::Format(f) => l.text(format_args!("{f}")),
            };
            l.text(format_args!("; they are kept for the next dump"))
                .emit();
            return;
        }
    };
    if snap.empty && node.wrote.load(SeqCst) {
        return;
    }
    let functions = ProfileView::parse(snap.bytes.as_slice()).map_or(0, |v| v.num_functions());
    if !names::profile_path(cfg, m, path) {
        Line::new()
            .text(format_args!(
                "out of memory naming the profile; counts kept for the next dump"
            ))
            .emit();
        return;
    }
    let delay = cfg.write_delay_us;
    match output::write_merged(path.as_slice(), snap.bytes.as_slice(), delay) {
        Ok(outcome) => {
            snapshot::commit(node, &snap);
            if cfg.verbose {
                let how = match outcome {
                    Outcome::Created => "wrote",
                    Outcome::Merged => "merged into",
                    Outcome::Streamed => "streamed to",
                };
                Line::new()
                    .text(format_args!("{how} "))
                    .bytes(shown(path))
                    .text(format_args!(
                        " ({functions} functions with new counts, build {:016x})",
                        m.build_id
                    ))
                    .emit();
            }
        }
        Err(first @ (WriteError::Foreign(_) | WriteError::Busy)) => {
            let mut l = Line::new();
            l.text(format_args!("left ")).bytes(shown(path));
            l.text(format_args!(" untouched: "));
            write_error(&mut l, &first);
            if !names::side_path(path.as_slice(), side) {
                l.text(format_args!(
                    "; out of memory, counts kept for the next dump"
                ))
                .emit();
                return;
            }
            match output::write_merged(side.as_slice(), snap.bytes.as_slice(), delay) {
                Ok(_) => {
                    snapshot::commit(node, &snap);
                    l.text(format_args!("; wrote this run's counts to "))
                        .bytes(shown(side));
                }
                Err(e) => {
                    l.text(format_args!("; could not write "))
                        .bytes(shown(side));
                    l.text(format_args!(" either ("));
                    write_error(&mut l, &e);
                    l.text(format_args!("); counts kept for the next dump"));
                }
            }
            l.emit();
        }
        Err(e) => {
            let mut l = Line::new();
            l.text(format_args!("could not write profile "))
                .bytes(shown(path));
            l.text(format_args!(": "));
            write_error(&mut l, &e);
            l.text(format_args!("; counts kept for the next dump"))
                .emit();
        }
    }
}
