//! The live files of processes that died without their final write
//! (continuous mode: see `live`), merged by whichever process writes the
//! profile next, under its lock (`output`), exactly once.
//!
//! A live file `<profile>.<pid>-<16 hex digits>.live` whose `flock` can be
//! taken belongs to a process that is gone. Under the profile's lock the
//! writer decodes each such file (`pathprof_format::live::decode`, on a
//! private copy-on-write mapping: applying its journal there changes nothing
//! on disk), merges what it adds into the contents about to be written, sets
//! the file's merged tag to those contents' checksum before the rename and
//! removes it after, still under the lock. A writer killed in between leaves
//! the tag saying "merged into this profile", which the next writer sees.
//! A damaged live file is left alone with a warning (its counts cannot be
//! recovered, and nothing else is lost); one of a process killed while it
//! was being set up (no magic yet) is removed.

use crate::mem::MapVec;
use crate::msg::Line;
use crate::os::{self, Fd};
use pathprof_format::live::{self as layout, header};
use pathprof_format::{merge_into, FormatError, ProfileView};

/// The dead live files a write merged (or found merged already).
pub(crate) struct Dead {
    /// Their names in the profile's directory, each NUL-terminated.
    names: MapVec<u8>,
    /// Their descriptors (locked), to set the merged tag.
    fds: MapVec<i32>,
    /// Their pids, for the verbose message.
    pub(crate) merged: u64,
}

impl Drop for Dead {
    fn drop(&mut self) {
        for &fd in self.fds.as_slice() {
            drop(Fd(fd));
        }
    }
}

/// The live files of `path` (NUL-terminated, the profile) whose processes
/// are gone, merged into `contents` (the profile about to be written, a
/// valid profile file; `profile_checksum` is the checksum of the one on
/// disk, 0 if none). Without memory or a readable directory nothing is
/// merged (the files wait for the next writer).
pub(crate) fn fold(path: &[u8], profile_checksum: u64, contents: &mut MapVec<u8>) -> Dead {
    let mut dead = Dead {
        names: MapVec::new(),
        fds: MapVec::new(),
        merged: 0,
    };
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    let dir_len = path.iter().rposition(|&c| c == b'/').map_or(0, |i| i + 1);
    let (dir, base) = path.split_at(dir_len);
    let mut dir_name: MapVec<u8> = MapVec::new();
    let mut buf: MapVec<u8> = MapVec::new();
    let mut found: MapVec<u8> = MapVec::new();
    let dir_ok = if dir.is_empty() {
        dir_name.extend_from_slice(b".\0")
    } else {
        dir_name.extend_from_slice(dir) && dir_name.push(0)
    };
    if !dir_ok || !buf.extend_zeroed(32 * 1024) {
        return dead;
    }
    let Ok(dfd) = os::open_dir(dir_name.as_slice()) else {
        return dead;
    };
    let _ = os::each_entry(&dfd, buf.as_mut_slice(), |entry| {
        if layout::is_live_file_of(entry, base) {
            let _ = found.extend_from_slice(entry) && found.push(0);
        }
    });
    for name in found.as_slice().split_inclusive(|&b| b == 0) {
        let mut full: MapVec<u8> = MapVec::new();
        if !(full.extend_from_slice(dir) && full.extend_from_slice(name)) {
            continue;
        }
        let Ok(fd) = os::open_existing_rw(full.as_slice()) else {
            continue;
        };
        if os::try_lock(&fd) != Ok(true) {
            continue; // its process is alive
        }
        match merge_one(&fd, profile_checksum, contents) {
            Merge::Done => dead.merged += 1,
            Merge::Already | Merge::Unfinished => {}
            Merge::Keep => continue,
        }
        if dead.names.extend_from_slice(full.as_slice()) && dead.fds.push(fd.0) {
            core::mem::forget(fd);
        }
    }
    dead
}

enum Merge {
    /// Its counts are in `contents` now.
    Done,
    /// Merged into this profile by an earlier writer.
    Already,
    /// A process killed while setting it up: nothing in it.
    Unfinished,
    /// Left alone (damaged, or no memory).
    Keep,
}

fn merge_one(fd: &Fd, profile_checksum: u64, contents: &mut MapVec<u8>) -> Merge {
    let Ok(st) = os::stat(fd) else {
        return Merge::Keep;
    };
    let Ok(len) = usize::try_from(st.size) else {
        return Merge::Keep;
    };
    if len == 0 {
        // Maybe a process between creating and locking it: left for later.
        return Merge::Keep;
    }
    // Safety: a private mapping of the file: our writes (the journal
    // applied) stay ours.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE,
            fd.0,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Merge::Keep;
    }
    // Safety: the mapping just made, `len` bytes, unmapped below.
    let bytes = unsafe { core::slice::from_raw_parts_mut(p.cast::<u8>(), len) };
    let outcome = if layout::peek(bytes).is_none() {
        if len >= layout::HEADER_BYTES && bytes[..8] != layout::LIVE_MAGIC {
            Merge::Unfinished
        } else {
            say_damaged(layout::LiveError {
                at: 0,
                what: "no live file header",
            });
            Merge::Keep
        }
    } else {
        let mut acc: Option<MapVec<u8>> = None;
        let decoded = layout::decode(bytes, profile_checksum, MapVec::new, |section| {
            let base = acc.as_ref().map_or(contents.as_slice(), MapVec::as_slice);
            let (Ok(a), Ok(b)) = (
                ProfileView::parse_own(base),
                ProfileView::parse_own(section.as_slice()),
            ) else {
                return Err(FormatError::InvalidInput {
                    what: "a section the runtime cannot read back",
                });
            };
            acc = Some(merge_into(&b, &a, MapVec::new())?);
            Ok(())
        });
        match decoded {
            Ok(Ok(summary)) if summary.merged_already => Merge::Already,
            Ok(Ok(summary)) => {
                if let Some(acc) = acc {
                    *contents = acc;
                }
                if summary.lost > 0 {
                    Line::new()
                        .text("a killed process dropped ")
                        .num(summary.lost)
                        .text(" path executions for lack of memory for hash tables")
                        .emit();
                }
                Merge::Done
            }
            Ok(Err(e)) => {
                Line::new()
                    .text("could not merge the live file of a killed process: ")
                    .error(&e)
                    .text("; it is kept for the next write")
                    .emit();
                Merge::Keep
            }
            Err(e) => {
                say_damaged(e);
                Merge::Keep
            }
        }
    };
    // Safety: our mapping from above; `bytes` is not used after this.
    unsafe { libc::munmap(p, len) };
    outcome
}

fn say_damaged(e: layout::LiveError) {
    let mut l = Line::new();
    l.text("a live file beside the profile: ");
    e.describe(&mut l);
    l.emit();
}

impl Dead {
    /// Before the rename: every merged file says it is merged into the
    /// profile of `checksum`.
    pub(crate) fn mark_merged(&self, checksum: u64) {
        for &fd in self.fds.as_slice() {
            let bytes = checksum.to_le_bytes();
            // Safety: writes 8 bytes of ours into the file's header.
            unsafe {
                libc::pwrite(
                    fd,
                    bytes.as_ptr().cast(),
                    8,
                    header::MERGED_TAG as libc::off_t,
                )
            };
        }
    }

    /// After the rename: the merged files go.
    pub(crate) fn remove(&self) {
        for name in self.names.as_slice().split_inclusive(|&b| b == 0) {
            os::unlink(name);
        }
    }
}
