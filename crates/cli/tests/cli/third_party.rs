//! Real third-party programs from registry crates' bundled C sources, built
//! through `pathprof cc` in all three modes and run on workloads: the Lua 5.4
//! interpreter (`lua-src`; its interpreter loop is a computed `goto`, whose
//! `indirectbr` edges cannot be split), bzip2 1.0.8 with its command-line tool
//! (`bzip2-sys`; `sendMTFValues`, which -O2 inlines into `BZ2_compressBlock`
//! but which is counted as itself, has about 3·10^32 acyclic paths), SQLite (`libsqlite3-sys`; a dozen functions beyond
//! 2^64 paths), and libuv's own test runner with 60 of its tests
//! (`libuv-sys2`; the runner forks a process per test, which execs it again,
//! and tests fork, `vfork` and spawn: one profile from 122 processes, 61 of
//! them fork children). For each: the output equals the plain clang build's,
//! block counts agree across modes, edge counts agree between edge and path
//! mode, and `pathprof verify` passes. And every function's entry count equals
//! gcov's "called N times" (`gcc --coverage -O0`, same workload): exactly at
//! -O0, and never more at -O2 (see `entry_counts_equal_gcov`).
//! All three are also profiled preferentially (`--mode=ppp`), trained on one
//! input and run on another (`ppp_trained_on_another_input`; bzip2 in
//! `bzip2_ppp_trained_on_one_text_counts_another_exactly`).
//!
//! xz 5.2 (`lzma-sys`) is built the way its users build it: its own autotools
//! build with default options (libtool, a shared and a static liblzma, the
//! tools and test programs linked against the shared one), and checked by its
//! own `make check` (see `xz_make_check_profiles_into_one_file`, which then
//! builds it again with `--profile-use` of the suite's profile); HarfBuzz
//! (`harfbuzz-sys`), C++, through its own meson build of three shared
//! libraries and its own `meson test` (see
//! `harfbuzz_meson_test_profiles_into_one_file`); curl (`curl-sys`) through
//! its own CMake build (a shared libcurl and the tool), on transfers the test
//! makes (see `curl_cmake_build_profiles_into_one_file`).
//!
//! pulldown-cmark, a Rust program from crates.io, is installed as Rust users
//! install programs, `cargo install`, plain and through `pathprof cargo` in
//! path and edge mode (see `pulldown_cmark_through_pathprof_cargo_install`).
//!
//! Runs are made with address randomisation off (`setarch -R`): Lua and SQLite
//! hash or cache by address, so only then are two runs the same run. Builds of
//! different modes still lay out their data differently, so Lua's API string
//! cache, indexed by address, is cut to one entry.

use crate::support::build::{copy_dir, exports, map_of, CLANG};
use crate::support::command::{cargo_command, ok_in, stdout_of, succeed, PATHPROF};
use crate::support::report::{function, json_report, json_report_in, with_maps};
use crate::support::run::profiled;
use std::collections::BTreeMap;
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Where cargo keeps the sources of registry crate `name` (named by
/// `crates/cli/tests/thirdparty/Cargo.toml`, which nothing builds).
fn crate_dir(name: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/thirdparty/Cargo.toml");
    let out = stdout_of(
        Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--manifest-path"])
            .arg(&manifest),
    );
    let meta: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap();
    Path::new(pkg["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A file of the third-party programs' workloads (`tests/thirdparty/`,
/// shared with `bench/`).
fn workload_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/thirdparty")
        .join(path)
}

/// A program: how to compile it and how to run it.
#[derive(Clone)]
pub(crate) struct Program {
    name: &'static str,
    pub(crate) sources: Vec<PathBuf>,
    pub(crate) cflags: Vec<String>,
    libs: Vec<&'static str>,
    /// Each run: arguments and standard input; all runs add into one profile.
    pub(crate) runs: Vec<(Vec<String>, Vec<u8>)>,
    /// Environment variables every run sets.
    env: Vec<(&'static str, &'static str)>,
    /// pathprof's own flags for every instrumented build.
    pathprof_flags: Vec<&'static str>,
}

fn c_files(dir: &Path, except: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .filter(|p| !except.iter().any(|x| p.file_name().unwrap() == *x))
        .collect();
    files.sort();
    files
}

fn build(p: &Program, compiler: &[&str], opt: &str, exe: &Path) {
    let status = Command::new(compiler[0])
        .args(&compiler[1..])
        .args([opt, "-g"])
        .args(&p.cflags)
        .args(&p.sources)
        .arg("-o")
        .arg(exe)
        .args(&p.libs)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "building {} with {compiler:?} failed",
        p.name
    );
}

/// Runs every run of `p` with `exe`; returns what each printed and its status.
fn run(p: &Program, exe: &Path, profile: &Path) -> Vec<(Vec<u8>, i32)> {
    p.runs
        .iter()
        .map(|(args, stdin)| {
            // Run as `./prog` from its directory: programs may look at argv[0].
            let mut child = Command::new("setarch")
                .arg("-R")
                .arg(Path::new(".").join(exe.file_name().unwrap()))
                .current_dir(exe.parent().unwrap())
                .args(args)
                .env("PATHPROF_FILE", profile)
                .envs(p.env.iter().copied())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut input = child.stdin.take().unwrap();
            let data = stdin.clone();
            let writer = std::thread::spawn(move || input.write_all(&data));
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap().unwrap();
            (out.stdout, out.status.code().unwrap_or(-1))
        })
        .collect()
}

/// function name → (block counts, edge counts)
type Counts = BTreeMap<String, (Vec<u64>, Vec<Option<u64>>)>;

/// The counts of the one function called `name` (keys are `name@file:line`).
fn of<'a>(counts: &'a Counts, name: &str) -> &'a (Vec<u64>, Vec<Option<u64>>) {
    let prefix = format!("{name}@");
    let mut found = counts.iter().filter(|(k, _)| k.starts_with(&prefix));
    let (_, c) = found.next().unwrap_or_else(|| panic!("no function {name}"));
    assert!(found.next().is_none(), "several functions called {name}");
    c
}

/// A function as both reports name it: (linkage name, source file name without
/// its directory, line of its name) → entry count.
type Entries = BTreeMap<(String, String, u64), u64>;

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Every function's `entry_count` in a JSON report (those with a source file).
/// A suffix `.N` is dropped from names: linking all units into one module
/// renames functions of one name that way (bzip2's external `myfeof` in
/// bzip2.c becomes `myfeof.59` beside bzlib.c's static `myfeof`, as it is in
/// the instrumented program, where both end up local); file and line still tell
/// them apart. Names that still collide are left out.
fn entries(report: &serde_json::Value) -> Entries {
    let unsuffixed = |name: &str| match name.rsplit_once('.') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            base.to_string()
        }
        _ => name.to_string(),
    };
    let mut entries = Entries::new();
    let mut twice = Vec::new();
    for f in report["functions"].as_array().unwrap() {
        let (Some(file), Some(line)) = (f["file"].as_str(), f["line"].as_u64()) else {
            continue;
        };
        let key = (
            unsuffixed(f["name"].as_str().unwrap()),
            file_name(file),
            line,
        );
        if entries
            .insert(key.clone(), f["entry_count"].as_u64().unwrap())
            .is_some()
        {
            twice.push(key);
        }
    }
    for key in twice {
        entries.remove(&key);
    }
    entries
}

fn counts(dir: &Path, mode: &str) -> (Counts, Entries) {
    let report = json_report(
        &dir.join(format!("{mode}.ppmap")),
        &dir.join(format!("{mode}.pprof")),
    );
    let number = |v: &serde_json::Value| v["count"].as_u64();
    let counts = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let blocks = f["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| number(b).unwrap())
                .collect();
            let edges = f["edges"].as_array().unwrap().iter().map(number).collect();
            // Static functions of one name may live in several files.
            let key = format!(
                "{}@{}:{}",
                f["name"].as_str().unwrap(),
                f["file"],
                f["line"]
            );
            (key, (blocks, edges))
        })
        .collect();
    (counts, entries(&report))
}

/// What the -O2 builds of a program counted, for the tests that look at them.
struct Checked {
    /// What each run of the plain clang build printed, and its status.
    expected: Vec<(Vec<u8>, i32)>,
    /// Path-mode block and edge counts.
    path: Counts,
    /// Entry counts in each mode.
    entries: BTreeMap<&'static str, Entries>,
    /// The builds, kept for the tests that build on them: `<mode>/prog`,
    /// `<mode>.ppmap` and `<mode>.pprof` (the program's runs) per mode.
    dir: tempfile::TempDir,
}

/// Builds and runs `p` plain and in every mode at -O2 and checks that all agree.
fn check_all_modes(p: &Program) -> Checked {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("plain")).unwrap();
    let plain = d.join("plain").join("prog");
    build(p, &[CLANG], "-O2", &plain);
    let expected = run(p, &plain, &d.join("unused.pprof"));
    assert!(
        expected.iter().all(|(_, status)| *status == 0),
        "{} runs",
        p.name
    );
    let mut all = Vec::new();
    let mut entries = BTreeMap::new();
    for mode in ["block", "edge", "path"] {
        std::fs::create_dir(d.join(mode)).unwrap();
        let exe = d.join(mode).join("prog");
        build(
            p,
            &[
                PATHPROF,
                "cc",
                &format!("--mode={mode}"),
                &format!("--map={}", d.join(format!("{mode}.ppmap")).display()),
            ]
            .into_iter()
            .chain(p.pathprof_flags.iter().copied())
            .collect::<Vec<_>>(),
            "-O2",
            &exe,
        );
        let got = run(p, &exe, &d.join(format!("{mode}.pprof")));
        assert!(
            got == expected,
            "{} built in {mode} mode behaves differently from the plain build",
            p.name
        );
        let (c, e) = counts(d, mode);
        all.push(c);
        entries.insert(mode, e);
    }
    let blocks = |c: &Counts| {
        c.iter()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect::<Vec<_>>()
    };
    for (i, j, what) in [(0, 1, "block and edge"), (1, 2, "edge and path")] {
        let (a, b) = (blocks(&all[i]), blocks(&all[j]));
        if a != b {
            let first = a
                .iter()
                .zip(&b)
                .find(|(x, y)| x != y)
                .map_or("different functions".to_string(), |(x, y)| {
                    format!("{}: {:?}\n vs {}: {:?}", x.0, x.1, y.0, y.1)
                });
            let kept = dir.keep();
            panic!(
                "{}: block counts of {what} mode differ (build kept in {}):\n{first}",
                p.name,
                kept.display()
            );
        }
    }
    let edges = |c: &Counts| {
        c.iter()
            .map(|(k, v)| (k.clone(), v.1.clone()))
            .collect::<Vec<_>>()
    };
    assert!(
        edges(&all[1]) == edges(&all[2]),
        "{}: edge counts of edge and path mode differ",
        p.name
    );
    succeed(
        Command::new(PATHPROF)
            .arg("verify")
            .arg("--map")
            .arg(d.join("path.ppmap"))
            .arg(d.join("path.pprof"))
            .arg("--edge-map")
            .arg(d.join("edge.ppmap"))
            .arg(d.join("edge.pprof")),
    );
    Checked {
        expected,
        path: all.pop().unwrap(),
        entries,
        dir,
    }
}

