//! Finding one named section in an ELF file (64-bit, little-endian: what
//! pathprof builds for), so that reports read the map fragments an executable
//! or shared library carries. Reads only; every offset is checked against the
//! file, so a damaged file gives an error, never a panic.

/// `\x7fELF`.
pub const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Whether `bytes` start like an ELF file.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(ELF_MAGIC)
}

/// The contents of every section called `name`, concatenated in file order
/// (a linked file has one; a relocatable object may have several), or `None`
/// when there is no such section. `Err` says why the file cannot be read.
pub fn section(bytes: &[u8], name: &str) -> Result<Option<Vec<u8>>, String> {
    if !is_elf(bytes) {
        return Err("not an ELF file".into());
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let shoff = u64_at(bytes, 0x28)?;
    let shentsize = u64::from(u16_at(bytes, 0x3a)?);
    let mut shnum = u64::from(u16_at(bytes, 0x3c)?);
    let mut shstrndx = u64::from(u16_at(bytes, 0x3e)?);
    if shoff == 0 {
        return Ok(None);
    }
    if shentsize < 0x40 {
        return Err(format!("section headers of {shentsize} bytes"));
    }
    let header = |i: u64| -> Result<usize, String> {
        let at = i
            .checked_mul(shentsize)
            .and_then(|o| o.checked_add(shoff))
            .filter(|&o| o.saturating_add(0x40) <= bytes.len() as u64)
            .ok_or_else(|| format!("section header {i} lies beyond the end of the file"))?;
        Ok(at as usize)
    };
    // Many sections: the real counts live in section header 0.
    if shnum == 0 {
        shnum = u64_at(bytes, header(0)? + 0x20)?;
    }
    if shstrndx == 0xffff {
        shstrndx = u64::from(u32_at(bytes, header(0)? + 0x28)?);
    }
    let contents = |h: usize| -> Result<&[u8], String> {
        let kind = u32_at(bytes, h + 4)?;
        if kind == 8 {
            return Ok(&[]); // SHT_NOBITS
        }
        let offset = u64_at(bytes, h + 0x18)?;
        let size = u64_at(bytes, h + 0x20)?;
        offset
            .checked_add(size)
            .filter(|&end| end <= bytes.len() as u64)
            .map(|end| &bytes[offset as usize..end as usize])
            .ok_or_else(|| "a section lies beyond the end of the file".to_string())
    };
    if shstrndx >= shnum {
        return Err("no section name table".into());
    }
    let names = contents(header(shstrndx)?)?;
    let mut found: Option<Vec<u8>> = None;
    for i in 0..shnum {
        let h = header(i)?;
        let at = u32_at(bytes, h)? as usize;
        let this = names
            .get(at..)
            .and_then(|rest| rest.split(|&b| b == 0).next())
            .ok_or_else(|| format!("section {i}'s name lies outside the name table"))?;
        if this == name.as_bytes() {
            found
                .get_or_insert_with(Vec::new)
                .extend_from_slice(contents(h)?);
        }
    }
    Ok(found)
}

fn field<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], String> {
    bytes
        .get(at..at.saturating_add(N))
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| "the file is cut short inside its headers".to_string())
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, String> {
    field(bytes, at).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, String> {
    field(bytes, at).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], at: usize) -> Result<u64, String> {
    field(bytes, at).map(u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_test_binary_and_refuses_damage_without_panicking() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
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
