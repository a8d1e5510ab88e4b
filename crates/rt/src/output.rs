//! Writing one profile file: merge under an exclusive `flock`, rewrite in place.
//!
//! 1. `open(O_RDWR | O_CREAT)` the file (mode 0666 less the umask) and take
//!    an exclusive `flock` on it, polling (100 µs doubling to 10 ms) for at
//!    most 30 s, so a stopped process cannot hang us forever.
//! 2. Read the whole file. Empty: the new contents are our counts. A valid
//!    profile of the same build and mode: the new contents are the merge.
//!    Anything else (another build, damaged, unreadable): leave it untouched
//!    and report it; the caller writes to a side file instead.
//! 3. Reserve the blocks (`fallocate`), `pwrite` the new contents at offset
//!    0, `ftruncate` to their length, close (which drops the lock).
//!
//! The file is never renamed, so its inode is the one every writer locks:
//! however many processes exit at once, each merges into what the previous
//! one wrote and no counts are lost. The merged file is never shorter than
//! the old one and its blocks are reserved first, so running out of space
//! cannot damage it half-way; only a process killed in the middle of its
//! `pwrite` can (later writers then detect the damage and use side files).
//! Symbolic and hard links, ownership and permissions are preserved.
//! Something that is not a regular file (`/dev/null`, a FIFO) just gets our
//! counts written, without locking or merging.

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
}

/// Longest wait for the lock, in microseconds.
const LOCK_PATIENCE_US: u64 = 30_000_000;

fn io(op: &'static str) -> impl Fn(i32) -> WriteError {
    move |errno| WriteError::Io { op, errno }
}

fn lock(fd: &Fd) -> Result<(), WriteError> {
    let (mut waited, mut step) = (0u64, 100u64);
    loop {
        if os::try_lock(fd).map_err(io("lock"))? {
            return Ok(());
        }
        if waited >= LOCK_PATIENCE_US {
            return Err(WriteError::Busy);
        }
        os::sleep_us(step);
        waited += step;
        step = (step * 2).min(10_000);
    }
}

/// Merges the encoded profile `ours` into the file at `path` (NUL-terminated).
pub(crate) fn write_merged(path: &[u8], ours: &[u8]) -> Result<Outcome, WriteError> {
    let fd = os::open_rw(path).map_err(io("open"))?;
    let (_, regular) = os::stat(&fd).map_err(io("stat"))?;
    if !regular {
        os::write_all(&fd, ours, false).map_err(io("write"))?;
        return Ok(Outcome::Streamed);
    }
    lock(&fd)?;
    let (size, _) = os::stat(&fd).map_err(io("stat"))?;
    let size = usize::try_from(size).map_err(|_| WriteError::Memory)?;
    let mut existing: MapVec<u8> = MapVec::new();
    let merged;
    let (out, outcome) = if size == 0 {
        (ours, Outcome::Created)
    } else {
        if !existing.extend_zeroed(size) {
            return Err(WriteError::Memory);
        }
        let n = os::read_at0(&fd, existing.as_mut_slice()).map_err(io("read"))?;
        let theirs = ProfileView::parse(&existing.as_slice()[..n]).map_err(WriteError::Foreign)?;
        let mine = ProfileView::parse(ours).map_err(WriteError::Foreign)?;
        merged = match merge_into(&mine, &theirs, MapVec::new()) {
            Ok(m) => m,
            Err(FormatError::OutOfSpace { .. }) => return Err(WriteError::Memory),
            Err(e) => return Err(WriteError::Foreign(e)),
        };
        (merged.as_slice(), Outcome::Merged)
    };
    os::reserve(&fd, out.len() as u64).map_err(io("reserve space for"))?;
    os::write_all(&fd, out, true).map_err(io("write"))?;
    if out.len() < size {
        os::truncate(&fd, out.len() as u64).map_err(io("truncate"))?;
    }
    Ok(outcome)
}
