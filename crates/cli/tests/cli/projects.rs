//! A small project built the way build systems build one (`tests/projects/suite`):
//! objects compiled one at a time with `pathprof cc -c`, a static library made
//! by `ar`, a shared library with a version script, two programs linked with
//! `-Wl,--as-needed` and the libraries named after the objects. Checked: the
//! plain and instrumented builds print the same; the instrumented shared
//! library exports exactly what the plain one does; the whole suite writes one
//! profile file; counts add up across programs and libraries, by hand; an
//! inlined `static inline` helper is still a function with its calls; and at
//! -O2 the line counts are the source's: equal to llvm-cov's on the same runs.
//!
//! A second project (`tests/projects/oneruntime`) checks one active runtime
//! per process: a program's runtime writes the counts of the instrumented
//! libraries it links or `dlopen`s however the process ends (`_exit`, a fork
//! child's `_exit`, exec, `abort`, SIGTERM, SIGUSR1 then SIGKILL), exactly
//! once; the program exports one symbol more; a library in an
//! uninstrumented program writes on its own (and loses what `_exit` ends).

use crate::support::build::{data, exports, llvm_tool, CLANG};
use crate::support::command::{ok, ok_in, pathprof, PATHPROF};
use crate::support::report::{json_report_in, lcov_lines};
use crate::support::run::{profiled, signal_of};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sources() -> PathBuf {
    data("projects/suite")
}

/// How one build compiles and links.
struct Toolchain {
    /// The compiler command (`clang`, or `pathprof cc`).
    cc: Vec<String>,
    /// Extra flags for every compile and link (llvm-cov's instrumentation).
    extra: Vec<String>,
}

impl Toolchain {
    fn plain() -> Self {
        Toolchain {
            cc: vec![CLANG.into()],
            extra: vec![],
        }
    }
    fn pathprof() -> Self {
        Toolchain {
            cc: vec![PATHPROF.into(), "cc".into()],
            extra: vec![],
        }
    }
    fn llvm_cov() -> Self {
        Toolchain {
            cc: vec![CLANG.into()],
            extra: vec![
                "-fprofile-instr-generate".into(),
                "-fcoverage-mapping".into(),
            ],
        }
    }

    fn cc(&self, dir: &Path, args: &[&str]) {
        let mut cmd = Command::new(&self.cc[0]);
        cmd.args(&self.cc[1..]).args(&self.extra).args(args);
        ok_in(dir, &mut cmd, &[]);
    }

    /// Builds the suite into `dir` (created): libshape.a, libgreet.so, prog1,
    /// prog2, compiled at -O2 with debug info.
    fn build(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        let src = sources();
        let s = |name: &str| src.join(name).display().to_string();
        self.cc(dir, &["-O2", "-g", "-c", &s("shape.c"), "-o", "shape.o"]);
        ok_in(
            dir,
            Command::new(llvm_tool("llvm-ar")).args(["rcs", "libshape.a", "shape.o"]),
            &[],
        );
        self.cc(
            dir,
            &["-O2", "-g", "-fPIC", "-c", &s("greet.c"), "-o", "greet.o"],
        );
        let script = format!("-Wl,--version-script={}", s("greet.map"));
        self.cc(dir, &["-shared", &script, "greet.o", "-o", "libgreet.so"]);
        for prog in ["prog1", "prog2"] {
            let (source, object) = (s(&format!("{prog}.c")), format!("{prog}.o"));
            self.cc(dir, &["-O2", "-g", "-c", &source, "-o", &object]);
            self.cc(
                dir,
                &[
                    "-O2",
                    &object,
                    "-L.",
                    "-lshape",
                    "-lgreet",
                    "-Wl,-rpath,$ORIGIN",
                    "-Wl,--as-needed",
                    "-o",
                    prog,
                ],
            );
        }
    }
}

/// The suite's runs: prog1 twice, prog2 once; their output.
fn run_suite(dir: &Path, env: (&str, &str)) -> String {
    let mut printed = String::new();
    for prog in ["prog1", "prog1", "prog2"] {
        printed += &ok_in(dir, &mut Command::new(dir.join(prog)), &[env]);
    }
    printed
}

/// Entry counts per function name (functions of one name summed: both
/// programs have a `main`).
fn entries(report: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for f in report["functions"].as_array().unwrap() {
        *out.entry(f["name"].as_str().unwrap().to_string())
            .or_insert(0) += f["entry_count"].as_u64().unwrap();
    }
    out
}

