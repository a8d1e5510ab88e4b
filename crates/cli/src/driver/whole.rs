//! The whole-program route (`--whole-program`, `--mode=p3`, and any link
//! with bitcode among its inputs): every bitcode input, including bitcode
//! members of archives, is linked into one module, which is simplified
//! early (as each object is in the compile-time route, so both count the
//! same things), instrumented, optimised and compiled into one program
//! object that takes the place of the first bitcode input on the user's
//! link line. `--mode=p3` makes its copies from that module (`super::p3`).

use super::args::{InputKind, Invocation};
use super::{archive, compile_flags, exec, finish_link, instrument};
use anyhow::{bail, Context as _, Result};
use pathprof_llvm::is_bitcode;
use pathprof_llvm::timings::{self, Phase};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Whether any input on the link line is bitcode, or an archive with bitcode
/// members (given as a file or found through `-L`/`-lNAME`).
pub(super) fn has_bitcode_inputs(inv: &Invocation) -> bool {
    inv.inputs
        .iter()
        .filter(|i| i.kind == InputKind::Linker)
        .any(|i| holds_bitcode(Path::new(&i.path)))
        || inv
            .libraries
            .iter()
            .filter_map(|(_, name, _)| static_library(&inv.library_dirs, name))
            .any(|a| holds_bitcode(&a))
}

/// Whether `path` is bitcode or an archive with bitcode members. Only an
/// archive is read whole: every link asks this of every object and shared
/// library on its line, which their first bytes answer.
fn holds_bitcode(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    let head = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut magic))
        .map_or(&magic[..0], |n| &magic[..n]);
    if is_bitcode(head) {
        return true;
    }
    archive::is_archive(head)
        && std::fs::read(path).is_ok_and(|bytes| {
            archive::members(&bytes).is_ok_and(|ms| ms.iter().any(|m| is_bitcode(m.data)))
        })
}

/// How `--whole-program` compiles a source: to bitcode, unoptimised (the link
/// step simplifies it early, then instruments).
pub(super) const WHOLE_PROGRAM_BITCODE: &[&str] =
    &["-flto=full", "-Xclang", "-disable-llvm-passes"];

/// The link step's inputs, sorted: the bitcode to link into one module,
/// and what becomes of each input on the final link line.
pub(super) struct Inputs {
    pub bitcode: Vec<PathBuf>,
    /// Replacement for each input on the final link line (None = drop it).
    replace: Vec<(usize, Option<String>)>,
}

impl Inputs {
    /// The final link line: `args` (the command line's, or it with another
    /// output, [`super::with_output`]) with the program `object` in the
    /// place of the first input that gave bitcode, so libraries named after
    /// that input are searched for it, as they would have been for the plain
    /// objects (also under --as-needed).
    pub fn link_line(&self, args: &[String], object: &Path) -> Vec<String> {
        let program_at = self
            .replace
            .iter()
            .map(|&(i, _)| i)
            .min()
            .expect("bitcode came from some input");
        let mut final_args: Vec<String> = Vec::with_capacity(args.len() + 8);
        for (i, a) in args.iter().enumerate() {
            if i == program_at {
                final_args.push(object.display().to_string());
            }
            match self.replace.iter().find(|(idx, _)| *idx == i) {
                Some((_, Some(r))) => final_args.push(r.clone()),
                Some((_, None)) => {}
                None if a.starts_with("-flto") || a == "-emit-llvm" => {}
                None => final_args.push(a.clone()),
            }
        }
        final_args
    }
}

