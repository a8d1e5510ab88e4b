//! Continuous mode (`PATHPROF_CONTINUOUS=1`): the process's live file and
//! the arena mapped from it (layout: `pathprof_format::live`).
//!
//! At the first registration the runtime creates `<profile>.<pid>-<16 hex
//! digits>.live` beside the profile (the name absolute, as the profile's
//! was then), takes an exclusive `flock` on it for the life of the process
//! (a reader that gets the lock knows the process is gone) and maps
//! [`RESERVE`] bytes of it `MAP_SHARED` at an address the kernel picks:
//! the arena. Everything the runtime would map for counting goes there
//! instead, handed out with a bump pointer (lock-free, also from signal
//! handlers): threads' counter blocks (`threads`), their hash tables
//! (`hash`), the modules' marks (`registry`) and the records saying what is
//! where. The file grows by one `pwrite` of a zero byte at the end of each
//! allocation; pages never touched take no disk (a sparse file).
//!
//! Each write of the profile puts its commits in the arena's journal first
//! (see the layout's doc), so a process killed at any point of any write is
//! merged exactly once by the next reader.
//!
//! A fork child copies the arena into a live file of its own and maps that
//! over the same addresses before anything else (`after_fork_in_child`), so
//! nothing it counts reaches its parent's file; what the parent's other
//! threads were allocating meanwhile is cut off where it lies past the
//! child's bump pointer. The live file is closed at exec (`O_CLOEXEC`) and
//! removed by the process's last write at exit.

use crate::mem::MapVec;
use crate::msg::Line;
use crate::os::{self, Fd};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering::*};
use pathprof_format::live::{self as layout, header};

/// Address space reserved for the arena (64 GiB; only what is used is
/// backed, by the file).
const RESERVE: usize = 1 << 36;

/// The arena's address; 0 when continuous mode is off.
static BASE: AtomicUsize = AtomicUsize::new(0);
/// The arena's next free offset.
static BUMP: AtomicUsize = AtomicUsize::new(0);
/// The live file (locked), -1 when none.
static FD: AtomicI32 = AtomicI32::new(-1);
/// The journal's address and capacity in entries (only the dumper uses it).
static JOURNAL: AtomicUsize = AtomicUsize::new(0);
static JOURNAL_CAP: AtomicUsize = AtomicUsize::new(0);

/// The live file's name, NUL-terminated (set at start and in a fork child,
/// one thread each time; read by the last write).
struct Name(UnsafeCell<[u8; 4096]>);
// Safety: written only while the process has one thread (the first
// registration, a fork child's handler), read after.
unsafe impl Sync for Name {}
static NAME: Name = Name(UnsafeCell::new([0; 4096]));

/// Whether continuous mode is on (the arena is mapped).
pub(crate) fn on() -> bool {
    BASE.load(Acquire) != 0
}

/// Whether `addr` lies in the arena.
pub(crate) fn contains(addr: usize) -> bool {
    let base = BASE.load(Acquire);
    base != 0 && addr >= base && addr < base + BUMP.load(Acquire)
}

fn word(off: usize) -> &'static AtomicU64 {
    // Safety: the header lies in the arena, mapped for good, 8-aligned.
    unsafe { &*((BASE.load(Acquire) + off) as *const AtomicU64) }
}

/// Sets header word `off` (no effect when continuous mode is off).
pub(crate) fn set_header(off: usize, value: u64) {
    if on() {
        word(off).store(value, Release);
    }
}

/// Says how the process is ending (`layout::ENDING_EXIT`,
/// `layout::ENDING_SIGNAL` + the signal, 0 running again), for a reader of
/// the live file should the process be killed before it is gone (no effect
/// when continuous mode is off).
pub(crate) fn set_ending(ending: u64) {
    set_header(header::ENDING, ending);
}