/// The suite built by `reference` and by pathprof, in two directories of a
/// fresh temporary one.
fn build_both(reference: Toolchain) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (theirs, ours) = (tmp.path().join("reference"), tmp.path().join("pathprof"));
    reference.build(&theirs);
    Toolchain::pathprof().build(&ours);
    (tmp, theirs, ours)
}

#[test]
fn a_suite_writes_one_profile_whose_counts_add_up_across_programs_and_libraries() {
    let (_tmp, plain, pp) = build_both(Toolchain::plain());

    assert_eq!(
        exports(&pp.join("libgreet.so")),
        exports(&plain.join("libgreet.so")),
        "the instrumented library exports more (or less) than the plain one"
    );

    let profile = pp.join("suite.pprof");
    let expected = run_suite(&plain, ("UNUSED", ""));
    assert_eq!(
        run_suite(&pp, ("PATHPROF_FILE", profile.to_str().unwrap())),
        expected
    );
    let written: Vec<String> = std::fs::read_dir(&pp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("pprof"))
        .collect();
    assert_eq!(
        written,
        ["suite.pprof"],
        "the suite wrote other profiles too"
    );

    let whole = json_report_in(&pp, "suite.pprof", &["prog1", "prog2", "libgreet.so"]);
    // prog1: classify(0..30) twice; prog2: classify(0..4) once. clamp runs for
    // x % 3 != 2 (20 per prog1 run, 3 in prog2) and in every greet_internal.
    let e = entries(&whole);
    assert_eq!(e["main"], 3, "{e:?}");
    assert_eq!(e["classify"], 2 * 30 + 4, "{e:?}");
    assert_eq!(e["greet"], 2 + 2, "{e:?}");
    assert_eq!(e["greet_internal"], 4, "{e:?}");
    assert_eq!(e["clamp"], 2 * 20 + 3 + 4, "{e:?}");
    assert_eq!(whole["processes"], 3);
    assert_eq!(whole["exact"], true);
    for f in whole["functions"].as_array().unwrap() {
        assert_eq!(f["lost_paths"], 0, "{f}");
        assert_eq!(f["flow_imbalance"], 0, "{f}");
    }

    // The library on its own: its counts from both programs.
    let library = json_report_in(&pp, "suite.pprof", &["libgreet.so"]);
    let e = entries(&library);
    assert_eq!((e["greet"], e["greet_internal"], e["clamp"]), (4, 4, 4));
    assert!(!e.contains_key("main"), "{e:?}");
}

/// `DA` counts per (file name, line) of an LCOV tracefile.
fn da_counts(tracefile: &str) -> BTreeMap<(String, u32), u64> {
    let mut out = BTreeMap::new();
    for (file, line, count) in lcov_lines(tracefile) {
        let name = Path::new(file)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        *out.entry((name, line)).or_insert(0) += count;
    }
    out
}

#[test]
fn line_counts_at_o2_are_the_sources_and_equal_llvm_covs() {
    let (_tmp, cov, pp) = build_both(Toolchain::llvm_cov());
    run_suite(&cov, ("LLVM_PROFILE_FILE", "%p.profraw"));
    run_suite(&pp, ("PATHPROF_FILE", "suite.pprof"));

    let raws: Vec<String> = std::fs::read_dir(&cov)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".profraw"))
        .collect();
    let mut merge = Command::new(llvm_tool("llvm-profdata"));
    merge.args(["merge", "-o", "all.profdata"]).args(&raws);
    ok_in(&cov, &mut merge, &[]);
    let theirs = da_counts(&ok_in(
        &cov,
        Command::new(llvm_tool("llvm-cov")).args([
            "export",
            "-format=lcov",
            "-instr-profile=all.profdata",
            "prog1",
            "-object=prog2",
            "-object=libgreet.so",
        ]),
        &[],
    ));
    ok(pathprof(
        &pp,
        &[
            "export",
            "--format",
            "lcov",
            "--map",
            "prog1",
            "--map",
            "prog2",
            "--map",
            "libgreet.so",
            "suite.pprof",
            "-o",
            "suite.info",
        ],
    ));
    let ours = da_counts(&std::fs::read_to_string(pp.join("suite.info")).unwrap());

    // Equal on every line both count, but for a function's closing brace
    // after a `return`: llvm-cov shows there the count of the region that
    // encloses it (the code after the last `if` that returned), pathprof the
    // block that holds the `ret` instruction, which every call reaches.
    let both: Vec<_> = ours.keys().filter(|k| theirs.contains_key(*k)).collect();
    let text = |file: &str, line: u32| {
        let source = std::fs::read_to_string(sources().join(file)).unwrap();
        source
            .lines()
            .nth(line as usize - 1)
            .unwrap()
            .trim()
            .to_string()
    };
    let differ: Vec<&&(String, u32)> = both.iter().filter(|k| ours[**k] != theirs[**k]).collect();
    let shown: Vec<String> = differ
        .iter()
        .map(|k| {
            format!(
                "{}:{} pathprof {} llvm-cov {}",
                k.0, k.1, ours[**k], theirs[**k]
            )
        })
        .collect();
    let unexplained = differ.iter().filter(|k| text(&k.0, k.1) != "}").count();
    assert!(
        both.len() >= 30,
        "too few lines in common: {both:?}\npathprof: {ours:?}\nllvm-cov: {theirs:?}"
    );
    assert!(
        differ.len() * 20 <= both.len() && unexplained == 0,
        "line counts differ:\n{}",
        shown.join("\n")
    );
    // Lines llvm-cov counts and pathprof does not are lines whose code the
    // optimiser removed before instrumenting (`int s = 0;` became a constant,
    // `(void)argv;`, a closing brace whose `ret` merged with a `return`):
    // llvm-cov counts regions of the syntax tree, pathprof instructions.
}