fn lua() -> &'static Program {
    static LUA: OnceLock<Program> = OnceLock::new();
    LUA.get_or_init(|| {
        let src = crate_dir("lua-src").join("lua-5.4.9");
        let mut sources = vec![workload_file("lua/driver.c")];
        sources.extend(c_files(&src, &["lua.c", "luac.c"]));
        Program {
            name: "lua",
            sources,
            // A fixed string-hash seed (Lua seeds from time and addresses), and a
            // one-entry API string cache (it is indexed by address, and each build
            // lays out its data differently).
            cflags: vec![
                "-DLUA_USE_LINUX".into(),
                "-Dluai_makeseed(L)=12345u".into(),
                "-DSTRCACHE_N=1".into(),
                "-DSTRCACHE_M=1".into(),
                format!("-I{}", src.display()),
            ],
            libs: vec!["-lm", "-ldl"],
            runs: vec![(
                vec![
                    workload_file("lua/workload.lua").display().to_string(),
                    "2".into(),
                ],
                Vec::new(),
            )],
            env: vec![],
            pathprof_flags: Vec::new(),
        }
    })
}

/// Lua's -O2 builds, made once for the tests that read them.
fn lua_checked() -> &'static Checked {
    static LUA: OnceLock<Checked> = OnceLock::new();
    LUA.get_or_init(|| check_all_modes(lua()))
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn lua_interpreter() {
    let counts = &lua_checked().path;
    assert!(
        of(counts, "luaV_execute").0.iter().sum::<u64>() > 1_000_000,
        "the interpreter loop ran"
    );
}

/// `input` compressed by the bzip2 tool `cmd` (`-9 -c`, standard input to
/// standard output).
fn compress(cmd: &mut Command, input: &[u8]) -> Vec<u8> {
    let mut child = cmd
        .args(["-9", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap().stdout
}

/// Deterministic text with repeats, so that bzip2 has work to do.
fn text(bytes: usize) -> Vec<u8> {
    let words = [
        "path", "edge", "block", "profile", "count", "chord", "tree", "loop", "ball", "larus",
    ];
    let mut out = Vec::with_capacity(bytes + 16);
    let mut x: u32 = 12345;
    while out.len() < bytes {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        out.extend_from_slice(words[(x >> 16) as usize % words.len()].as_bytes());
        out.push(if (x >> 8).is_multiple_of(13) {
            b'\n'
        } else {
            b' '
        });
    }
    out
}

/// bzip2 1.0.8's tool: its sources, and two runs (`-9 -c` compressing a
/// text, `-d -c` decompressing it); also P3's third-party program.
pub(crate) fn bzip2() -> &'static Program {
    static BZIP2: OnceLock<Program> = OnceLock::new();
    BZIP2.get_or_init(|| {
        let src = crate_dir("bzip2-sys").join("bzip2-1.0.8");
        let input = text(300_000);
        // The compressed form of `input`, made by the same bzip2 built plain.
        let dir = tempfile::tempdir().unwrap();
        let sources: Vec<PathBuf> = [
            "blocksort.c",
            "huffman.c",
            "crctable.c",
            "randtable.c",
            "compress.c",
            "decompress.c",
            "bzlib.c",
            "bzip2.c",
        ]
        .iter()
        .map(|f| src.join(f))
        .collect();
        let plain = dir.path().join("bzip2");
        let status = Command::new(CLANG)
            .args(["-O2", "-D_FILE_OFFSET_BITS=64"])
            .args(&sources)
            .arg("-o")
            .arg(&plain)
            .status()
            .unwrap();
        assert!(status.success());
        let compressed = compress(&mut Command::new(&plain), &input);
        Program {
            name: "bzip2",
            sources,
            cflags: vec!["-D_FILE_OFFSET_BITS=64".into()],
            libs: vec![],
            // Compress, then decompress: two runs adding into one profile.
            runs: vec![
                (vec!["-9".into(), "-c".into()], input),
                (vec!["-d".into(), "-c".into()], compressed),
            ],
            env: vec![],
            pathprof_flags: Vec::new(),
        }
    })
}

/// bzip2's -O2 builds, made once for the tests that read them.
fn bzip2_checked() -> &'static Checked {
    static BZIP2: OnceLock<Checked> = OnceLock::new();
    BZIP2.get_or_init(|| check_all_modes(bzip2()))
}

/// Lua under PPP, every listed function numbered (`--ppp-min-paths=0`: path
/// mode's arrays count all of Lua, so by default PPP would number nothing),
/// trained on the workload at scale 1 and run at scale 2: the interpreter
/// loop and the collector take paths at scale 2 the training never took.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn lua_ppp_trained_on_a_smaller_run_counts_the_workload_exactly() {
    let lua = lua();
    let mut train = lua.runs.clone();
    train[0].0[1] = "1".into();
    let train = Program {
        runs: train,
        ..lua.clone()
    };
    let (stats, kept, _) =
        ppp_trained_on_another_input(lua, lua_checked(), &train, &["--ppp-min-paths=0"]);
    assert!(kept > 1000, "{kept} interesting paths");
    assert!(stats.contains(" luaV_execute\n"), "{stats}");
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn bzip2_compressor() {
    let counts = &bzip2_checked().path;
    // sendMTFValues (about 3e32 paths) is counted as itself, inlined or not.
    assert!(
        of(counts, "BZ2_compressBlock").0[0] > 0,
        "the compressor ran"
    );
    assert!(
        of(counts, "sendMTFValues").0[0] > 0,
        "its Huffman coder ran"
    );
    assert!(
        of(counts, "BZ2_decompress").0[0] > 0,
        "the decompressor ran"
    );
}

/// A function as a JSON report names it (name, file, line, potential paths:
/// one source function may be built into several programs differently) →
/// its paths: id → (count, `interesting` when the build marks it).
type FunctionPaths = BTreeMap<(String, String, u64, u64), BTreeMap<u64, (u64, Option<bool>)>>;

fn function_paths(report: &serde_json::Value) -> FunctionPaths {
    let mut out = FunctionPaths::new();
    for f in report["functions"].as_array().unwrap() {
        let key = (
            f["name"].as_str().unwrap().to_string(),
            f["file"].as_str().unwrap_or("").to_string(),
            f["line"].as_u64().unwrap_or(0),
            f["potential_paths"].as_u64().unwrap_or(0),
        );
        let paths = f["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["id"].as_u64().unwrap(),
                    (p["count"].as_u64().unwrap(), p["interesting"].as_bool()),
                )
            })
            .collect();
        assert!(out.insert(key.clone(), paths).is_none(), "{key:?} twice");
    }
    out
}

/// Counts without the interesting marks.
fn path_counts(p: &FunctionPaths) -> BTreeMap<&(String, String, u64, u64), BTreeMap<u64, u64>> {
    p.iter()
        .map(|(f, paths)| (f, paths.iter().map(|(&id, &(c, _))| (id, c)).collect()))
        .collect()
}

/// Checks a PPP build's profiles against path mode's, on the training
/// input A and on another input B ([path map, PPP map], [path, PPP] profile
/// of A, the same of B): the same path counts on both; on A every path
/// interesting, on B exactly the paths A ran. Returns B's interesting and
/// residual paths, and the functions the residual ones are in.
fn ppp_counts_path_modes_paths(
    [path_map, ppp_map]: [&Path; 2],
    [path_a, ppp_a]: [&Path; 2],
    [path_b, ppp_b]: [&Path; 2],
) -> (usize, usize, std::collections::BTreeSet<String>) {
    let path_a = function_paths(&json_report(path_map, path_a));
    let path_b = function_paths(&json_report(path_map, path_b));
    let ppp_a = function_paths(&json_report(ppp_map, ppp_a));
    let ppp_b = function_paths(&json_report(ppp_map, ppp_b));
    assert!(
        path_counts(&ppp_a) == path_counts(&path_a),
        "A: path mode's paths"
    );
    assert!(
        path_counts(&ppp_b) == path_counts(&path_b),
        "B: path mode's paths"
    );
    for (f, paths) in &ppp_a {
        for (id, &(_, interesting)) in paths {
            assert_eq!(interesting, Some(true), "{f:?} path {id} on A");
        }
    }
    let (mut kept, mut residual) = (0, 0);
    let mut residual_in = std::collections::BTreeSet::new();
    for (f, paths) in &ppp_b {
        for (id, &(_, interesting)) in paths {
            let trained = path_a.get(f).is_some_and(|p| p.contains_key(id));
            assert_eq!(interesting, Some(trained), "{f:?} path {id} on B");
            if trained {
                kept += 1;
            } else {
                residual += 1;
                residual_in.insert(f.0.clone());
            }
        }
    }
    (kept, residual, residual_in)
}

/// `pathprof verify` of a path profile against an edge profile.
fn verify(dir: &Path, [map, profile]: [&Path; 2], [edge_map, edge_profile]: [&Path; 2]) {
    let verified = ok_in(
        dir,
        Command::new(PATHPROF)
            .arg("verify")
            .arg("--map")
            .arg(map)
            .arg(profile)
            .arg("--edge-map")
            .arg(edge_map)
            .arg(edge_profile),
        &[],
    );
    assert!(verified.contains("verified:"), "{verified}");
}

