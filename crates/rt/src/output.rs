//! Writing one profile file: merge under an exclusive `flock`, write a
//! temporary file beside it, `rename` it over the profile.
//!
//! 1. Follow the name's symbolic links (the final component, up to 40
//!    times), so a link to a profile keeps pointing at it, but only where
//!    the kernel's `protected_symlinks` rule would follow it whatever the
//!    machine's setting: the link belongs to this process's user, or its
//!    directory is not both world-writable and sticky, or the directory's
//!    owner owns the link too. A link someone else planted in a shared
//!    `/tmp` is refused ([`WriteError::Link`]) and the caller writes a side
//!    file instead. A side file's own name is never followed.
//! 2. `open(O_RDWR | O_CREAT | O_NOFOLLOW)` the profile (mode 0666 less the
//!    umask; never through a link, so a link put in place of the name after
//!    step 1 is refused too) and take an exclusive `flock` on it, polling
//!    (100 µs doubling to 10 ms) for at most 30 s, so a stopped process
//!    cannot hang us forever. Then check that the name still refers to the
//!    inode we locked: a writer that held the lock may have renamed a new
//!    file over the name meanwhile, and a lock on the replaced inode excludes
//!    nobody, so on a mismatch we open the name again and start over. Only
//!    the holder of the lock on the inode the name currently refers to
//!    renames over it, so the lock and the check make the read-merge-rename
//!    sequences of all writers strictly one after another.
//! 3. Read the whole file. Empty (just created, or left empty by a writer
//!    killed before its rename): the new contents are our counts. A valid
//!    profile: the new contents are the merge, section by section (our
//!    sections of a build the file holds are added to it, the others are
//!    inserted in build id order). Anything else (an older format version,
//!    damaged, unreadable, or a section of one of our builds in another mode
//!    or with functions of another shape): leave it untouched and report
//!    it; the caller writes to a side file instead.
//! 4. A profile of this process's user: write the new contents to a new
//!    file beside it, `<name>.<16 random hex digits>.tmp`, created with
//!    `O_CREAT | O_EXCL | O_NOFOLLOW` (a name no one can guess or plant a
//!    link at; another is drawn if it exists), with the old file's
//!    permissions and, where allowed, group; `rename` it over the name;
//!    close the profile (which drops the lock). A profile of another user
//!    (which we could open for writing) is never replaced by a rename,
//!    which would give its name a new inode of ours: the merge is written
//!    into it in place, its owner and inode kept.
//!
//! A process killed (even by SIGKILL) at any point leaves either the old
//! file or the new one under the name, never a mix; the kernel drops its
//! lock; a temporary file it was writing stays behind under its random name
//! until the next writer, which removes every temporary file of the name it
//! finds beside it while it holds the lock (only the lock's holder writes
//! them, so those are stale). Running out of space fails the temporary file, not
//! the profile. There is no `fsync`: a power failure right after a write
//! may lose it (the rename is not durable until the file system commits), a
//! killed process cannot.
//!
//! Hard links to a profile are not kept (the rename gives the name a new
//! inode). When the directory does not let us create the temporary file
//! (permission denied, but the profile itself is writable), and for another
//! user's profile, the merge is written in place: blocks reserved first
//! (`fallocate`), `pwrite` at offset 0, `ftruncate`; only a process killed
//! during that `pwrite` can then damage the file (later writers detect the
//! damage and use side files). Something that is not a regular file
//! (`/dev/null`, a FIFO) just gets our counts written, without locking or
//! merging.

use crate::mem::MapVec;
use crate::os::{self, Fd};
use pathprof_format::{merge_into, FormatError, ProfileView};

/// How a write went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The file was empty or new.
    Created,
    /// Our counts were merged into the file's.
    Merged,
    /// Not a regular file: written without merging.
    Streamed,
}