// ---------------------------------------------------------------------------
// One active runtime per process (`tests/projects/oneruntime`): a program
// linked with an instrumented shared library (`libcounter.so`, hash-table
// paths, a version script) and loading another one with dlopen
// (`libplugin.so`). Every instrumented library has a hidden copy of the
// runtime; the copies hand their modules over to the executable's runtime,
// so the executable's `_exit`, exec, `abort`, signal handlers, fork handling
// and SIGUSR1 dumps write the libraries' counts too.

fn oneruntime_sources() -> PathBuf {
    data("projects/oneruntime")
}

/// Builds `libcounter.so`, `libplugin.so` and `host` (linked with
/// libcounter) into `dir` with `tc`. pathprof builds count every function
/// with more than one path in a hash table (`--array-limit=1`), so the
/// executable's runtime reads tables a library's copy of the runtime made.
fn build_host(tc: &Toolchain, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let src = oneruntime_sources();
    let s = |name: &str| src.join(name).display().to_string();
    let cc = |args: &[&str]| tc.cc(dir, args);
    cc(&[
        "-O2",
        "-g",
        "-fPIC",
        "-c",
        &s("counter.c"),
        "-o",
        "counter.o",
    ]);
    let script = format!("-Wl,--version-script={}", s("counter.map"));
    cc(&["-shared", &script, "counter.o", "-o", "libcounter.so"]);
    let plugin = s("plugin.c");
    cc(&[
        "-O2",
        "-g",
        "-fPIC",
        "-shared",
        &plugin,
        "-o",
        "libplugin.so",
    ]);
    cc(&["-O2", "-g", "-c", &s("host.c"), "-o", "host.o"]);
    let rpath = "-Wl,-rpath,$ORIGIN";
    cc(&["-O2", "host.o", "-L.", "-lcounter", rpath, "-o", "host"]);
}

fn pathprof_hash_tables() -> Toolchain {
    let mut tc = Toolchain::pathprof();
    tc.extra.push("--array-limit=1".into());
    tc
}

/// Runs `host ARGS` in `dir` writing `profile` (removed first); its exit status.
fn run_host(dir: &Path, profile: &str, args: &[&str]) -> std::process::ExitStatus {
    let _ = std::fs::remove_file(dir.join(profile));
    let out = profiled(&dir.join("host"), Path::new(profile))
        .args(args)
        .current_dir(dir)
        .env_remove("PATHPROF_VERBOSE")
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "host {args:?} said:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.status
}

/// The report's process facts: (processes, forked_processes).
fn processes(r: &Value) -> (u64, u64) {
    (
        r["processes"].as_u64().unwrap(),
        r["forked_processes"].as_u64().unwrap(),
    )
}

/// A pathprof build of the project in a fresh temporary directory.
fn built_host() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pathprof");
    build_host(&pathprof_hash_tables(), &dir);
    // The library's paths are counted in hash tables, by its own copy of
    // the runtime (the object calls the runtime's hash counting).
    let nm = ok_in(
        &dir,
        Command::new(llvm_tool("llvm-nm")).args(["-u", "counter.o"]),
        &[],
    );
    assert!(nm.contains("__pathprof_hash_count"), "{nm}");
    (tmp, dir)
}