/// Preferential path profiling of a program `check_all_modes` built, as a
/// user trains it: its path-mode build run on `train` (the same program on
/// a smaller or other input, A), the interesting-path list of that run, and
/// a `--mode=ppp` build with `flags` run on A and on the program's own runs
/// (B). The PPP build prints what the plain build prints and counts path
/// mode's paths exactly (see [`ppp_counts_path_modes_paths`]); its profile
/// of B verifies against the edge build's. Returns `pathprof ppp-stats`,
/// B's interesting and residual paths.
fn ppp_trained_on_another_input(
    p: &Program,
    checked: &Checked,
    train: &Program,
    flags: &[&str],
) -> (String, usize, usize) {
    let d = checked.dir.path();
    let at = |name: &str| d.join(name);
    let path_exe = at("path").join("prog");
    let path_out_a = run(train, &path_exe, &at("ppp_train.pprof"));
    ok_in(
        d,
        Command::new(PATHPROF)
            .args([
                "interesting",
                "--map",
                "path.ppmap",
                "ppp_train.pprof",
                "-o",
            ])
            .arg(format!("{}.paths", p.name)),
        &[],
    );
    std::fs::create_dir(at("ppp")).unwrap();
    let ppp_exe = at("ppp").join("prog");
    let list = format!(
        "--interesting={}",
        at(&format!("{}.paths", p.name)).display()
    );
    let map = format!("--map={}", at("ppp.ppmap").display());
    let mut cc = vec![PATHPROF, "cc", "--mode=ppp", &list, &map];
    cc.extend_from_slice(flags);
    build(p, &cc, "-O2", &ppp_exe);
    assert!(
        run(train, &ppp_exe, &at("ppp_a.pprof")) == path_out_a,
        "{}: the PPP build runs A as the path build does",
        p.name
    );
    assert!(
        run(p, &ppp_exe, &at("ppp_b.pprof")) == checked.expected,
        "{}: the PPP build runs B as the plain build does",
        p.name
    );
    let (kept, residual, residual_in) = ppp_counts_path_modes_paths(
        [&at("path.ppmap"), &at("ppp.ppmap")],
        [&at("ppp_train.pprof"), &at("ppp_a.pprof")],
        [&at("path.pprof"), &at("ppp_b.pprof")],
    );
    verify(
        d,
        [&at("ppp.ppmap"), &at("ppp_b.pprof")],
        [&at("edge.ppmap"), &at("edge.pprof")],
    );
    let stats = ok_in(
        d,
        Command::new(PATHPROF).args(["ppp-stats", "--map", "ppp.ppmap"]),
        &[],
    );
    eprintln!(
        "{} PPP: on B {kept} interesting paths, {residual} residual (in {} functions)\n{stats}",
        p.name,
        residual_in.len()
    );
    (stats, kept, residual)
}

/// Preferential path profiling on bzip2 (the issue's workflow): a path-mode
/// build trained on text A, its interesting-path list, a `--mode=ppp` build
/// numbering every listed function (`--ppp-min-paths=0`), both run on A and on
/// another text B. The PPP build compresses alike and counts path mode's paths
/// exactly; on A every path is interesting, on B exactly the paths A never ran
/// are residual; its profile of B verifies against an edge profile of B.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn bzip2_ppp_trained_on_one_text_counts_another_exactly() {
    let bz = bzip2();
    let a = text(200_000);
    // B: shorter, with runs of one byte (run-length coding's other cases) and
    // 150 byte values besides the text's (a larger alphabet), which A never has.
    let mut b = text(150_000);
    for (i, chunk) in b.chunks_exact_mut(1000).enumerate() {
        chunk[..12].fill(b'a' + (i % 26) as u8);
        chunk[12] = i as u8;
    }
    let on = |input: &[u8]| Program {
        name: "bzip2",
        sources: bz.sources.clone(),
        cflags: bz.cflags.clone(),
        libs: bz.libs.clone(),
        runs: vec![(vec!["-9".into(), "-c".into()], input.to_vec())],
        env: vec![],
        pathprof_flags: Vec::new(),
    };
    let (on_a, on_b) = (on(&a), on(&b));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each build is `bzip2` in a directory of its own: bzip2 reads its name.
    let exe = |mode: &str| {
        std::fs::create_dir(d.join(mode)).unwrap();
        d.join(mode).join("bzip2")
    };
    // What `p` printed, its profile going to `profile` (a fresh file).
    let compressed = |p: &Program, exe: &Path, profile: &str| {
        let runs = run(p, exe, &d.join(profile));
        assert_eq!(runs[0].1, 0, "{} {profile}", exe.display());
        assert!(runs[0].0.starts_with(b"BZh9"));
        runs.into_iter().next().unwrap().0
    };
    let path = exe("path");
    build(&on_a, &[PATHPROF, "cc", "--mode=path"], "-O2", &path);
    let path_map = map_of(&path);
    let path_out_a = compressed(&on_a, &path, "train.pprof");
    let path_out_b = compressed(&on_b, &path, "path_b.pprof");
    ok_in(
        d,
        Command::new(PATHPROF)
            .args(["interesting", "--map"])
            .arg(&path_map)
            .args(["train.pprof", "-o", "bzip2.paths"]),
        &[],
    );
    let ppp = exe("ppp");
    let list = format!("--interesting={}", d.join("bzip2.paths").display());
    build(
        &on_a,
        &[PATHPROF, "cc", "--mode=ppp", &list, "--ppp-min-paths=0"],
        "-O2",
        &ppp,
    );
    let ppp_map = map_of(&ppp);
    assert!(
        compressed(&on_a, &ppp, "ppp_a.pprof") == path_out_a,
        "the PPP build compresses A as the path build does"
    );
    assert!(
        compressed(&on_b, &ppp, "ppp_b.pprof") == path_out_b,
        "the PPP build compresses B as the path build does"
    );

    let (kept, residual, residual_in) = ppp_counts_path_modes_paths(
        [&path_map, &ppp_map],
        [&d.join("train.pprof"), &d.join("ppp_a.pprof")],
        [&d.join("path_b.pprof"), &d.join("ppp_b.pprof")],
    );
    assert!(kept > 0 && residual > 0, "B runs paths A ran and others");

    // The edge counts PPP's paths imply are an edge profile's of B.
    let edge = exe("edge");
    build(&on_b, &[PATHPROF, "cc", "--mode=edge"], "-O2", &edge);
    compressed(&on_b, &edge, "edge_b.pprof");
    verify(
        d,
        [&ppp_map, &d.join("ppp_b.pprof")],
        [&map_of(&edge), &d.join("edge_b.pprof")],
    );

    let stats = ok_in(
        d,
        Command::new(PATHPROF)
            .args(["ppp-stats", "--map"])
            .arg(&ppp_map),
        &[],
    );
    // Rows: potential paths, |I|, interval, delta, function.
    let sets: Vec<u64> = stats
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with("delta histogram"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert!(sets.iter().any(|&n| n > 0), "{stats}");
    eprintln!(
        "bzip2 PPP: {} functions numbered; on B {kept} interesting paths, {residual} residual \
         (in {residual_in:?})\n{stats}",
        sets.len()
    );
}

fn sqlite() -> &'static Program {
    static SQLITE: OnceLock<Program> = OnceLock::new();
    SQLITE.get_or_init(|| {
        let src = crate_dir("libsqlite3-sys").join("sqlite3");
        Program {
            name: "sqlite",
            sources: vec![workload_file("sqlite/driver.c"), src.join("sqlite3.c")],
            cflags: vec![format!("-I{}", src.display())],
            libs: vec!["-lm", "-ldl", "-lpthread"],
            runs: vec![(vec!["3000".into()], Vec::new())],
            env: vec![],
            pathprof_flags: Vec::new(),
        }
    })
}

/// SQLite's -O2 builds, made once for the tests that read them.
fn sqlite_checked() -> &'static Checked {
    static SQLITE: OnceLock<Checked> = OnceLock::new();
    SQLITE.get_or_init(|| check_all_modes(sqlite()))
}

/// SQLite under PPP numbering every function path mode would hash
/// (`--ppp-cache-paths=0`: by default those with few interesting paths,
/// the VDBE's 196 among them, count through path mode's inline cache),
/// trained on its workload at 200 rows and run at 3000, where the B-tree
/// splits and sorts take paths the training never did.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn sqlite_ppp_trained_on_a_smaller_run_counts_the_workload_exactly() {
    let sqlite = sqlite();
    let train = Program {
        runs: vec![(vec!["200".into()], Vec::new())],
        ..sqlite.clone()
    };
    let (stats, kept, residual) =
        ppp_trained_on_another_input(sqlite, sqlite_checked(), &train, &["--ppp-cache-paths=0"]);
    assert!(
        kept > 1000 && residual > 0,
        "{kept} interesting, {residual} residual paths"
    );
    assert!(stats.contains(" sqlite3VdbeExec\n"), "{stats}");
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn sqlite_database() {
    let counts = &sqlite_checked().path;
    assert!(of(counts, "sqlite3VdbeExec").0[0] > 0, "the VDBE ran");
}

/// libuv's library sources on Linux (its CMakeLists.txt's lists), under `src`.
const LIBUV_SOURCES: &[&str] = &[
    "fs-poll.c",
    "idna.c",
    "inet.c",
    "random.c",
    "strscpy.c",
    "strtok.c",
    "thread-common.c",
    "threadpool.c",
    "timer.c",
    "uv-common.c",
    "uv-data-getter-setters.c",
    "version.c",
    "unix/async.c",
    "unix/core.c",
    "unix/dl.c",
    "unix/fs.c",
    "unix/getaddrinfo.c",
    "unix/getnameinfo.c",
    "unix/loop-watcher.c",
    "unix/loop.c",
    "unix/pipe.c",
    "unix/poll.c",
    "unix/process.c",
    "unix/random-devurandom.c",
    "unix/signal.c",
    "unix/stream.c",
    "unix/tcp.c",
    "unix/thread.c",
    "unix/tty.c",
    "unix/udp.c",
    "unix/linux.c",
    "unix/procfs-exepath.c",
    "unix/proctitle.c",
    "unix/random-getrandom.c",
    "unix/random-sysctl-linux.c",
];