/// `<profile>.<pid>-<16 hex digits>.live`, absolute, NUL-terminated.
fn live_name(cfg: &crate::registry::Config, out: &mut MapVec<u8>) -> bool {
    let mut profile = MapVec::new();
    if !crate::names::profile_path(cfg, &mut profile) {
        return false;
    }
    let p = profile.as_slice();
    let p = p.strip_suffix(&[0]).unwrap_or(p);
    out.clear();
    if p.first() != Some(&b'/') {
        let mut cwd = [0u8; 4096];
        // Safety: a buffer of ours of that size.
        if unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) }.is_null() {
            return false;
        }
        let n = cwd.iter().position(|&b| b == 0).unwrap_or(0);
        if !(out.extend_from_slice(&cwd[..n]) && out.push(b'/')) {
            return false;
        }
    }
    let mut digits = [0u8; 16];
    let random = os::random_u64();
    for (i, d) in digits.iter_mut().enumerate() {
        *d = b"0123456789abcdef"[(random >> (60 - 4 * i)) as usize & 15];
    }
    out.extend_from_slice(p)
        && out.push(b'.')
        && out.extend_from_slice(pathprof_format::decimal(os::pid().into(), &mut [0; 20]))
        && out.push(b'-')
        && out.extend_from_slice(&digits)
        && out.extend_from_slice(b".live")
        && out.push(0)
        && out.as_slice().len() <= 4096
}

/// Creates, locks and sizes a new live file; its descriptor and name.
fn create(cfg: &crate::registry::Config) -> Result<(Fd, MapVec<u8>), (i32, MapVec<u8>)> {
    let mut name = MapVec::new();
    if !live_name(cfg, &mut name) {
        return Err((libc::ENAMETOOLONG, name));
    }
    let fd = match os::open_rw_new(name.as_slice()) {
        Ok(fd) => fd,
        Err(e) => return Err((e, name)),
    };
    if os::try_lock(&fd) != Ok(true) {
        return Err((libc::EWOULDBLOCK, name));
    }
    Ok((fd, name))
}

fn keep_name(name: &MapVec<u8>) {
    let n = name.as_slice();
    // Safety: one thread here (see `Name`).
    unsafe { (&mut *NAME.0.get())[..n.len()].copy_from_slice(n) };
}

fn say_off(what: &str, errno: i32, name: &MapVec<u8>) {
    let n = name.as_slice();
    Line::new()
        .text("continuous mode is off: cannot ")
        .text(what)
        .text(" live file ")
        .bytes(n.strip_suffix(&[0]).unwrap_or(n))
        .text(": ")
        .errno(errno)
        .text("; counts are written at exit and on signals as without it")
        .emit();
}

/// Turns continuous mode on (the first registration, when
/// `PATHPROF_CONTINUOUS=1`): the live file, its arena, its header.
pub(crate) fn start(cfg: &crate::registry::Config) {
    if on() {
        return;
    }
    let (fd, name) = match create(cfg) {
        Ok(x) => x,
        Err((errno, name)) => return say_off("create", errno, &name),
    };
    // Safety: a shared mapping of our file at an address the kernel picks.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            RESERVE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd.0,
            0,
        )
    };
    if p == libc::MAP_FAILED || !extend(&fd, layout::HEADER_BYTES) {
        os::unlink(name.as_slice());
        return say_off("map", os::errno(), &name);
    }
    keep_name(&name);
    BUMP.store(layout::HEADER_BYTES, Release);
    BASE.store(p as usize, Release);
    FD.store(fd.0, Release);
    core::mem::forget(fd);
    write_header(0);
    publish();
}

/// Grows the file to at least `end` bytes (a zero byte written there: the
/// byte is the new allocation's own, so it never overwrites a count).
fn extend(fd: &Fd, end: usize) -> bool {
    // Safety: writes one byte of ours.
    unsafe { libc::pwrite(fd.0, [0u8].as_ptr().cast(), 1, (end - 1) as libc::off_t) == 1 }
}

fn write_header(flags: u64) {
    let base = BASE.load(Acquire) as u64;
    set_header(header::VERSION, layout::LIVE_VERSION);
    set_header(header::BASE, base);
    set_header(header::PID, os::pid().into());
    set_header(header::FLAGS, flags);
    set_header(header::THREADS, crate::process::threads());
    set_header(header::JOURNAL_TAG, 0);
    set_header(header::MERGED_TAG, 0);
    set_header(header::ENDING, 0);
}

