//! The whole-program route (`--whole-program`, and any link with bitcode
//! among its inputs): every bitcode input, including bitcode members of
//! archives, is linked into one module, which is simplified early (as each
//! object is in the compile-time route, so both count the same things),
//! instrumented, optimised and compiled into one program object that takes
//! the place of the first bitcode input on the user's link line.

use super::args::{InputKind, Invocation};
use super::{archive, compile_flags, exec, finish_link, instrument};
use anyhow::{bail, Context as _, Result};
use pathprof_llvm::is_bitcode;
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

/// The whole-program link step.
pub(super) fn link(clang: &Path, inv: &Invocation) -> Result<ExitCode> {
    let work = tempfile::Builder::new().prefix("pathprof-").tempdir()?;
    let mut bitcode: Vec<PathBuf> = Vec::new();
    // Replacement for each input on the final link line (None = drop it).
    let mut replace: Vec<(usize, Option<String>)> = Vec::new();
    let compile_args = compile_flags(inv);
    for (n, input) in inv.inputs.iter().enumerate() {
        match input.kind {
            InputKind::Source | InputKind::Assembly => {
                let obj = work.path().join(format!("{n}.o"));
                let mut args = compile_args.clone();
                if input.kind == InputKind::Source {
                    args.extend(WHOLE_PROGRAM_BITCODE.iter().map(|s| s.to_string()));
                }
                let code = super::compile::clang_on(clang, &args, &[], input, &obj)?;
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
                if is_bitcode(&bytes) {
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
    let level: pathprof_llvm::OptLevel = inv.opt_level.parse()?;
    pathprof_llvm::simplify_early(&module, level)?;
    let map = instrument(&module, &inv.options.instrument)?;
    pathprof_llvm::embed_map(&module, &map.to_bytes());
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
    finish_link(clang, inv, final_args)
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