/// The tests of libuv's suite that the workload runs, by the file under `test`
/// that defines them. The runner forks a child per test, which execs the
/// runner to run that test (`process_start` in runner-unix.c), and waits for
/// it in a thread of its own. Among the tests, `fork_close_signal_in_child`
/// forks (a child that runs libuv's loop and returns from the test, and from
/// `main`, like its parent; libuv's `pthread_atfork` child handler runs in it),
/// and the `spawn_fails` ones have libuv probe `vfork` (a child that sets a
/// flag in its parent's memory and calls `_exit`) and `posix_spawn` a file that
/// does not exist.
///
/// Chosen so that every function's count is the same on every run however
/// slow the build or busy the machine, as comparing two builds' counts needs:
/// loops that never wait for a timer to expire (timers of 0 ms, stopped, or
/// unreferenced), synchronous file system calls, signals a process sends
/// itself. Left out: tests whose loop waits on time or on another process (a
/// timer of 1 ms is often already due when the loop starts; a child's exit and
/// its output may arrive in one loop iteration or two), the thread pool
/// (whether a worker waits again before the next request varies), tests that
/// kill a child (gcov counts nothing of a process killed by a signal, pathprof
/// does) or switch to the user nobody (whose processes cannot write the
/// profile), and tests that read files of libuv's source tree.
const LIBUV_TESTS: &[(&str, &[&str])] = &[
    ("test-active.c", &["active"]),
    ("test-close-order.c", &["close_order"]),
    ("test-cwd-and-chdir.c", &["cwd_and_chdir"]),
    ("test-env-vars.c", &["env_vars"]),
    ("test-error.c", &["error_message", "sys_error"]),
    ("test-fork.c", &["fork_close_signal_in_child"]),
    (
        "test-fs.c",
        &[
            "fs_file_sync",
            "fs_file_open_append",
            "fs_file_pos_after_op_with_offset",
            "fs_file_write_null_buffer",
            "fs_fstat_st_dev",
            "fs_read_file_eof",
            "fs_rename_to_existing_file",
            "fs_symlink_dir",
            "fs_unlink_readonly",
            "fs_utime_round",
            "fs_write_alotof_bufs",
            "fs_write_alotof_bufs_with_offset",
            "fs_write_multiple_bufs",
            "fs_posix_delete",
            "fs_stat_missing_path",
            "fs_null_req",
            "fs_read_write_null_arguments",
            "fs_get_system_error",
        ],
    ),
    ("test-get-currentexe.c", &["get_currentexe"]),
    (
        "test-getters-setters.c",
        &["getters_setters", "handle_type_name", "req_type_name"],
    ),
    ("test-idle.c", &["idle_check"]),
    ("test-loop-oom.c", &["loop_init_oom"]),
    ("test-loop-stop.c", &["loop_stop_before_run"]),
    ("test-mutexes.c", &["thread_mutex", "thread_rwlock"]),
    ("test-queue-foreach-delete.c", &["queue_foreach_delete"]),
    ("test-random.c", &["random_sync"]),
    (
        "test-ref.c",
        &[
            "unref_in_prepare_cb",
            "ref",
            "has_ref",
            "idle_ref",
            "async_ref",
            "prepare_ref",
            "check_ref",
            "timer_ref",
            "timer_ref2",
        ],
    ),
    ("test-run-nowait.c", &["run_nowait"]),
    ("test-run-once.c", &["run_once"]),
    ("test-semaphore.c", &["semaphore_3"]),
    (
        "test-signal-pending-on-close.c",
        &["signal_close_loop_alive"],
    ),
    (
        "test-spawn.c",
        &["spawn_fails", "spawn_fails_check_for_waitpid_cleanup"],
    ),
    (
        "test-timer.c",
        &[
            "timer_init",
            "timer_zero_timeout",
            "timer_order",
            "timer_null_callback",
            "timer_is_closing",
            "timer_no_run_on_unref",
            "timer_no_double_call_nowait",
        ],
    ),
    ("test-tmpdir.c", &["tmpdir"]),
    ("test-uname.c", &["uname"]),
];

/// Files under `test` that libuv's `run-tests.c` needs besides the tests: the
/// runner, and the helpers it calls when a test spawns it as a child.
const LIBUV_RUNNER: &[&str] = &[
    "runner.c",
    "runner-unix.c",
    "test-ipc.c",
    "test-ipc-heavy-traffic-deadlock-bug.c",
    "test-ipc-send-recv.c",
    "test-process-title.c",
    "test-spawn.c",
    "test-stdio-over-pipes.c",
];

/// Writes `contents` to `path` by renaming a file of this process's, so that a
/// compiler reading `path` (another test process's) never sees it half written.
fn write_atomically(path: &Path, contents: &[u8]) {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn libuv() -> &'static Program {
    static LIBUV: OnceLock<Program> = OnceLock::new();
    LIBUV.get_or_init(|| {
        let src = crate_dir("libuv-sys2").join("libuv");
        let test = src.join("test");
        // libuv's runner main (run-tests.c) includes its list of every test
        // (test-list.h, beside it) and so needs all ~190 test files; a copy of
        // it beside a list of the chosen tests needs only theirs.
        let runner = Path::new(env!("CARGO_TARGET_TMPDIR")).join("libuv-runner");
        std::fs::create_dir_all(&runner).unwrap();
        write_atomically(
            &runner.join("run-tests.c"),
            &std::fs::read(test.join("run-tests.c")).unwrap(),
        );
        let names = || LIBUV_TESTS.iter().flat_map(|(_, names)| names.iter());
        let mut list = String::from("#include \"uv.h\"\n");
        for name in names() {
            list += &format!("TEST_DECLARE({name})\n");
        }
        list += "TASK_LIST_START\n";
        for name in names() {
            list += &format!("  TEST_ENTRY({name})\n");
        }
        list += "TASK_LIST_END\n";
        write_atomically(&runner.join("test-list.h"), list.as_bytes());
        let mut sources: Vec<PathBuf> = LIBUV_SOURCES
            .iter()
            .map(|f| src.join("src").join(f))
            .collect();
        let mut files: Vec<&str> = LIBUV_TESTS.iter().map(|(file, _)| *file).collect();
        files.extend(LIBUV_RUNNER);
        files.sort();
        files.dedup();
        sources.extend(files.iter().map(|f| test.join(f)));
        sources.push(runner.join("run-tests.c"));
        Program {
            name: "libuv",
            sources,
            cflags: vec![
                "-D_FILE_OFFSET_BITS=64".into(),
                "-D_LARGEFILE_SOURCE".into(),
                "-D_GNU_SOURCE".into(),
                "-D_POSIX_C_SOURCE=200112".into(),
                format!("-I{}", src.join("include").display()),
                format!("-I{}", src.join("src").display()),
                format!("-I{}", test.display()),
            ],
            libs: vec!["-lpthread", "-ldl", "-lrt", "-lm"],
            // No arguments: the runner runs every test in its list, each in a
            // child process it forks (and execs as `./prog TEST TEST`).
            runs: vec![(Vec::new(), Vec::new())],
            env: vec![
                // The runner refuses to run as root (as CI may) without it.
                ("UV_RUN_AS_ROOT", "1"),
                // Each test's timeout 20 times libuv's (5 s): instrumented
                // builds on a busy machine must not time out.
                ("UV_TEST_TIMEOUT_MULTIPLIER", "20"),
            ],
            // Its runner's children return from the test function and from
            // main through frames the runner entered before the fork: exact
            // in edge and path mode with early-exit counting only.
            pathprof_flags: vec!["--early-exit"],
        }
    })
}

/// libuv's -O2 builds, made once for the tests that read them.
fn libuv_checked() -> &'static Checked {
    static LIBUV: OnceLock<Checked> = OnceLock::new();
    LIBUV.get_or_init(|| check_all_modes(libuv()))
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn libuv_test_runner() {
    let checked = libuv_checked();
    let tests = LIBUV_TESTS
        .iter()
        .map(|(_, names)| names.len())
        .sum::<usize>();
    let printed = String::from_utf8_lossy(&checked.expected[0].0).into_owned();
    assert!(
        printed.starts_with(&format!("1..{tests}\n"))
            && printed.lines().filter(|l| l.starts_with("ok ")).count() == tests
            && !printed.contains("not ok"),
        "every test passed:\n{printed}"
    );
    // The runner's own process and one per test, each forked by the runner
    // and exec'd (a forked child does not enter `main` again).
    assert_eq!(
        of(&checked.path, "main").0[0],
        1 + tests as u64,
        "main ran in the runner and once per test"
    );
}

/// gcov's counts of a `gcc --coverage` build after its runs.
struct Gcov {
    /// Every function gcov reports, keyed like `Entries`, with its "called N
    /// times" (functions of one name, file and line in several translation
    /// units, which no report can tell apart, are left out).
    called: Entries,
    /// Per source file name: line → how often it ran (summed over units).
    lines: BTreeMap<String, BTreeMap<u64, u64>>,
}

/// Reads every `.gcda` file in `dir` with `gcov --json-format --stdout`.
fn gcov_counts(dir: &Path) -> Gcov {
    let mut gcda: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gcda"))
        .collect();
    gcda.sort();
    assert!(!gcda.is_empty(), "the gcc build wrote no .gcda file");
    let out = stdout_of(
        Command::new("gcov")
            .args(["--json-format", "--stdout"])
            .args(&gcda)
            .current_dir(dir),
    );
    let mut called = Entries::new();
    let mut twice = Vec::new();
    let mut lines: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    // One JSON document per line, one per .gcda file.
    for doc in String::from_utf8(out).unwrap().lines() {
        if doc.trim().is_empty() {
            continue;
        }
        let doc: serde_json::Value = serde_json::from_str(doc).unwrap();
        for file in doc["files"].as_array().unwrap() {
            let name = file_name(file["file"].as_str().unwrap());
            for f in file["functions"].as_array().unwrap() {
                let key = (
                    f["name"].as_str().unwrap().to_string(),
                    name.clone(),
                    f["start_line"].as_u64().unwrap(),
                );
                let count = f["execution_count"].as_u64().unwrap();
                if called.insert(key.clone(), count).is_some() {
                    twice.push(key);
                }
            }
            let per_line = lines.entry(name).or_default();
            for l in file["lines"].as_array().unwrap() {
                *per_line
                    .entry(l["line_number"].as_u64().unwrap())
                    .or_default() += l["count"].as_u64().unwrap();
            }
        }
    }
    for key in twice {
        called.remove(&key);
    }
    Gcov { called, lines }
}

/// A function whose "called N times" gcov gets wrong, and what its pathprof
/// count is checked against instead.
enum GcovWrong {
    /// gcov's own line counts: the sum of the counts of the lines of `file`
    /// that contain `call` (its call sites).
    CallSites {
        function: &'static str,
        file: PathBuf,
        call: &'static str,
    },
    /// gcov's count and `calls` more: calls made in a fork child before gcov's
    /// `fork` (gcc calls `__gcov_fork` instead) zeroes the child's counters,
    /// that is, by a `pthread_atfork` child handler, which the C library runs
    /// inside `fork()`. pathprof zeroes a child's counters in a child handler of
    /// its own, installed before the program's (they run in the order they were
    /// installed), and counts what the program's handlers do.
    InFork { function: &'static str, calls: u64 },
}

impl GcovWrong {
    fn function(&self) -> &'static str {
        match self {
            GcovWrong::CallSites { function, .. } | GcovWrong::InFork { function, .. } => function,
        }
    }
}

