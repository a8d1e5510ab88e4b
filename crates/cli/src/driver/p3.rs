//! The link step of `--mode=p3` (partitioned path profiling, Afraz et al.
//! 2015): from the linked, early-simplified program module, K programs
//! `OUTPUT.p3.0` … `OUTPUT.p3.<K-1>`, each profiling part of the paths, and
//! `OUTPUT` itself, the plain path-mode build of the same module (build
//! systems expect `-o`'s file; it is the sequential reference, and its
//! profile reads with the same map).
//!
//! Path mode plans the module once ([`pathprof_llvm::pipeline::plan_module`]):
//! that is the map, `OUTPUT.ppmap`, with a P3 record (K and each function's
//! call sites, [`pathprof_llvm::call_sites`]) from which core plans the
//! copies ([`MapProgram`]) and from which `pathprof p3 run` plans them again
//! to merge their profiles. Each copy is a clone of the planned module with
//! its own plans, registering under its own build id; the copies carry no
//! map (their counts are no profile of any map until merged). Each is
//! optimised, compiled and linked with the user's link line, its output
//! renamed.

use super::args::Invocation;
use super::whole::{emit_object, Inputs};
use super::{finish_link, link_with_runtime, output_of, with_output};
use anyhow::{bail, Context as _, Result};
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, P3Build};
use pathprof_core::p3::{MapProgram, Strategy};
use pathprof_core::FuncId;
use pathprof_llvm::pipeline::{apply_plans, plan_module, Planned};
use pathprof_llvm::{Module, OptLevel};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The file of copy `copy` of the program `output`: `OUTPUT.p3.<copy>`.
pub fn copy_name(output: &Path, copy: usize) -> PathBuf {
    super::beside_output(output, &format!(".p3.{copy}"))
}

