//! The Lua 5.4 interpreter (sources from the `lua-src` crate) built through
//! `pathprof cc` in all three modes and run on a workload: output equals the plain
//! build's, block counts agree across modes, edge counts agree between edge and
//! path mode, and `pathprof verify` passes. Its interpreter loop uses computed
//! `goto` (`indirectbr`), whose edges cannot be split. Lua seeds string hashes
//! from time and addresses and caches strings by address, so the builds fix the
//! seed and the runs turn address randomisation off.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lua_sources() -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lua-src")
        .expect("lua-src is a dev-dependency")["manifest_path"]
        .as_str()
        .unwrap()
        .to_string();
    Path::new(&manifest).parent().unwrap().join("lua-5.4.9")
}

fn bench_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/lua")
        .join(name)
}

/// Compiles Lua with `compiler` (argv prefix) into `exe`.
fn build(compiler: &[&str], exe: &Path) {
    let src = lua_sources();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let status = Command::new(compiler[0])
        .args(&compiler[1..])
        // A fixed string-hash seed makes runs repeatable (Lua seeds from time and addresses).
        .args(["-O2", "-g", "-DLUA_USE_LINUX", "-Dluai_makeseed(L)=12345u"])
        .arg(format!("-I{}", src.display()))
        .arg(bench_file("driver.c"))
        .args(&files)
        .arg("-o")
        .arg(exe)
        .args(["-lm", "-ldl"])
        .status()
        .unwrap();
    assert!(status.success(), "building Lua with {compiler:?} failed");
}

/// Runs Lua on the workload with address-space randomisation off: Lua's string
/// cache is indexed by addresses, so only then are two runs the same run.
fn run(exe: &Path, profile: &Path) -> (String, i32) {
    let out = Command::new("setarch")
        .arg("-R")
        .arg(exe)
        .arg(bench_file("workload.lua"))
        .arg("2")
        .env("PATHPROF_FILE", profile)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn report(dir: &Path, mode: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_pathprof"))
        .args(["report", "--format", "json", "--map"])
        .arg(dir.join(format!("lua-{mode}.ppmap")))
        .arg(dir.join(format!("lua-{mode}.pprof")))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// function name → (block counts, edge counts)
type Counts = std::collections::BTreeMap<String, (Vec<u64>, Vec<Option<u64>>)>;

fn counts(report: &serde_json::Value) -> Counts {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let blocks = f["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b["count"].as_u64().unwrap())
                .collect();
            let edges = f["edges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["count"].as_u64())
                .collect();
            (f["name"].as_str().unwrap().to_string(), (blocks, edges))
        })
        .collect()
}

#[test]
fn lua_in_every_mode_agrees_with_itself_and_the_plain_build() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("lua-plain");
    build(&["/usr/lib/llvm-22/bin/clang"], &plain);
    let expected = run(&plain, &dir.path().join("unused.pprof"));
    assert_eq!(expected.1, 0);
    let pathprof = env!("CARGO_BIN_EXE_pathprof");
    let mut all = Vec::new();
    for mode in ["block", "edge", "path"] {
        let exe = dir.path().join(format!("lua-{mode}"));
        build(&[pathprof, "cc", &format!("--mode={mode}")], &exe);
        let got = run(&exe, &dir.path().join(format!("lua-{mode}.pprof")));
        assert_eq!(
            got, expected,
            "{mode} build prints what the plain build prints"
        );
        all.push(counts(&report(dir.path(), mode)));
    }
    let blocks = |c: &Counts| {
        c.iter()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        blocks(&all[0]),
        blocks(&all[1]),
        "block counts: block mode = edge mode"
    );
    assert_eq!(
        blocks(&all[1]),
        blocks(&all[2]),
        "block counts: edge mode = path mode"
    );
    let edges = |c: &Counts| {
        c.iter()
            .map(|(k, v)| (k.clone(), v.1.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        edges(&all[1]),
        edges(&all[2]),
        "edge counts: edge mode = path mode"
    );
    let execute = &all[2]["luaV_execute"].0;
    assert!(
        execute.iter().sum::<u64>() > 1_000_000,
        "the interpreter loop ran"
    );
    let verify = Command::new(pathprof)
        .arg("verify")
        .arg("--map")
        .arg(dir.path().join("lua-path.ppmap"))
        .arg(dir.path().join("lua-path.pprof"))
        .arg("--edge-map")
        .arg(dir.path().join("lua-edge.ppmap"))
        .arg(dir.path().join("lua-edge.pprof"))
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}