/// Entry counts equal gcov's. gcc's `--coverage -O0` build of `p` runs the same
/// workload (and must print the same); gcov's "called N times" of each function
/// is compared with pathprof's `entry_count` of the functions both name the
/// same way (linkage name, source file name, line: gcc and clang keep slightly
/// different sets of functions), in path and block mode built at -O0, which
/// must be equal, and in every mode of the shared -O2 builds, which may only be
/// smaller: at -O2 pathprof instruments the optimised program, where calls
/// clang inlined are gone (a function inlined into some of its callers keeps
/// only the others' calls). Functions gcov counts wrong are named in `wrong`.
///
/// What gcov cannot count: its "called" is the count of the function's entry
/// block, solved from its arc counters, and gcc gives every block entered by an
/// abnormal edge a fake arc from the entry block (abnormal edges cannot carry
/// counters). So each entry into such a block counts as a call: the targets of
/// a computed `goto` (Lua's `luaV_execute` dispatches every bytecode through
/// `goto *disptab[op]`: gcov says it is called about 10^7 times, its own line
/// counts say 57 calls from `ccall` in ldo.c, as pathprof does) and the resume
/// point after `setjmp` (each `longjmp` back would count as a call; these
/// workloads never `longjmp`: `luaD_throw` runs 0 times, so
/// `luaD_rawrunprotected` agrees). A function left by `longjmp` or `exit` is
/// counted right by both: gcov's counters and pathprof's block counters are
/// updated on entry to a block. And gcov loses what a fork child runs before
/// gcov zeroes its counters, after `fork()` returns: its `pthread_atfork`
/// child handlers (see `GcovWrong::InFork`).
fn entry_counts_equal_gcov(p: &Program, checked: fn() -> &'static Checked, wrong: &[GcovWrong]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("gcc")).unwrap();
    let gcc = d.join("gcc").join("prog");
    // .gcno files go beside the program, .gcda files there when it exits.
    build(p, &["gcc", "--coverage"], "-O0", &gcc);
    let printed = run(p, &gcc, &d.join("unused.pprof"));
    assert!(
        printed.iter().all(|(_, status)| *status == 0),
        "{} built by gcc runs",
        p.name
    );
    let gcov = gcov_counts(&d.join("gcc"));
    let mut o0 = BTreeMap::new();
    for mode in ["path", "block"] {
        std::fs::create_dir(d.join(mode)).unwrap();
        let exe = d.join(mode).join("prog");
        let map = d.join(format!("{mode}.ppmap"));
        let profile = d.join(format!("{mode}.pprof"));
        build(
            p,
            &[
                PATHPROF,
                "cc",
                &format!("--mode={mode}"),
                &format!("--map={}", map.display()),
            ],
            "-O0",
            &exe,
        );
        assert!(
            run(p, &exe, &profile) == printed,
            "{} built at -O0 in {mode} mode behaves differently from gcc's build",
            p.name
        );
        o0.insert(mode, entries(&json_report(&map, &profile)));
    }
    // What each function's count should be: gcov's, or where gcov is wrong,
    // what `wrong` says.
    let want = |function: &str, g: u64| -> (u64, &'static str) {
        match wrong.iter().find(|w| w.function() == function) {
            None => (g, "gcov"),
            Some(GcovWrong::CallSites { file, call, .. }) => {
                let per_line = &gcov.lines[&file_name(&file.display().to_string())];
                let calls = std::fs::read_to_string(file)
                    .unwrap()
                    .lines()
                    .zip(1..)
                    .filter(|(text, _)| text.contains(call))
                    .map(|(_, n)| per_line.get(&n).copied().unwrap_or(0))
                    .sum();
                (calls, "gcov's line counts of its calls")
            }
            Some(GcovWrong::InFork { calls, .. }) => {
                (g + calls, "gcov plus the calls it misses in fork")
            }
        }
    };
    for w in wrong {
        let key = gcov.called.keys().find(|k| k.0 == w.function());
        assert!(key.is_some(), "gcov reports {}", w.function());
    }
    // The -O0 builds' counts are compared first, so that their differences
    // are shown even if the -O2 builds' checks fail.
    let compare = |level: &str, modes: &BTreeMap<&'static str, Entries>| {
        let mut differences = Vec::new();
        for (mode, pp) in modes {
            let (mut compared, mut fewer) = (0, Vec::new());
            for (key, &n) in pp {
                let Some(&g) = gcov.called.get(key) else {
                    continue;
                };
                compared += 1;
                let (want, by) = want(&key.0, g);
                if n < want && level == "-O2" {
                    fewer.push(format!("{} {n}<{want}", key.0));
                } else if n != want {
                    differences.push(format!(
                        "{level} {mode} mode: {} ({}:{}) entered {n} times, {by} says {want}",
                        key.0, key.1, key.2
                    ));
                }
            }
            println!(
                "{} {level} {mode} mode: {compared} functions compared with gcov \
                 ({} in gcov's report, {} in pathprof's), {} with fewer calls: {}",
                p.name,
                gcov.called.len(),
                pp.len(),
                fewer.len(),
                fewer.join(", ")
            );
            if level == "-O0" {
                // gcc and clang keep nearly the same functions unoptimised.
                assert!(
                    compared * 10 >= gcov.called.len() * 9,
                    "{}: only {compared} of gcov's {} functions found in pathprof's report",
                    p.name,
                    gcov.called.len()
                );
            }
        }
        assert!(
            differences.is_empty(),
            "{}: entry counts differ from gcov's:\n{}",
            p.name,
            differences.join("\n")
        );
    };
    compare("-O0", &o0);
    let o2 = checked();
    assert!(
        o2.expected == printed,
        "{}: the plain clang build and gcc's behave differently",
        p.name
    );
    compare("-O2", &o2.entries);
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn lua_entry_counts_equal_gcov() {
    let src = crate_dir("lua-src").join("lua-5.4.9");
    entry_counts_equal_gcov(
        lua(),
        lua_checked,
        &[GcovWrong::CallSites {
            function: "luaV_execute",
            file: src.join("ldo.c"),
            call: "luaV_execute(L, ci);",
        }],
    );
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn bzip2_entry_counts_equal_gcov() {
    entry_counts_equal_gcov(bzip2(), bzip2_checked, &[]);
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn sqlite_entry_counts_equal_gcov() {
    entry_counts_equal_gcov(sqlite(), sqlite_checked, &[]);
}

/// libuv's processes fork once (`fork_close_signal_in_child`) after libuv
/// installed its `pthread_atfork` child handler, `uv__signal_global_reinit`,
/// which reopens the signal lock pipe in the child: gcov misses what it calls
/// there.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn libuv_entry_counts_equal_gcov() {
    let in_fork = |function, calls| GcovWrong::InFork { function, calls };
    entry_counts_equal_gcov(
        libuv(),
        libuv_checked,
        &[
            in_fork("uv__signal_global_reinit", 1),
            // It closes both ends of the inherited pipe,
            in_fork("uv__signal_cleanup", 1),
            in_fork("uv__close", 2),
            in_fork("uv__close_nocheckstdio", 2),
            in_fork("uv__close_nocancel", 2),
            // makes a new one
            in_fork("uv__make_pipe", 1),
            in_fork("uv_pipe", 1),
            // and unlocks it.
            in_fork("uv__signal_unlock", 1),
        ],
    );
}

/// bzip2's own Makefile with `CC="pathprof cc"`: separate compile steps, `ar` +
/// `ranlib` into `libbz2.a` of bitcode objects, and a link with `-L. -lbz2`, as
/// any build system does it.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn bzip2_builds_with_its_own_makefile() {
    let src = crate_dir("bzip2-sys").join("bzip2-1.0.8");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for entry in std::fs::read_dir(&src).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, d.join(p.file_name().unwrap())).unwrap();
        }
    }
    let cc = format!("{PATHPROF} cc --mode=path");
    succeed(
        Command::new("make")
            .current_dir(d)
            .arg(format!("CC={cc}"))
            .arg("bzip2"),
    );
    assert!(d.join("libbz2.a").exists() && d.join("bzip2.ppmap").exists());
    let input = text(50_000);
    let compressed = compress(&mut profiled(&d.join("bzip2"), &d.join("b.pprof")), &input);
    assert!(compressed.starts_with(b"BZh9"));
    let report = json_report(&d.join("bzip2.ppmap"), &d.join("b.pprof"));
    let compress = function(&report, "BZ2_compressBlock");
    assert_eq!(
        compress["entry_count"], 1,
        "the library in libbz2.a was instrumented too"
    );
}

/// Configures (with `cc`) and builds xz out of tree in `build`.
fn build_xz(src: &Path, build: &Path, cc: &str, env: &[(&str, &str)]) {
    std::fs::create_dir_all(build).unwrap();
    let configure = src.join("configure");
    ok_in(build, Command::new(&configure).arg(format!("CC={cc}")), env);
    ok_in(build, Command::new("make").arg("-j2"), env);
}

