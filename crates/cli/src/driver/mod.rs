//! `pathprof cc` / `pathprof c++`: a drop-in clang. The compile step (`compile`)
//! instruments each translation unit before inlining and writes a native
//! object carrying its map fragment; the link step is the user's own link plus
//! the runtime, and writes the linked file's map. `--whole-program` (`whole`)
//! compiles to bitcode instead and instruments the linked program as one
//! module; `--mode=p3` (`p3`) goes that way and makes K copies of it.
//! Everything else is clang's own behaviour.

pub mod archive;
pub mod args;
pub mod cargo;
mod compile;
pub mod hashed;
mod p3;
mod pgo;
mod whole;

pub use p3::copy_name;

use crate::cli::InstrumentOptions;
use crate::toolchain;
use anyhow::{Context as _, Result};
use args::{Action, InputKind, Invocation};
use pathprof_core::map::MapFile;
use pathprof_llvm::timings::{self, Phase};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// What `pathprof cc --help` prints before clang's help: pathprof's own flags
/// (from their one definition, [`args::options_command`]) and how to use them.
fn usage() -> String {
    format!(
        "\
pathprof cc / pathprof c++: clang or clang++ that builds an instrumented program.
Every clang argument passes through. Each compile (-c) instruments its source
before inlining, optimises at the command line's -O level and writes a native
object that carries its map; a link adds the pathprof runtime and writes
OUTPUT.ppmap (the program or library itself serves as the map too).

pathprof's own flags, anywhere on the line (also from the environment):
{}Run the program with PATHPROF_FILE=FILE to choose the profile (default
default.pprof); see `pathprof --help` for the reports.

clang's own options follow.
",
        args::flags_help()
    )
}

/// Runs the driver on the arguments after `cc` / `c++`.
pub fn run(cxx: bool, raw_args: &[String]) -> Result<ExitCode> {
    if raw_args.iter().any(|a| a == "--help" || a == "-help") {
        crate::commands::print(&format!("{}\n", usage()))?;
        std::io::Write::flush(&mut std::io::stdout())?;
    }
    run_invocation(cxx, args::parse(raw_args)?)
}

/// Runs rustc's link line under `pathprof cargo` (`args` without the
/// marker), as `pathprof cc` does.
fn run_linker_for_cargo(raw_args: &[String]) -> Result<ExitCode> {
    let mut inv = args::parse(raw_args)?;
    inv.options.cargo_link = true;
    run_invocation(false, inv)
}

/// Runs the parsed command line `inv`.
fn run_invocation(cxx: bool, inv: Invocation) -> Result<ExitCode> {
    let started = Instant::now();
    let clang = toolchain::clang(cxx);
    if inv.options.time_report {
        timings::enable();
    }
    let code = match inv.action {
        _ if is_build_probe(&inv) => return exec(&clang, &inv.args),
        _ if inv.options.profile_use.is_some()
            && (inv.action != Action::PassThrough || pgo::is_assembly_output(&inv)) =>
        {
            use_profile(&clang, &inv)?
        }
        Action::PassThrough => return exec(&clang, &inv.args),
        Action::Compile if inv.args.iter().any(|x| x == "-emit-llvm") => {
            return exec(&clang, &inv.args)
        }
        Action::Compile if inv.options.whole_program_route() => {
            let mut a = inv.args.clone();
            a.extend(whole::WHOLE_PROGRAM_BITCODE.iter().map(|s| s.to_string()));
            timings::time(Phase::FrontEnd, || exec(&clang, &a))?
        }
        Action::Compile => compile::compile(&clang, &inv)?,
        Action::Link => link(&clang, &inv)?,
    };
    if inv.options.time_report {
        eprint!("{}", timings::take().table(started.elapsed()));
    }
    Ok(code)
}