#[test]
fn a_librarys_counts_are_written_however_the_process_ends() {
    let (_tmp, dir) = built_host();
    let k = 10u64;
    // bump(i) for i in 0..10: 10 entries; twice for odd i: 1 3 5 7 9, 5
    // entries; bumps once (it returns before the process ends). None of these
    // endings runs exit handlers or destructors, so only the executable's
    // runtime, writing every module of the process, can write the library's
    // counts. (SIGTERM is raised inside main: main's path in progress is
    // lost, so main's own entry is not asserted.)
    for (how, status) in [
        ("exit", Some(0)),
        ("abort", None),
        ("term", None),
        ("exec", Some(0)),
    ] {
        let st = run_host(&dir, "p.pprof", &[how, &k.to_string()]);
        assert_eq!(st.code(), status, "{how}: {st:?}");
        match how {
            "abort" => assert_eq!(signal_of(st), Some(libc_sig::SIGABRT), "{how}"),
            "term" => assert_eq!(signal_of(st), Some(libc_sig::SIGTERM), "{how}"),
            _ => {}
        }
        let whole = json_report_in(&dir, "p.pprof", &["host", "libcounter.so"]);
        let e = entries(&whole);
        assert_eq!(
            (e["bump"], e["twice"], e["bumps"]),
            (k, 5, 1),
            "{how}: {e:?}"
        );
        assert_eq!(processes(&whole), (1, 0), "{how}");
        let lib = json_report_in(&dir, "p.pprof", &["libcounter.so"]);
        assert_eq!(processes(&lib), (1, 0), "{how}: the library's section");
        assert_eq!(entries(&lib)["bump"], k, "{how}");
    }
}

/// Signal numbers (Linux, every architecture pathprof runs on).
mod libc_sig {
    pub const SIGABRT: i32 = 6;
    pub const SIGKILL: i32 = 9;
    pub const SIGTERM: i32 = 15;
}

#[test]
fn a_fork_childs_library_counts_are_written_by_its_exit() {
    let (_tmp, dir) = built_host();
    let st = run_host(&dir, "f.pprof", &["fork", "10", "7"]);
    assert!(st.success(), "{st:?}");
    // The parent: bump(0..10) before the fork (10 entries, twice 5 times);
    // the child, which ends by _exit: bump(0..7) (7 entries, twice for
    // 1 3 5: 3). What the parent counted before the fork is written once (by
    // the parent, at its exit): 10 + 7 and 5 + 3. bumps ran once in each.
    let whole = json_report_in(&dir, "f.pprof", &["host", "libcounter.so"]);
    let e = entries(&whole);
    assert_eq!((e["bump"], e["twice"], e["bumps"]), (17, 8, 2), "{e:?}");
    assert_eq!(e["main"], 1, "only the parent returns from main: {e:?}");
    assert_eq!(processes(&whole), (2, 1));
    assert_eq!(whole["exact"], true);
    // The library's section counts both processes, the child as forked.
    let lib = json_report_in(&dir, "f.pprof", &["libcounter.so"]);
    assert_eq!(processes(&lib), (2, 1));
    assert_eq!(entries(&lib)["bump"], 17);
}

#[test]
fn a_dlopened_librarys_counts_are_kept_across_dlclose_and_a_second_load() {
    let (_tmp, dir) = built_host();
    let plugin = dir.join("libplugin.so").display().to_string();
    let st = run_host(&dir, "d.pprof", &["dlopen", "10", "7", &plugin]);
    assert!(st.success(), "{st:?}");
    // plug(i) for i in 0..10, then dlclose (the plugin's destructor hands
    // its last write to the executable's runtime); loaded again, plug(i)
    // for i in 0..7, then _exit with the plugin loaded: only the
    // executable's runtime can write those 7. plugs ran twice.
    let whole = json_report_in(&dir, "d.pprof", &["host", "libplugin.so"]);
    let e = entries(&whole);
    assert_eq!((e["plug"], e["plugs"], e["main"]), (17, 2, 1), "{e:?}");
    assert_eq!(processes(&whole), (1, 0));
    // One process, counted once in the plugin's section although it wrote
    // it twice (at dlclose and at _exit).
    let lib = json_report_in(&dir, "d.pprof", &["libplugin.so"]);
    assert_eq!(processes(&lib), (1, 0));
    assert_eq!(entries(&lib)["plug"], 17);
}

