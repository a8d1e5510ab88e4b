//! The compiler wrapper as build systems use it: separate compile and link
//! steps, static archives of bitcode objects, shared libraries, configure-style
//! probes, the step-by-step `pathprof instrument` route of the LLVM notes, and a
//! real function with more than 2^64 acyclic paths (truncation).

use crate::support::build::{llvm_tool, CLANG};
use crate::support::command::{ok, pathprof, pathprof_env};
use crate::support::report::{function, json_report_in};
use crate::support::run::{profiled, run_profiled};
use std::path::Path;
use std::process::Command;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

const LIB: &str =
    "int square(int x) { return x * x; }\nint cube(int x) { return x * square(x); }\n";
const MAIN: &str = "#include <stdio.h>\nint square(int); int cube(int);\nint main(void) { int s = 0; for (int i = 0; i < 5; i++) s += cube(i); printf(\"%d\\n\", s); return 0; }\n";

/// A fresh directory holding `lib.c` and `main.c`.
fn lib_and_main() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lib.c", LIB);
    write(dir.path(), "main.c", MAIN);
    dir
}

#[test]
fn separate_compile_archive_and_link_steps() {
    let dir = lib_and_main();
    let d = dir.path();
    // The mode is chosen where the code is instrumented: at compile time.
    ok(pathprof(
        d,
        &[
            "cc",
            "--mode=edge",
            "-O1",
            "-g",
            "-c",
            "lib.c",
            "-o",
            "lib.o",
        ],
    ));
    ok(pathprof(
        d,
        &["cc", "--mode=edge", "-O1", "-g", "-c", "main.c"],
    ));
    let ar = Command::new(llvm_tool("llvm-ar"))
        .current_dir(d)
        .args(["rcs", "libm2.a", "lib.o"])
        .status()
        .unwrap();
    assert!(ar.success());
    let link = pathprof(d, &["cc", "main.o", "-L.", "-lm2", "-o", "prog"]);
    assert_eq!(String::from_utf8_lossy(&link.stderr), "", "a quiet link");
    ok(link);
    // A mode given at the link only does nothing, and says so.
    let relink = pathprof(
        d,
        &["cc", "--mode=path", "main.o", "-L.", "-lm2", "-o", "prog"],
    );
    let warning = String::from_utf8_lossy(&relink.stderr).into_owned();
    assert!(
        warning.contains("--mode=path has no effect when linking")
            && warning.contains("compiled in edge mode"),
        "{warning}"
    );
    ok(relink);
    edge_prog_counts(d);
}

/// Runs `prog` in `d` (main.c and lib.c compiled in edge mode) and checks its
/// output and counts: counted before inlining, cube is called 5 times,
/// inlined or not.
fn edge_prog_counts(d: &Path) {
    let run = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    let r = json_report_in(d, "prog.pprof", &["prog.ppmap"]);
    assert_eq!(r["mode"], "edge");
    assert_eq!(function(&r, "cube")["entry_count"], 5);
}

