//! The compile step of `pathprof cc`: each C or C++ source becomes a native
//! object that counts itself, in one clang process with pathprof's pass
//! plugin (`crates/plugin`): at the start of clang's pipeline the plugin
//! simplifies the translation unit early (no inlining), plans and instruments
//! every function and embeds the map fragment; clang then runs the full
//! pipeline at the command line's `-O` level and writes the object. An
//! inlined function's probes travel with it into its callers and count into
//! its own counters, so counts are the source functions'.

use super::args::{Input, InputKind, Invocation};
use super::{exec, exec_with};
use crate::toolchain;
use anyhow::{Context as _, Result};
use pathprof_llvm::pipeline::PLUGIN_SETTINGS_VARIABLE;
use pathprof_llvm::timings::{self, Phase, PluginTimings};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, SystemTime};

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
        if input.kind == InputKind::Linker {
            continue; // clang ignores them with -c too
        }
        let code = compile_input(clang, &base, input, &object, inv)?;
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

/// Compiles one source (instrumented) or assembly file to `object`; `base`
/// is the command line without inputs and output, plus `-c`.
pub(super) fn compile_input(
    clang: &Path,
    base: &[String],
    input: &Input,
    object: &Path,
    inv: &Invocation,
) -> Result<ExitCode> {
    match input.kind {
        InputKind::Source => compile_source(clang, base, input, object, inv),
        _ => timings::time(Phase::FrontEnd, || {
            clang_on(clang, base, &[], input, object)
        }),
    }
}

/// Compiles one source to an instrumented native `object`; `base` is the
/// command line without inputs and output, plus `-c`. clang does it all, with
/// pathprof's pass plugin loaded: the plugin simplifies each function early,
/// plans and instruments it and embeds the map fragment at the start of
/// clang's pipeline, before inlining; clang then optimises at the command
/// line's level and writes the object, with every flag it was given. With
/// `--time-report` the plugin hands the phases it timed over in a file.
fn compile_source(
    clang: &Path,
    base: &[String],
    input: &Input,
    object: &Path,
    inv: &Invocation,
) -> Result<ExitCode> {
    let plugin = toolchain::plugin()?;
    let profile_use = super::pgo::index_path();
    let mut args: Vec<String> = base
        .iter()
        // An instrumented object must be native; an optimised one may be
        // bitcode for the user's LTO link.
        .filter(|a| profile_use.is_some() || !a.starts_with("-flto"))
        .cloned()
        .collect();
    args.push(format!("-fpass-plugin={}", plugin.display()));
    let mut settings = plugin_settings(inv);
    let timings_file = timings::enabled()
        .then(|| tempfile::Builder::new().prefix("pathprof-time-").tempfile())
        .transpose()?;
    settings.timings_file = timings_file.as_ref().map(|f| f.path().to_path_buf());
    let settings = serde_json::to_string(&settings)?;
    let (spawned, start) = (SystemTime::now(), Instant::now());
    let code = clang_on(
        clang,
        &args,
        &[(PLUGIN_SETTINGS_VARIABLE, &settings)],
        input,
        object,
    )?;
    if let Some(file) = timings_file {
        let wall = start.elapsed();
        // Empty when the plugin did not get to the end of optimisation.
        let plugin: Option<PluginTimings> = std::fs::read(file.path())
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok());
        timings::record(|t| t.add_clang_run(spawned, wall, plugin.as_ref()));
    }
    if code == ExitCode::SUCCESS && profile_use.is_none() {
        draw_dags_of(object, &inv.options.instrument)?;
    }
    Ok(code)
}

/// `pathprof cc --profile-use -S`: clang's own command line with the pass
/// plugin, which gives the functions their counts before the assembly or
/// IR text is written.
pub(super) fn assembly_with_profile(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    let mut args = inv.args.clone();
    args.push(format!("-fpass-plugin={}", toolchain::plugin()?.display()));
    let settings = serde_json::to_string(&plugin_settings(inv))?;
    exec_with(clang, &args, &[(PLUGIN_SETTINGS_VARIABLE, &settings)])
}

/// What the pass plugin is told: the instrumentation flags, and the indexed
/// profile to use instead when `--profile-use` made one ready.
fn plugin_settings(inv: &Invocation) -> pathprof_llvm::pipeline::Settings {
    let mut settings = inv.options.instrument.settings();
    settings.profile_use = super::pgo::index_path().map(Path::to_path_buf);
    settings.duplicate_hot_paths = inv.options.duplicate_hot_paths;
    settings
}

/// `--dot-dir` at compile time: the DAGs of the map fragment `object` carries.
fn draw_dags_of(object: &Path, o: &crate::cli::InstrumentOptions) -> Result<()> {
    if o.dot_dir.is_none() {
        return Ok(());
    }
    let fragments = pathprof_io::map::read_fragments(object)
        .with_context(|| format!("reading the map fragment of {}", object.display()))?;
    fragments
        .iter()
        .try_for_each(|map| super::draw_dags(map, o))
}

/// Runs clang on one input: `base` (the command line without inputs and
/// output), the input (in its `-x` language), `-o output`, with `env` set.
pub(super) fn clang_on(
    clang: &Path,
    base: &[String],
    env: &[(&str, &str)],
    input: &Input,
    output: &Path,
) -> Result<ExitCode> {
    let mut args = base.to_vec();
    if let Some(lang) = &input.language {
        args.extend(["-x".into(), lang.clone()]);
    }
    args.extend([
        input.path.clone(),
        "-o".into(),
        output.display().to_string(),
    ]);
    exec_with(clang, &args, env)
}
