//! The first difference between two copies' standard outputs (files of any
//! size, read in step): its byte offset, its line, and that line of each,
//! for a message a person can act on.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Where two outputs first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Byte offset of the first differing byte (or where the shorter ends).
    pub offset: u64,
    /// Its line, from 1.
    pub line: u64,
    /// That line in each output (at most [`SHOWN`] bytes of it, lossily
    /// UTF-8); `None` where the output had ended.
    pub lines: [Option<String>; 2],
}

/// How much of a differing line is shown.
pub const SHOWN: usize = 120;

/// The first difference between the files `a` and `b`, `None` when they are
/// equal.
pub fn first_difference(a: &Path, b: &Path) -> std::io::Result<Option<Difference>> {
    let mut ra = BufReader::new(File::open(a)?).bytes();
    let mut rb = BufReader::new(File::open(b)?).bytes();
    let (mut offset, mut line, mut line_start) = (0u64, 1u64, 0u64);
    loop {
        let (x, y) = (ra.next().transpose()?, rb.next().transpose()?);
        if x == y {
            match x {
                None => return Ok(None),
                Some(b'\n') => {
                    line += 1;
                    line_start = offset + 1;
                }
                Some(_) => {}
            }
            offset += 1;
            continue;
        }
        return Ok(Some(Difference {
            offset,
            line,
            lines: [line_at(a, line_start)?, line_at(b, line_start)?],
        }));
    }
}

/// The line of `path` starting at byte `start`, without its newline (at
/// most [`SHOWN`] bytes); `None` when the file ends before `start` or at it.
fn line_at(path: &Path, start: u64) -> std::io::Result<Option<String>> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity(SHOWN);
    f.take(SHOWN as u64).read_to_end(&mut buf)?;
    if buf.is_empty() {
        return Ok(None);
    }
    let end = buf.iter().position(|&c| c == b'\n').unwrap_or(buf.len());
    Ok(Some(String::from_utf8_lossy(&buf[..end]).into_owned()))
}

impl std::fmt::Display for Difference {
    /// `at byte 12 (line 2): "0x7ffc..." against "0x7ffd..."`, the first
    /// output's line first.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |l: &Option<String>| match l {
            Some(l) => format!("{l:?}"),
            None => "the end of its output".to_string(),
        };
        write!(
            f,
            "at byte {} (line {}): {} against {}",
            self.offset,
            self.line,
            shown(&self.lines[0]),
            shown(&self.lines[1])
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(a: &str, b: &str) -> Option<Difference> {
        let dir = tempfile::tempdir().unwrap();
        let (pa, pb) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&pa, a).unwrap();
        std::fs::write(&pb, b).unwrap();
        first_difference(&pa, &pb).unwrap()
    }

    #[test]
    fn finds_the_first_differing_byte_and_its_line() {
        assert_eq!(diff("same\n", "same\n"), None);
        assert_eq!(diff("", ""), None);
        let d = diff("one\nat 0x7ffc10\nend\n", "one\nat 0x7ffd20\nend\n").unwrap();
        assert_eq!((d.offset, d.line), (12, 2));
        assert_eq!(
            d.to_string(),
            "at byte 12 (line 2): \"at 0x7ffc10\" against \"at 0x7ffd20\""
        );
        // One output a prefix of the other.
        let d = diff("a\nb\n", "a\n").unwrap();
        assert_eq!((d.offset, d.line), (2, 2));
        assert_eq!(d.lines, [Some("b".to_string()), None]);
        assert!(d
            .to_string()
            .ends_with("\"b\" against the end of its output"));
    }
}