/// `--profile-use`: an optimised build, compiled with the profile's counts
/// and linked without the runtime (bitcode inputs of an LTO link carry
/// their counts already).
fn use_profile(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    let profile = inv.options.profile_use.as_deref().expect("--profile-use");
    let prepared = pgo::prepare(inv, profile)?;
    match inv.action {
        Action::Compile => return compile::compile(clang, inv),
        Action::PassThrough => return compile::assembly_with_profile(clang, inv),
        Action::Link => {}
    }
    if whole::has_bitcode_inputs(inv) {
        // rustc's bitcode is the counted program only once linked into one
        // module; a C build's LTO bitcode has its counts from its compiles.
        if inv.options.cargo_link {
            return whole::link(clang, inv, Some(&prepared));
        }
        return pgo::link(clang, inv, &prepared, inv.args.clone());
    }
    let work = tempfile::Builder::new().prefix("pathprof-").tempdir()?;
    let args = compile_sources_for_link(clang, inv, work.path())?;
    let args = match args {
        Ok(args) => args,
        Err(code) => return Ok(code),
    };
    pgo::link(clang, inv, &prepared, args)
}

/// Runs clang with `args`, returning its exit status.
pub(super) fn exec(clang: &Path, args: &[String]) -> Result<ExitCode> {
    exec_with(clang, args, &[])
}

/// Runs clang with `args` and the environment variables `env` set.
pub(super) fn exec_with(clang: &Path, args: &[String], env: &[(&str, &str)]) -> Result<ExitCode> {
    let mut command = Command::new(clang);
    command.args(args).envs(env.iter().copied());
    let status = command.status().with_context(|| {
        format!(
            "cannot run {}; install clang-22 (see the README) or set PATHPROF_CLANG",
            clang.display()
        )
    })?;
    Ok(exit_code(status))
}

pub(super) fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

/// The link step: the whole-program route when asked for or when bitcode is
/// among the inputs, else the user's own link of the (instrumented) objects
/// plus the runtime.
fn link(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    if inv.options.whole_program_route() || whole::has_bitcode_inputs(inv) {
        return whole::link(clang, inv, None);
    }
    let work = tempfile::Builder::new().prefix("pathprof-").tempdir()?;
    match compile_sources_for_link(clang, inv, work.path())? {
        Ok(args) => finish_link(clang, inv, args),
        Err(code) => Ok(code),
    }
}

/// A link line's sources compiled to objects in `work`: the link's
/// arguments with the objects in their place, or the exit status of the
/// compile that failed.
fn compile_sources_for_link(
    clang: &Path,
    inv: &Invocation,
    work: &Path,
) -> Result<Result<Vec<String>, ExitCode>> {
    let base = compile_flags(inv);
    let mut args = inv.args.clone();
    for (n, input) in inv.inputs.iter().enumerate() {
        if input.kind == InputKind::Linker {
            continue;
        }
        let object = work.join(format!("{n}.o"));
        let code = compile::compile_input(clang, &base, input, &object, inv)?;
        if code != ExitCode::SUCCESS {
            return Ok(Err(code));
        }
        args[input.index] = object.display().to_string();
    }
    // `-x c` before a source would make clang read the object as C.
    Ok(Ok(without_flags(&args, &["-x"], &[])))
}

/// Runs the final link (`args` plus the runtime) and, when it succeeds,
/// writes the map of what it linked.
fn finish_link(clang: &Path, inv: &Invocation, args: Vec<String>) -> Result<ExitCode> {
    let code = link_with_runtime(clang, args)?;
    if code == ExitCode::SUCCESS {
        timings::time(Phase::Link, || write_map(inv))?;
    }
    Ok(code)
}

/// Runs a link: `args` plus the runtime (the same archive for C, C++ and
/// Rust programs: it holds no Rust standard library, and every symbol of
/// its own but the C ABI and the functions it interposes is local).
fn link_with_runtime(clang: &Path, mut args: Vec<String>) -> Result<ExitCode> {
    let runtime = toolchain::runtime()?;
    args.extend(runtime_args(&args, &runtime));
    timings::time(Phase::Link, || exec(clang, &args))
}

/// The link step's output (`a.out` when there is no `-o`).
fn output_of(inv: &Invocation) -> &str {
    inv.output.as_ref().map_or("a.out", |(_, o)| o.as_str())
}

/// `inv`'s arguments with `output` for the link's output: the same
/// arguments at the same places (an `-o` added at the end when there was
/// none).
fn with_output(inv: &Invocation, output: &str) -> Vec<String> {
    let mut args = inv.args.clone();
    match inv.output {
        Some((i, _)) if args[i] == "-o" => args[i + 1] = output.to_string(),
        Some((i, _)) => args[i] = format!("-o{output}"),
        None => args.extend(["-o".to_string(), output.to_string()]),
    }
    args
}