/// Native libraries named after the program's objects are searched for them,
/// as in the plain link: a static one, and a shared one under `--as-needed`
/// (which keeps only libraries something before them needs).
#[test]
fn native_libraries_after_the_objects_resolve_them() {
    let dir = lib_and_main();
    let d = dir.path();
    let clang = |args: &[&str]| {
        let status = Command::new(CLANG)
            .current_dir(d)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "clang {args:?}");
    };
    clang(&["-O2", "-c", "lib.c", "-o", "native.o"]);
    let ar = Command::new(llvm_tool("llvm-ar"))
        .current_dir(d)
        .args(["rcs", "libnative.a", "native.o"])
        .status()
        .unwrap();
    assert!(ar.success());
    clang(&["-O2", "-shared", "-fPIC", "lib.c", "-o", "libshared.so"]);
    ok(pathprof(d, &["cc", "-O2", "-c", "main.c"]));
    ok(pathprof(
        d,
        &[
            "cc",
            "-O2",
            "main.o",
            "-L.",
            "-lnative",
            "-o",
            "static_prog",
        ],
    ));
    let run = run_profiled(&d.join("static_prog"), &d.join("s.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    ok(pathprof(
        d,
        &[
            "cc",
            "-O2",
            "-Wl,--as-needed",
            "main.o",
            "-L.",
            "-lshared",
            "-Wl,-rpath,$ORIGIN",
            "-o",
            "shared_prog",
        ],
    ));
    let run = run_profiled(&d.join("shared_prog"), &d.join("d.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    let r = json_report_in(d, "d.pprof", &["shared_prog.ppmap"]);
    assert_eq!(function(&r, "main")["entry_count"], 1);
}

#[test]
fn cc_help_shows_pathprofs_flags_then_clangs() {
    let dir = tempfile::tempdir().unwrap();
    let help = ok(pathprof(dir.path(), &["cc", "--help"]));
    let ours = help.find("--early-exit").expect("pathprof's flags");
    let clangs = help.find("OVERVIEW: clang").expect("clang's help");
    assert!(ours < clangs, "{help}");
    for flag in [
        "--mode=",
        "--map=",
        "--max-paths=",
        "--array-limit=",
        "--atomic",
    ] {
        assert!(help[..clangs].contains(flag), "{flag} missing:\n{help}");
    }
}

/// What build systems set: the environment gives pathprof's flags (a switch
/// only when it is `1`), flags on the line win, a mode given through the
/// environment at the link only is warned about like `--mode`; `--dot-dir`
/// draws each compiled function's DAG.
#[test]
fn flags_from_the_environment_and_dot_files_at_compile_time() {
    let dir = lib_and_main();
    let d = dir.path();
    let compile = [("PATHPROF_MODE", "edge"), ("PATHPROF_ATOMIC", "0")];
    ok(pathprof_env(
        d,
        &compile,
        &["cc", "-O1", "--dot-dir=dots", "-c", "lib.c"],
    ));
    // A flag wins over the variable.
    let verbose = pathprof_env(
        d,
        &[("PATHPROF_MODE", "path")],
        &["cc", "-c", "--mode=edge", "main.c", "--pathprof-verbose"],
    );
    let said = String::from_utf8_lossy(&verbose.stderr).into_owned();
    ok(verbose);
    assert!(said.contains("pathprof: main blocks="), "{said}");
    for f in ["square", "cube"] {
        let dot = std::fs::read_to_string(d.join(format!("dots/pathdag.{f}.dot"))).unwrap();
        assert!(dot.starts_with("digraph"), "{dot}");
    }
    assert!(!d.join("dots/pathdag.main.dot").exists());
    let quiet = pathprof_env(
        d,
        &[("PATHPROF_ATOMIC", "true")],
        &["cc", "main.o", "lib.o", "-o", "prog"],
    );
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "", "a quiet link");
    ok(quiet);
    let relink = pathprof_env(
        d,
        &[("PATHPROF_MODE", "path"), ("PATHPROF_ATOMIC", "1")],
        &["cc", "main.o", "lib.o", "-o", "prog"],
    );
    let warning = String::from_utf8_lossy(&relink.stderr).into_owned();
    assert!(
        warning.contains("--mode=path has no effect when linking")
            && warning.contains("compiled in edge mode")
            && warning.contains("--atomic has no effect when linking"),
        "{warning}"
    );
    ok(relink);
    edge_prog_counts(d);
    // A bad value names its variable.
    let bad = pathprof_env(d, &[("PATHPROF_MODE", "fast")], &["cc", "-c", "lib.c"]);
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        said.contains("unknown mode `fast`") && said.contains("PATHPROF_MODE"),
        "{said}"
    );
}

