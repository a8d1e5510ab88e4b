//! Messages to stderr without allocating: one line, built in a fixed buffer
//! (longer lines are cut) and written with one `write(2)`. The runtime only
//! speaks on failure, or when `PATHPROF_VERBOSE=1`.

use std::fmt::{self, Write};

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

    /// Appends formatted text.
    pub(crate) fn text(&mut self, args: fmt::Arguments<'_>) -> &mut Self {
        let _ = self.write_fmt(args);
        self
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

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// What an errno means, for messages (strerror may allocate or take locks).
pub(crate) struct Errno(pub i32);

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.0 {
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
            _ => return write!(f, "errno {}", self.0),
        };
        write!(f, "{what} (errno {})", self.0)
    }
}
