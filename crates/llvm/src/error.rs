//! The crate's one error type, [`LlvmError`]: every failure of loading, extraction,
//! instrumentation, optimisation or code generation, each saying what went wrong and
//! what to do about it.

use pathprof_core::CfgError;

/// Why an LLVM step failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlvmError {
    /// A bitcode or IR file could not be read or parsed.
    #[error("cannot load {name}: {message}; pass LLVM 22 bitcode (clang-22 -c -emit-llvm) or textual IR")]
    Load { name: String, message: String },

    /// Two modules could not be linked into one.
    #[error("cannot link {name} into the program: {message}; check that the inputs do not define the same symbol twice and were built by the same LLVM")]
    Link { name: String, message: String },

    /// A function's control-flow graph could not be built.
    #[error("function `{function}`: {source}")]
    Cfg {
        function: String,
        #[source]
        source: CfgError,
    },

    /// A block has no terminator: the module is not valid IR.
    #[error("function `{function}`: block {block} has no terminator; the module is not valid LLVM IR (run it through `opt -passes=verify`)")]
    NoTerminator { function: String, block: u32 },

    /// `plans` (or `hashes`) does not have one entry per extracted function.
    #[error("{what} has {found} entries but the module has {expected} instrumentable functions; extract and instrument the same module, with one plan per extracted function")]
    CountMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },

    /// A function's shape is not the one the plan was made for.
    #[error("function `{function}` has CFG hash {found:016x} but its plan was made for {expected:016x}; extract and instrument the same, unmodified module")]
    HashMismatch {
        function: String,
        expected: u64,
        found: u64,
    },

    /// A plan asks for something the function cannot have.
    #[error("function `{function}`: the plan is invalid: {detail}; this is a bug in the planner")]
    BadPlan { function: String, detail: String },

    /// The IR has a construct pathprof cannot instrument.
    #[error("function `{function}`: {detail}; leave this function out of the plan (an empty plan) or use block mode")]
    Unsupported { function: String, detail: String },

    /// The module already has pathprof's registration globals.
    #[error("the module is already instrumented (it defines `{symbol}`); instrument the original bitcode")]
    AlreadyInstrumented { symbol: String },

    /// LLVM's verifier rejected the module after instrumentation.
    #[error("the instrumented module is not valid LLVM IR (a pathprof bug, please report it): {message}")]
    Verify { message: String },

    /// An optimisation level name was not recognised.
    #[error("unknown optimisation level `{0}`: expected O0, O1, O2, O3, Os or Oz")]
    BadOptLevel(String),

    /// No target machine could be created for the module's triple.
    #[error("cannot generate code for target `{triple}`: {message}; build the bitcode for the host or a target this LLVM supports (x86-64, AArch64)")]
    Target { triple: String, message: String },

    /// The optimisation pipeline failed.
    #[error("the LLVM pipeline `{passes}` failed: {message}")]
    Passes { passes: String, message: String },

    /// The object file could not be written.
    #[error("cannot write the object file {path}: {message}; check that the directory exists and is writable")]
    WriteObject { path: String, message: String },
}