#[test]
fn configure_probes_and_pass_through_steps_behave_like_clang() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "conftest.c", "int main(void) { return 0; }\n");
    ok(pathprof(d, &["cc", "conftest.c", "-o", "conftest"]));
    let runs = |exe: &str| Command::new(d.join(exe)).current_dir(d).status().unwrap();
    assert!(runs("conftest").success());
    ok(pathprof(d, &["cc", "conftest.c"]));
    assert!(runs("a.out").success());
    // Probes leave no maps and no profiles behind: they are built as clang
    // builds them (an autotools suite's profile is the suite's alone).
    assert!(!d.join("conftest.ppmap").exists() && !d.join("a.out.ppmap").exists());
    assert!(
        !d.join("default.pprof").exists(),
        "a probe's run wrote a profile"
    );
    // So are CMake's try_compile and meson's compiler checks, compiled and
    // linked in two steps.
    for dir in ["CMakeFiles/CMakeScratch/TryCompile-x", "meson-private/tmp1"] {
        let probe = d.join(dir);
        std::fs::create_dir_all(&probe).unwrap();
        write(&probe, "src.c", "int main(void) { return 0; }\n");
        ok(pathprof(&probe, &["cc", "-c", "src.c", "-o", "src.o"]));
        ok(pathprof(&probe, &["cc", "src.o", "-o", "cmTC_1"]));
        assert!(Command::new(probe.join("cmTC_1"))
            .current_dir(&probe)
            .status()
            .unwrap()
            .success());
        assert!(
            !probe.join("default.pprof").exists(),
            "{dir}: the probe wrote a profile"
        );
        assert!(
            !probe.join("cmTC_1.ppmap").exists(),
            "{dir}: the probe has a map"
        );
    }
    // A program of the user's in the same directory is instrumented.
    write(d, "prog.c", "int main(void) { return 0; }\n");
    ok(pathprof(d, &["cc", "prog.c", "-o", "prog"]));
    assert!(runs("prog").success());
    assert!(d.join("prog.ppmap").exists() && d.join("default.pprof").exists());
    let pre = ok(pathprof(d, &["cc", "-E", "-DVALUE=42", "-x", "c", "-"]));
    assert!(pre.is_empty() || !pre.contains("error"));
    let pre = pathprof(d, &["cc", "-E", "conftest.c"]);
    assert!(String::from_utf8_lossy(&pre.stdout).contains("int main(void)"));
    ok(pathprof(d, &["cc", "-S", "conftest.c", "-o", "conftest.s"]));
    assert!(std::fs::read_to_string(d.join("conftest.s"))
        .unwrap()
        .contains("main"));
    let deps = ok(pathprof(d, &["cc", "-MM", "conftest.c"]));
    assert!(deps.starts_with("conftest.o: conftest.c"), "{deps}");
    assert!(ok(pathprof(d, &["cc", "--version"])).contains("clang version 22"));
    // A failing compile fails with clang's status and message.
    write(d, "bad.c", "int main(void) { return undeclared; }\n");
    let bad = pathprof(d, &["cc", "bad.c", "-o", "bad"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("undeclared"));
}

/// Per function (by name): its entry count and its path counts, sorted.
fn counts_by_function(r: &serde_json::Value) -> Vec<(String, u64, Vec<u64>)> {
    let mut out: Vec<(String, u64, Vec<u64>)> = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let mut paths: Vec<u64> = f["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["count"].as_u64().unwrap())
                .collect();
            paths.sort();
            let name = f["name"].as_str().unwrap().to_string();
            (name, f["entry_count"].as_u64().unwrap(), paths)
        })
        .collect();
    out.sort();
    out
}

/// `--whole-program` instruments the linked program at the same point as
/// the compile-time route instruments each object: both count the same.
#[test]
fn whole_program_and_compile_time_routes_count_the_same() {
    let dir = lib_and_main();
    let d = dir.path();
    for (route, extra) in [("objects", None), ("whole", Some("--whole-program"))] {
        let mut compile = vec!["cc", "-O2", "-g", "-c"];
        compile.extend(extra);
        for src in ["lib.c", "main.c"] {
            let mut a = compile.clone();
            let obj = format!("{route}-{src}.o");
            a.extend([src, "-o", &obj]);
            ok(pathprof(d, &a));
        }
        let (lib, main) = (format!("{route}-lib.c.o"), format!("{route}-main.c.o"));
        ok(pathprof(d, &["cc", "-O2", &main, &lib, "-o", route]));
        let profile = d.join(format!("{route}.pprof"));
        let run = run_profiled(&d.join(route), &profile);
        assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    }
    let objects = json_report_in(d, "objects.pprof", &["objects"]);
    let whole = json_report_in(d, "whole.pprof", &["whole"]);
    assert_eq!(counts_by_function(&objects), counts_by_function(&whole));
    assert_eq!(function(&whole, "cube")["entry_count"], 5);
    assert_eq!(function(&whole, "square")["entry_count"], 5);
}

