//! One named section of an ELF file, through the `object` crate, so that
//! reports read the map fragments an executable, shared library or object
//! file carries. Reads only; a damaged file gives an error, never a panic.

use object::{Object as _, ObjectSection as _};

/// `\x7fELF`.
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Whether `bytes` start like an ELF file.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(ELF_MAGIC)
}

/// Whether `bytes` are a relocatable ELF object (`e_type` 1), not a linked
/// executable or shared library.
pub fn is_relocatable(bytes: &[u8]) -> bool {
    is_elf(bytes) && bytes.get(16..18) == Some(&[1, 0])
}

/// The contents of every section called `name`, concatenated in file order
/// (a linked file has one; a relocatable object may have several), or `None`
/// when there is no such section. `Err` says why the file cannot be read.
pub fn section(bytes: &[u8], name: &str) -> Result<Option<Vec<u8>>, String> {
    if !is_elf(bytes) {
        return Err("not an ELF file".into());
    }
    let file = object::File::parse(bytes).map_err(|e| e.to_string())?;
    let mut found: Option<Vec<u8>> = None;
    for section in file.sections() {
        if section.name_bytes().map_err(|e| e.to_string())? != name.as_bytes() {
            continue;
        }
        let data = section.data().map_err(|e| e.to_string())?;
        found.get_or_insert_with(Vec::new).extend_from_slice(data);
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_test_binary_and_refuses_damage_without_panicking() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(!is_relocatable(&me), "a linked executable");
        assert!(section(&me, ".text")
            .unwrap()
            .is_some_and(|t| !t.is_empty()));
        assert_eq!(section(&me, ".no.such.section").unwrap(), None);
        assert!(section(b"#!/bin/sh\n", ".text").is_err());
        for cut in [0, 4, 16, 0x3f, 0x40, 4096] {
            let _ = section(&me[..cut.min(me.len())], ".text");
        }
        let mut bad = me.clone();
        bad[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(section(&bad, ".text").is_err());
    }
}