/// Why a file was not written.
pub(crate) enum WriteError {
    /// A system call failed.
    Io { op: &'static str, errno: i32 },
    /// Another process held the lock for too long.
    Busy,
    /// The file holds something we must not overwrite.
    Foreign(FormatError),
    /// No memory could be mapped.
    Memory,
    /// The name is a symbolic link this writer does not follow: one owned
    /// by `owner` in a world-writable sticky directory (the profile's own
    /// name), or any link (`owner` `None`: a side file's name, or a link put
    /// in place of the name while it was being opened).
    Link { owner: Option<u32> },
}

/// What a writer does under the profile's lock around the write itself
/// (`dump`: the journal and commit of continuous mode).
pub(crate) trait Around {
    /// Before the new contents take the name; `checksum` is theirs (the
    /// last 8 bytes of a profile file).
    fn before(&mut self, checksum: u64);
    /// Once they have, still under the lock.
    fn after(&mut self);
}

/// Longest wait for the lock, in microseconds.
const LOCK_PATIENCE_US: u64 = 30_000_000;

/// How often the name may be replaced under us before we give up.
const MAX_REOPENS: u32 = 10_000;

/// The suffix of temporary files.
const TMP: &[u8] = b".tmp";

/// How many temporary names are drawn before giving up (each exists only if
/// someone made it on purpose).
const TEMP_ATTEMPTS: u32 = 16;

fn io(op: &'static str) -> impl Fn(i32) -> WriteError {
    move |errno| WriteError::Io { op, errno }
}

fn lock(fd: &Fd, waited: &mut u64) -> Result<(), WriteError> {
    let mut step = 100u64;
    loop {
        if os::try_lock(fd).map_err(io("lock"))? {
            return Ok(());
        }
        if *waited >= LOCK_PATIENCE_US {
            return Err(WriteError::Busy);
        }
        os::sleep_us(step);
        *waited += step;
        step = (step * 2).min(10_000);
    }
}

/// The directory part of `path` (without NUL), with its final `/`; empty for
/// a name without one.
fn dir_part(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&c| c == b'/') {
        Some(i) => &path[..=i],
        None => &[],
    }
}

/// Whether the kernel's `protected_symlinks` rule lets this process follow
/// the symbolic link `link` (NUL-terminated) owned by `owner`: ours, or in a
/// directory that is not world-writable and sticky, or one whose owner owns
/// the link.
fn may_follow(link: &[u8], owner: u32) -> bool {
    if owner == os::euid() {
        return true;
    }
    let mut dir: MapVec<u8> = MapVec::new();
    if !dir_name(link, &mut dir) {
        return false;
    }
    match os::stat_path(dir.as_slice(), false) {
        Ok((d, _)) => d.mode & 0o1002 != 0o1002 || d.uid == owner,
        _ => false,
    }
}

/// The directory `path` (NUL-terminated or not) is in, NUL-terminated, into
/// `out` (`.` for a name without one). False only when out of memory.
fn dir_name(path: &[u8], out: &mut MapVec<u8>) -> bool {
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    out.clear();
    match dir_part(path) {
        [] => out.extend_from_slice(b".\0"),
        d => out.extend_from_slice(d) && out.push(0),
    }
}

/// `path` (NUL-terminated) with the symbolic links of its final component
/// followed where [`may_follow`] allows, into `out` (NUL-terminated).
fn resolve_links(path: &[u8], out: &mut MapVec<u8>) -> Result<(), WriteError> {
    out.clear();
    if !out.extend_from_slice(path) {
        return Err(WriteError::Memory);
    }
    let mut target: MapVec<u8> = MapVec::new();
    let mut next: MapVec<u8> = MapVec::new();
    for _ in 0..40 {
        let owner = match os::stat_path(out.as_slice(), true) {
            Ok((st, true)) => st.uid,
            _ => return Ok(()),
        };
        if !may_follow(out.as_slice(), owner) {
            return Err(WriteError::Link { owner: Some(owner) });
        }
        target.clear();
        if !target.extend_zeroed(4096) {
            return Err(WriteError::Memory);
        }
        let Ok(n) = os::readlink(out.as_slice(), target.as_mut_slice()) else {
            return Ok(());
        };
        let t = &target.as_slice()[..n];
        next.clear();
        let current = out.as_slice();
        let current = current.strip_suffix(&[0]).unwrap_or(current);
        let ok = (t.first() == Some(&b'/') || next.extend_from_slice(dir_part(current)))
            && next.extend_from_slice(t)
            && next.push(0);
        if !ok {
            return Err(WriteError::Memory);
        }
        core::mem::swap(out, &mut next);
    }
    Ok(())
}

/// `<path>.<16 hex digits of random>.tmp`, NUL-terminated, into `out`.
fn temp_name(path: &[u8], random: u64, out: &mut MapVec<u8>) -> bool {
    out.clear();
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    let mut digits = [0u8; 17];
    digits[0] = b'.';
    for (i, d) in digits[1..].iter_mut().enumerate() {
        *d = b"0123456789abcdef"[(random >> (60 - 4 * i)) as usize & 15];
    }
    out.extend_from_slice(path)
        && out.extend_from_slice(&digits)
        && out.extend_from_slice(TMP)
        && out.push(0)
}

/// Whether `entry` is a temporary file of the profile whose file name is
/// `base`: `<base>.<16 hex digits>.tmp`.
fn is_temp_of(entry: &[u8], base: &[u8]) -> bool {
    let Some(rest) = entry.strip_prefix(base) else {
        return false;
    };
    let Some(digits) = rest.strip_prefix(b".").and_then(|r| r.strip_suffix(TMP)) else {
        return false;
    };
    digits.len() == 16 && digits.iter().all(|b| b.is_ascii_hexdigit())
}

