//! Dumping: one dump at a time per process, for every registered module,
//! taken from `atexit`, the SIGUSR1 handler, `__pathprof_dump()`.
//!
//! The dump lock is an atomic word holding the dumping thread's id. A dump
//! requested while another runs is never waited for from a signal handler
//! (and never by the thread that holds the lock, which a signal handler of
//! the program may have interrupted): it sets `PENDING`, and the dumping
//! thread runs once more before it lets go. Exit and explicit dumps from
//! other threads wait for the lock, then dump themselves.

use crate::mem::MapVec;
use crate::msg::{Errno, Line};
use crate::names;
use crate::output::{self, Outcome, WriteError};
use crate::registry::{self, Config, Node};
use crate::snapshot::{self, SnapshotError};
use pathprof_format::ProfileView;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

/// Who asked for the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The atexit handler.
    Exit,
    /// The SIGUSR1 handler.
    Signal,
    /// `__pathprof_dump()`.
    Call,
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
    let me = thread_id();
    let signal = trigger == Trigger::Signal;
    loop {
        if signal {
            PENDING.store(true, SeqCst);
        }
        match OWNER.compare_exchange(0, me, SeqCst, SeqCst) {
            Ok(_) => break,
            Err(owner) if signal || owner == me => {
                PENDING.store(true, SeqCst);
                return;
            }
            Err(_) => crate::os::sleep_us(200),
        }
    }
    loop {
        PENDING.store(false, SeqCst);
        dump_all();
        OWNER.store(0, SeqCst);
        if !PENDING.load(SeqCst) || OWNER.compare_exchange(0, me, SeqCst, SeqCst).is_err() {
            return;
        }
    }
}

/// A fork child starts with no dump running (the parent's dumping thread,
/// if any, does not exist in the child).
pub(crate) fn reset_after_fork() {
    OWNER.store(0, SeqCst);
    PENDING.store(false, SeqCst);
}

fn dump_all() {
    let Some(cfg) = registry::config() else {
        return;
    };
    let mut path = MapVec::new();
    let mut side = MapVec::new();
    let mut lost = 0u64;
    for node in registry::nodes() {
        dump_module(cfg, node, &mut path, &mut side);
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

fn dump_module(cfg: &Config, node: &Node, path: &mut MapVec<u8>, side: &mut MapVec<u8>) {
    let m = node.module();
    let snap = match snapshot::take(node) {
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
    let functions = ProfileView::parse(snap.bytes.as_slice()).map_or(0, |v| v.num_functions());
    if !names::profile_path(cfg, m, path) {
        Line::new()
            .text(format_args!(
                "out of memory naming the profile; counts kept for the next dump"
            ))
            .emit();
        return;
    }
    match output::write_merged(path.as_slice(), snap.bytes.as_slice()) {
        Ok(outcome) => {
            snapshot::commit(&snap);
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
            match output::write_merged(side.as_slice(), snap.bytes.as_slice()) {
                Ok(_) => {
                    snapshot::commit(&snap);
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
