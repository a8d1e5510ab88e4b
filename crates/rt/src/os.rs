//! Thin, allocation-free wrappers over the system calls the runtime uses
//! (errno, file I/O, sleeping, page residency), retried on `EINTR`.

use core::ffi::c_int;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The calling thread's errno.
pub(crate) fn errno() -> c_int {
    // Safety: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's errno.
pub(crate) fn set_errno(v: c_int) {
    // Safety: as in `errno`.
    unsafe { *libc::__errno_location() = v };
}

/// Runs `f` until it does not fail with EINTR; Err(errno) on failure.
fn retry<T: PartialOrd + Default>(mut f: impl FnMut() -> T) -> Result<T, c_int> {
    loop {
        let r = f();
        if r >= T::default() {
            return Ok(r);
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

/// An open file descriptor, closed on drop (which also drops its flock).
pub(crate) struct Fd(pub c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // Safety: the descriptor is ours.
        unsafe { libc::close(self.0) };
    }
}

/// Opens (creating, mode 0666 less umask) `path`, which ends with a NUL;
/// never through a symbolic link (`ELOOP` when its last component is one).
pub(crate) fn open_rw(path: &[u8]) -> Result<Fd, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    let flags = libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NOFOLLOW;
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), flags, 0o666 as libc::c_uint) }).map(Fd)
}

/// Creates `path` (NUL-terminated) for reading and writing, a file that did
/// not exist (mode 0666 less umask, never through a symbolic link).
pub(crate) fn open_rw_new(path: &[u8]) -> Result<Fd, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    let flags = libc::O_RDWR
        | libc::O_CREAT
        | libc::O_EXCL
        | libc::O_CLOEXEC
        | libc::O_NOCTTY
        | libc::O_NOFOLLOW;
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), flags, 0o666 as libc::c_uint) }).map(Fd)
}

/// Opens the existing file `path` (NUL-terminated) for reading and writing,
/// never through a symbolic link.
pub(crate) fn open_existing_rw(path: &[u8]) -> Result<Fd, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    let flags = libc::O_RDWR | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NOFOLLOW;
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), flags) }).map(Fd)
}

/// Tries to take an exclusive flock without waiting: Ok(false) if another
/// open file holds it.
pub(crate) fn try_lock(fd: &Fd) -> Result<bool, c_int> {
    // Safety: flock on our descriptor.
    match retry(|| unsafe { libc::flock(fd.0, libc::LOCK_EX | libc::LOCK_NB) }) {
        Ok(_) => Ok(true),
        Err(libc::EWOULDBLOCK) => Ok(false),
        Err(e) => Err(e),
    }
}

/// What the runtime needs of a file's status.
#[derive(Clone, Copy)]
pub(crate) struct Status {
    pub size: u64,
    pub regular: bool,
    /// (device, inode): which file this is.
    pub id: (u64, u64),
    /// Permission bits.
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

fn status(st: &libc::stat) -> Status {
    Status {
        size: st.st_size.max(0) as u64,
        regular: st.st_mode & libc::S_IFMT == libc::S_IFREG,
        id: (st.st_dev, st.st_ino),
        mode: st.st_mode & 0o7777,
        uid: st.st_uid,
        gid: st.st_gid,
    }
}

/// The status of an open file.
pub(crate) fn stat(fd: &Fd) -> Result<Status, c_int> {
    // Safety: fstat fills a zeroed stat buffer of ours.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // Safety: as above.
    retry(|| unsafe { libc::fstat(fd.0, &mut st) })?;
    Ok(status(&st))
}

/// The status of the file `path` (NUL-terminated) names, following
/// symbolic links; with `link`, of a symbolic link itself (`lstat`), and
/// whether it is one.
pub(crate) fn stat_path(path: &[u8], link: bool) -> Result<(Status, bool), c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    // Safety: (l)stat fills a zeroed stat buffer of ours; `path` is NUL-terminated.
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // Safety: as above.
    retry(|| unsafe {
        if link {
            libc::lstat(path.as_ptr().cast(), &mut st)
        } else {
            libc::stat(path.as_ptr().cast(), &mut st)
        }
    })?;
    Ok((status(&st), st.st_mode & libc::S_IFMT == libc::S_IFLNK))
}

/// The target of the symbolic link `path` (NUL-terminated) into `buf`; its length.
pub(crate) fn readlink(path: &[u8], buf: &mut [u8]) -> Result<usize, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    // Safety: readlink writes at most buf.len() bytes into our buffer.
    let n = retry(|| unsafe {
        libc::readlink(path.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len())
    })? as usize;
    if n >= buf.len() {
        return Err(libc::ENAMETOOLONG);
    }
    Ok(n)
}

