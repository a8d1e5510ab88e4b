//! Bitcode in: loading one file, parsing bytes (e.g. an archive member the caller
//! extracted), and linking several modules into one whole program.
//!
//! Inputs are LLVM bitcode (raw or in the wrapper clang uses on Darwin); textual IR
//! (`.ll`) is accepted too, which is handy for tests and hand-written IR.

use crate::error::LlvmError;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use std::path::Path;

/// Loads the bitcode (or textual IR) file at `path`.
pub fn load_bitcode<'ctx>(context: &'ctx Context, path: &Path) -> Result<Module<'ctx>, LlvmError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| LlvmError::Load {
        name: name.clone(),
        message: e.to_string(),
    })?;
    parse_bitcode(context, &bytes, &name)
}

/// Parses bitcode (or textual IR) held in memory; `name` becomes the module's
/// identifier and is used in messages.
pub fn parse_bitcode<'ctx>(
    context: &'ctx Context,
    bytes: &[u8],
    name: &str,
) -> Result<Module<'ctx>, LlvmError> {
    let load_error = |message: String| LlvmError::Load {
        name: name.to_string(),
        message,
    };
    if bytes.is_empty() {
        return Err(load_error("the file is empty".to_string()));
    }
    let buffer = MemoryBuffer::create_from_memory_range_copy(bytes, name);
    if is_bitcode(bytes) {
        Module::parse_bitcode_from_buffer(&buffer, context).map_err(|e| load_error(e.to_string()))
    } else if looks_like_text(bytes) {
        context
            .create_module_from_ir(buffer)
            .map_err(|e| load_error(e.to_string()))
    } else {
        Err(load_error(
            "it is neither LLVM bitcode nor textual IR (an object file or archive?)".to_string(),
        ))
    }
}

/// Links `other` into `program`; `name` names `other` in messages.
pub fn link_into<'ctx>(
    program: &Module<'ctx>,
    other: Module<'ctx>,
    name: &str,
) -> Result<(), LlvmError> {
    program.link_in_module(other).map_err(|e| LlvmError::Link {
        name: name.to_string(),
        message: e.to_string(),
    })
}

/// Loads every file of `paths` and links them, in order, into one module.
pub fn link_bitcode_files<'ctx, P: AsRef<Path>>(
    context: &'ctx Context,
    paths: &[P],
) -> Result<Module<'ctx>, LlvmError> {
    let Some((first, rest)) = paths.split_first() else {
        return Err(LlvmError::Load {
            name: "the program".to_string(),
            message: "no bitcode files were given".to_string(),
        });
    };
    let program = load_bitcode(context, first.as_ref())?;
    for path in rest {
        let module = load_bitcode(context, path.as_ref())?;
        link_into(&program, module, &path.as_ref().display().to_string())?;
    }
    Ok(program)
}

/// Whether `bytes` start like LLVM bitcode: raw (`BC` 0xC0DE) or in the
/// bitcode wrapper (0x0B17C0DE, little endian). Four bytes answer it, so a
/// caller sniffing files may read only their first bytes.
pub fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(&[b'B', b'C', 0xC0, 0xDE]) || bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// Text without NULs, judged on its first 4 KiB (a character cut at the end is
/// fine).
fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    };
    utf8 && !head.contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_raw_and_wrapped_bitcode() {
        assert!(is_bitcode(b"BC\xC0\xDE\x35\x14"));
        assert!(is_bitcode(&[0xDE, 0xC0, 0x17, 0x0B, 0, 0, 0, 0]));
        assert!(!is_bitcode(b"BC\xC0"));
        assert!(!is_bitcode(b"\x7fELF\x02\x01"));
        assert!(!is_bitcode(b"!<arch>\n"));
    }

    #[test]
    fn rejects_what_is_not_ir() {
        let context = Context::create();
        let err = parse_bitcode(&context, b"\x7fELF\x02\x01\x01\0\0", "a.o").unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot load a.o: it is neither LLVM bitcode nor textual IR (an object file or archive?); \
             pass LLVM 22 bitcode (clang-22 -c -emit-llvm) or textual IR"
        );
        let err = parse_bitcode(&context, b"BC\xC0\xDEgarbage", "b.bc").unwrap_err();
        assert!(err.to_string().starts_with("cannot load b.bc: "), "{err}");
        let err = link_bitcode_files::<&Path>(&context, &[]).unwrap_err();
        assert!(err.to_string().contains("no bitcode files were given"));
    }

    #[test]
    fn parses_and_links_text() {
        let context = Context::create();
        let a = parse_bitcode(&context, b"define i32 @f() {\n  ret i32 1\n}\n", "a.ll").unwrap();
        let b = parse_bitcode(
            &context,
            b"declare i32 @f()\ndefine i32 @g() {\n  %x = call i32 @f()\n  ret i32 %x\n}\n",
            "b.ll",
        )
        .unwrap();
        link_into(&a, b, "b.ll").unwrap();
        assert!(a
            .get_function("g")
            .is_some_and(|g| g.count_basic_blocks() == 1));
        let dup = parse_bitcode(&context, b"define i32 @f() {\n  ret i32 2\n}\n", "c.ll").unwrap();
        let err = link_into(&a, dup, "c.ll").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot link c.ll into the program: "),
            "{err}"
        );
    }
}