/// Writes the magic: the file is complete (a file without it, of a process
/// killed while starting, is removed by readers).
pub(crate) fn publish() {
    set_header(header::MAGIC, u64::from_le_bytes(layout::LIVE_MAGIC));
}

/// `bytes` (rounded up to pages) of zeroed arena, page-aligned; `None` when
/// continuous mode is off or the arena is full.
pub(crate) fn alloc(bytes: usize) -> Option<*mut u8> {
    let base = BASE.load(Acquire);
    if base == 0 || bytes == 0 {
        return None;
    }
    let page = os::page_size();
    let len = bytes.checked_next_multiple_of(page)?;
    let off = BUMP.fetch_add(len, AcqRel);
    if off.checked_add(len).is_none_or(|end| end > RESERVE) {
        return None;
    }
    let fd = Fd(FD.load(Acquire));
    let grown = extend(&fd, off + len);
    core::mem::forget(fd);
    grown.then_some((base + off) as *mut u8)
}

/// Zeroes `len` bytes of arena at `p` (a block of a library loaded again),
/// giving their disk back.
pub(crate) fn clear(p: *mut u8, len: usize) {
    let off = p as usize - BASE.load(Acquire);
    let fd = FD.load(Acquire);
    // Safety: punches a hole in our own file's range.
    let punched = unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            off as libc::off_t,
            len as libc::off_t,
        )
    } == 0;
    if !punched {
        // Safety: our own arena memory.
        unsafe { core::ptr::write_bytes(p, 0, len) };
    }
}

/// Appends a record (`words`, then `tail` padded to 8 bytes) and links it
/// in; its address.
pub(crate) fn push_record(words: &[u64], tail: &[u8]) -> Option<*mut u64> {
    let bytes = words.len() * 8 + tail.len().next_multiple_of(8);
    let p = alloc(bytes)?.cast::<u64>();
    // Safety: fresh arena memory of `bytes` bytes.
    unsafe {
        core::ptr::copy_nonoverlapping(words.as_ptr(), p, words.len());
        core::ptr::copy_nonoverlapping(tail.as_ptr(), p.add(words.len()).cast(), tail.len());
    }
    let off = (p as usize - BASE.load(Acquire)) as u64;
    let head = word(header::RECORDS);
    let mut old = head.load(Acquire);
    loop {
        // Safety: our record, not yet published.
        unsafe { p.write(old) };
        match head.compare_exchange(old, off, AcqRel, Acquire) {
            Ok(_) => return Some(p),
            Err(now) => old = now,
        }
    }
}

/// Records a thread block: `delta` bytes from the region at `start`, which
/// ends at `end`.
pub(crate) fn record_block(start: usize, end: usize, delta: isize) {
    let words = [
        0,
        layout::RECORD_BLOCK,
        start as u64,
        end as u64,
        delta as u64,
    ];
    let _ = push_record(&words, &[]);
}

/// One word the journal moves: `(address, value)`.
pub(crate) type Move = (*const AtomicU64, u64);

/// Puts the moves of a write into the journal under `tag` (the checksum of
/// the profile about to be renamed into place). Moves outside the arena
/// are left out (a reader never sees those words). False without room:
/// the caller then writes without the journal's protection.
pub(crate) fn journal(moves: impl Iterator<Item = Move> + Clone, tag: u64) -> bool {
    if !on() {
        return true;
    }
    let mine = moves.filter(|&(w, _)| contains(w as usize));
    let n = mine.clone().count();
    if n > JOURNAL_CAP.load(Acquire) {
        let cap = n.max(JOURNAL_CAP.load(Acquire) * 2).max(256);
        let Some(p) = alloc(cap * 16) else {
            return false;
        };
        JOURNAL.store(p as usize, Release);
        JOURNAL_CAP.store(cap, Release);
    }
    let at = JOURNAL.load(Acquire) as *mut u64;
    for (k, (w, value)) in mine.enumerate() {
        // Safety: the journal has room for `n` entries (above).
        unsafe {
            at.add(2 * k).write(w as u64);
            at.add(2 * k + 1).write(value);
        }
    }
    set_header(
        header::JOURNAL_AT,
        (at as usize - BASE.load(Acquire)) as u64,
    );
    set_header(header::JOURNAL_LEN, n as u64);
    set_header(header::JOURNAL_TAG, tag);
    true
}

