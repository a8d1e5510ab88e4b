//! Extraction: what the planners and the map file need from each profiled
//! function (docs/formats.md §4): names, source position, the [`Cfg`] and one
//! [`BlockInfo`] per block with instruction counts and source lines.
//!
//! Source files are interned in [`Extracted::files`] as the debug info names them
//! (`directory/filename`, absolute when the compiler knew the directory), in
//! [`normalize_path`]'s lexical form, so that the `DIFile`s of one header
//! included as `sub/../h.h` and `./h.h` are one file. Line 0 (compiler-generated
//! code) is never reported.

use crate::error::LlvmError;
use crate::ffi::{self, FileKey};
use crate::walk::{self, Body};
use inkwell::basic_block::BasicBlock;
use inkwell::module::Module;
use pathprof_core::map::{normalize_path, BlockInfo, LineSpan};
use pathprof_core::Cfg;
use std::collections::HashMap;

/// Everything extracted from a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    /// Source files, indexed by [`LineSpan::file`] and [`ExtractedFunction::file`].
    pub files: Vec<String>,
    /// The profiled functions, in module order.
    pub functions: Vec<ExtractedFunction>,
}

/// One profiled function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractedFunction {
    /// Linkage name (mangled for C++).
    pub name: String,
    /// Demangled name, when it differs from `name`.
    pub display_name: Option<String>,
    /// Index into [`Extracted::files`] of the file with the definition.
    pub file: Option<u32>,
    /// Line of the definition.
    pub line: Option<u32>,
    pub cfg: Cfg,
    /// One per CFG block.
    pub blocks: Vec<BlockInfo>,
}

/// Extracts every profiled function of `module` (this crate's `walk` module
/// says which).
///
/// It first makes every call that returns more than once (`fork`, `setjmp`...)
/// end its block (the `resume` module) and marks the functions that always
/// return `willreturn` (the `returns` module), the changes extraction makes
/// to the module, so that the plans and the instrumentation see the same
/// blocks and the same counted calls.
pub fn extract(module: &Module<'_>) -> Result<Extracted, LlvmError> {
    crate::resume::split_at_resume_points(module)?;
    crate::returns::mark_always_returning(module);
    let mut files = FileTable::default();
    let mut functions = Vec::new();
    for body in walk::bodies(module) {
        functions.push(extract_function(&body, &mut files)?);
    }
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    let shown = crate::demangle::shown_names(&names);
    for (f, shown) in functions.iter_mut().zip(shown) {
        f.display_name = shown;
    }
    Ok(Extracted {
        files: files.names,
        functions,
    })
}

fn extract_function(
    body: &Body<'_>,
    files: &mut FileTable,
) -> Result<ExtractedFunction, LlvmError> {
    let cfg = walk::read_cfg(body)?;
    let (file, line) = match ffi::subprogram_position(body.function) {
        Some((file, line)) => (file.map(|f| files.intern(f)), (line != 0).then_some(line)),
        None => (None, None),
    };
    let blocks = body.blocks.iter().map(|&b| block_info(b, files)).collect();
    Ok(ExtractedFunction {
        name: body.name.clone(),
        display_name: None, // set by `extract` from every function's name
        file,
        line,
        cfg,
        blocks,
    })
}

fn block_info(block: BasicBlock<'_>, files: &mut FileTable) -> BlockInfo {
    let mut info = BlockInfo::default();
    // (file, line) -> index in info.lines
    let mut span_of: HashMap<(u32, u32), usize> = HashMap::new();
    for inst in block.get_instructions() {
        if ffi::is_debug_intrinsic(inst) {
            continue;
        }
        info.instructions += 1;
        let Some((file, line)) = ffi::debug_line(inst) else {
            continue;
        };
        if line == 0 {
            continue;
        }
        info.line.get_or_insert(line);
        let Some(file) = file else {
            continue;
        };
        let file = files.intern(file);
        let next = info.lines.len();
        let i = *span_of.entry((file, line)).or_insert(next);
        if i == next {
            info.lines.push(LineSpan {
                file,
                line,
                instructions: 0,
            });
        }
        info.lines[i].instructions += 1;
    }
    info
}

/// Interns `DIFile`s by node and by normalised path (two nodes may name one
/// file, with the same or different spellings).
#[derive(Default)]
struct FileTable {
    names: Vec<String>,
    by_path: HashMap<String, u32>,
    by_node: HashMap<FileKey, u32>,
}

impl FileTable {
    fn intern(&mut self, file: FileKey) -> u32 {
        if let Some(&i) = self.by_node.get(&file) {
            return i;
        }
        let path = normalize_path(&ffi::file_path(file));
        let next = self.names.len() as u32;
        let i = *self.by_path.entry(path.clone()).or_insert(next);
        if i == next {
            self.names.push(path);
        }
        self.by_node.insert(file, i);
        i
    }
}
