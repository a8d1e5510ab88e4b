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
//! A dump writes ONE file, `$PATHPROF_FILE`, in one locked
//! read-merge-rename (`output`): the counts of every registered module,
//! each in the section of its build (its `build_id`), sections in build id
//! order. Two modules of one build (the same translation unit linked into an
//! executable and a library) are added into one section. Each section also
//! names the object the module was loaded from (found at registration, see
//! `registry::object_of`; only copied here).
//!
//! A *final* dump (at exit, `_exit`, exec, `abort`, a fatal signal) counts
//! the process in the facts of every section it writes, the first time a
//! write to that build's section succeeds; later ones (the exit of a
//! process whose exec failed) write only new counts. Nothing is counted
//! twice: the counts of every dump are marked written (`snapshot`) once the
//! file is written, and a failed write marks nothing (the counts are kept
//! for the next dump). A module with nothing new whose build's section this
//! process already wrote is left out, and a dump with nothing new at all
//! leaves the file alone. In a process that is not the one the runtime was
//! installed in or forked into (a `vfork` child, which shares its parent's
//! memory) dumps do nothing: the parent writes those counts.

use crate::mem::MapVec;
use crate::msg::Line;
use crate::names;
use crate::output::{self, Outcome, WriteError};
use crate::registry::{self, Config, Node};
use crate::snapshot::{self, Commit, SnapshotError};
use crate::{os, process};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use pathprof_format::{merge_into, Encoder, Facts, FormatError, ProfileView};

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
    // The runtime's interval thread counts nothing and keeps its creator's
    // GS base.
    if !matches!(trigger, Trigger::Interval) {
        crate::threads::check_gs_base();
    }
    dump_locked(trigger);
    os::restore_signals(&old);
}

/// The last write of a module that goes away (its destructor: at exit after
/// the program's own destructors and the `atexit` dump, or at `dlclose`):
/// writes what it (and only it) counted since the last dump as a final
/// write (the process counts once in its build's section, as at exit), then
/// retires it so no later dump or fork handler reads its counters.
pub(crate) fn retire(node: &'static Node) {
    if !process::is_ours() {
        return;
    }
    with_dump_lock(|locked| {
        // Not locked: this thread is inside a dump already (a destructor
        // run from within one cannot happen; be safe): retire without
        // writing.
        if let (true, Some(cfg)) = (locked, registry::config()) {
            let mut nodes = MapVec::new();
            if nodes.push(node) {
                dump_nodes(cfg, &nodes, true);
            }
        }
        node.retire();
    });
}