/// What links the runtime: its archive and the libraries it needs; nothing for
/// a relocatable (`-r`) link. A shared library exports none of its symbols
/// (each library has a copy of its own, hidden); an executable exports one,
/// `__pathprof_runtime_v1`, where the libraries' copies find the executable's
/// runtime and hand their modules over to it (one active runtime per
/// process: see the runtime's `active` module). GNU ld (2.40 here) and
/// lld (22) both take `--export-dynamic-symbol`; a static link, or one with
/// nothing instrumented (no runtime linked in), ignores it.
fn runtime_args(args: &[String], runtime: &Path) -> Vec<String> {
    if args
        .iter()
        .any(|a| a == "-r" || a == "-Wl,-r" || a == "--relocatable")
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    if args.iter().any(|a| a == "-shared") {
        out.push("-Wl,--exclude-libs,libpathprof_rt.a".to_string());
    } else {
        out.push("-Wl,--export-dynamic-symbol=__pathprof_runtime_v1".to_string());
    }
    out.push(runtime.display().to_string());
    out.extend(toolchain::RUNTIME_LIBS.iter().map(|&lib| lib.to_string()));
    out
}

/// Writes the linked file's map fragments (read back from it) to `--map`'s
/// file, or to `OUTPUT.ppmap`; not for an `a.out` (a probe's output: the
/// map travels in the file anyway), nor when nothing linked was
/// instrumented. Warns when the
/// objects were instrumented otherwise than this command line's `--mode` or
/// `--atomic` ask: those act when compiling;
/// notes the functions of what it linked that count paths in hash tables
/// (not for a relocatable link, whose objects a later link notes).
fn write_map(inv: &Invocation) -> Result<()> {
    let output = output_of(inv);
    let path = map_path(inv, output);
    // The list's functions that nothing linked has (each object only knew
    // its own); not for a relocatable link, which is not the whole program.
    let relocatable = inv.args.iter().any(|a| a == "-r" || a == "-Wl,-r");
    let list = match (&inv.options.interesting, relocatable) {
        (Some(list_path), false) if inv.options.mode.ppp() => Some(list_path),
        _ => None,
    };
    let o = &inv.options;
    let Some(fragments) = linked_map(Path::new(output))? else {
        return Ok(());
    };
    warn_on_link_only_options(inv, output, &fragments);
    if !relocatable {
        hashed::note(&fragments, output, o);
    }
    if let Some(list_path) = list {
        let list = pathprof_llvm::pipeline::read_interesting(list_path)?;
        let maps: Vec<&MapFile> = fragments.iter().collect();
        crate::report::ppp::warn_unknown(&list, list_path, &maps, o.verbose);
    }
    let Some(path) = path else {
        return Ok(());
    };
    pathprof_io::map::write_fragments(&path, &fragments)
        .with_context(|| format!("cannot write the map file {}", path.display()))
}

/// The map fragments a linked file carries; `None` when nothing linked into
/// it was instrumented.
fn linked_map(file: &Path) -> Result<Option<Vec<MapFile>>> {
    match pathprof_io::map::read_fragments(file) {
        Ok(f) => Ok(Some(f)),
        Err(pathprof_core::map::MapError::NoMapSection { .. }) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading back the map of {}", file.display())),
    }
}

/// The file `OUTPUT<suffix>` beside a build's `output` (its map, a P3 copy).
fn beside_output(output: &Path, suffix: &str) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The map a build of `output` writes unless `--map` says otherwise:
/// `OUTPUT.ppmap`.
pub fn default_map_path(output: &Path) -> PathBuf {
    beside_output(output, ".ppmap")
}

/// Where the link's map goes: `--map`'s file, or `OUTPUT.ppmap`; none for an
/// `a.out`, what configure scripts link their first probe to (the map
/// travels in the file anyway).
fn map_path(inv: &Invocation, output: &str) -> Option<PathBuf> {
    if let Some(p) = &inv.options.map {
        return Some(p.clone());
    }
    (file_name(output) != "a.out").then(|| default_map_path(Path::new(output)))
}

