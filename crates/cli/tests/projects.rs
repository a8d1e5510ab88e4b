//! A small project built the way build systems build one (`tests/projects/suite`):
//! objects compiled one at a time with `pathprof cc -c`, a static library made
//! by `ar`, a shared library with a version script, two programs linked with
//! `-Wl,--as-needed` and the libraries named after the objects. Checked: the
//! plain and instrumented builds print the same; the instrumented shared
//! library exports exactly what the plain one does; the whole suite writes one
//! profile file; counts add up across programs and libraries, by hand; an
//! inlined `static inline` helper is still a function with its calls; and at
//! -O2 the line counts are the source's: equal to llvm-cov's on the same runs.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";
const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/projects/suite")
}

/// Runs `cmd` in `dir`; panics with its output when it fails.
fn ok(dir: &Path, cmd: &mut Command) -> String {
    let out = cmd.current_dir(dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
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
            cc: vec![env!("CARGO_BIN_EXE_pathprof").into(), "cc".into()],
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
        ok(dir, &mut cmd);
    }

    /// Builds the suite into `dir` (created): libshape.a, libgreet.so, prog1,
    /// prog2, compiled at -O2 with debug info.
    fn build(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        let src = sources();
        let s = |name: &str| src.join(name).display().to_string();
        self.cc(dir, &["-O2", "-g", "-c", &s("shape.c"), "-o", "shape.o"]);
        ok(
            dir,
            Command::new(format!("{LLVM_BIN}/llvm-ar")).args(["rcs", "libshape.a", "shape.o"]),
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
        printed += &ok(dir, Command::new(dir.join(prog)).env(env.0, env.1));
    }
    printed
}

fn pathprof(dir: &Path, args: &[&str]) -> String {
    ok(dir, Command::new(env!("CARGO_BIN_EXE_pathprof")).args(args))
}

/// `pathprof report --format json` of `suite.pprof` over `maps`.
fn report(dir: &Path, maps: &[&str]) -> Value {
    let mut args = vec!["report", "--format", "json", "suite.pprof"];
    for m in maps {
        args.extend(["--map", m]);
    }
    serde_json::from_str(&pathprof(dir, &args)).unwrap()
}

/// Defined dynamic symbols (name and type) of a shared library: its exports.
fn exports(lib: &Path) -> Vec<String> {
    let text = ok(
        lib.parent().unwrap(),
        Command::new(format!("{LLVM_BIN}/llvm-nm"))
            .args(["-D", "--defined-only"])
            .arg(lib),
    );
    text.lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest.to_string()))
        .collect()
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

    let whole = report(&pp, &["prog1", "prog2", "libgreet.so"]);
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
    let library = report(&pp, &["libgreet.so"]);
    let e = entries(&library);
    assert_eq!((e["greet"], e["greet_internal"], e["clamp"]), (4, 4, 4));
    assert!(!e.contains_key("main"), "{e:?}");
}

/// `DA` counts per (file name, line) of an LCOV tracefile.
fn da_counts(tracefile: &str) -> BTreeMap<(String, u32), u64> {
    let mut out = BTreeMap::new();
    let mut file = String::new();
    for line in tracefile.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = Path::new(f)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
        } else if let Some(da) = line.strip_prefix("DA:") {
            let mut parts = da.split(',');
            let l = parts.next().unwrap().parse().unwrap();
            let c: u64 = parts.next().unwrap().parse().unwrap();
            *out.entry((file.clone(), l)).or_insert(0) += c;
        }
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
    let mut merge = Command::new(format!("{LLVM_BIN}/llvm-profdata"));
    merge.args(["merge", "-o", "all.profdata"]).args(&raws);
    ok(&cov, &mut merge);
    let theirs = da_counts(&ok(
        &cov,
        Command::new(format!("{LLVM_BIN}/llvm-cov")).args([
            "export",
            "-format=lcov",
            "-instr-profile=all.profdata",
            "prog1",
            "-object=prog2",
            "-object=libgreet.so",
        ]),
    ));
    pathprof(
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
    );
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