/// Removes the temporary files of `path` (NUL-terminated) that writers
/// killed while writing left beside it. Called under the lock of the inode
/// the name refers to, when only its holder writes temporary files of the
/// name, so every one there is stale. Best effort: a directory that cannot
/// be read, or an entry that cannot be removed, stays.
fn remove_stale_temps(path: &[u8]) {
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    let base = &path[dir_part(path).len()..];
    let mut dir: MapVec<u8> = MapVec::new();
    let mut buf: MapVec<u8> = MapVec::new();
    if !dir_name(path, &mut dir) || !buf.extend_zeroed(32 * 1024) {
        return;
    }
    let Ok(fd) = os::open_dir(dir.as_slice()) else {
        return;
    };
    let mut stale: MapVec<u8> = MapVec::new();
    let _ = os::each_entry(&fd, buf.as_mut_slice(), |entry| {
        if is_temp_of(entry, base) {
            let _ = stale.extend_from_slice(entry) && stale.push(0);
        }
    });
    for name in stale.as_slice().split_inclusive(|&b| b == 0) {
        os::unlink_at(&fd, name);
    }
}

/// A new temporary file beside `path` ([`temp_name`], [`os::create_new`]),
/// its name in `name`.
fn create_temp(path: &[u8], name: &mut MapVec<u8>) -> Result<os::Fd, WriteError> {
    for _ in 0..TEMP_ATTEMPTS {
        if !temp_name(path, os::random_u64(), name) {
            return Err(WriteError::Memory);
        }
        match os::create_new(name.as_slice()) {
            Err(libc::EEXIST) => continue,
            Err(errno) => {
                return Err(WriteError::Io {
                    op: "create a temporary file beside",
                    errno,
                })
            }
            Ok(fd) => return Ok(fd),
        }
    }
    Err(WriteError::Io {
        op: "create a temporary file beside",
        errno: libc::EEXIST,
    })
}

/// Writes `out` over the contents of the open file `fd` (`size` bytes now):
/// space reserved first, then written from offset 0, the rest cut off.
fn write_in_place(fd: &os::Fd, out: &[u8], size: usize) -> Result<(), WriteError> {
    os::reserve(fd, out.len() as u64).map_err(io("reserve space for"))?;
    os::write_all(fd, out, true).map_err(io("write"))?;
    if out.len() < size {
        os::truncate(fd, out.len() as u64).map_err(io("truncate"))?;
    }
    Ok(())
}

