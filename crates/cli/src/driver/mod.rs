//! `pathprof cc` / `pathprof c++`: a drop-in clang that compiles to bitcode and,
//! at the link step, links all bitcode into one module (whole program, as the
//! LLVM path-profiling notes require), instruments, optimises, generates code and
//! links it with the runtime. Everything else is clang's own behaviour.

pub mod archive;
pub mod args;

use crate::pipeline::{instrument_module, Settings};
use crate::toolchain;
use anyhow::{bail, Context as _, Result};
use args::{Action, InputKind, Invocation};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// pathprof's own flags, shown by `pathprof cc --help` before clang's.
const USAGE: &str = "\
pathprof cc / pathprof c++: clang or clang++ that builds an instrumented program.
Every clang argument passes through; the link step instruments, optimises at the
command line's -O level and links the pathprof runtime, and writes PROGRAM.ppmap.

pathprof's own flags (also from the environment):
  --mode=block|edge|path  what to count (PATHPROF_MODE; default path)
  --map=FILE              the map to write (PATHPROF_MAP; default OUTPUT.ppmap)
  --max-paths=N           most acyclic paths per function before paths are cut
                          (PATHPROF_MAX_PATHS)
  --array-limit=N         functions with at most N paths count into arrays,
                          others into hash tables (PATHPROF_ARRAY_LIMIT)
  --atomic                thread-safe counter updates (PATHPROF_ATOMIC=1)
  --early-exit            count executions cut short inside calls (exit, longjmp)
                          exactly (PATHPROF_EARLY_EXIT=1)
  --pathprof-verbose      say what the link step does (PATHPROF_VERBOSE=1)
Run the program with PATHPROF_FILE=FILE to choose the profile (default
default.pprof); see `pathprof --help` for the reports.

clang's own options follow.
";

/// Runs the driver on the arguments after `cc` / `c++`.
pub fn run(cxx: bool, raw_args: &[String]) -> Result<ExitCode> {
    if raw_args.iter().any(|a| a == "--help" || a == "-help") {
        println!("{USAGE}");
        std::io::Write::flush(&mut std::io::stdout())?;
    }
    let options = args::options_from_env()?;
    let inv = args::parse(raw_args, options)?;
    let clang = toolchain::clang(cxx);
    match inv.action {
        Action::PassThrough => exec(&clang, &inv.args),
        Action::Compile => {
            let mut a = inv.args.clone();
            if !a.iter().any(|x| x == "-emit-llvm") {
                a.push("-flto=full".into());
            }
            exec(&clang, &a)
        }
        Action::Link => link(&clang, &inv),
    }
}

/// Runs clang with `args`, returning its exit status.
fn exec(clang: &Path, args: &[String]) -> Result<ExitCode> {
    let status = Command::new(clang).args(args).status().with_context(|| {
        format!(
            "cannot run {}; install clang-22 (see the README) or set PATHPROF_CLANG",
            clang.display()
        )
    })?;
    Ok(exit_code(status))
}

fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

