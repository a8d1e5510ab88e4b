//! A stress test on a real program, ignored by default: Lua 5.4 (from the
//! `lua-src` crate's sources; set `PATHPROF_LUA_DIR` to its `lua-5.4.x` folder)
//! linked into one module, planned by pathprof-core in every mode, instrumented,
//! and run; the script's output must not change, and every mode's derived block
//! counts must equal block mode's (outside the functions longjmp leaves; with
//! early-exit counting everywhere, with no lost paths). Lua has
//! computed gotos (the interpreter loop), setjmp/longjmp error handling and large
//! functions.

use crate::harness::{build_and_run, clang, run_ok, source_dir, Build};
use pathprof_core::derive::derive;
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::Mode;
use std::path::PathBuf;
use std::process::Command;

fn lua_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("PATHPROF_LUA_DIR") {
        return Some(d.into());
    }
    let registry = PathBuf::from(std::env::var_os("HOME")?).join(".cargo/registry/src");
    for index in std::fs::read_dir(registry).ok()?.flatten() {
        for krate in std::fs::read_dir(index.path()).ok()?.flatten() {
            if krate.file_name().to_string_lossy().starts_with("lua-src-") {
                let d = krate.path().join("lua-5.4.9");
                if d.is_dir() {
                    return Some(d);
                }
            }
        }
    }
    None
}

#[test]
#[ignore = "needs Lua sources (PATHPROF_LUA_DIR); takes a while"]
fn lua_in_every_mode() {
    let lua = lua_dir().expect("set PATHPROF_LUA_DIR to a lua-5.4 source folder");
    let dir = tempfile::tempdir().unwrap();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&lua)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .filter(|p| {
            !matches!(
                p.file_stem().and_then(|s| s.to_str()),
                Some("lua" | "luac" | "onelua")
            )
        })
        .collect();
    sources.sort();
    sources.push(source_dir().join("lua_main.c"));
    // A fixed string-hash seed, so that every run hashes alike.
    let flags = ["-DLUA_USE_LINUX", "-Dluai_makeseed(L)=0u", "-I"];
    let mut bitcode = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let out = dir.path().join(format!("{i}.bc"));
        let mut cmd = Command::new(clang());
        cmd.args(["-O1", "-g", "-c", "-emit-llvm"])
            .args(flags)
            .arg(&lua);
        run_ok(cmd.arg(src).arg("-o").arg(&out));
        bitcode.push(out);
    }
    let reference = {
        let exe = dir.path().join("reference");
        let mut cmd = Command::new(clang());
        cmd.arg("-O1")
            .args(flags)
            .arg(&lua)
            .args(&sources)
            .args(["-lm", "-o"])
            .arg(&exe);
        run_ok(&mut cmd);
        String::from_utf8(run_ok(&mut Command::new(&exe)).stdout).unwrap()
    };
    let mut block_counts: Vec<Vec<u64>> = Vec::new();
    let cases = [
        (Mode::Block, false),
        (Mode::Edge, false),
        (Mode::Path, false),
        (Mode::Edge, true),
        (Mode::Path, true),
    ];
    for (mode, early_exit) in cases {
        let options = PlanOptions::default().with_early_exit(early_exit);
        let layouts = std::cell::RefCell::new(Vec::new());
        let build = Build {
            mode,
            link_args: &["-lm"],
            ..Build::default()
        };
        let run = build_and_run(dir.path(), &bitcode, &build, |ex| {
            ex.functions
                .iter()
                .map(|f| {
                    let (plan, layout) = plan_function(&f.cfg, mode, &options)
                        .or_else(|_| plan_function(&f.cfg, Mode::Block, &options))
                        .unwrap();
                    layouts.borrow_mut().push(layout);
                    plan
                })
                .collect()
        });
        assert_eq!(run.stdout, reference, "{mode:?} early_exit={early_exit}");
        // Derived block counts agree with block mode, except in functions left by
        // longjmp (Lua's error handling), where no path or flow is complete.
        let layouts = layouts.into_inner();
        let mut differ = Vec::new();
        let mut lost = Vec::new();
        for (i, f) in run.extracted.functions.iter().enumerate() {
            let c = &run.report.modules[0].functions[i];
            let paths: Vec<(u64, u64)> = c.paths.iter().map(|(&k, &v)| (k, v)).collect();
            let derived = derive(&f.cfg, &layouts[i], &c.slots, &paths);
            if let Ok(d) = &derived {
                if d.lost > 0 {
                    lost.push((f.name.clone(), d.lost));
                }
            }
            let blocks = derived.map(|d| d.blocks);
            if mode == Mode::Block {
                block_counts.push(blocks.unwrap());
            } else if blocks.as_ref() != Ok(&block_counts[i]) {
                differ.push(f.name.clone());
            }
        }
        // The script's pcall(error) longjmps out of these (luaD_rawrunprotected
        // is where setjmp returns a second time).
        // With early-exit counting the paths longjmp cuts short are counted
        // too, and the path after setjmp's second return starts afresh (a
        // resume edge): every count is exact and nothing is lost.
        let longjmp: &[&str] = if early_exit {
            assert!(
                lost.is_empty(),
                "{mode:?} with early-exit counting lost paths in {lost:?}"
            );
            &[]
        } else {
            &[
                "f_call",
                "luaD_rawrunprotected",
                "luaD_precall",
                "luaD_callnoyield",
                "luaV_execute",
            ]
        };
        assert!(
            differ.iter().all(|f| longjmp.contains(&f.as_str())),
            "{mode:?} early_exit={early_exit}: derived block counts differ from block mode in {differ:?}"
        );
        eprintln!(
            "{mode:?} early_exit={early_exit}: {} functions, {} counters",
            run.extracted.functions.len(),
            run.report.modules[0]
                .functions
                .iter()
                .map(|f| f.slots.len())
                .sum::<usize>()
        );
    }
}