#[test]
fn shared_library_without_main_is_instrumented_and_counts() {
    let dir = lib_and_main();
    let d = dir.path();
    ok(pathprof(
        d,
        &[
            "cc",
            "--mode=block",
            "-O0",
            "-g",
            "-shared",
            "-fPIC",
            "lib.c",
            "-o",
            "libsq.so",
        ],
    ));
    assert!(d.join("libsq.so.ppmap").exists());
    let link = Command::new(CLANG)
        .current_dir(d)
        .args(["main.c", "-L.", "-lsq", "-o", "prog"])
        .status()
        .unwrap();
    assert!(link.success());
    let run = profiled(&d.join("prog"), &d.join("lib.pprof"))
        .env("LD_LIBRARY_PATH", d)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    let r = json_report_in(d, "lib.pprof", &["libsq.so.ppmap"]);
    assert_eq!(function(&r, "cube")["entry_count"], 5);
    assert_eq!(function(&r, "square")["entry_count"], 5);
}

#[test]
fn step_by_step_instrument_then_link_with_the_runtime() {
    let dir = lib_and_main();
    let d = dir.path();
    for f in ["lib", "main"] {
        let st = Command::new(CLANG)
            .current_dir(d)
            .args([
                "-O1",
                "-g",
                "-c",
                "-emit-llvm",
                &format!("{f}.c"),
                "-o",
                &format!("{f}.bc"),
            ])
            .status()
            .unwrap();
        assert!(st.success());
    }
    let st = Command::new(llvm_tool("llvm-link"))
        .current_dir(d)
        .args(["lib.bc", "main.bc", "-o", "prog.bc"])
        .status()
        .unwrap();
    assert!(st.success());
    let instrumented = pathprof(
        d,
        &[
            "instrument",
            "prog.bc",
            "-o",
            "prog.pp.bc",
            "--mode",
            "path",
            "--map",
            "prog.ppmap",
            "--dot-dir",
            "dots",
            "--pathprof-verbose",
        ],
    );
    let said = String::from_utf8_lossy(&instrumented.stderr).into_owned();
    ok(instrumented);
    assert!(said.contains("pathprof: main blocks="), "{said}");
    assert!(d.join("dots/pathdag.main.dot").exists());
    let rt = ok(pathprof(d, &["rt-path"]));
    let st = Command::new(CLANG)
        .current_dir(d)
        .args([
            "-O2",
            "prog.pp.bc",
            rt.trim(),
            "-lpthread",
            "-ldl",
            "-lm",
            "-o",
            "prog",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let run = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    let r = json_report_in(d, "prog.pprof", &["prog.ppmap"]);
    assert_eq!(function(&r, "main")["entry_count"], 1);
}

/// 70 independent `if`s make 2^70 acyclic paths, more than a 64-bit counter can
/// number: the function must be truncated (cut), still count exactly, and its
/// executed paths regenerate to real block chains.
#[test]
fn functions_with_more_than_2_64_paths_are_truncated_and_exact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut src = String::from("#include <stdio.h>\n#include <stdlib.h>\n__attribute__((noinline)) unsigned long many(unsigned long x) {\n  unsigned long s = 0;\n");
    for i in 0..70 {
        src.push_str(&format!(
            "  if ((x >> {}) & 1) s += {}; else s ^= {};\n",
            i % 64,
            i + 1,
            i * 7 + 3
        ));
    }
    src.push_str("  return s;\n}\nint main(int argc, char **argv) {\n  unsigned long t = 0;\n  for (unsigned long i = 0; i < 1000; i++) t += many(i * 2654435761u);\n  printf(\"%lu\\n\", t);\n  return 0;\n}\n");
    write(d, "many.c", &src);
    let plain = Command::new(CLANG)
        .current_dir(d)
        .args(["-O0", "many.c", "-o", "plain"])
        .status()
        .unwrap();
    assert!(plain.success());
    let expected = Command::new(d.join("plain")).output().unwrap().stdout;
    let mut per_mode = Vec::new();
    for mode in ["block", "path"] {
        let built = pathprof(
            d,
            &[
                "cc",
                &format!("--mode={mode}"),
                "-O0",
                "-g",
                "many.c",
                "-o",
                mode,
            ],
        );
        let said = String::from_utf8_lossy(&built.stderr).into_owned();
        ok(built);
        // Its paths count in a hash table, and the build says so.
        assert_eq!(
            said.contains("pathprof: note: 1 function has more than 131072 potential paths")
                && said.contains(": many ("),
            mode == "path",
            "{said}"
        );
        let run = run_profiled(&d.join(mode), &d.join(format!("{mode}.pprof")));
        assert_eq!(run.stdout, expected);
        let r = json_report_in(d, format!("{mode}.pprof"), &[&format!("{mode}.ppmap")]);
        let f = function(&r, "many").clone();
        assert_eq!(f["entry_count"], 1000);
        per_mode.push(f);
    }
    let path = &per_mode[1];
    let potential = path["potential_paths"].as_u64().unwrap();
    assert!(potential > 0 && potential <= 1 << 62, "{potential}");
    let blocks = |f: &serde_json::Value| {
        f["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        blocks(&per_mode[0]),
        blocks(path),
        "truncated path profile gives exact block counts"
    );
    let cut_paths = path["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["exit"].is_null())
        .count();
    assert!(cut_paths > 0, "some paths end at a truncation cut");
    // The report says which function hashed and how many path executions
    // were table lookups.
    let r = json_report_in(d, "path.pprof", &["path.ppmap"]);
    let executions = |f: &serde_json::Value| -> u64 {
        f["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["count"].as_u64().unwrap())
            .sum()
    };
    let (many, main) = (function(&r, "many"), function(&r, "main"));
    assert_eq!(
        (&many["hashed"], &main["hashed"]),
        (&true.into(), &false.into())
    );
    let text = ok(pathprof(
        d,
        &["report", "--map", "path.ppmap", "path.pprof"],
    ));
    let hashed = executions(many);
    let all = hashed + executions(main);
    assert!(
        text.contains(&format!(
            "1 function counted paths in hash tables (more potential paths than the array limit): \
             {hashed} of {all} path executions"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("{hashed:>15} {potential:>22}  many\n")),
        "{text}"
    );
}

#[test]
fn cxx_driver_links_the_cxx_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "v.cpp",
        "#include <cstdio>\n#include <vector>\n#include <string>\nint main() { std::vector<std::string> v; for (int i = 0; i < 4; i++) v.push_back(std::to_string(i * i)); std::printf(\"%s\\n\", v.back().c_str()); return 0; }\n",
    );
    ok(pathprof(
        d,
        &["c++", "--mode=path", "-O1", "-g", "v.cpp", "-o", "v"],
    ));
    let run = run_profiled(&d.join("v"), &d.join("v.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "9\n");
    let r = json_report_in(d, "v.pprof", &["v.ppmap"]);
    assert_eq!(function(&r, "main")["entry_count"], 1);
    let demangled = r["functions"].as_array().unwrap().iter().any(|f| {
        f["display_name"]
            .as_str()
            .is_some_and(|n| n.contains("std::"))
    });
    assert!(demangled, "C++ functions carry demangled names");
}

/// A function whose paths hash is named once, by the link, however many
/// translation units compile it: here a C++ header's inline function in two
/// of them, and one function of a source file's own. The compiles say
/// nothing; the program counts the header function's paths exactly.
#[test]
fn hashed_functions_are_noted_once_by_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "pick.hh",
        "inline int pick(int x) {\n  int s = 0;\n  if (x & 1) s += 1;\n  if (x & 2) s += 2;\n  if (x & 4) s += 4;\n  return s;\n}\nint twice(int x);\n",
    );
    write(
        d,
        "a.cpp",
        "#include <cstdio>\n#include \"pick.hh\"\nint main() {\n  int t = 0;\n  for (int i = 0; i < 10; i++) t += pick(i) + twice(i);\n  std::printf(\"%d\\n\", t);\n  return 0;\n}\n",
    );
    write(
        d,
        "b.cpp",
        "#include \"pick.hh\"\nint twice(int x) {\n  int s = pick(x);\n  if (x > 5) s *= 2;\n  if (x > 7) s += 1;\n  if (x == 3) s -= 1;\n  return s;\n}\n",
    );
    let flags = ["c++", "--mode=path", "--array-limit=4", "-O0", "-g"];
    for tu in ["a.cpp", "b.cpp"] {
        let compiled = pathprof(d, &[&flags[..], &["-c", tu]].concat());
        assert_eq!(String::from_utf8_lossy(&compiled.stderr), "", "{tu}");
        ok(compiled);
    }
    let link = pathprof(d, &[&flags[..], &["a.o", "b.o", "-o", "prog"]].concat());
    let said = String::from_utf8_lossy(&link.stderr).into_owned();
    ok(link);
    assert_eq!(said.matches("pathprof: note:").count(), 1, "{said}");
    assert!(
        said.starts_with("pathprof: note: 2 functions have more than 4 potential paths"),
        "{said}"
    );
    assert_eq!(said.matches("pick(int) (8 paths)").count(), 1, "{said}");
    assert!(said.contains("twice(int) (8 paths) in prog;"), "{said}");
    assert!(!said.contains("main"), "main has 4 paths: {said}");
    let run = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "73\n");
    let r = json_report_in(d, "prog.pprof", &["prog.ppmap"]);
    let pick = function(&r, "_Z4picki");
    assert_eq!(pick["hashed"], true);
    assert_eq!(pick["entry_count"], 20);
}

/// lld places only `.init_array` constructors: the objects' registration and
/// the program's own C++ static initialisers must be there (LLVM's C API
/// would put them in `.ctors`, which lld never runs).
#[test]
fn lld_links_run_the_objects_and_the_programs_constructors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "g.cpp",
        "#include <cstdio>\nstruct Greeter { Greeter() { std::puts(\"hello\"); } ~Greeter() { std::puts(\"bye\"); } };\nstatic Greeter greeter;\nint main() { std::puts(\"main\"); return 0; }\n",
    );
    let plain = Command::new(format!("{CLANG}++"))
        .current_dir(d)
        .args(["-O2", "-fuse-ld=lld", "g.cpp", "-o", "plain"])
        .status()
        .unwrap();
    assert!(plain.success());
    let expected = Command::new(d.join("plain")).output().unwrap().stdout;
    assert_eq!(String::from_utf8_lossy(&expected), "hello\nmain\nbye\n");
    ok(pathprof(d, &["c++", "-O2", "-c", "g.cpp", "-o", "g.o"]));
    ok(pathprof(d, &["c++", "-fuse-ld=lld", "g.o", "-o", "g"]));
    let run = run_profiled(&d.join("g"), &d.join("g.pprof"));
    assert_eq!(run.stdout, expected);
    let r = json_report_in(d, "g.pprof", &["g"]);
    assert_eq!(function(&r, "main")["entry_count"], 1);
    assert_eq!(r["processes"], 1);
}