#[test]
fn sigusr1_writes_the_librarys_counts_once() {
    let (_tmp, dir) = built_host();
    // bump(0..10), SIGUSR1 (a dump), bump(0..7), then SIGKILL: the file
    // holds what the SIGUSR1 dump wrote, no process counted (none ended by
    // a final write): bump 10, twice 5, and bumps' first run (10 calls)
    // complete before the signal.
    let st = run_host(&dir, "u.pprof", &["usr1", "10", "7", "kill"]);
    assert_eq!(signal_of(st), Some(libc_sig::SIGKILL), "{st:?}");
    let whole = json_report_in(&dir, "u.pprof", &["host", "libcounter.so"]);
    let e = entries(&whole);
    assert_eq!((e["bump"], e["twice"], e["bumps"]), (10, 5, 1), "{e:?}");
    assert_eq!(processes(&whole).0, 0);

    // The same run returning from main: the exit writes only what came
    // after the dump, 7 and 3 more (twice for 1 3 5), a second bumps.
    let st = run_host(&dir, "u.pprof", &["usr1", "10", "7"]);
    assert!(st.success(), "{st:?}");
    let whole = json_report_in(&dir, "u.pprof", &["host", "libcounter.so"]);
    let e = entries(&whole);
    assert_eq!(
        (e["bump"], e["twice"], e["bumps"], e["main"]),
        (17, 8, 2, 1),
        "{e:?}"
    );
    assert_eq!(processes(&whole), (1, 0));
    assert_eq!(whole["exact"], true);
}

/// The defined dynamic symbols of a file, as `name type` pairs.
fn dynamic_exports(file: &Path) -> BTreeMap<String, String> {
    exports(file)
        .into_iter()
        .filter_map(|l| {
            let (kind, name) = l.split_once(' ')?;
            Some((name.to_string(), kind.to_string()))
        })
        .collect()
}

#[test]
fn libraries_export_what_plain_ones_do_and_the_program_one_symbol_more() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, pp) = (tmp.path().join("plain"), tmp.path().join("pathprof"));
    build_host(&Toolchain::plain(), &plain);
    build_host(&pathprof_hash_tables(), &pp);
    for lib in ["libcounter.so", "libplugin.so"] {
        assert_eq!(
            exports(&pp.join(lib)),
            exports(&plain.join(lib)),
            "{lib} exports more (or less) than the plain one"
        );
    }
    let ours = dynamic_exports(&pp.join("host"));
    let theirs = dynamic_exports(&plain.join("host"));
    let new: Vec<&str> = ours
        .keys()
        .filter(|n| !theirs.contains_key(*n))
        .map(String::as_str)
        .collect();
    assert!(theirs.keys().all(|n| ours.contains_key(n)), "{ours:?}");
    // The runtime's one rendezvous symbol (data), and the C library
    // functions it takes over (weak definitions, exported by the linker
    // because the C library defines them too, as before).
    assert_eq!(
        ours.get("__pathprof_runtime_v1").map(String::as_str),
        Some("D")
    );
    let interposed = [
        "_Exit",
        "_exit",
        "abort",
        "daemon",
        "execl",
        "execle",
        "execlp",
        "execv",
        "execve",
        "execvp",
        "execvpe",
        "fexecve",
        "pthread_create",
    ];
    let unexpected: Vec<&&str> = new
        .iter()
        .filter(|n| **n != "__pathprof_runtime_v1" && !interposed.contains(n))
        .collect();
    assert!(unexpected.is_empty(), "new exports of host: {unexpected:?}");
    for n in interposed {
        assert_eq!(ours.get(n).map(String::as_str), Some("W"), "{n}");
    }
}