/// The whole-program link step; with `profile` (`--profile-use` under
/// `pathprof cargo`), the program module is given the profile's counts
/// instead of probes, and linked without the runtime.
pub(super) fn link(
    clang: &Path,
    inv: &Invocation,
    profile: Option<&super::pgo::Prepared>,
) -> Result<ExitCode> {
    let work = tempfile::Builder::new().prefix("pathprof-").tempdir()?;
    let inputs = match gather(clang, inv, work.path())? {
        Ok(inputs) => inputs,
        Err(compile_failed) => return Ok(compile_failed),
    };
    if inputs.bitcode.is_empty() {
        if inv.options.mode.p3() {
            bail!(
                "--mode=p3 found no bitcode to link: compile the program's sources with \
                 `pathprof cc --mode=p3` too (or name them on this line)"
            );
        }
        return timings::time(Phase::Link, || exec(clang, &inv.args));
    }
    let context = pathprof_llvm::Context::create();
    let module = timings::time(Phase::Bitcode, || {
        pathprof_llvm::link_bitcode_files(&context, &inputs.bitcode)
    })?;
    let level: pathprof_llvm::OptLevel = inv.opt_level.parse()?;
    pathprof_llvm::simplify_early(&module, level)?;
    let object = work.path().join("pathprof-program.o");
    if inv.options.cargo_link && super::cargo::is_build_time_code(&module) {
        emit_object(&module, level, &object)?;
        let line = inputs.link_line(&inv.args, &object);
        return timings::time(Phase::Link, || exec(clang, &line));
    }
    if let Some(prepared) = profile {
        let options = pathprof_llvm::UseOptions {
            duplicate_paths: inv.options.duplicate_hot_paths,
        };
        pathprof_llvm::pipeline::use_profile(&module, prepared.index(), options)?;
        emit_object(&module, level, &object)?;
        let line = inputs.link_line(&inv.args, &object);
        return super::pgo::link(clang, inv, prepared, line);
    }
    if let Some(copies) = inv.options.p3_copies().map_err(anyhow::Error::msg)? {
        return super::p3::link(clang, inv, &module, level, copies, &inputs, work.path());
    }
    let map = instrument(&module, &inv.options.instrument)?;
    pathprof_llvm::pipeline::embed(&module, &map);
    emit_object(&module, level, &object)?;
    finish_link(clang, inv, inputs.link_line(&inv.args, &object))
}

/// Optimises the instrumented `module` at `level` and writes its object.
pub(super) fn emit_object(
    module: &pathprof_llvm::Module<'_>,
    level: pathprof_llvm::OptLevel,
    object: &Path,
) -> Result<()> {
    pathprof_llvm::optimize(module, level)?;
    pathprof_llvm::write_object(module, object, level)?;
    Ok(())
}

/// Compiles the sources on the line to bitcode (assembly to objects) and
/// finds every bitcode input, archives' members included; `Err` with
/// clang's status when a compile failed.
fn gather(clang: &Path, inv: &Invocation, work: &Path) -> Result<Result<Inputs, ExitCode>> {
    let mut bitcode: Vec<PathBuf> = Vec::new();
    let mut replace: Vec<(usize, Option<String>)> = Vec::new();
    let compile_args = compile_flags(inv);
    for (n, input) in inv.inputs.iter().enumerate() {
        match input.kind {
            InputKind::Source | InputKind::Assembly => {
                let obj = work.join(format!("{n}.o"));
                let mut args = compile_args.clone();
                if input.kind == InputKind::Source {
                    args.extend(WHOLE_PROGRAM_BITCODE.iter().map(|s| s.to_string()));
                }
                let code = timings::time(Phase::FrontEnd, || {
                    super::compile::clang_on(clang, &args, &[], input, &obj)
                })?;
                if code != ExitCode::SUCCESS {
                    return Ok(Err(code));
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
                if is_bitcode(&bytes) {
                    bitcode.push(PathBuf::from(&input.path));
                    replace.push((input.index, None));
                } else if archive::is_archive(&bytes) {
                    if let Some(native) = split_archive(&bytes, &input.path, n, work, &mut bitcode)?
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
            work,
            &mut bitcode,
        )? {
            replace.push((*index, native));
            if *separate {
                replace.push((index + 1, None));
            }
        }
    }
    Ok(Ok(Inputs { bitcode, replace }))
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
    if !members.iter().any(|m| is_bitcode(m.data)) {
        return Ok(None);
    }
    let dir = work.join(format!("archive{n}"));
    std::fs::create_dir_all(&dir)?;
    let mut native = Vec::new();
    for (k, m) in members.iter().enumerate() {
        let file = dir.join(format!("{k}_{}", m.name.replace('/', "_")));
        std::fs::write(&file, m.data)?;
        if is_bitcode(m.data) {
            bitcode.push(file);
        } else {
            native.push(file);
        }
    }
    if native.is_empty() {
        return Ok(Some(None));
    }
    let out = work.join(format!("native{n}.a"));
    let ar = crate::toolchain::llvm_tool("llvm-ar");
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
