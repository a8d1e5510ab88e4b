//! Reading `ar` archives (GNU and BSD variants) to find bitcode members: a build
//! that makes `liblua.a` with `ar` from `pathprof cc -c` objects holds bitcode.
//! The `object` crate parses the archive (symbol tables, GNU long-name tables,
//! BSD `#1/` names); whether a member is bitcode is
//! [`pathprof_llvm::is_bitcode`]'s to say. Thin archives (`!<thin>`), whose
//! members live in files of their own, are not archives here.

use anyhow::{bail, Result};
use object::read::archive::ArchiveFile;

/// One archive member.
#[derive(Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub name: String,
    pub data: &'a [u8],
}

/// Whether `bytes` is a (non-thin) archive.
pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(&object::archive::MAGIC)
}

/// The archive's file members (symbol tables and name tables left out).
pub fn members(bytes: &[u8]) -> Result<Vec<Member<'_>>> {
    if !is_archive(bytes) {
        bail!("not an ar archive");
    }
    let damaged = |e: object::read::Error| anyhow::anyhow!("damaged archive: {e}");
    let archive = ArchiveFile::parse(bytes).map_err(damaged)?;
    let mut out = Vec::new();
    for member in archive.members() {
        let member = member.map_err(damaged)?;
        let name = String::from_utf8_lossy(member.name());
        if is_special(&name) {
            continue;
        }
        let data = member.data(bytes).map_err(|_| {
            anyhow::anyhow!("archive member {name} runs past the end (truncated archive)")
        })?;
        out.push(Member {
            name: name.trim_end_matches('/').to_string(),
            data,
        });
    }
    Ok(out)
}

/// Symbol and name tables: `object` takes those at the head of the archive for
/// its own; these are left out wherever they stand.
fn is_special(name: &str) -> bool {
    matches!(name, "/" | "//" | "/SYM64/") || name.starts_with("__.SYMDEF")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, size: usize) -> Vec<u8> {
        format!("{name:<16}{:<12}{:<6}{:<6}{:<8}{size:<10}`\n", 0, 0, 0, 644).into_bytes()
    }

    #[test]
    fn reads_gnu_members_with_long_names() {
        let mut a = b"!<arch>\n".to_vec();
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

    #[test]
    fn leaves_gnu_symbol_tables_out() {
        for table in ["/", "/SYM64/"] {
            let mut a = b"!<arch>\n".to_vec();
            a.extend(header(table, 4));
            a.extend(b"\0\0\0\0");
            a.extend(header("a.o/", 3));
            a.extend(b"abc\n");
            let m = members(&a).unwrap();
            assert_eq!(
                m,
                [Member {
                    name: "a.o".into(),
                    data: b"abc",
                }]
            );
        }
    }

    #[test]
    fn reads_bsd_members_with_long_names() {
        let mut a = b"!<arch>\n".to_vec();
        // The symbol table, its name after the header as in macOS archives.
        let symdef = b"__.SYMDEF SORTED\0\0\0\0\0\0\0\0";
        a.extend(header("#1/24", symdef.len()));
        a.extend(symdef);
        let name = b"a_rather_long_member_name.o\0";
        a.extend(header("#1/28", name.len() + 4));
        a.extend(name);
        a.extend(b"BC\xC0\xDE");
        a.extend(header("b.o", 2));
        a.extend(b"hi");
        let m = members(&a).unwrap();
        assert_eq!(
            m,
            [
                Member {
                    name: "a_rather_long_member_name.o".into(),
                    data: b"BC\xC0\xDE",
                },
                Member {
                    name: "b.o".into(),
                    data: b"hi",
                },
            ]
        );
    }

    #[test]
    fn thin_archives_and_other_files_are_not_archives() {
        let mut thin = b"!<thin>\n".to_vec();
        thin.extend(header("a.o/", 10));
        assert!(!is_archive(&thin));
        assert_eq!(members(&thin).unwrap_err().to_string(), "not an ar archive");
        assert!(!is_archive(b"BC\xC0\xDE"));
        assert!(is_archive(b"!<arch>\n"));
        assert_eq!(members(b"!<arch>\n").unwrap(), []);
    }
}