#[test]
fn a_library_in_an_uninstrumented_program_writes_on_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mixed");
    build_host(&pathprof_hash_tables(), &dir);
    // The program relinked from a plain object: no runtime of its own, so
    // the library's copy finds none to hand over to and works on its own.
    let src = oneruntime_sources().join("host.c").display().to_string();
    Toolchain::plain().cc(&dir, &["-O2", "-c", &src, "-o", "host.o"]);
    Toolchain::plain().cc(
        &dir,
        &[
            "-O2",
            "host.o",
            "-L.",
            "-lcounter",
            "-Wl,-rpath,$ORIGIN",
            "-o",
            "host",
        ],
    );
    assert!(!dynamic_exports(&dir.join("host")).contains_key("__pathprof_runtime_v1"));
    // Written: by SIGUSR1 (the library's copy is the only one, so it took
    // the signal): bump(0..10) before it, nothing after (SIGKILL) ...
    let st = run_host(&dir, "m.pprof", &["usr1", "10", "7", "kill"]);
    assert_eq!(signal_of(st), Some(libc_sig::SIGKILL), "{st:?}");
    let e = entries(&json_report_in(&dir, "m.pprof", &["libcounter.so"]));
    assert_eq!((e["bump"], e["twice"]), (10, 5), "{e:?}");
    // ... and at exit (its own exit handler and destructor): 10 + 7 and
    // 5 + 3 (twice for 1 3 5), once.
    assert!(run_host(&dir, "m.pprof", &["usr1", "10", "7"]).success());
    let e = entries(&json_report_in(&dir, "m.pprof", &["libcounter.so"]));
    assert_eq!((e["bump"], e["twice"]), (17, 8), "{e:?}");
    // Lost: a process that ends by the program's own _exit (the C
    // library's: nothing takes it over) writes nothing at all.
    assert!(run_host(&dir, "x.pprof", &["exit", "10"]).success());
    assert!(!dir.join("x.pprof").exists());
}

/// Two programs built from one source with other macros (as xz builds
/// `xz` and `xzdec`): `f` has two shapes, `main` one. Reported together,
/// `main` is one function entered once per process of either program (no
/// note of unfinished processes), and the two builds of `f` are told apart
/// by the program that ran each, in the text reports.
#[test]
fn programs_built_from_one_source_with_other_macros_report_together() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("t.c"),
        "#include <stdio.h>\nint f(int x) {\n#ifdef TWICE\n  if (x > 2) return x * 2;\n#endif\n  return x + 1;\n}\nint main(void) {\n  int s = 0;\n  for (int i = 0; i < 5; i++) s += f(i);\n  printf(\"%d\\n\", s);\n  return 0;\n}\n",
    )
    .unwrap();
    for (exe, macros) in [("twice", "-DTWICE"), ("once", "-DONCE")] {
        ok(pathprof(
            d,
            &["cc", "--mode=path", "-O0", "-g", macros, "t.c", "-o", exe],
        ));
    }
    for (exe, printed) in [("twice", "20\n"), ("once", "15\n"), ("once", "15\n")] {
        let run = profiled(&d.join(exe), &d.join("both.pprof"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&run.stdout), printed);
    }
    let maps = ["--map", "twice", "--map", "once"];
    let text = pathprof(d, &[&["report"][..], &maps, &["both.pprof"]].concat());
    let said = String::from_utf8_lossy(&text.stderr).into_owned();
    assert_eq!(said, "", "every process finished: nothing to note");
    let text = ok(text);
    let row = |name: &str| {
        let line = text
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{text}"));
        line.split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(row(" main "), "3", "{text}");
    assert_eq!(row("f [in twice]"), "5", "{text}");
    assert_eq!(row("f [in once]"), "10", "{text}");
    let paths = ok(pathprof(
        d,
        &[&["paths"][..], &maps, &["both.pprof"]].concat(),
    ));
    assert!(paths.contains("f [in once] (path 0)"), "{paths}");
    let r = json_report_in(d, "both.pprof", &["twice", "once"]);
    let entries: Vec<(&str, u64)> = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap(),
                f["entry_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(entries.len(), 3, "{entries:?}");
    for want in [("main", 3), ("f", 5), ("f", 10)] {
        assert!(entries.contains(&want), "{entries:?}");
    }
    // Which program ran which build of `f`: its objects, by base name; a
    // function of one build (`main`) has none, as in a one-program report.
    let ran_in: Vec<(&str, u64, Vec<String>)> = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let objects = f.get("objects").and_then(|o| o.as_array());
            let names = objects
                .into_iter()
                .flatten()
                .map(|o| pathprof_core::map::base_name(o.as_str().unwrap()))
                .collect();
            (
                f["name"].as_str().unwrap(),
                f["entry_count"].as_u64().unwrap(),
                names,
            )
        })
        .collect();
    for (name, calls, objects) in [
        ("main", 3, vec![]),
        ("f", 5, vec!["twice"]),
        ("f", 10, vec!["once"]),
    ] {
        let found = ran_in
            .iter()
            .any(|(n, c, o)| (*n, *c) == (name, calls) && *o == objects);
        assert!(found, "{name} {calls} {objects:?}: {ran_in:?}");
    }
}
