//! pathprof-llvm: the LLVM 22 side of pathprof.
//!
//! Pipeline: [`load_bitcode`] / [`link_bitcode_files`] a whole program, [`extract`]
//! each function's CFG and source lines (for the planners and the map file),
//! [`instrument`] it with the plans, then [`optimize`] and [`write_object`].
//! [`pipeline`] strings extraction, planning, instrumentation and the map
//! together, as every route of `pathprof cc` uses them; [`call_sites`]
//! counts each function's call sites for P3; [`timings`] records how long
//! each phase took (`--time-report`). [`annotate`] gives an optimised
//! build's functions their counts from an indexed profile instead.
//! Contracts with the other crates: `docs/formats.md` §1, §2 and §4.
//!
//! ```no_run
//! use pathprof_llvm::{extract, instrument, optimize, write_object, Context, ModuleInfo, OptLevel};
//! # fn plans_for(e: &pathprof_llvm::Extracted) -> Vec<pathprof_core::plan::FunctionPlan> { vec![] }
//! let context = Context::create();
//! let module = pathprof_llvm::load_bitcode(&context, "prog.bc".as_ref())?;
//! let extracted = extract(&module)?;
//! let plans = plans_for(&extracted);
//! let info = ModuleInfo {
//!     mode: pathprof_core::Mode::Path,
//!     build_id: 42,
//!     hashes: extracted.functions.iter().map(|f| f.cfg.shape_hash()).collect(),
//!     atomic: false,
//!     continuous: false,
//! };
//! instrument(&module, &plans, &info)?;
//! optimize(&module, OptLevel::O2)?;
//! write_object(&module, "prog.o".as_ref(), OptLevel::O2)?;
//! # Ok::<(), pathprof_llvm::LlvmError>(())
//! ```

mod bitcode;
mod callgraph;
mod codegen;
mod demangle;
mod duplicate;
mod embed;
mod error;
mod extract;
mod ffi;
mod instrument;
pub mod pipeline;
mod profile_use;
mod resume;
mod returns;
mod structors;
pub mod timings;
mod walk;

pub use bitcode::{is_bitcode, link_bitcode_files, link_into, load_bitcode, parse_bitcode};
pub use callgraph::call_sites;
pub use codegen::{
    host_triple, optimize, simplify_early, write_object, OptLevel, EARLY_SIMPLIFICATION,
};
pub use embed::{embed_map, embed_section, MAP_SECTION};
pub use error::LlvmError;
pub use extract::{extract, Extracted, ExtractedFunction};
pub use instrument::{instrument, ModuleInfo};
pub use profile_use::{annotate, UseOptions};

/// The inkwell version this crate is built with, so callers need no dependency of
/// their own.
pub use inkwell;
pub use inkwell::context::Context;
pub use inkwell::module::Module;
