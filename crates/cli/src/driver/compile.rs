//! The compile step of `pathprof cc`: each C or C++ source becomes a native
//! object that counts itself. clang's front end writes the translation unit's
//! IR without optimising it; pathprof simplifies it early (no inlining), plans
//! and instruments every function, embeds the map fragment in the object,
//! then runs the full pipeline at the command line's `-O` level and writes
//! the object. An inlined function's probes travel with it into its callers
//! and count into its own counters, so counts are the source functions'.

use super::args::{Input, InputKind, Invocation};
use super::{exec, settings, without_flags};
use crate::pipeline::instrument_module;
use anyhow::{Context as _, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `pathprof cc -c ...`: every source on the line to its object.
pub(super) fn compile(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    let sources = inv.inputs.len();
    if sources > 1 && inv.output.is_some() {
        return exec(clang, &inv.args); // clang's own error: -o with several inputs
    }
    let base = super::compile_flags(inv);
    for input in &inv.inputs {
        let object = match &inv.output {
            Some((_, o)) => PathBuf::from(o),
            None => default_object(&input.path),
        };
        let code = match input.kind {
            InputKind::Source => compile_source(clang, &base, input, &object, inv)?,
            InputKind::Assembly => clang_on(clang, &base, &[], input, &object)?,
            InputKind::Linker => continue, // clang ignores them with -c too
        };
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where clang puts `-c`'s object for `source` when no `-o` is given.
fn default_object(source: &str) -> PathBuf {
    let stem = Path::new(source)
        .file_stem()
        .map_or_else(|| "a".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.o"))
}

/// Compiles one source to an instrumented native `object`; `base` is the
/// command line without inputs and output, plus `-c`.
pub(super) fn compile_source(
    clang: &Path,
    base: &[String],
    input: &Input,
    object: &Path,
    inv: &Invocation,
) -> Result<ExitCode> {
    let work = tempfile::Builder::new().prefix("pathprof-cc-").tempdir()?;
    let ir = work.path().join("unoptimised.bc");
    let mut args: Vec<String> = base
        .iter()
        .filter(|a| !a.starts_with("-flto"))
        .cloned()
        .collect();
    dependency_file_names(&mut args, object);
    let unoptimised = ["-emit-llvm", "-Xclang", "-disable-llvm-passes"];
    let code = clang_on(clang, &args, &unoptimised, input, &ir)?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let level: pathprof_llvm::OptLevel = inv.opt_level.parse()?;
    let context = pathprof_llvm::Context::create();
    let module = pathprof_llvm::load_bitcode(&context, &ir)?;
    pathprof_llvm::simplify_early(&module, level)?;
    let defines_code = module.get_functions().any(|f| f.count_basic_blocks() > 0);
    if defines_code {
        let map = instrument_module(&module, &settings(&inv.options))
            .with_context(|| format!("instrumenting {}", input.path))?;
        pathprof_llvm::embed_map(&module, &map.to_bytes());
    }
    if let Some(flag) = backend_flag(&args) {
        // clang's back end honours it; pathprof's own would not.
        let verbose = inv.options.verbose;
        return clang_back_end(clang, &args, &module, work.path(), object, flag, verbose);
    }
    pathprof_llvm::optimize(&module, level)?;
    pathprof_llvm::write_object(&module, object, level)?;
    Ok(ExitCode::SUCCESS)
}

/// Flags that act in clang's own optimisation pipeline or code generator
/// (sanitizers, other instrumentation, section layout, `-mllvm`, assembler
/// options), which pathprof's pipeline and object writer do not know.
const CLANG_BACK_END_FLAGS: &[&str] = &[
    "-fsanitize",
    "-fprofile-",
    "-fcs-profile",
    "-fcoverage-",
    "-fxray",
    "-ffunction-sections",
    "-fdata-sections",
    "-fbasic-block-sections",
    "-fsplit-machine-functions",
    "-fstack-size-section",
    "-fembed-bitcode",
    "-gsplit-dwarf",
    "-mllvm",
    "-Wa,",
    "-Xclang",
];

/// The first flag of `args` that needs clang's back end, if any.
fn backend_flag(args: &[String]) -> Option<&str> {
    args.iter()
        .map(String::as_str)
        .find(|a| CLANG_BACK_END_FLAGS.iter().any(|f| a.starts_with(f)))
}

/// Hands the instrumented module to clang (`-x ir`) with the command line's
/// own flags, so that `flag` and everything else clang does in its pipeline
/// and code generator apply to the instrumented code as to the plain build.
fn clang_back_end(
    clang: &Path,
    args: &[String],
    module: &pathprof_llvm::Module<'_>,
    work: &Path,
    object: &Path,
    flag: &str,
    verbose: bool,
) -> Result<ExitCode> {
    if verbose {
        eprintln!("pathprof: {flag} on the command line: clang optimises and generates code");
    }
    let instrumented = work.join("instrumented.bc");
    if !module.write_bitcode_to_path(&instrumented) {
        anyhow::bail!("cannot write {}", instrumented.display());
    }
    // The front end wrote the dependency file already.
    let back_end = without_flags(args, &["-MF", "-MT", "-MQ"], &["-MD", "-MMD", "-MP"]);
    let input = Input {
        index: 0,
        path: instrumented.display().to_string(),
        kind: InputKind::Source,
        language: Some("ir".into()),
    };
    clang_on(clang, &back_end, &[], &input, object)
}

/// `-MD`/`-MMD` name their file and target after the output, which the front
/// end no longer writes: name both after the real object, as clang would.
fn dependency_file_names(args: &mut Vec<String>, object: &Path) {
    if !args.iter().any(|a| a == "-MD" || a == "-MMD") {
        return;
    }
    if !args.iter().any(|a| a.starts_with("-MF")) {
        args.extend([
            "-MF".into(),
            object.with_extension("d").display().to_string(),
        ]);
    }
    if !args
        .iter()
        .any(|a| a.starts_with("-MT") || a.starts_with("-MQ"))
    {
        args.extend(["-MT".into(), object.display().to_string()]);
    }
}

/// Runs clang on one input: `base` (the command line without inputs and
/// output), `extra` flags, the input (in its `-x` language), `-o output`.
/// With no `extra` flags: assembles, or compiles without instrumenting.
pub(super) fn clang_on(
    clang: &Path,
    base: &[String],
    extra: &[&str],
    input: &Input,
    output: &Path,
) -> Result<ExitCode> {
    let mut args = base.to_vec();
    args.extend(extra.iter().map(|s| s.to_string()));
    if let Some(lang) = &input.language {
        args.extend(["-x".into(), lang.clone()]);
    }
    args.extend([
        input.path.clone(),
        "-o".into(),
        output.display().to_string(),
    ]);
    exec(clang, &args)
}