/// A static executable links the runtime's unwinder from libgcc_eh.
#[test]
fn static_links_count() {
    let dir = lib_and_main();
    let d = dir.path();
    ok(pathprof(
        d,
        &["cc", "-O2", "-static", "lib.c", "main.c", "-o", "prog"],
    ));
    let run = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "100\n");
    let r = json_report_in(d, "prog.pprof", &["prog"]);
    assert_eq!(function(&r, "cube")["entry_count"], 5);
    assert_eq!(function(&r, "square")["entry_count"], 5);
}

/// Flags that act in clang's back end (here AddressSanitizer, and sections per
/// function) apply to the instrumented objects as to the plain ones: the
/// overflow is caught alike, and the program still counts.
#[test]
fn sanitizers_and_back_end_flags_apply_to_instrumented_objects() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "overflow.c",
        "#include <stdlib.h>\n#include <stdio.h>\nint peek(int *a, int i) { return a[i]; }\nint main(int argc, char **argv) {\n  int *a = malloc(4 * sizeof *a);\n  for (int i = 0; i < 4; i++) a[i] = i;\n  printf(\"%d\\n\", peek(a, 1));\n  fflush(stdout);\n  int r = peek(a, argc + 3);\n  free(a);\n  return r;\n}\n",
    );
    let flags = ["-O1", "-g", "-fsanitize=address", "-ffunction-sections"];
    let mut plain = Command::new(CLANG);
    plain
        .current_dir(d)
        .args(flags)
        .args(["overflow.c", "-o", "plain"]);
    assert!(plain.status().unwrap().success());
    let mut cc = vec!["cc", "-c", "overflow.c", "-o", "overflow.o"];
    cc.extend(flags);
    ok(pathprof(d, &cc));
    let sections = Command::new(llvm_tool("llvm-readelf"))
        .current_dir(d)
        .args(["-S", "overflow.o"])
        .output()
        .unwrap();
    let sections = String::from_utf8_lossy(&sections.stdout);
    assert!(sections.contains(".text.peek"), "{sections}");
    ok(pathprof(
        d,
        &["cc", "-fsanitize=address", "overflow.o", "-o", "prog"],
    ));
    let expect = Command::new(d.join("plain")).output().unwrap();
    let got = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(got.stdout, expect.stdout);
    assert_eq!(got.status.code(), expect.status.code());
    assert_ne!(got.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert!(stderr.contains("heap-buffer-overflow"), "{stderr}");
}