/// Runs `f(locked)` with every signal blocked, holding the dump lock
/// (`locked`), or without it in a thread that is inside a dump already;
/// then runs the dumps asked for meanwhile and lets go.
fn with_dump_lock(f: impl FnOnce(bool)) {
    let old = os::block_all_signals();
    let me = thread_id();
    let locked = lock(me, false);
    f(locked);
    if locked {
        unlock_and_repeat_pending(me, false);
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
    let mut nodes: MapVec<&'static Node> = MapVec::new();
    let mut lost = 0u64;
    for node in registry::nodes() {
        if !nodes.push(node) {
            Line::new()
                .text("out of memory listing the modules; counts kept for the next dump")
                .emit();
            return;
        }
        lost = lost.saturating_add(snapshot::lost(node));
    }
    dump_nodes(cfg, &nodes, last);
    let reported = LOST_REPORTED.swap(lost, SeqCst);
    if lost > reported {
        Line::new()
            .num(lost - reported)
            .text(" path executions were not counted: no memory for hash tables")
            .emit();
    }
}

fn write_error(l: &mut Line, e: &WriteError) {
    match e {
        WriteError::Io { op, errno } => l.text("cannot ").text(op).text(" it: ").errno(*errno),
        WriteError::Busy => l.text("another process held its lock for more than 30 s"),
        WriteError::Foreign(f) => l.error(f),
        WriteError::Memory => l.text("out of memory"),
        WriteError::Link { owner: Some(uid) } => l
            .text("it is a symbolic link of user ")
            .num((*uid).into())
            .text(
                " in a world-writable sticky directory, which \
                 pathprof does not follow (the kernel's protected_symlinks rule)",
            ),
        WriteError::Link { owner: None } => {
            l.text("it is a symbolic link, which pathprof does not follow there")
        }
    };
}

/// A NUL-terminated name without its NUL, for messages.
fn shown(p: &MapVec<u8>) -> &[u8] {
    let s = p.as_slice();
    s.strip_suffix(&[0]).unwrap_or(s)
}

/// One section a dump writes, for the verbose message.
#[derive(Clone, Copy)]
struct Written {
    build_id: u64,
    /// Function records with new counts or resumes.
    functions: u64,
}

/// What one dump writes: the file, and what to mark once it is on disk.
struct Batch {
    /// The encoded profile file (one section per build).
    file: MapVec<u8>,
    /// How to mark every count in the file written.
    log: MapVec<Commit>,
    /// The modules whose news the file holds, and whether the process is
    /// counted in their build's section.
    nodes: MapVec<(&'static Node, bool)>,
    /// The sections, in file order.
    sections: MapVec<Written>,
    /// The thread count the facts were computed from.
    threads_seen: u64,
}

/// Why a build's section could not be put together.
enum GroupError {
    Snapshot(SnapshotError),
    /// Two modules of one build could not be added (another mode, or a
    /// function of another shape).
    Merge(FormatError),
}

impl From<SnapshotError> for GroupError {
    fn from(e: SnapshotError) -> Self {
        GroupError::Snapshot(e)
    }
}

fn encoder_error(e: FormatError) -> SnapshotError {
    match e {
        FormatError::OutOfSpace { .. } => SnapshotError::Memory,
        other => SnapshotError::Format(other),
    }
}

/// The facts a dump adds to the section of `build_id`: with `last` (a final
/// dump) the process counts once (as a fork child if it is one) unless it
/// already did there; threads started since the section's last write count
/// in any dump.
fn facts(build_id: u64, last: bool, threads_seen: u64) -> Facts {
    let processes = u64::from(last && !registry::process_written(build_id));
    Facts {
        processes,
        forked: u64::from(processes == 1 && process::forked()),
        threads: threads_seen.saturating_sub(registry::threads_written(build_id)),
        ..Facts::default()
    }
}

/// Encodes the news of `group` (modules of one build) as a file of one
/// section: each module as a section of its own, added up with
/// `merge_into` (usually there is one). `facts` go in once.
fn encode_group(
    group: &[&'static Node],
    facts: Facts,
    log: &mut MapVec<Commit>,
) -> Result<MapVec<u8>, GroupError> {
    let mut acc: MapVec<u8> = MapVec::new();
    for (k, node) in group.iter().enumerate() {
        let mut e = Encoder::new(MapVec::new());
        e.begin_section(node.build_id(), node.mode());
        if k == 0 {
            e.facts(facts);
        }
        if let Some(object) = node.object() {
            e.object(object);
        }
        snapshot::take(node, &mut e, log)?;
        let one = e.finish().map_err(encoder_error)?;
        if k == 0 {
            acc = one;
            continue;
        }
        let (Ok(a), Ok(b)) = (
            ProfileView::parse_own(acc.as_slice()),
            ProfileView::parse_own(one.as_slice()),
        ) else {
            return Err(GroupError::Snapshot(SnapshotError::Format(
                FormatError::InvalidInput {
                    what: "the runtime encoded a section it cannot read back",
                },
            )));
        };
        acc = match merge_into(&a, &b, MapVec::new()) {
            Ok(m) => m,
            Err(FormatError::OutOfSpace { .. }) => return Err(SnapshotError::Memory.into()),
            Err(e) => return Err(GroupError::Merge(e)),
        };
    }
    Ok(acc)
}

/// Puts together the file a dump of `nodes` writes: their news, one section
/// per build. `None` when there is nothing to write (nothing new, and every
/// module's build's section written before by this process). A build whose
/// section cannot be put together is left out with a warning (its counts
/// are kept for the next dump).
fn collect(nodes: &mut [&'static Node], last: bool) -> Option<Batch> {
    nodes.sort_unstable_by_key(|n| n.build_id());
    let threads_seen = process::threads();
    let mut batch = Batch {
        file: MapVec::new(),
        log: MapVec::new(),
        nodes: MapVec::new(),
        sections: MapVec::new(),
        threads_seen,
    };
    let mut out = Encoder::new(MapVec::new());
    let mut any = false;
    let mut rest: &[&'static Node] = nodes;
    while let Some(first) = rest.first() {
        let build_id = first.build_id();
        let n = rest.iter().take_while(|m| m.build_id() == build_id).count();
        let (group, more) = rest.split_at(n);
        rest = more;
        let facts = facts(build_id, last, threads_seen);
        let log_mark = batch.log.as_slice().len();
        let section = match encode_group(group, facts, &mut batch.log) {
            Ok(s) => s,
            Err(e) => {
                batch.log.truncate(log_mark);
                let mut l = Line::new();
                l.text("could not collect the counts of build ")
                    .hex(build_id)
                    .text(": ");
                match e {
                    GroupError::Snapshot(SnapshotError::Memory) => l.text("out of memory"),
                    GroupError::Snapshot(SnapshotError::Format(f)) | GroupError::Merge(f) => {
                        l.error(&f)
                    }
                };
                l.text("; they are kept for the next dump").emit();
                continue;
            }
        };
        let news = batch.log.as_slice().len() > log_mark || facts != Facts::default();
        if !news && group.iter().all(|n| n.wrote.load(SeqCst)) {
            continue;
        }
        let Some(view) = ProfileView::parse_own(section.as_slice())
            .ok()
            .and_then(|v| v.sections().next())
        else {
            batch.log.truncate(log_mark);
            continue;
        };
        out.copy_section(&view);
        let written = Written {
            build_id,
            functions: view.num_functions(),
        };
        let counted = facts.processes != 0;
        let mut ok = batch.sections.push(written);
        for &node in group {
            ok &= batch.nodes.push((node, counted));
        }
        if !ok {
            Line::new()
                .text("out of memory; counts kept for the next dump")
                .emit();
            return None;
        }
        any = true;
    }
    if !any {
        return None;
    }
    match out.finish() {
        Ok(file) => {
            batch.file = file;
            Some(batch)
        }
        Err(e) => {
            let mut l = Line::new();
            l.text("could not put the profile together: ");
            match encoder_error(e) {
                SnapshotError::Memory => l.text("out of memory"),
                SnapshotError::Format(f) => l.error(&f),
            };
            l.text("; counts kept for the next dump").emit();
            None
        }
    }
}

/// Marks everything `batch` holds as written.
fn commit(batch: &Batch) {
    snapshot::commit(batch.log.as_slice());
    for (w, value) in record_moves(batch) {
        // Safety: words of module records in the arena, mapped for good.
        unsafe { (*w).store(value, SeqCst) };
    }
    for &(node, counted) in batch.nodes.as_slice() {
        if counted {
            node.process_written.store(true, SeqCst);
        }
        node.threads_written.store(batch.threads_seen, SeqCst);
        node.wrote.store(true, SeqCst);
    }
}

/// What [`commit`] changes in the live file's module records (continuous
/// mode): the process counted, the threads written.
fn record_moves(batch: &Batch) -> impl Iterator<Item = crate::live::Move> + Clone + '_ {
    use crate::registry::{RECORD_FLAGS, RECORD_THREADS_WRITTEN};
    batch
        .nodes
        .as_slice()
        .iter()
        .flat_map(move |&(node, counted)| {
            let flags = node.record_word(RECORD_FLAGS).map(|w| {
                let counted = if counted {
                    pathprof_format::live::MODULE_COUNTED
                } else {
                    0
                };
                (w as *const AtomicU64, w.load(SeqCst) | counted)
            });
            let threads = node
                .record_word(RECORD_THREADS_WRITTEN)
                .map(|w| (w as *const AtomicU64, batch.threads_seen));
            flags.into_iter().chain(threads)
        })
}

/// The journal and the commit of one write, under the profile's lock
/// (`output::Around`): the moves go in the journal before the rename and
/// are made after it.
struct Committing<'a>(&'a Batch);

impl output::Around for Committing<'_> {
    fn before(&mut self, checksum: u64) {
        let log = self.0.log.as_slice().iter().flat_map(Commit::moves);
        if !crate::live::journal(log.chain(record_moves(self.0)), checksum) {
            Line::new()
                .text("continuous mode: no room for the journal of this write in the live file")
                .emit();
        }
    }

    fn after(&mut self) {
        commit(self.0);
        crate::live::journal_done();
    }
}

/// Writes the news of `nodes` (and only theirs) into the profile file, or a
/// side file when the profile must not be touched; marks them written on
/// success.
fn dump_nodes(cfg: &Config, nodes: &MapVec<&'static Node>, last: bool) {
    let mut sorted: MapVec<&'static Node> = MapVec::new();
    if !sorted.extend_from_slice(nodes.as_slice()) {
        return;
    }
    let Some(batch) = collect(sorted.as_mut_slice(), last) else {
        return;
    };
    let mut path = MapVec::new();
    if !names::profile_path(cfg, &mut path) {
        Line::new()
            .text("out of memory naming the profile; counts kept for the next dump")
            .emit();
        return;
    }
    let delay = cfg.write_delay_us;
    let mut around = Committing(&batch);
    match output::write_merged(
        path.as_slice(),
        batch.file.as_slice(),
        delay,
        true,
        &mut around,
    ) {
        Ok(outcome) => {
            if cfg.verbose {
                let how = match outcome {
                    Outcome::Created => "wrote",
                    Outcome::Merged => "merged into",
                    Outcome::Streamed => "streamed to",
                };
                let mut l = Line::new();
                l.text(how).text(" ").bytes(shown(&path));
                sections_written(&mut l, &batch);
                l.emit();
            }
        }
        Err(first @ (WriteError::Foreign(_) | WriteError::Busy | WriteError::Link { .. })) => {
            let mut l = Line::new();
            l.text("left ").bytes(shown(&path));
            l.text(" untouched: ");
            write_error(&mut l, &first);
            let mut side = MapVec::new();
            if !names::side_path(path.as_slice(), &mut side) {
                l.text("; out of memory, counts kept for the next dump")
                    .emit();
                return;
            }
            match output::write_merged(
                side.as_slice(),
                batch.file.as_slice(),
                delay,
                false,
                &mut around,
            ) {
                Ok(_) => {
                    l.text("; wrote this run's counts to ").bytes(shown(&side));
                }
                Err(e) => {
                    l.text("; could not write ").bytes(shown(&side));
                    l.text(" either (");
                    write_error(&mut l, &e);
                    l.text("); counts kept for the next dump");
                }
            }
            l.emit();
        }
        Err(e) => {
            let mut l = Line::new();
            l.text("could not write profile ").bytes(shown(&path));
            l.text(": ");
            write_error(&mut l, &e);
            l.text("; counts kept for the next dump").emit();
        }
    }
}

/// Names the sections of `batch` (the first few) in a verbose message:
/// ` (build 00c0ffee00000002: 1 function with new counts; build …)`.
fn sections_written(l: &mut Line, batch: &Batch) {
    const SHOWN: usize = 8;
    let sections = batch.sections.as_slice();
    l.text(" (");
    for (i, w) in sections.iter().take(SHOWN).enumerate() {
        let sep = if i == 0 { "" } else { "; " };
        let s = if w.functions == 1 { "" } else { "s" };
        l.text(sep)
            .text("build ")
            .hex(w.build_id)
            .text(": ")
            .num(w.functions)
            .text(" function")
            .text(s)
            .text(" with new counts");
    }
    if sections.len() > SHOWN {
        l.text("; ")
            .num((sections.len() - SHOWN) as u64)
            .text(" more builds");
    }
    l.text(")");
}