/// `make check`'s test results (with make arguments `args`, `TESTS=...`
/// say), one `PASS: name` (or other outcome) per test.
fn make_check(build: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let out = ok_in(
        build,
        Command::new("make").args(["check", "-j2"]).args(args),
        env,
    );
    let mut results: Vec<String> = out
        .lines()
        .filter(|l| {
            ["PASS:", "FAIL:", "SKIP:", "XFAIL:", "ERROR:"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(str::to_string)
        .collect();
    results.sort();
    results
}

/// Every file under `dir`, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Linked files (executables and shared libraries) under `dir` that carry
/// pathprof's map section.
fn instrumented_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|path| path.extension().is_none_or(|e| e != "o"))
        .filter(|path| {
            std::fs::read(path).is_ok_and(|bytes| {
                bytes.starts_with(b"\x7fELF") && bytes.windows(14).any(|w| w == b".pathprof.map\0")
            })
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn xz_make_check_profiles_into_one_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_sources("lzma-sys", "xz-5.2", tmp.path());
    ok_in(
        &src,
        Command::new("sh").args(["autogen.sh", "--no-po4a"]),
        &[],
    );

    let plain = tmp.path().join("plain");
    build_xz(&src, &plain, CLANG, &[]);
    let expected = make_check(&plain, &[], &[]);
    assert!(expected.len() >= 9, "{expected:?}");

    // Early-exit counting: xz's tools end by calling exit() from helpers, so
    // only then is every path of main counted (and main once per process).
    let pp = tmp.path().join("pathprof");
    let cc = format!("{PATHPROF} cc");
    build_xz(&src, &pp, &cc, &[("PATHPROF_EARLY_EXIT", "1")]);
    let suite = tmp.path().join("suite.pprof");
    // configure's probes (conftest) are built as plain clang builds them,
    // so they write no profile.
    assert_eq!(
        profiles_under(&pp),
        Vec::<PathBuf>::new(),
        "configure's probes"
    );
    let got = make_check(&pp, &[], &[("PATHPROF_FILE", suite.to_str().unwrap())]);
    assert_eq!(got, expected, "the same tests pass");
    assert_eq!(
        profiles_under(&pp),
        Vec::<PathBuf>::new(),
        "make check wrote profiles beside the suite's"
    );
    assert!(suite.exists());

    let lib = Path::new("src/liblzma/.libs/liblzma.so");
    assert_eq!(exports(&pp.join(lib)), exports(&plain.join(lib)));

    assert!(instrumented_files(&pp).len() >= 10);
    let r = suite_report(&instrumented_files(&pp), &suite, 100);
    no_lost_paths(&r);

    // Profile use through the same build, trained on the suite: the same
    // tests pass, nothing is counted, and the library took the suite's
    // counts (every function of it that ran, none changed).
    let optimised = tmp.path().join("optimised");
    let cc = format!("{PATHPROF} cc --profile-use={}", suite.display());
    build_xz(&src, &optimised, &cc, &[]);
    let again = tmp.path().join("again.pprof");
    let got = make_check(
        &optimised,
        &[],
        &[("PATHPROF_FILE", again.to_str().unwrap())],
    );
    assert_eq!(got, expected, "the same tests pass");
    assert!(!again.exists(), "an optimised build counts nothing");
    assert_eq!(
        instrumented_files(&optimised),
        Vec::<PathBuf>::new(),
        "no maps, no probes"
    );
    let note = profile_use_note(&optimised.join(lib));
    assert!(note.matched >= 100 && note.changed.is_empty(), "{note:?}");
}

/// What the objects linked into `file` took from the profile they were
/// built with (`--profile-use`).
pub fn profile_use_note(file: &Path) -> pathprof_core::pgo::UseNote {
    let bytes = std::fs::read(file).unwrap();
    let section = pathprof_io::elf::section(&bytes, pathprof_core::pgo::NOTE_SECTION)
        .unwrap()
        .unwrap_or_else(|| panic!("{} was not built with --profile-use", file.display()));
    pathprof_core::pgo::UseNote::sum_of(&section)
}

/// Preferential path profiling of a whole project through its own build: xz
/// (liblzma as a shared library, its tools and test programs), trained in
/// path mode on its decoder's test files (A), with the list of the hottest
/// paths covering 60 % of each function's executions, built again with
/// `--mode=ppp` (numbering where path mode hashes: `lzma_decode`'s hottest
/// paths count in an array) and run on A and on the whole suite (B).
/// - The same tests pass; `tuklib_exit`, built into two programs with two
///   shapes, takes the entries of its own shape in each (no "has changed").
/// - Function by function, over the library and every program, the PPP
///   profiles hold path mode's paths with path mode's counts, exactly.
/// - A path is interesting exactly when the list names it (in functions
///   the list knows by one shape), so B's residual paths are the paths A's
///   list left out.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn xz_ppp_through_its_own_build_counts_path_modes_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let src = copy_sources("lzma-sys", "xz-5.2", t);
    ok_in(
        &src,
        Command::new("sh").args(["autogen.sh", "--no-po4a"]),
        &[],
    );
    let early = [("PATHPROF_EARLY_EXIT", "1")];
    let path = t.join("path");
    build_xz(&src, &path, &format!("{PATHPROF} cc"), &early);
    let profile = |name: &str| t.join(name).display().to_string();
    let a_only = ["TESTS=test_files.sh"];
    let run = |build: &Path, tests: &[&str], name: &str| {
        make_check(build, tests, &[("PATHPROF_FILE", &profile(name))])
    };
    let path_a = run(&path, &a_only, "path_a.pprof");
    let expected = run(&path, &[], "path_b.pprof");
    assert_eq!(path_a, ["PASS: test_files.sh"]);
    assert!(expected.len() >= 9, "{expected:?}");

    let list = t.join("xz.paths");
    let path_maps = instrumented_files(&path);
    let mut interesting = Command::new(PATHPROF);
    with_maps(interesting.arg("interesting"), &path_maps)
        .args(["--top-share", "0.6", &profile("path_a.pprof"), "-o"])
        .arg(&list);
    ok_in(t, &mut interesting, &[]);

    let ppp = t.join("ppp");
    let cc = format!(
        "{PATHPROF} cc --mode=ppp --interesting={} --ppp-cache-paths=0",
        list.display()
    );
    std::fs::create_dir_all(&ppp).unwrap();
    ok_in(
        &ppp,
        Command::new(src.join("configure")).arg(format!("CC={cc}")),
        &early,
    );
    let built = Command::new("make")
        .arg("-j2")
        .current_dir(&ppp)
        .envs(early)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "{stderr}");
    assert!(!stderr.contains("tuklib_exit has changed"), "{stderr}");
    assert_eq!(run(&ppp, &a_only, "ppp_a.pprof"), path_a);
    assert_eq!(
        run(&ppp, &[], "ppp_b.pprof"),
        expected,
        "the same tests pass"
    );

    let maps = instrumented_files(&ppp);
    let stats = ok_in(
        t,
        with_maps(Command::new(PATHPROF).arg("ppp-stats"), &maps),
        &[],
    );
    assert!(
        stats.lines().any(|l| l.ends_with(" lzma_decode")),
        "lzma_decode is numbered by PPP:\n{stats}"
    );

    let listed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&list).unwrap()).unwrap();
    let mut shapes: BTreeMap<(&str, &str), std::collections::BTreeSet<&str>> = BTreeMap::new();
    let mut ids = std::collections::BTreeSet::new();
    for e in listed["paths"].as_array().unwrap() {
        let key = (e["function"].as_str().unwrap(), e["file"].as_str().unwrap());
        shapes
            .entry(key)
            .or_default()
            .insert(e["shape"].as_str().unwrap());
        ids.insert((key, e["id"].as_u64().unwrap()));
    }
    for (input, min_processes) in [("a", 50), ("b", 100)] {
        let of = |mode: &str, maps: &[PathBuf]| {
            function_paths(&suite_report(
                maps,
                Path::new(&profile(&format!("{mode}_{input}.pprof"))),
                min_processes,
            ))
        };
        let (path_paths, ppp_paths) = (of("path", &path_maps), of("ppp", &maps));
        assert!(
            path_counts(&ppp_paths) == path_counts(&path_paths),
            "{input}: path mode's paths, exactly"
        );
        let (mut kept, mut residual) = (0, 0);
        for ((name, file, ..), paths) in &ppp_paths {
            let key = (name.as_str(), file.as_str());
            if shapes.get(&key).is_some_and(|s| s.len() > 1) {
                continue;
            }
            for (&id, &(_, mark)) in paths {
                let listed = ids.contains(&(key, id));
                assert_eq!(mark, Some(listed), "{input}: {name} path {id}");
                if listed {
                    kept += 1;
                } else {
                    residual += 1;
                }
            }
        }
        eprintln!("xz PPP, input {input}: {kept} interesting paths ran, {residual} residual");
        assert!(kept > 0 && residual > 0);
    }
}

/// Configures jq in `dir` (its sources, already through `autoreconf`) with
/// `cc`, its bundled oniguruma and `options`, and builds it, `env` set for
/// both. Its tests run jq, not valgrind; clang 16 and later refuse
/// oniguruma's samples' implicit declarations unless told otherwise, plain
/// and profiled builds alike.
fn build_jq(dir: &Path, cc: &str, options: &[&str], env: &[(&str, &str)]) {
    ok_in(
        dir,
        Command::new("./configure")
            .args([
                &format!("CC={cc}"),
                "CFLAGS=-O2 -g -Wno-error=implicit-function-declaration -Wno-deprecated-non-prototype",
                "--with-oniguruma=builtin",
                "--disable-docs",
                "--disable-maintainer-mode",
                "--disable-valgrind",
            ])
            .args(options),
        env,
    );
    ok_in(dir, Command::new("make").arg("-j2"), env);
}

/// jq's sources in `dir`, through `autoreconf`.
fn jq_sources(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    copy_dir(&crate_dir("jq-src").join("modules/jq"), &src);
    ok_in(&src, Command::new("autoreconf").arg("-fi"), &[]);
    src
}

/// jq through its own build: autotools, the bundled oniguruma configured as
/// a project of its own, a parser and lexer from bison and flex, and `make
/// check`'s test suites (oniguruma's programs and jq's shell-driven tests,
/// hundreds of processes). Path and edge builds pass the tests the plain
/// build passes and write the whole suite into one profile, exact. Over the
/// deterministic tests (`tests/shtest` feeds jq from `/dev/urandom`), the
/// edge counts derived from the suite's path profile equal the edge
/// profile of the same tests.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn jq_make_check_path_profile_verifies_against_edge_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let src = jq_sources(tmp.path());
    let deterministic =
        "TESTS=tests/optionaltest tests/mantest tests/jqtest tests/onigtest tests/utf8test tests/base64test";

    let plain = tmp.path().join("plain");
    copy_dir(&src, &plain);
    build_jq(&plain, CLANG, &[], &[]);
    let expected = make_check(&plain, &[], &[]);
    assert!(expected.len() >= 15, "{expected:?}");

    let mut det = BTreeMap::new();
    for mode in ["path", "edge"] {
        let dir = tmp.path().join(mode);
        copy_dir(&src, &dir);
        build_jq(&dir, &format!("{PATHPROF} cc --mode={mode}"), &[], &[]);
        let suite = tmp.path().join(format!("{mode}-suite.pprof"));
        let got = make_check(&dir, &[], &[("PATHPROF_FILE", suite.to_str().unwrap())]);
        assert_eq!(got, expected, "the same tests pass in {mode} mode");
        let r = suite_report(&instrumented_files(&dir), &suite, 300);
        no_lost_paths(&r);
        let profile = tmp.path().join(format!("{mode}-det.pprof"));
        ok_in(
            &dir,
            Command::new("make").args(["check-TESTS", deterministic]),
            &[("PATHPROF_FILE", profile.to_str().unwrap())],
        );
        det.insert(mode, (dir.join("jq"), profile));
    }
    let (path_jq, path_profile) = &det["path"];
    let (edge_jq, edge_profile) = &det["edge"];
    verify(tmp.path(), [path_jq, path_profile], [edge_jq, edge_profile]);
}