/// Creates `path` for writing, a file that did not exist (`EEXIST`
/// otherwise, also for a symbolic link there, which is never followed),
/// mode 0600.
pub(crate) fn create_new(path: &[u8]) -> Result<Fd, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | libc::O_EXCL
        | libc::O_NOFOLLOW
        | libc::O_CLOEXEC
        | libc::O_NOCTTY;
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), flags, 0o600 as libc::c_uint) }).map(Fd)
}

/// Gives an open file the permission bits and, where allowed, the owner
/// and group of another (failures to change them are ignored).
pub(crate) fn copy_owner_and_mode(fd: &Fd, from: &Status) {
    // Safety: fchown/fchmod on our descriptor.
    unsafe {
        libc::fchown(fd.0, from.uid, from.gid);
        libc::fchmod(fd.0, from.mode);
    }
}

/// The effective user id of the process.
pub(crate) fn euid() -> u32 {
    // Safety: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// 64 bits no one can guess: the kernel's random numbers, or (where
/// `getrandom` fails) the clock, the process id and an address mixed.
pub(crate) fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    // Safety: getrandom writes at most 8 bytes into our buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), 8, libc::GRND_NONBLOCK) };
    if n == 8 {
        return u64::from_ne_bytes(bytes);
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: clock_gettime fills our timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let mixed = (ts.tv_sec as u64).wrapping_mul(1_000_000_007) ^ ts.tv_nsec as u64;
    let mixed = mixed ^ (u64::from(pid()) << 32) ^ (&ts as *const _ as u64);
    pathprof_format::fnv1a64(&mixed.to_ne_bytes())
}

/// Renames `from` over `to` (both NUL-terminated), atomically replacing it.
pub(crate) fn rename(from: &[u8], to: &[u8]) -> Result<(), c_int> {
    if from.last() != Some(&0) || to.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    // Safety: both names are NUL-terminated.
    retry(|| unsafe { libc::rename(from.as_ptr().cast(), to.as_ptr().cast()) }).map(drop)
}

/// Opens the directory `path` (NUL-terminated) for reading its entries.
pub(crate) fn open_dir(path: &[u8]) -> Result<Fd, c_int> {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), flags) }).map(Fd)
}

/// Calls `each` with the name (without NUL) of every entry of the open
/// directory `dir`, read through `buf` (`getdents64`, no allocation).
pub(crate) fn each_entry(
    dir: &Fd,
    buf: &mut [u8],
    mut each: impl FnMut(&[u8]),
) -> Result<(), c_int> {
    loop {
        // Safety: getdents64 writes at most buf.len() bytes of records into our buffer.
        let n = retry(|| unsafe {
            libc::syscall(libc::SYS_getdents64, dir.0, buf.as_mut_ptr(), buf.len()) as isize
        })? as usize;
        if n == 0 {
            return Ok(());
        }
        let mut at = 0;
        // Each record: inode (8), offset (8), record length (2), type (1), name.
        while at + 19 <= n {
            let len = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if len < 19 || at + len > n {
                return Err(libc::EIO);
            }
            let name = &buf[at + 19..at + len];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            each(&name[..end]);
            at += len;
        }
    }
}

/// Removes the entry `name` (NUL-terminated) of the open directory `dir`;
/// errors are ignored (never follows a link: it removes the link).
pub(crate) fn unlink_at(dir: &Fd, name: &[u8]) {
    if name.last() == Some(&0) {
        // Safety: `name` is NUL-terminated.
        unsafe { libc::unlinkat(dir.0, name.as_ptr().cast(), 0) };
    }
}

/// Removes the file `path` (NUL-terminated); errors are ignored.
pub(crate) fn unlink(path: &[u8]) {
    if path.last() == Some(&0) {
        // Safety: `path` is NUL-terminated.
        unsafe { libc::unlink(path.as_ptr().cast()) };
    }
}

/// Fills `buf` from offset 0; returns how much was read (less at end of file).
pub(crate) fn read_at0(fd: &Fd, buf: &mut [u8]) -> Result<usize, c_int> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // Safety: reads into memory we own.
        let n = retry(|| unsafe {
            libc::pread(
                fd.0,
                rest.as_mut_ptr().cast(),
                rest.len(),
                done as libc::off_t,
            )
        })?;
        if n == 0 {
            break;
        }
        done += n as usize;
    }
    Ok(done)
}

/// Writes all of `buf` at offset 0 (or at the current position if `at0` is false).
pub(crate) fn write_all(fd: &Fd, buf: &[u8], at0: bool) -> Result<(), c_int> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // Safety: writes memory we own.
        let n = retry(|| unsafe {
            if at0 {
                libc::pwrite(fd.0, rest.as_ptr().cast(), rest.len(), done as libc::off_t)
            } else {
                libc::write(fd.0, rest.as_ptr().cast(), rest.len())
            }
        })?;
        if n == 0 {
            return Err(libc::EIO);
        }
        done += n as usize;
    }
    Ok(())
}

