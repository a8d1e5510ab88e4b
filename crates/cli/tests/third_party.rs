//! Real third-party programs from registry crates' bundled C sources, built
//! through `pathprof cc` in all three modes and run on workloads: the Lua 5.4
//! interpreter (`lua-src`; its interpreter loop is a computed `goto`, whose
//! `indirectbr` edges cannot be split), bzip2 1.0.8 with its command-line tool
//! (`bzip2-sys`; `sendMTFValues`, inlined into `BZ2_compressBlock`, has about
//! 3·10^32 acyclic paths), and SQLite
//! (`libsqlite3-sys`; a dozen functions beyond 2^64 paths). For each: the output
//! equals the plain clang build's, block counts agree across modes, edge counts
//! agree between edge and path mode, and `pathprof verify` passes.
//!
//! Runs are made with address randomisation off (`setarch -R`): Lua and SQLite
//! hash or cache by address, so only then are two runs the same run. Builds of
//! different modes still lay out their data differently, so Lua's API string
//! cache, indexed by address, is cut to one entry.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const CLANG: &str = "/usr/lib/llvm-22/bin/clang";

/// Where cargo keeps the sources of registry crate `name` (named by
/// `bench/thirdparty/Cargo.toml`, which nothing builds).
fn crate_dir(name: &str) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/thirdparty/Cargo.toml");
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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

fn bench_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench")
        .join(path)
}

/// A program: how to compile it and how to run it.
struct Program {
    name: &'static str,
    sources: Vec<PathBuf>,
    cflags: Vec<String>,
    libs: Vec<&'static str>,
    /// Each run: arguments and standard input; all runs add into one profile.
    runs: Vec<(Vec<String>, Vec<u8>)>,
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

fn build(p: &Program, compiler: &[&str], exe: &Path) {
    let status = Command::new(compiler[0])
        .args(&compiler[1..])
        .args(["-O2", "-g"])
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
type Counts = std::collections::BTreeMap<String, (Vec<u64>, Vec<Option<u64>>)>;

/// `pathprof report --format json` of a map and a profile.
fn report_json(map: &Path, profile: &Path) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pathprof"))
        .args(["report", "--format", "json", "--map"])
        .arg(map)
        .arg(profile)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn counts(dir: &Path, mode: &str) -> Counts {
    let report = report_json(
        &dir.join(format!("{mode}.ppmap")),
        &dir.join(format!("{mode}.pprof")),
    );
    let number = |v: &serde_json::Value| v["count"].as_u64();
    report["functions"]
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
            (f["name"].as_str().unwrap().to_string(), (blocks, edges))
        })
        .collect()
}

/// Builds and runs `p` plain and in every mode and checks that all agree.
/// Returns the path-mode counts.
fn check_all_modes(p: &Program) -> Counts {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("plain")).unwrap();
    let plain = d.join("plain").join("prog");
    build(p, &[CLANG], &plain);
    let expected = run(p, &plain, &d.join("unused.pprof"));
    assert!(
        expected.iter().all(|(_, status)| *status == 0),
        "{} runs",
        p.name
    );
    let pathprof = env!("CARGO_BIN_EXE_pathprof");
    let mut all = Vec::new();
    for mode in ["block", "edge", "path"] {
        std::fs::create_dir(d.join(mode)).unwrap();
        let exe = d.join(mode).join("prog");
        build(
            p,
            &[
                pathprof,
                "cc",
                &format!("--mode={mode}"),
                &format!("--map={}", d.join(format!("{mode}.ppmap")).display()),
            ],
            &exe,
        );
        let got = run(p, &exe, &d.join(format!("{mode}.pprof")));
        assert!(
            got == expected,
            "{} built in {mode} mode behaves differently from the plain build",
            p.name
        );
        all.push(counts(d, mode));
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
    let verify = Command::new(pathprof)
        .arg("verify")
        .arg("--map")
        .arg(d.join("path.ppmap"))
        .arg(d.join("path.pprof"))
        .arg("--edge-map")
        .arg(d.join("edge.ppmap"))
        .arg(d.join("edge.pprof"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    all.pop().unwrap()
}

#[test]
fn lua_interpreter() {
    let src = crate_dir("lua-src").join("lua-5.4.9");
    let mut sources = vec![bench_file("lua/driver.c")];
    sources.extend(c_files(&src, &["lua.c", "luac.c"]));
    let lua = Program {
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
                bench_file("lua/workload.lua").display().to_string(),
                "2".into(),
            ],
            Vec::new(),
        )],
    };
    let counts = check_all_modes(&lua);
    assert!(
        counts["luaV_execute"].0.iter().sum::<u64>() > 1_000_000,
        "the interpreter loop ran"
    );
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

#[test]
fn bzip2_compressor() {
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
    let mut child = Command::new(&plain)
        .args(["-9", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let compressed = child.wait_with_output().unwrap().stdout;
    let bzip2 = Program {
        name: "bzip2",
        sources,
        cflags: vec!["-D_FILE_OFFSET_BITS=64".into()],
        libs: vec![],
        // Compress, then decompress: two runs adding into one profile.
        runs: vec![
            (vec!["-9".into(), "-c".into()], input),
            (vec!["-d".into(), "-c".into()], compressed),
        ],
    };
    let counts = check_all_modes(&bzip2);
    // sendMTFValues (about 3e32 paths) is inlined here at -O2.
    assert!(counts["BZ2_compressBlock"].0[0] > 0, "the compressor ran");
    assert!(counts["BZ2_decompress"].0[0] > 0, "the decompressor ran");
}

#[test]
fn sqlite_database() {
    let src = crate_dir("libsqlite3-sys").join("sqlite3");
    let sqlite = Program {
        name: "sqlite",
        sources: vec![bench_file("sqlite/driver.c"), src.join("sqlite3.c")],
        cflags: vec![format!("-I{}", src.display())],
        libs: vec!["-lm", "-ldl", "-lpthread"],
        runs: vec![(vec!["3000".into()], Vec::new())],
    };
    let counts = check_all_modes(&sqlite);
    assert!(counts["sqlite3VdbeExec"].0[0] > 0, "the VDBE ran");
}

/// bzip2's own Makefile with `CC="pathprof cc"`: separate compile steps, `ar` +
/// `ranlib` into `libbz2.a` of bitcode objects, and a link with `-L. -lbz2`, as
/// any build system does it.
#[test]
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
    let cc = format!("{} cc --mode=path", env!("CARGO_BIN_EXE_pathprof"));
    let make = Command::new("make")
        .current_dir(d)
        .arg(format!("CC={cc}"))
        .arg("bzip2")
        .output()
        .unwrap();
    assert!(
        make.status.success(),
        "{}",
        String::from_utf8_lossy(&make.stderr)
    );
    assert!(d.join("libbz2.a").exists() && d.join("bzip2.ppmap").exists());
    let input = text(50_000);
    let mut child = Command::new(d.join("bzip2"))
        .args(["-9", "-c"])
        .env("PATHPROF_FILE", d.join("b.pprof"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let compressed = child.wait_with_output().unwrap().stdout;
    assert!(compressed.starts_with(b"BZh9"));
    let report = report_json(&d.join("bzip2.ppmap"), &d.join("b.pprof"));
    let compress = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "BZ2_compressBlock")
        .unwrap();
    assert_eq!(
        compress["entry_count"], 1,
        "the library in libbz2.a was instrumented too"
    );
}