/// A compile step is one clang process with pathprof's pass plugin, so clang's
/// own ways of compiling hold: with `-save-temps` clang leaves its temporaries
/// and the object still counts (also a `square` inlined into `cube` at `-O2`).
/// The plugin loaded into clang by hand, without the settings `pathprof cc`
/// passes, fails with a message that says so.
#[test]
fn compile_steps_are_clang_with_the_pass_plugin() {
    let dir = lib_and_main();
    let d = dir.path();
    ok(pathprof(
        d,
        &[
            "cc",
            "-O2",
            "-g",
            "-save-temps",
            "-c",
            "lib.c",
            "-o",
            "lib.o",
        ],
    ));
    assert!(d.join("lib.bc").exists(), "clang's -save-temps bitcode");
    ok(pathprof(d, &["cc", "-O2", "-g", "-c", "main.c"]));
    ok(pathprof(d, &["cc", "lib.o", "main.o", "-o", "prog"]));
    let out = run_profiled(&d.join("prog"), &d.join("prog.pprof"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "100\n");
    let r = json_report_in(d, "prog.pprof", &["prog"]);
    assert_eq!(function(&r, "cube")["entry_count"], 5);
    assert_eq!(function(&r, "square")["entry_count"], 5);

    let plugin = Path::new(env!("CARGO_BIN_EXE_pathprof")).with_file_name("libpathprof_plugin.so");
    let by_hand = Command::new(CLANG)
        .current_dir(d)
        .arg(format!("-fpass-plugin={}", plugin.display()))
        .args(["-O2", "-c", "lib.c", "-o", "by-hand.o"])
        .env_remove("PATHPROF_PLUGIN_SETTINGS")
        .output()
        .unwrap();
    assert!(!by_hand.status.success());
    let stderr = String::from_utf8_lossy(&by_hand.stderr);
    assert!(
        stderr.contains("pathprof plugin was loaded without its settings")
            && stderr.contains("`pathprof cc`"),
        "{stderr}"
    );
}

/// An edge-mode build without --early-exit counts edges as if every call
/// returned: where a longjmp out of a callee leaves counts that cannot
/// balance, the reports' warning names that cause and --early-exit, not
/// threads or damage; with --early-exit the counts are exact.
#[test]
fn edge_mode_names_a_longjmp_out_of_a_callee_as_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `fail` longjmps back to main on 15 of work's 20 calls.
    write(
        d,
        "lj.c",
        "#include <setjmp.h>\n#include <stdio.h>\nstatic jmp_buf env;\n\
         __attribute__((noinline)) void fail(int i) { if (i % 4 != 0) longjmp(env, 1); }\n\
         __attribute__((noinline)) int work(int i) {\n\
           int r = 0;\n  if (i & 1) { r = i * 3; } else { r = i - 2; }\n\
           fail(i);\n  if (r > 7) r -= 7;\n  return r;\n}\n\
         int main(void) {\n  volatile int sum = 0, jumps = 0;\n\
           for (volatile int i = 0; i < 20; i++) {\n\
             if (setjmp(env)) { jumps++; continue; }\n    sum += work(i);\n  }\n\
           printf(\"%d %d\\n\", sum, jumps);\n  return 0;\n}\n",
    );
    let report = |flags: &[&str]| {
        let mut args = vec!["cc", "--mode=edge", "-O1", "-g", "lj.c", "-o", "lj"];
        args.extend(flags);
        ok(pathprof(d, &args));
        let _ = std::fs::remove_file(d.join("lj.pprof"));
        let run = run_profiled(&d.join("lj"), &d.join("lj.pprof"));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "16 15\n");
        let out = pathprof(
            d,
            &["report", "--map", "lj", "lj.pprof", "--format", "json"],
        );
        assert!(out.status.success());
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let calls = function(&json, "work")["entry_count"].as_u64().unwrap();
        (String::from_utf8_lossy(&out.stderr).into_owned(), calls)
    };
    let (said, _) = report(&[]);
    assert!(
        said.contains("counts do not balance in 1 edge-mode function (work: ")
            && said.contains("longjmp out of a callee")
            && said.contains("--early-exit")
            && !said.contains("Threads sharing"),
        "{said}"
    );
    let (said, calls) = report(&["--early-exit"]);
    assert!(!said.contains("do not balance"), "{said}");
    assert_eq!(calls, 20);
}

