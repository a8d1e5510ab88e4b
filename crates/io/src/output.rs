//! Files the tools write (`-o` outputs, maps, reports' pages): the bytes go
//! to a new file beside the name, created at a name no one can guess with
//! `O_CREAT | O_EXCL | O_NOFOLLOW` (the `tempfile` crate's way), then
//! renamed over the name. A symbolic link someone planted at the name is
//! replaced, never written through; a reader never sees half a file; a
//! failed write leaves the old file as it was. The new file gets the old
//! one's permission bits, or `0666` less the umask for a new name.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

/// Writes `bytes` as the file `path` (see the module).
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mode = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => m.permissions().mode() & 0o7777,
        _ => 0o666 & !umask(),
    };
    let mut file = tempfile::Builder::new()
        .prefix(".pathprof-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    file.write_all(bytes)?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The process's umask, from `/proc/self/status` (`022` where it cannot be
/// read).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious data").unwrap();
        let out = dir.path().join("out.pprof");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_new(&out, b"new bytes").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious data");
        assert!(std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(std::fs::read(&out).unwrap(), b"new bytes");
        // An existing file keeps its permission bits.
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_new(&out, b"again").unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file is left behind");
    }
}