/// The link step.
fn link(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    let work = tempfile::Builder::new().prefix("pathprof-").tempdir()?;
    let mut bitcode: Vec<PathBuf> = Vec::new();
    // Replacement for each input on the final link line (None = drop it).
    let mut replace: Vec<(usize, Option<String>)> = Vec::new();
    let compile_args = compile_flags(inv);
    for (n, input) in inv.inputs.iter().enumerate() {
        match input.kind {
            InputKind::Source | InputKind::Assembly => {
                let obj = work.path().join(format!("{n}.o"));
                let mut a = compile_args.clone();
                if input.kind == InputKind::Source {
                    a.push("-flto=full".into());
                }
                if let Some(lang) = &input.language {
                    a.extend(["-x".into(), lang.clone()]);
                }
                a.extend([input.path.clone(), "-o".into(), obj.display().to_string()]);
                let code = exec(clang, &a)?;
                if code != ExitCode::SUCCESS {
                    return Ok(code);
                }
                if input.kind == InputKind::Source {
                    bitcode.push(obj);
                    replace.push((input.index, None));
                } else {
                    replace.push((input.index, Some(obj.display().to_string())));
                }
            }
            InputKind::Linker => {
                let Ok(bytes) = std::fs::read(&input.path) else {
                    continue; // clang reports missing files itself
                };
                if archive::is_bitcode(&bytes) {
                    bitcode.push(PathBuf::from(&input.path));
                    replace.push((input.index, None));
                } else if archive::is_archive(&bytes) {
                    if let Some(native) =
                        split_archive(&bytes, &input.path, n, work.path(), &mut bitcode)?
                    {
                        replace.push((input.index, native));
                    }
                }
            }
        }
    }
    // `-lNAME` found as a static archive in a `-L` directory (not shadowed by a
    // shared library) may hold bitcode too.
    for (k, (index, name, separate)) in inv.libraries.iter().enumerate() {
        let Some(archive) = static_library(&inv.library_dirs, name) else {
            continue;
        };
        let bytes = std::fs::read(&archive)?;
        let n = inv.inputs.len() + k;
        if let Some(native) = split_archive(
            &bytes,
            &archive.display().to_string(),
            n,
            work.path(),
            &mut bitcode,
        )? {
            replace.push((*index, native));
            if *separate {
                replace.push((index + 1, None));
            }
        }
    }
    if bitcode.is_empty() {
        return exec(clang, &inv.args);
    }
    let context = pathprof_llvm::Context::create();
    let module = pathprof_llvm::link_bitcode_files(&context, &bitcode)?;
    let output = inv.output.as_ref().map_or("a.out", |(_, o)| o.as_str());
    let map_path = inv
        .options
        .map
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{output}.ppmap")));
    let o = &inv.options;
    let mut settings = Settings::new(o.mode, o.max_paths, o.array_limit, o.early_exit, o.atomic);
    settings.verbose = o.verbose;
    let map = instrument_module(&module, &settings)?;
    let level: pathprof_llvm::OptLevel = inv.opt_level.parse()?;
    pathprof_llvm::optimize(&module, level)?;
    let object = work.path().join("pathprof-program.o");
    pathprof_llvm::write_object(&module, &object, level)?;

    // The program object takes the place of the first input that gave it
    // bitcode, so libraries named after that input are searched for it, as
    // they would have been for the plain objects (also under --as-needed).
    let program_at = replace
        .iter()
        .map(|&(i, _)| i)
        .min()
        .expect("bitcode came from some input");
    let mut final_args: Vec<String> = Vec::with_capacity(inv.args.len() + 8);
    for (i, a) in inv.args.iter().enumerate() {
        if i == program_at {
            final_args.push(object.display().to_string());
        }
        match replace.iter().find(|(idx, _)| *idx == i) {
            Some((_, Some(r))) => final_args.push(r.clone()),
            Some((_, None)) => {}
            None if a.starts_with("-flto") || a == "-emit-llvm" => {}
            None => final_args.push(a.clone()),
        }
    }
    final_args.push(toolchain::runtime()?.display().to_string());
    final_args.extend(toolchain::RUNTIME_LIBS.iter().map(|s| s.to_string()));
    let code = exec(clang, &final_args)?;
    if code == ExitCode::SUCCESS {
        // Only a program that exists gets a map, so a failed link leaves no
        // map that matches nothing.
        map.write(&map_path)
            .with_context(|| format!("cannot write the map file {}", map_path.display()))?;
    }
    Ok(code)
}

/// Where the linker would find `-lNAME` as a static archive: the first `-L`
/// directory holding `libNAME.so` or `libNAME.a`, if that is the archive.
fn static_library(dirs: &[String], name: &str) -> Option<PathBuf> {
    for dir in dirs {
        let dir = Path::new(dir);
        if dir.join(format!("lib{name}.so")).exists() {
            return None;
        }
        let archive = dir.join(format!("lib{name}.a"));
        if archive.exists() {
            return Some(archive);
        }
    }
    None
}

/// The command line minus inputs and output, plus `-c`, for compiling sources
/// one by one.
fn compile_flags(inv: &Invocation) -> Vec<String> {
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

/// Pulls the bitcode members out of an archive; returns what replaces it on the
/// link line (`Some(Some(path))` a native-only archive, `Some(None)` nothing,
/// `None` the archive unchanged when it holds no bitcode).
fn split_archive(
    bytes: &[u8],
    path: &str,
    n: usize,
    work: &Path,
    bitcode: &mut Vec<PathBuf>,
) -> Result<Option<Option<String>>> {
    let members = archive::members(bytes).with_context(|| format!("reading archive {path}"))?;
    if !members.iter().any(|m| archive::is_bitcode(m.data)) {
        return Ok(None);
    }
    let dir = work.join(format!("archive{n}"));
    std::fs::create_dir_all(&dir)?;
    let mut native = Vec::new();
    for (k, m) in members.iter().enumerate() {
        let file = dir.join(format!("{k}_{}", m.name.replace('/', "_")));
        std::fs::write(&file, m.data)?;
        if archive::is_bitcode(m.data) {
            bitcode.push(file);
        } else {
            native.push(file);
        }
    }
    if native.is_empty() {
        return Ok(Some(None));
    }
    let out = work.join(format!("native{n}.a"));
    let ar = Path::new("/usr/lib/llvm-22/bin/llvm-ar");
    let ar = if ar.exists() {
        ar.to_path_buf()
    } else {
        PathBuf::from("ar")
    };
    let status = Command::new(&ar)
        .arg("rcs")
        .arg(&out)
        .args(&native)
        .status()?;
    if !status.success() {
        bail!(
            "{} failed to rebuild the native part of {path}",
            ar.display()
        );
    }
    Ok(Some(Some(out.display().to_string())))
}