/// jq as a P3 program, through its own build: `configure --disable-shared`
/// (P3 builds programs, so libtool links jq's and oniguruma's libraries in,
/// archives of bitcode objects), `PATHPROF_MODE=p3 PATHPROF_COPIES=2` for
/// `configure` and `make` alike, beside the whole-program path build of the
/// same sources. `pathprof p3 run` of a filter over generated JSON prints
/// what the path build prints, and the copies' merged profile holds exactly
/// the path build's path counts, function by function.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn jq_as_two_p3_copies_merges_into_its_path_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let src = jq_sources(t);
    let input = t.join("in.json");
    let records: Vec<String> = (0..4000)
        .map(|i| {
            format!(
                r#"{{"id":{i},"v":{},"tags":["t{}","é{}"]}}"#,
                i % 7,
                i % 5,
                i % 3
            )
        })
        .collect();
    std::fs::write(&input, format!("[{}]", records.join(","))).unwrap();
    let filter = r#"[.[] | select(.v > 3) | {id, t: (.tags | join(","))}] | length"#;
    // jq reads its working directory's absolute name as a string (the
    // origin of a program given with -f or as text), so the two builds sit
    // in directories whose names are one length.
    let builds = [
        ("p3", [("PATHPROF_MODE", "p3"), ("PATHPROF_COPIES", "2")]),
        (
            "pa",
            [("PATHPROF_MODE", "path"), ("PATHPROF_WHOLE_PROGRAM", "1")],
        ),
    ];
    let mut runs = BTreeMap::new();
    for (mode, env) in builds {
        let dir = t.join(mode);
        copy_dir(&src, &dir);
        build_jq(&dir, &format!("{PATHPROF} cc"), &["--disable-shared"], &env);
        let profile = t.join(format!("{mode}.pprof"));
        let printed = if mode == "p3" {
            for copy in ["jq.p3.0", "jq.p3.1"] {
                assert!(dir.join(copy).is_file(), "{copy} built");
            }
            let mut cmd = Command::new(PATHPROF);
            cmd.args(["p3", "run", "-o"]).arg(&profile).arg("--");
            ok_in(&dir, cmd.arg("./jq").arg(filter).arg(&input), &[])
        } else {
            let mut cmd = Command::new("./jq");
            let env = [("PATHPROF_FILE", profile.to_str().unwrap())];
            ok_in(&dir, cmd.arg(filter).arg(&input), &env)
        };
        let r = json_report(&dir.join("jq.ppmap"), &profile);
        assert_eq!(r["exact"], true);
        no_lost_paths(&r);
        // Keyed by file name: the two builds' sources are in two directories.
        let paths: BTreeMap<_, _> = path_counts(&function_paths(&r))
            .into_iter()
            .map(|((name, file, line, potential), counts)| {
                ((name.clone(), file_name(file), *line, *potential), counts)
            })
            .collect();
        runs.insert(mode, (printed, paths));
    }
    assert_eq!(runs["p3"].0, runs["pa"].0, "the same output");
    assert_eq!(runs["pa"].0.trim(), "1713");
    let (p3, path) = (&runs["p3"].1, &runs["pa"].1);
    assert!(path.values().any(|counts| !counts.is_empty()));
    let differ: Vec<_> = path.keys().filter(|f| p3.get(*f) != path.get(*f)).collect();
    assert!(differ.is_empty(), "P3's merged paths differ in {differ:?}");
    assert_eq!(p3.len(), path.len());
}

/// Every function of a report kept all its paths, and its flow is conserved.
fn no_lost_paths(r: &serde_json::Value) {
    for f in r["functions"].as_array().unwrap() {
        assert_eq!(f["lost_paths"], 0, "{}", f["name"]);
        assert_eq!(f["flow_imbalance"], 0, "{}", f["name"]);
    }
}

/// A copy of `subdir` of the registry crate `krate`'s sources in `dir`.
fn copy_sources(krate: &str, subdir: &str, dir: &Path) -> PathBuf {
    let copy = dir.join(subdir);
    copy_dir(&crate_dir(krate).join(subdir), &copy);
    copy
}

/// `pathprof report --format json` of a test suite's profile over `maps` (the
/// suite's instrumented programs and libraries), checked: at least
/// `min_processes` processes, each (but fork children) counted once in the
/// `main` of its program, and exact.
fn suite_report(maps: &[PathBuf], suite: &Path, min_processes: u64) -> serde_json::Value {
    let r = json_report_in(Path::new("."), suite, maps);
    let processes = r["processes"].as_u64().unwrap() - r["forked_processes"].as_u64().unwrap();
    let mains: u64 = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"] == "main")
        .map(|f| f["entry_count"].as_u64().unwrap())
        .sum();
    assert!(processes >= min_processes, "{processes} processes");
    assert_eq!(mains, processes, "main once per process");
    assert_eq!(r["exact"], true);
    r
}

/// The profile files under `dir`.
fn profiles_under(dir: &Path) -> Vec<PathBuf> {
    files_under(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".pprof"))
        .collect()
}

#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn harfbuzz_meson_test_profiles_into_one_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = copy_sources("harfbuzz-sys", "harfbuzz", tmp.path());
    // The crate ships HarfBuzz without its test/ and docs/ trees: the build
    // reads an empty test/meson.build and skips the docs (both builds alike).
    // Its own tests in src/ (unit tests, check-symbols, check-static-inits,
    // check-libstdc++...) all run.
    std::fs::create_dir_all(src.join("test")).unwrap();
    std::fs::write(src.join("test/meson.build"), "").unwrap();
    let pathprof_cc = |tool: &str| format!("{PATHPROF} {tool}");
    let mut results = Vec::new();
    for (name, cc, cxx) in [
        ("plain", CLANG.to_string(), format!("{CLANG}++")),
        ("pathprof", pathprof_cc("cc"), pathprof_cc("c++")),
    ] {
        let build = tmp.path().join(name);
        ok_in(
            &src,
            Command::new("meson")
                .args(["setup", "-Dtests=enabled", "-Ddocs=disabled"])
                .arg(&build),
            &[("CC", &cc), ("CXX", &cxx)],
        );
        ok_in(&build, Command::new("ninja").arg("-j2"), &[]);
        let suite = tmp.path().join("suite.pprof");
        ok_in(
            &build,
            Command::new("meson").args(["test", "--print-errorlogs"]),
            &[("PATHPROF_FILE", suite.to_str().unwrap())],
        );
        // meson's log: one JSON object per test, with its name and result.
        let log = std::fs::read_to_string(build.join("meson-logs/testlog.json")).unwrap();
        let mut summary: Vec<String> = log
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .map(|t| {
                format!(
                    "{} {}",
                    t["name"].as_str().unwrap(),
                    t["result"].as_str().unwrap()
                )
            })
            .collect();
        summary.sort();
        results.push((build, summary));
    }
    let (plain, expected) = &results[0];
    let (pp, got) = &results[1];
    assert!(expected.len() >= 20, "{expected:?}");
    assert_eq!(got, expected, "the same tests pass");
    assert!(
        got.iter().any(|t| t.contains("check-symbols")),
        "HarfBuzz's own export check ran: {got:?}"
    );
    for lib in ["libharfbuzz.so", "libharfbuzz-subset.so"] {
        let lib = Path::new("src").join(lib);
        assert_eq!(
            exports(&pp.join(&lib)),
            exports(&plain.join(&lib)),
            "{lib:?}"
        );
    }
    let suite = tmp.path().join("suite.pprof");
    assert_eq!(
        profiles_under(pp),
        Vec::<PathBuf>::new(),
        "profiles beside the suite's"
    );
    let r = suite_report(&instrumented_files(pp), &suite, 10);
    let functions = r["functions"].as_array().unwrap();
    let ran_in_libraries = functions
        .iter()
        .filter(|f| f["entry_count"].as_u64() > Some(0))
        .filter(|f| f["file"].as_str().is_some_and(|p| p.contains("/hb-")))
        .count();
    assert!(
        ran_in_libraries > 1000,
        "the libraries' counts are in the suite's profile ({ran_in_libraries} functions ran)"
    );
}

/// Configures curl's own CMake build of `src` in `build` with `cc` and builds
/// it. Default options (a shared libcurl, the tool linked against it, with a
/// RUNPATH to the build's own lib/), but for the trees the crate leaves out:
/// CMake adds docs/ (which also generates the tool's built-in manual) and
/// tests/ only when it finds Perl, and docs/examples unless told not to.
/// Without Perl, BUILD_TESTING builds nothing either.
fn build_curl(src: &Path, build: &Path, cc: &str) {
    std::fs::create_dir_all(build).unwrap();
    ok_in(
        build,
        Command::new("cmake")
            .args([
                "-DCMAKE_DISABLE_FIND_PACKAGE_Perl=ON",
                "-DBUILD_EXAMPLES=OFF",
            ])
            .arg(src),
        &[("CC", cc)],
    );
    ok_in(
        build,
        Command::new("cmake").args(["--build", ".", "-j2"]),
        &[],
    );
}