/// The file name of a link's `output` (empty when it has none).
pub(super) fn file_name(output: &str) -> String {
    Path::new(output)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether `inv` builds a build system's probe of the compiler: autoconf's
/// `conftest` programs, CMake's `try_compile` and `try_run` projects
/// (`CMakeScratch`, `CMakeTmp`, `cmTC_*`), meson's compiler checks
/// (`meson-private`). A probe is built exactly as clang builds it, with no
/// probes and no runtime: it tests the compiler, and its runs would write
/// profiles into the build directory.
fn is_build_probe(inv: &Invocation) -> bool {
    let paths = inv.inputs.iter().map(|i| PathBuf::from(&i.path));
    let output = inv.output.as_ref().map(|(_, o)| PathBuf::from(o));
    // CMake and meson run the compiler in the probe's own directory.
    let cwd = std::env::current_dir().ok();
    let mut paths = paths.chain(output).chain(cwd);
    paths.any(|path| {
        let conftest = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("conftest"));
        conftest
            || path.components().any(|c| {
                let c = c.as_os_str().to_string_lossy();
                c == "CMakeScratch"
                    || c == "CMakeTmp"
                    || c == "meson-private"
                    || c.starts_with("cmTC_")
            })
    })
}

/// Says so when `--mode` or `--atomic` on a link line differ from how the
/// linked objects were instrumented (they were compiled without them).
fn warn_on_link_only_options(inv: &Invocation, output: &str, fragments: &[MapFile]) {
    let o = &inv.options;
    let other_mode = fragments
        .iter()
        .find(|f| o.mode_given && f.mode != o.mode.mode);
    if let Some(f) = other_mode {
        eprintln!(
            "pathprof: warning: --mode={} has no effect when linking: objects in {output} were \
             compiled in {} mode. Give --mode to every `pathprof cc -c` (or set PATHPROF_MODE \
             for the whole build)",
            o.mode.name(),
            f.mode.name()
        );
    }
    if o.atomic && fragments.iter().any(|f| !f.atomic) {
        eprintln!(
            "pathprof: warning: --atomic has no effect when linking: objects in {output} were \
             compiled without it. Give --atomic to every `pathprof cc -c` (or set \
             PATHPROF_ATOMIC=1 for the whole build)"
        );
    }
}

/// `args` without the flags `with_value` (as `-F VALUE` or `-FVALUE`) and
/// the flags `alone`.
pub(super) fn without_flags(args: &[String], with_value: &[&str], alone: &[&str]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        if with_value.contains(&a.as_str()) {
            skip = true;
        } else if !alone.contains(&a.as_str()) && !with_value.iter().any(|f| a.starts_with(f)) {
            out.push(a.clone());
        }
    }
    out
}

/// Instruments `module` in place as `o` asks and returns its map, after
/// drawing each function's path DAG into `--dot-dir`, if given.
pub fn instrument(module: &pathprof_llvm::Module<'_>, o: &InstrumentOptions) -> Result<MapFile> {
    let map = pathprof_llvm::pipeline::instrument_module(module, &o.settings())?;
    draw_dags(&map, o)?;
    Ok(map)
}

/// Writes the DOT file of each of `map`'s path DAGs into `--dot-dir`, if given.
fn draw_dags(map: &MapFile, o: &InstrumentOptions) -> Result<()> {
    match &o.dot_dir {
        Some(dir) => crate::report::dot::write_all(map, dir),
        None => Ok(()),
    }
}

/// The command line minus inputs and output, plus `-c`, for compiling sources
/// one by one.
pub(super) fn compile_flags(inv: &Invocation) -> Vec<String> {
    let mut skip = vec![false; inv.args.len()];
    for input in &inv.inputs {
        skip[input.index] = true;
    }
    if let Some((i, _)) = inv.output {
        skip[i] = true;
        if inv.args[i] == "-o" {
            skip[i + 1] = true;
        }
    }
    let mut out: Vec<String> = inv
        .args
        .iter()
        .zip(&skip)
        .filter(|(_, &s)| !s)
        .map(|(a, _)| a.clone())
        .collect();
    out.extend(["-c".into(), "-Wno-unused-command-line-argument".into()]);
    out
}
