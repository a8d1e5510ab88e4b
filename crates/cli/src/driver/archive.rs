//! Reading `ar` archives (GNU and BSD variants) to find bitcode members: a build
//! that makes `liblua.a` with `ar` from `pathprof cc -c` objects holds bitcode.
//! Whether a member is bitcode is [`pathprof_llvm::is_bitcode`]'s to say.

use anyhow::{bail, Result};

/// One archive member.
#[derive(Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub name: String,
    pub data: &'a [u8],
}

const MAGIC: &[u8] = b"!<arch>\n";

/// Whether `bytes` is a (non-thin) archive.
pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// The archive's file members (symbol tables and name tables left out).
pub fn members(bytes: &[u8]) -> Result<Vec<Member<'_>>> {
    if !is_archive(bytes) {
        bail!("not an ar archive");
    }
    let mut out = Vec::new();
    let mut long_names: &[u8] = &[];
    let mut pos = MAGIC.len();
    while pos + 60 <= bytes.len() {
        let header = &bytes[pos..pos + 60];
        if &header[58..60] != b"`\n" {
            bail!("damaged archive member header at byte {pos}");
        }
        let field =
            |r: std::ops::Range<usize>| String::from_utf8_lossy(&header[r]).trim().to_string();
        let raw_name = field(0..16);
        let size: usize = field(48..58)
            .parse()
            .map_err(|_| anyhow::anyhow!("damaged archive member size at byte {pos}"))?;
        let start = pos + 60;
        let end = start.checked_add(size).filter(|&e| e <= bytes.len());
        let Some(end) = end else {
            bail!("archive member at byte {pos} runs past the end (truncated archive)");
        };
        let mut data = &bytes[start..end];
        let name = if raw_name == "/"
            || raw_name == "/SYM64/"
            || raw_name == "__.SYMDEF"
            || raw_name == "__.SYMDEF SORTED"
        {
            None
        } else if raw_name == "//" {
            long_names = data;
            None
        } else if let Some(offset) = raw_name.strip_prefix('/') {
            let offset: usize = offset.parse().unwrap_or(usize::MAX);
            let rest = long_names.get(offset..).unwrap_or(&[]);
            let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            Some(
                String::from_utf8_lossy(&rest[..len])
                    .trim_end_matches('/')
                    .to_string(),
            )
        } else if let Some(len) = raw_name.strip_prefix("#1/") {
            let len: usize = len.parse().unwrap_or(0).min(data.len());
            let name = String::from_utf8_lossy(&data[..len])
                .trim_end_matches('\0')
                .to_string();
            data = &data[len..];
            Some(name)
        } else {
            Some(raw_name.trim_end_matches('/').to_string())
        };
        if let Some(name) = name {
            out.push(Member { name, data });
        }
        pos = end + (size & 1);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, size: usize) -> Vec<u8> {
        format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).into_bytes()
    }

    #[test]
    fn reads_gnu_members_with_long_names() {
        let mut a = MAGIC.to_vec();
        let names = b"a_rather_long_member_name.o/\n";
        a.extend(header("//", names.len()));
        a.extend(names);
        a.push(b'\n'); // pad to even
        a.extend(header("/0", 5));
        a.extend(b"BC\xC0\xDEx");
        a.push(b'\n');
        a.extend(header("short.o/", 2));
        a.extend(b"hi");
        let m = members(&a).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "a_rather_long_member_name.o");
        assert!(pathprof_llvm::is_bitcode(m[0].data));
        assert_eq!(m[1].name, "short.o");
        assert_eq!(m[1].data, b"hi");
        assert!(members(&a[..a.len() - 1]).is_err());
    }
}
