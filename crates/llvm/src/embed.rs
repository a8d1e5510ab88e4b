//! Carrying a map fragment in the object file: module-level assembly that puts
//! the fragment's bytes into the non-allocated ELF section [`MAP_SECTION`]
//! (and an optimised build's profile-use note into its own section, alike).
//!
//! Linkers concatenate same-named sections, never garbage-collect sections
//! that are not loaded, and `strip` keeps them, so every executable and shared
//! library ends up holding exactly the fragments of the objects linked into
//! it, in one section that the reports read (`pathprof_core::map`).

use inkwell::module::Module;

/// The section that holds map fragments (not loaded at run time).
pub const MAP_SECTION: &str = ".pathprof.map";

/// Appends `bytes` to the module's [`MAP_SECTION`] (after any module-level
/// assembly the module already has).
pub fn embed_map(module: &Module<'_>, bytes: &[u8]) {
    embed_section(module, MAP_SECTION, bytes);
}

/// Appends `bytes` to the module's non-allocated ELF section `section`.
pub fn embed_section(module: &Module<'_>, section: &str, bytes: &[u8]) {
    let mut asm = format!("\t.pushsection {section},\"\",@progbits\n");
    // `.base64` keeps the text at 4/3 of the bytes (LLVM's assembler reads it).
    for chunk in bytes.chunks(48 * 1024) {
        asm.push_str("\t.base64 \"");
        base64(chunk, &mut asm);
        asm.push_str("\"\n");
    }
    asm.push_str("\t.popsection\n");
    crate::ffi::append_module_asm(module, &asm);
}

/// Standard base64 with padding, appended to `out`.
fn base64(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    out.reserve(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [
            group[0],
            group.get(1).copied().unwrap_or(0),
            group.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= group.len() {
                out.push(DIGITS[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::base64;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            let mut out = String::new();
            base64(plain.as_bytes(), &mut out);
            assert_eq!(out, coded, "{plain:?}");
        }
    }
}