/// Python's `http.server` serving `dir` on a free port of 127.0.0.1, killed
/// when dropped.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start(dir: &Path) -> HttpServer {
        let child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .arg("--directory")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = HttpServer { child, port: 0 };
        // Printed once it listens: "Serving HTTP on 127.0.0.1 port N (...) ...".
        let mut line = String::new();
        std::io::BufReader::new(server.child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        server.port = line
            .split(' ')
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("http.server said {line:?}"));
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// curl (`curl-sys`' sources) through its own CMake build, plain and with
/// `CC="pathprof cc"`: a shared libcurl and the curl tool linked against it.
/// The crate ships no test suite, so the suite is the tool on real transfers:
/// file:// URLs (sizes, a range, `-I`, globbing, a missing file), http:// to a
/// local server, `--version`, a bad option. The instrumented tool behaves as
/// the plain one, libcurl exports the same symbols, every process counts into
/// one profile, and libcurl's API functions are entered exactly as often as
/// the tool's code says.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn curl_cmake_build_profiles_into_one_file() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let src = copy_sources("curl-sys", "curl", t);
    let plain = t.join("plain");
    build_curl(&src, &plain, CLANG);
    let pp = t.join("pathprof");
    build_curl(&src, &pp, &format!("{PATHPROF} cc"));
    // CMake's configure-time probes that run (check_c_source_runs) are
    // built as plain clang builds them: they write no profile.
    let before = profiles_under(t);
    assert_eq!(
        before,
        Vec::<PathBuf>::new(),
        "CMake's probes wrote profiles"
    );

    let data = t.join("data");
    std::fs::create_dir(&data).unwrap();
    let medium = text(64 << 10);
    let large = text(1 << 20);
    for (name, content) in [
        ("empty.txt", &b""[..]),
        ("small.txt", b"hello\n"),
        ("medium.txt", &medium),
        ("large.txt", &large),
        ("f1.txt", b"one\n"),
        ("f2.txt", b"two\n"),
        ("f3.txt", b"three\n"),
    ] {
        std::fs::write(data.join(name), content).unwrap();
    }
    let server = HttpServer::start(&data);
    let file = |name: &str| format!("file://{}/{name}", data.display());
    let http = |name: &str| format!("http://127.0.0.1:{}/{name}", server.port);
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Each run: curl's arguments (after -q: no ~/.curlrc) and the transfers it
    // makes.
    let runs: Vec<(Vec<String>, u64)> = vec![
        (args(&["--version"]), 0),
        (args(&["--no-such-option"]), 0),
        (args(&["-s", &file("empty.txt")]), 1),
        (args(&["-s", &file("small.txt")]), 1),
        (args(&["-s", &file("large.txt")]), 1),
        (args(&["-s", "-r", "100-199", &file("medium.txt")]), 1),
        (args(&["-s", "-I", &file("medium.txt")]), 1),
        // Into 1.out, 2.out and 3.out.
        (args(&["-s", &file("f[1-3].txt"), "-o", "#1.out"]), 3),
        (
            args(&[
                "-s",
                "-w",
                "%{size_download}",
                "-o",
                "/dev/null",
                &file("large.txt"),
            ]),
            1,
        ),
        (args(&["-s", &file("missing.txt")]), 1),
        (args(&["-s", "--noproxy", "*", &http("medium.txt")]), 1),
        // Python's 404 page, then "404".
        (
            args(&[
                "-s",
                "--noproxy",
                "*",
                "-w",
                "%{http_code}",
                &http("missing.txt"),
            ]),
            1,
        ),
        (
            args(&["-s", "--noproxy", "*", "-f", &http("missing.txt")]),
            1,
        ),
    ];
    // Both builds' runs get PATHPROF_FILE: the plain one's must not write it.
    let suite = t.join("suite.pprof");
    let run_all = |build: &Path, dir: &Path| {
        std::fs::create_dir(dir).unwrap();
        runs.iter()
            .map(|(a, _)| {
                let out = Command::new(build.join("src/curl"))
                    .arg("-q")
                    .args(a)
                    .current_dir(dir)
                    .env("PATHPROF_FILE", &suite)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                (out.stdout, out.stderr, out.status.code())
            })
            .collect::<Vec<_>>()
    };
    let expected = run_all(&plain, &t.join("plain-run"));
    let got = run_all(&pp, &t.join("pathprof-run"));
    drop(server);

    let statuses: Vec<_> = expected.iter().map(|e| e.2.unwrap()).collect();
    // 2: unknown option; 37: cannot read the file; 22: -f and an HTTP error.
    assert_eq!(statuses, [0, 2, 0, 0, 0, 0, 0, 0, 0, 37, 0, 0, 22]);
    assert!(expected[0].0.starts_with(b"curl 8.22.0"));
    assert_eq!(expected[4].0, large);
    assert_eq!(expected[5].0, medium[100..200]);
    assert_eq!(expected[8].0, large.len().to_string().as_bytes());
    assert_eq!(expected[10].0, medium);
    assert!(expected[11].0.ends_with(b"404"));
    for ((a, _), (e, g)) in runs.iter().zip(expected.iter().zip(&got)) {
        assert!(
            g == e,
            "curl -q {a:?}: the instrumented tool printed {} bytes and {:?} on stderr, \
             exit status {:?}; the plain one {} bytes and {:?}, exit status {:?}",
            g.0.len(),
            String::from_utf8_lossy(&g.1),
            g.2,
            e.0.len(),
            String::from_utf8_lossy(&e.1),
            e.2
        );
    }
    for n in 1..=3 {
        let want = std::fs::read(data.join(format!("f{n}.txt"))).unwrap();
        for run in ["plain-run", "pathprof-run"] {
            let out = std::fs::read(t.join(run).join(format!("{n}.out"))).unwrap();
            assert_eq!(out, want, "{run}/{n}.out");
        }
    }

    let lib = Path::new("lib/libcurl.so");
    assert_eq!(exports(&pp.join(lib)), exports(&plain.join(lib)));

    let mut profiles = before;
    profiles.push(suite.clone());
    profiles.sort();
    assert_eq!(
        profiles_under(t),
        profiles,
        "the runs wrote profiles beside the suite's"
    );
    let processes = runs.len() as u64;
    let r = suite_report(&[pp.join("src/curl"), pp.join(lib)], &suite, processes);
    assert_eq!(r["processes"], processes);
    no_lost_paths(&r);
    let functions = r["functions"].as_array().unwrap();
    let entered = |name: &str| {
        let mut found = functions.iter().filter(|f| f["name"] == name);
        let f = found.next().unwrap_or_else(|| panic!("no function {name}"));
        assert!(found.next().is_none(), "several functions called {name}");
        f["entry_count"].as_u64().unwrap()
    };
    // What the tool calls (src/tool_*.c), per process: curl_global_init
    // before it parses its arguments; then, unless they asked for --version
    // or were wrong, curl_share_init, whose share handle makes an easy handle
    // of its own (curl_easy_init); and per transfer, curl_easy_init for the
    // transfer's handle and curl_easy_perform, which makes a multi handle for
    // it, which makes an easy handle of its own (curl_easy_init again).
    // Here: 13 processes, 11 of which transfer, 13 transfers; 11 + 2·13 = 37
    // easy handles.
    let transfers: u64 = runs.iter().map(|r| r.1).sum();
    let transferring = runs.iter().filter(|r| r.1 > 0).count() as u64;
    assert_eq!((processes, transferring, transfers), (13, 11, 13));
    assert_eq!(entered("curl_global_init"), processes);
    assert_eq!(entered("curl_share_init"), transferring);
    assert_eq!(entered("curl_easy_perform"), transfers);
    assert_eq!(entered("curl_easy_init"), transferring + 2 * transfers);
}

/// The version of pulldown-cmark (a CommonMark parser, and its tool
/// `pulldown-cmark`: Markdown on standard input, HTML or its parser's events
/// on standard output) that `pulldown_cmark_through_pathprof_cargo_install`
/// installs: seven crates, small enough to build three times in about a
/// minute.
const PULLDOWN_CMARK: &str = "0.13.6";

/// Installs pulldown-cmark from crates.io as its users do, `cargo install
/// --locked`, under `root` (its target directory `root/target`): plain
/// (`mode` None) or through `pathprof cargo --mode=MODE`. Returns the
/// installed binary.
fn install_pulldown_cmark(mode: Option<&str>, root: &Path) -> PathBuf {
    let flag = mode.map(|m| format!("--mode={m}"));
    let flags: Option<Vec<&str>> = flag.as_deref().map(|f| vec![f]);
    let mut cmd = cargo_command(flags.as_deref());
    cmd.args(["install", "--locked", "--root"])
        .arg(root)
        .arg("--target-dir")
        .arg(root.join("target"))
        .args(["pulldown-cmark", "--version", PULLDOWN_CMARK]);
    succeed(&mut cmd);
    root.join("bin/pulldown-cmark")
}

/// Markdown from [`text`]'s lines, each made into one construct in turn:
/// headings, emphasis, code spans, links, lists, task lists, tables, block
/// quotes, code blocks, strikethrough and quotes (smart punctuation).
fn markdown(bytes: usize) -> Vec<u8> {
    let text = String::from_utf8(text(bytes)).unwrap();
    let mut md = String::new();
    for (i, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split(' ').collect();
        let word = |k: usize| w[k % w.len()];
        md += &match i % 8 {
            0 => format!("## {line}\n\n"),
            1 => {
                w.iter()
                    .enumerate()
                    .map(|(k, w)| match k % 6 {
                        1 => format!("*{w}*"),
                        2 => format!("**{w}**"),
                        3 => format!("`{w}`"),
                        4 => format!("[{w}](https://example.org/{w})"),
                        5 => format!("~~{w}~~"),
                        _ => w.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
                    + "\n\n"
            }
            2 => format!("- {}\n- [x] {}\n  1. {line}\n\n", word(0), word(1)),
            3 => format!(
                "| {} | {} |\n|---|--:|\n| {line} | {} |\n\n",
                word(0),
                word(1),
                w.len()
            ),
            4 => format!("> {line}\n> \"{}\" -- {}...\n\n", word(2), word(3)),
            5 => format!("```\n{line}\n```\n\n"),
            _ => format!("{line}\n"),
        };
    }
    md.into_bytes()
}

/// A Rust program from crates.io profiled as its users install it:
/// `pathprof cargo --mode=path install pulldown-cmark` and `--mode=edge`
/// beside a plain `cargo install` of the same version. The profiled tools
/// print what the plain one prints (HTML with GitHub's extensions, and the
/// parser's events), each binary has its map beside it, the hottest paths
/// read as lines of pulldown-cmark's own Rust sources, the path profile is
/// exact and `pathprof verify` passes against the edge profile of the same
/// runs.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn pulldown_cmark_through_pathprof_cargo_install() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let input = markdown(200_000);
    let p = Program {
        name: "pulldown-cmark",
        sources: Vec::new(),
        cflags: Vec::new(),
        libs: Vec::new(),
        runs: vec![
            (
                ["-T", "-S", "-L", "-P"].map(String::from).to_vec(),
                input.clone(),
            ),
            (vec!["-e".into()], input.clone()),
        ],
        env: vec![],
        pathprof_flags: Vec::new(),
    };
    let plain = install_pulldown_cmark(None, &t.join("plain"));
    let expected = run(&p, &plain, &t.join("unused.pprof"));
    assert!(expected.iter().all(|(_, status)| *status == 0));
    assert!(
        !t.join("unused.pprof").exists(),
        "the plain build writes no profile"
    );
    let html = String::from_utf8_lossy(&expected[0].0);
    for tag in ["<h2>", "<table>", "<del>", "<code>", "checkbox", "“"] {
        assert!(html.contains(tag), "the HTML has {tag}");
    }
    assert!(
        !map_of(&plain).exists(),
        "a plain install has no map beside it"
    );
    let mut profiles = BTreeMap::new();
    for mode in ["path", "edge"] {
        let exe = install_pulldown_cmark(Some(mode), &t.join(mode));
        assert!(
            map_of(&exe).is_file(),
            "pathprof cargo install wrote {}",
            map_of(&exe).display()
        );
        let profile = t.join(format!("{mode}.pprof"));
        assert!(
            run(&p, &exe, &profile) == expected,
            "the {mode}-mode pulldown-cmark prints what the plain one prints"
        );
        profiles.insert(mode, (exe, profile));
    }
    let (path_exe, path_profile) = &profiles["path"];
    let (edge_exe, edge_profile) = &profiles["edge"];

    // pulldown-cmark's own sources, by the report: the files under its
    // crate's src/ whose functions ran (lib.rs and main.rs left out: other
    // crates have files of those names).
    let r = json_report(&map_of(path_exe), path_profile);
    assert_eq!(r["exact"], true);
    no_lost_paths(&r);
    let src = format!("/pulldown-cmark-{PULLDOWN_CMARK}/src/");
    let own: std::collections::BTreeSet<String> = r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["entry_count"].as_u64() > Some(0))
        .filter_map(|f| f["file"].as_str())
        .filter(|file| file.contains(&src))
        .map(file_name)
        .filter(|name| name != "lib.rs" && name != "main.rs")
        .collect();
    assert!(own.contains("firstpass.rs"), "{own:?}");
    let top = ok_in(
        t,
        Command::new(PATHPROF)
            .args(["paths", "--map"])
            .arg(path_exe)
            .arg(path_profile)
            .args(["--top", "3"]),
        &[],
    );
    assert!(
        top.contains("pulldown_cmark::")
            && own.iter().any(|name| top.contains(&format!("{name}:"))),
        "the hottest paths are lines of pulldown-cmark's sources ({own:?}):\n{top}"
    );
    eprintln!("pulldown-cmark's hottest paths:\n{top}");
    verify(
        t,
        [path_exe, path_profile],
        [&map_of(edge_exe), edge_profile],
    );
}