/// `pathprof paths` marks a path of one block and says what it is: here
/// `twice`, which has no branch, runs most often, but main's loop does the
/// most work and ranks first.
#[test]
fn paths_rank_by_work_and_say_what_a_one_block_path_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "one.c",
        "__attribute__((noinline)) int twice(int x) { return 2 * x; }\n\
         int main(int argc, char **argv) {\n\
           int s = 0;\n\
           for (int i = 0; i < 40; i++) {\n\
             s += twice(i);\n\
             if (s % 3 == 0) s += argc * 7 + (s >> 2) * (argc + 5) - (s & 15) * 3;\n\
             s ^= (s << 3) + (s >> 1) + argc;\n\
           }\n\
           return s == 42;\n\
         }\n",
    );
    ok(pathprof(
        d,
        &["cc", "--mode=path", "-O0", "-g", "one.c", "-o", "one"],
    ));
    run_profiled(&d.join("one"), &d.join("one.pprof"));
    let text = ok(pathprof(
        d,
        &["paths", "--map", "one", "one.pprof", "--top", "3"],
    ));
    let ranked: Vec<&str> = text.lines().filter(|l| l.contains("(path ")).collect();
    assert!(ranked[0].contains("main (path"), "{text}");
    let twice = ranked
        .iter()
        .find(|l| l.contains("twice (path"))
        .expect("twice's path");
    assert!(
        twice.ends_with(" *") && twice.contains("     40 "),
        "{text}"
    );
    assert!(
        text.contains("* one block: straight-line code with no branch"),
        "{text}"
    );
    let by_count = ok(pathprof(
        d,
        &["paths", "--map", "one", "one.pprof", "--sort", "count"],
    ));
    let first = by_count.lines().find(|l| l.contains("(path ")).unwrap();
    assert!(
        first.contains("twice (path 0)") || first.contains("main"),
        "{by_count}"
    );
}