/// Builds the `copies` copies and the path-mode program from `module` (the
/// linked program, simplified early), linking each as `inputs` and the
/// command line say.
pub(super) fn link(
    clang: &Path,
    inv: &Invocation,
    module: &Module<'_>,
    level: OptLevel,
    copies: usize,
    inputs: &Inputs,
    work: &Path,
) -> Result<ExitCode> {
    refuse_non_programs(&inv.args)?;
    let o = &inv.options.instrument;
    let settings = o.settings();
    let Planned { mut map, plans } = plan_module(module, &settings)?;
    super::draw_dags(&map, o)?;
    map.p3 = Some(P3Build {
        copies: copies as u32,
        call_sites: pathprof_llvm::call_sites(module, exports_symbols(&inv.args)),
        trained: match &o.p3_train {
            Some(list) => trained_paths(&map, list, o.verbose)?,
            None => Vec::new(),
        },
    });
    let (program, _) = MapProgram::recorded(&map)?;
    let plan = program.plan(copies, Strategy::P3);
    if o.verbose {
        let profitable: Vec<&str> = plan
            .profitable()
            .map(|f| map.functions[f.index()].shown_name())
            .collect();
        eprintln!(
            "pathprof: p3: {copies} copies, loads {:?}; {} of {} functions partitioned: {}",
            plan.loads(),
            profitable.len(),
            map.functions.len(),
            profitable.join(", ")
        );
        for (i, f) in map.functions.iter().enumerate() {
            let tasks = plan.tasks(FuncId::new(i));
            eprintln!(
                "pathprof: p3: {} call sites {} tasks {} copies {:?}",
                f.name,
                map.p3.as_ref().map_or(0, |p| p.call_sites[i]),
                tasks.tasks.len(),
                tasks.copies
            );
        }
    }
    let output = output_of(inv);
    let path_options = settings.plan_options().path;
    for copy in 0..copies {
        let clone = module.clone();
        let copy_plans = program.copy_plans(&plan, copy, &path_options)?;
        apply_plans(
            &clone,
            &map,
            &copy_plans,
            program.copy_build_id(copies, copy),
            &settings,
        )
        .with_context(|| format!("instrumenting P3 copy {copy}"))?;
        let object = work.join(format!("pathprof-program.p3.{copy}.o"));
        emit_object(&clone, level, &object)?;
        let name = copy_name(Path::new(output), copy);
        let args = inputs.link_line(&with_output(inv, &name.display().to_string()), &object);
        let code = link_with_runtime(clang, args)?;
        if code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    apply_plans(module, &map, &plans, map.build_id, &settings)?;
    pathprof_llvm::pipeline::embed(module, &map);
    let object = work.join("pathprof-program.o");
    emit_object(module, level, &object)?;
    finish_link(clang, inv, inputs.link_line(&inv.args, &object))
}

/// Per map function, the paths and counts the training list `list_path`
/// (`--p3-train`) gives it: none for a function the list does not name or
/// names with a stale entry (warned about, as are the list's functions the
/// program should have and does not: [`crate::report::ppp::warn_unknown`]).
fn trained_paths(map: &MapFile, list_path: &Path, verbose: bool) -> Result<Vec<Vec<(u64, u64)>>> {
    let list = pathprof_llvm::pipeline::read_interesting(list_path)
        .context("--p3-train needs a list written by `pathprof interesting`")?;
    let mut trained = Vec::with_capacity(map.functions.len());
    for f in &map.functions {
        let Layout::Path { dag, .. } = &f.layout else {
            trained.push(Vec::new());
            continue;
        };
        let file = map.file_name(f.file).unwrap_or("");
        match list.counts_of(&f.name, file, &f.cfg, dag) {
            Ok(Some(counts)) => trained.push(counts),
            Ok(None) => trained.push(Vec::new()),
            Err(stale) => {
                eprintln!("pathprof: warning: {stale}; P3 plans it without its training counts");
                trained.push(Vec::new());
            }
        }
    }
    crate::report::ppp::warn_unknown(&list, list_path, &[map], verbose);
    Ok(trained)
}

/// P3 runs programs: a shared library or a relocatable object has no
/// copies to run.
fn refuse_non_programs(args: &[String]) -> Result<()> {
    let what = args.iter().find_map(|a| match a.as_str() {
        "-shared" => Some("a shared library"),
        "-r" | "-Wl,-r" | "--relocatable" => Some("a relocatable object"),
        _ => None,
    });
    if let Some(what) = what {
        bail!(
            "--mode=p3 builds programs, not {what}: K copies of a program run in parallel. \
             Link the program with --mode=p3 and build its libraries in path mode, or \
             link them into it statically (with libtool, `configure --disable-shared`)"
        );
    }
    Ok(())
}

/// Whether the link exports the program's symbols to shared libraries
/// (`-rdynamic`, `--export-dynamic`, `-E`): its exported functions may then
/// be called from outside the module ([`pathprof_llvm::call_sites`]).
fn exports_symbols(args: &[String]) -> bool {
    let linker_flag = |f: &str| matches!(f, "-E" | "--export-dynamic" | "-export-dynamic");
    args.iter().enumerate().any(|(i, a)| {
        a == "-rdynamic"
            || a.strip_prefix("-Wl,")
                .is_some_and(|flags| flags.split(',').any(linker_flag))
            || (a == "-Xlinker" && args.get(i + 1).is_some_and(|f| linker_flag(f)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn exported_symbols_are_seen_in_every_spelling() {
        for line in [
            "a.o -rdynamic",
            "a.o -Wl,-E",
            "a.o -Wl,--as-needed,--export-dynamic",
            "a.o -Xlinker --export-dynamic",
        ] {
            assert!(exports_symbols(&args(line)), "{line}");
        }
        for line in [
            "a.o -o prog",
            "a.o -Wl,--export-dynamic-symbol=f",
            "a.o -E",
            "a.o -Xlinker -z -Xlinker now",
        ] {
            assert!(!exports_symbols(&args(line)), "{line}");
        }
    }

    #[test]
    fn only_programs() {
        assert!(refuse_non_programs(&args("a.o -o prog -lm")).is_ok());
        for line in ["a.o -shared -o liba.so", "a.o -r -o b.o", "a.o -Wl,-r"] {
            let err = refuse_non_programs(&args(line)).unwrap_err().to_string();
            assert!(err.contains("--mode=p3 builds programs"), "{err}");
            assert!(err.contains("--disable-shared"), "{err}");
        }
    }
}
