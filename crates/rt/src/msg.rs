//! Messages to stderr without allocating: one line, built in a fixed buffer
//! (longer lines are cut) and written with one `write(2)`. The runtime only
//! speaks on failure, or when `PATHPROF_VERBOSE=1`.

use pathprof_format::{FormatError, Text};

/// A line under construction.
pub(crate) struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    /// A line starting `pathprof: `.
    pub(crate) fn new() -> Self {
        let mut l = Line {
            buf: [0; 1024],
            len: 0,
        };
        l.bytes(b"pathprof: ");
        l
    }

    /// Appends raw bytes (a file name need not be UTF-8).
    pub(crate) fn bytes(&mut self, b: &[u8]) -> &mut Self {
        let room = self.buf.len() - 1 - self.len;
        let n = b.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
        self
    }

    /// Appends text.
    pub(crate) fn text(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// Appends `v` in decimal.
    pub(crate) fn num(&mut self, v: u64) -> &mut Self {
        self.dec(v);
        self
    }

    /// Appends `v` as 16 hexadecimal digits (a build id, a fingerprint).
    pub(crate) fn hex(&mut self, v: u64) -> &mut Self {
        self.hex16(v);
        self
    }

    /// Appends what a raw profile error means and what to do.
    pub(crate) fn error(&mut self, e: &FormatError) -> &mut Self {
        e.describe(self);
        self
    }

    /// Appends what `errno` means (strerror may allocate or take locks).
    pub(crate) fn errno(&mut self, errno: i32) -> &mut Self {
        let what = match errno {
            libc::ENOENT => "no such file or directory",
            libc::EACCES => "permission denied",
            libc::EPERM => "operation not permitted",
            libc::ENOSPC => "no space left on device",
            libc::EDQUOT => "disk quota exceeded",
            libc::EROFS => "read-only file system",
            libc::EISDIR => "is a directory",
            libc::ENOTDIR => "a path component is not a directory",
            libc::ENAMETOOLONG => "file name too long",
            libc::ELOOP => "too many symbolic links",
            libc::EMFILE | libc::ENFILE => "too many open files",
            libc::ENOMEM => "out of memory",
            libc::EIO => "input/output error",
            libc::EFBIG => "file too large",
            _ => return self.text("errno ").num(errno as u64),
        };
        self.text(what).text(" (errno ").num(errno as u64).text(")")
    }

    /// Writes the line and a newline to stderr.
    pub(crate) fn emit(&mut self) {
        self.buf[self.len] = b'\n';
        let mut rest = &self.buf[..=self.len];
        while !rest.is_empty() {
            // Safety: writes bytes we own to fd 2.
            let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
            if n > 0 {
                rest = &rest[n as usize..];
            } else if n < 0 && crate::os::errno() == libc::EINTR {
                continue;
            } else {
                return;
            }
        }
    }
}

impl Text for Line {
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}