/// The journal's write is over (its moves are made).
pub(crate) fn journal_done() {
    set_header(header::JOURNAL_TAG, 0);
}

/// Removes the live file (the process's last write at exit: everything is
/// in the profile). The arena stays mapped for what later destructors count.
pub(crate) fn finish() {
    if !on() {
        return;
    }
    // Safety: the name was set at start (see `Name`).
    let name = unsafe { &*NAME.0.get() };
    let n = name.iter().position(|&b| b == 0).map_or(0, |n| n + 1);
    os::unlink(&name[..n]);
}

/// In a fork child (one thread, before anything is counted or marked): a
/// live file of its own, holding a copy of the arena, mapped over it. False
/// when that failed: then the arena is a private copy, and continuous mode
/// is off in the child.
pub(crate) fn after_fork_in_child() -> bool {
    let base = BASE.load(Acquire);
    if base == 0 {
        return true;
    }
    let used = BUMP.load(Acquire);
    // The records allocated before the fork, read while the parent's file
    // is still mapped here (its other threads may have linked new records
    // in front of them since, past what the child copies).
    let mut kept: MapVec<usize> = MapVec::new();
    let mut at = word(header::RECORDS).load(Acquire) as usize;
    while at != 0 {
        if at < used && !kept.push(at) {
            break;
        }
        at = word(at).load(Acquire) as usize;
    }
    let old = FD.swap(-1, AcqRel);
    let ok = crate::registry::config().is_some_and(|cfg| match create(cfg) {
        Ok((fd, name)) => {
            // Safety: the arena's used part is mapped and readable.
            let arena = unsafe { core::slice::from_raw_parts(base as *const u8, used) };
            let copied = os::write_all(&fd, arena, true).is_ok();
            // Safety: replaces our own mapping with the child's file.
            let mapped = copied
                && unsafe {
                    libc::mmap(
                        base as *mut libc::c_void,
                        RESERVE,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED | libc::MAP_NORESERVE | libc::MAP_FIXED,
                        fd.0,
                        0,
                    )
                } != libc::MAP_FAILED;
            if !mapped {
                os::unlink(name.as_slice());
                return false;
            }
            keep_name(&name);
            FD.store(fd.0, Release);
            core::mem::forget(fd);
            true
        }
        Err(_) => false,
    });
    // Safety: the parent's descriptor, inherited; the parent keeps its lock.
    unsafe { libc::close(old) };
    if !ok {
        private_copy(base, used);
        BASE.store(0, Release);
        return false;
    }
    // Not a live file until the child's marks are set (`publish`).
    set_header(header::MAGIC, 0);
    write_header(layout::FLAG_FORKED);
    relink_records(kept.as_slice());
    true
}

/// Replaces the arena's used part with private memory holding the same
/// bytes (a fork child without a live file must not write its parent's).
fn private_copy(base: usize, used: usize) {
    let Some(tmp) = crate::mem::map_zeroed(used) else {
        return;
    };
    // Safety: copies the arena into fresh memory of ours, then moves that
    // memory over the arena's pages (the rest of the reservation is left
    // mapped but never used again).
    unsafe {
        core::ptr::copy_nonoverlapping(base as *const u8, tmp, used);
        libc::mremap(
            tmp.cast(),
            used,
            used,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            base as *mut libc::c_void,
        );
    }
}

/// Links `records` (offsets, newest first) as the child's list: the
/// records its parent's other threads pushed while the child copied lie
/// past the copy and are the parent's.
fn relink_records(records: &[usize]) {
    let first = records.first().copied().unwrap_or(0);
    word(header::RECORDS).store(first as u64, Release);
    for (k, &at) in records.iter().enumerate() {
        let next = records.get(k + 1).copied().unwrap_or(0);
        word(at).store(next as u64, Release);
    }
}