/// Output into a pipe nobody reads any more (`pathprof cc --help | head`)
/// ends quietly, as clang's and every report's does: no panic, status 0.
#[test]
fn a_closed_pipe_ends_help_and_reports_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "p.c", "int main(void) { return 0; }\n");
    ok(pathprof(d, &["cc", "--mode=path", "p.c", "-o", "p"]));
    run_profiled(&d.join("p"), &d.join("p.pprof"));
    for args in [
        &["cc", "--help"][..],
        &["cargo", "--help"],
        &["rt-path"],
        &["report", "--map", "p", "p.pprof"],
        &["info", "p.pprof"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(crate::support::command::PATHPROF)
            .args(args)
            .current_dir(d)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
}

/// A symbolic link planted at the name the runtime used to write its
/// temporary file at (`PROFILE.tmp`), pointing at a file of the user's: in
/// every mode the file is untouched and the profile is written, a file of
/// its own.
#[test]
fn a_link_planted_beside_the_profile_clobbers_nothing_in_any_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        crate::support::build::data("programs/max.c"),
        d.join("max.c"),
    )
    .unwrap();
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "precious data\n").unwrap();
    for mode in ["block", "edge", "path"] {
        let exe = format!("max-{mode}");
        ok(pathprof(
            d,
            &["cc", &format!("--mode={mode}"), "-O1", "max.c", "-o", &exe],
        ));
        let profile = d.join(format!("{mode}.pprof"));
        let planted = d.join(format!("{mode}.pprof.tmp"));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let out = run_profiled(&d.join(&exe), &profile);
        assert!(out.status.success(), "{mode}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{mode}");
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"precious data\n",
            "{mode}"
        );
        assert!(std::fs::symlink_metadata(&profile)
            .unwrap()
            .file_type()
            .is_file());
        assert!(
            std::fs::read(&profile).unwrap().starts_with(b"PPROFRAW"),
            "{mode}"
        );
    }
}