/// Reserves disk blocks for `len` bytes, so a later overwrite cannot fail
/// half-way for lack of space. File systems that cannot do it are fine.
pub(crate) fn reserve(fd: &Fd, len: u64) -> Result<(), c_int> {
    // Safety: fallocate on our descriptor (mode 0: allocate, extend size).
    match retry(|| unsafe { libc::fallocate(fd.0, 0, 0, len as libc::off_t) }) {
        Ok(_) | Err(libc::EOPNOTSUPP) | Err(libc::ENOSYS) | Err(libc::EINVAL) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Sets the file's length.
pub(crate) fn truncate(fd: &Fd, len: u64) -> Result<(), c_int> {
    // Safety: ftruncate on our descriptor.
    retry(|| unsafe { libc::ftruncate(fd.0, len as libc::off_t) }).map(drop)
}

/// Sleeps (nanosleep is async-signal-safe).
pub(crate) fn sleep_us(us: u64) {
    let ts = libc::timespec {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_nsec: ((us % 1_000_000) * 1000) as libc::c_long,
    };
    // Safety: a valid timespec; an early wake-up is harmless.
    unsafe { libc::nanosleep(&ts, core::ptr::null_mut()) };
}

/// The process id.
pub(crate) fn pid() -> u32 {
    // Safety: getpid cannot fail.
    unsafe { libc::getpid() as u32 }
}

/// Blocks every signal in the calling thread; returns the mask it had.
pub(crate) fn block_all_signals() -> libc::sigset_t {
    // Safety: sigfillset and pthread_sigmask on signal sets of ours.
    unsafe {
        let mut all: libc::sigset_t = core::mem::zeroed();
        let mut old: libc::sigset_t = core::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    }
}

/// Gives the calling thread back a mask [`block_all_signals`] returned.
pub(crate) fn restore_signals(old: &libc::sigset_t) {
    // Safety: restoring a mask pthread_sigmask gave us.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, core::ptr::null_mut()) };
}

/// Raises `sig` with its default action restored and unblocked in this
/// thread, so a signal whose default ends the process ends it, by `sig`
/// (exit status, core dump) as it would have without pathprof. Returns only
/// if the process survived it (a handler the program installed meanwhile).
pub(crate) fn raise_with_default_action(sig: c_int) {
    // Safety: restoring the default action and raising the signal; if it is
    // blocked (as inside its own handler) it stays pending until the unblock.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
        let mut set: libc::sigset_t = core::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, core::ptr::null_mut());
    }
}

/// Ends the process at once with `status`, like `_exit` (the raw system call).
pub(crate) fn exit_group(status: c_int) -> ! {
    loop {
        // Safety: exit_group does not return.
        unsafe { libc::syscall(libc::SYS_exit_group, status) };
    }
}

/// The host name (uname, async-signal-safe), written into `buf`; its length.
pub(crate) fn hostname(buf: &mut [u8; 65]) -> usize {
    // Safety: uname fills a zeroed utsname of ours.
    let mut u: libc::utsname = unsafe { core::mem::zeroed() };
    // Safety: as above.
    if unsafe { libc::uname(&mut u) } != 0 {
        return 0;
    }
    let mut n = 0;
    for &c in u.nodename.iter().take(64) {
        if c == 0 {
            break;
        }
        buf[n] = c as u8;
        n += 1;
    }
    n
}

/// The system's page size (asked once: dumps ask for every array they read).
pub(crate) fn page_size() -> usize {
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    let known = PAGE.load(Relaxed);
    if known != 0 {
        return known;
    }
    // Safety: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let n = if n > 0 { n as usize } else { 4096 };
    PAGE.store(n, Relaxed);
    n
}

/// The open `/proc/self/pagemap`, if the system has one.
pub(crate) fn open_pagemap() -> Option<Fd> {
    let path = b"/proc/self/pagemap\0";
    // Safety: `path` is NUL-terminated.
    retry(|| unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) })
        .ok()
        .map(Fd)
}

/// For each of the `out.len()` pages from page-aligned `addr`, whether the
/// program ever touched it: present in memory or swapped out, by the kernel's
/// page map. A page of a zero-initialised array that was never touched is
/// neither, so it holds only zeros. Without a page map, or on any error, every
/// page counts as touched (the caller then reads it).
pub(crate) fn touched_pages(pagemap: Option<&Fd>, addr: usize, out: &mut [bool; 64], n: usize) {
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    let n = n.min(out.len());
    out.fill(true);
    let Some(fd) = pagemap else { return };
    let mut entries = [0u64; 64];
    let offset = (addr / page_size() * 8) as libc::off_t;
    let want = n * 8;
    // Safety: `entries` holds 64 u64s, at least `want` bytes.
    let got = retry(|| unsafe { libc::pread(fd.0, entries.as_mut_ptr().cast(), want, offset) });
    if got != Ok(want as isize) {
        return;
    }
    for (t, e) in out.iter_mut().zip(&entries[..n]) {
        *t = e & (PRESENT | SWAPPED) != 0;
    }
}