/// Merges the encoded profile file `ours` (any number of sections; this
/// process's encoder's output, read back unchecked) into the file at `path`
/// (NUL-terminated), following a symbolic link there as the module's rule
/// allows when `follow` (the profile's own name), never otherwise (a side
/// file). `delay_us` (tests only) sleeps after taking the lock and again
/// before the rename, to widen the window in which a writer can be killed.
pub(crate) fn write_merged(
    path: &[u8],
    ours: &[u8],
    delay_us: u64,
    follow: bool,
    around: &mut dyn Around,
) -> Result<Outcome, WriteError> {
    let mut real: MapVec<u8> = MapVec::new();
    if follow {
        resolve_links(path, &mut real)?;
    } else if !real.extend_from_slice(path) {
        return Err(WriteError::Memory);
    }
    let path = real.as_slice();
    let mut waited = 0u64;
    let mut reopens = 0u32;
    let (fd, st) = loop {
        let fd = match os::open_rw(path) {
            Ok(fd) => fd,
            Err(libc::ELOOP) => return Err(WriteError::Link { owner: None }),
            Err(errno) => return Err(WriteError::Io { op: "open", errno }),
        };
        let st = os::stat(&fd).map_err(io("stat"))?;
        if !st.regular {
            around.before(pathprof_format::live::profile_checksum(ours));
            os::write_all(&fd, ours, false).map_err(io("write"))?;
            around.after();
            return Ok(Outcome::Streamed);
        }
        lock(&fd, &mut waited)?;
        match os::stat_path(path, false) {
            Ok((now, _)) if now.id == st.id => break (fd, st),
            _ => {}
        }
        reopens += 1;
        if reopens >= MAX_REOPENS {
            return Err(WriteError::Busy);
        }
    };
    if delay_us > 0 {
        os::sleep_us(delay_us);
    }
    let st = os::stat(&fd).unwrap_or(st);
    let size = usize::try_from(st.size).map_err(|_| WriteError::Memory)?;
    let mut existing: MapVec<u8> = MapVec::new();
    let mut merged: MapVec<u8> = MapVec::new();
    let outcome = if size == 0 {
        if !merged.extend_from_slice(ours) {
            return Err(WriteError::Memory);
        }
        Outcome::Created
    } else {
        if !existing.extend_zeroed(size) {
            return Err(WriteError::Memory);
        }
        let n = os::read_at0(&fd, existing.as_mut_slice()).map_err(io("read"))?;
        let theirs = ProfileView::parse(&existing.as_slice()[..n]).map_err(WriteError::Foreign)?;
        let mine = ProfileView::parse_own(ours).map_err(WriteError::Foreign)?;
        merged = match merge_into(&mine, &theirs, MapVec::new()) {
            Ok(m) => m,
            Err(FormatError::OutOfSpace { .. }) => return Err(WriteError::Memory),
            Err(e) => return Err(WriteError::Foreign(e)),
        };
        Outcome::Merged
    };
    // The live files of killed processes (continuous mode) join in.
    let on_disk = if size == 0 {
        0
    } else {
        pathprof_format::live::profile_checksum(existing.as_slice())
    };
    let dead = crate::dead::fold(path, on_disk, &mut merged);
    let out = merged.as_slice();
    let checksum = pathprof_format::live::profile_checksum(out);
    let before = |around: &mut dyn Around| {
        dead.mark_merged(checksum);
        around.before(checksum);
    };
    let after = |around: &mut dyn Around| {
        dead.remove();
        around.after();
    };
    if st.uid != os::euid() {
        // Another user's profile keeps its inode and its owner.
        before(around);
        write_in_place(&fd, out, size)?;
        after(around);
        return Ok(outcome);
    }
    remove_stale_temps(path);
    let mut temp: MapVec<u8> = MapVec::new();
    let tfd = match create_temp(path, &mut temp) {
        Ok(t) => t,
        Err(WriteError::Io {
            errno: libc::EACCES | libc::EPERM,
            ..
        }) => {
            // The directory is closed to us but the file may not be: in place.
            before(around);
            write_in_place(&fd, out, size)?;
            after(around);
            return Ok(outcome);
        }
        Err(e) => return Err(e),
    };
    os::copy_owner_and_mode(&tfd, &st);
    let written = os::write_all(&tfd, out, true).map_err(io("write a temporary file beside"));
    drop(tfd);
    if delay_us > 0 && written.is_ok() {
        os::sleep_us(delay_us);
    }
    if written.is_ok() {
        before(around);
    }
    let renamed = written.and_then(|()| {
        os::rename(temp.as_slice(), path).map_err(io("rename a temporary file over"))
    });
    match renamed {
        Ok(()) => after(around),
        Err(_) => os::unlink(temp.as_slice()),
    }
    drop(fd);
    renamed.map(|()| outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(dir_part(b"a/b/c"), b"a/b/");
        assert_eq!(dir_part(b"c"), b"");
        assert_eq!(dir_part(b"/c"), b"/");
        let mut dir = MapVec::new();
        assert!(dir_name(b"a/b/c\0", &mut dir));
        assert_eq!(dir.as_slice(), b"a/b/\0");
        assert!(dir_name(b"c", &mut dir));
        assert_eq!(dir.as_slice(), b".\0");
        let mut out = MapVec::new();
        assert!(temp_name(b"d/p.pprof\0", 0x0123_4567_89ab_cdef, &mut out));
        assert_eq!(out.as_slice(), b"d/p.pprof.0123456789abcdef.tmp\0");
        assert_ne!(os::random_u64(), os::random_u64());
        assert!(is_temp_of(b"p.pprof.0123456789abcdef.tmp", b"p.pprof"));
        assert!(!is_temp_of(b"p.pprof.tmp", b"p.pprof"));
        assert!(!is_temp_of(b"q.pprof.0123456789abcdef.tmp", b"p.pprof"));
        assert!(!is_temp_of(b"p.pprof.0123456789abcdeg.tmp", b"p.pprof"));
        assert!(!is_temp_of(
            b"p.pprof.x.pprof.0123456789abcdef.tmp",
            b"p.pprof"
        ));
    }

    #[test]
    fn follows_symbolic_links() {
        let dir = std::env::temp_dir().join(format!("pathprof-rt-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/real.pprof", dir.join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.join("b")).unwrap();
        let mut path = dir.join("b").into_os_string().into_encoded_bytes();
        path.push(0);
        let mut out = MapVec::new();
        assert!(resolve_links(&path, &mut out).is_ok());
        let want = format!("{}/sub/real.pprof\0", dir.display());
        assert_eq!(out.as_slice(), want.as_bytes());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
