//! What the runtime puts into profiled programs: its code (no Rust std,
//! at most 100 KiB), each thread's memory (only what the thread counts;
//! 8 bytes of static thread-local data per object), and many `dlopen`ed
//! libraries in one process (no static thread-local block to run out of).

use crate::support::build::{cc, llvm_tool};
use crate::support::command::{failure, ok, PATHPROF};
use crate::support::report::json_report_in;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The sources of this module's programs.
fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/footprint")
        .join(name)
}

/// clang-22 with `args` in `dir`, which must succeed.
fn clang(dir: &Path, args: &[&str]) {
    let out = Command::new("/usr/lib/llvm-22/bin/clang")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run clang-22");
    assert!(out.status.success(), "{}", failure("clang", &out));
}

/// `llvm-nm ARGS FILE`'s lines.
fn nm(args: &[&str], file: &Path) -> Vec<String> {
    let out = Command::new(llvm_tool("llvm-nm"))
        .args(args)
        .arg(file)
        .output()
        .expect("run llvm-nm");
    ok(out).lines().map(str::to_string).collect()
}

/// The runtime archive pathprof links (`pathprof rt-path`).
fn runtime_archive() -> PathBuf {
    let out = Command::new(PATHPROF).arg("rt-path").output().unwrap();
    PathBuf::from(ok(out).trim())
}

/// Bytes of code the runtime has in `exe`: the sizes of `exe`'s function
/// symbols that the archive defines (its own code and what it took of
/// `core`, under the same names in both).
fn runtime_code_bytes(exe: &Path, archive: &Path) -> u64 {
    let ours: BTreeSet<String> = nm(&["--defined-only", "--format=just-symbols"], archive)
        .into_iter()
        .filter(|s| !s.is_empty() && !s.ends_with(':'))
        .collect();
    nm(&["--defined-only", "--print-size", "--format=posix"], exe)
        .iter()
        .filter_map(|line| {
            // `name type value size`
            let mut f = line.split_whitespace();
            let (name, kind, _, size) = (f.next()?, f.next()?, f.next()?, f.next()?);
            let code = matches!(kind, "t" | "T" | "w" | "W");
            (code && ours.contains(name)).then(|| u64::from_str_radix(size, 16).ok())?
        })
        .sum()
}

#[test]
fn the_runtime_in_a_program_is_small_and_holds_no_rust_std() {
    let dir = tempfile::tempdir().unwrap();
    let archive = runtime_archive();
    for mode in ["block", "edge", "path"] {
        let exe = dir.path().join(format!("threads-{mode}"));
        cc(
            dir.path(),
            mode,
            &["-O2", source("threads.c").to_str().unwrap()],
            &exe,
        );
        let bytes = runtime_code_bytes(&exe, &archive);
        assert!(
            (20_000..=100 * 1024).contains(&bytes),
            "{mode} mode: the runtime's code is {bytes} bytes (at most 100 KiB)"
        );
        let demangled = nm(&["--demangle", "--format=just-symbols"], &exe);
        let foreign: Vec<&String> = demangled
            .iter()
            .filter(|s| {
                [
                    "std::",
                    "core::fmt",
                    "gimli",
                    "addr2line",
                    "miniz_oxide",
                    "rust_eh_personality",
                ]
                .iter()
                .any(|bad| s.contains(bad))
            })
            .collect();
        assert!(
            foreign.is_empty(),
            "{mode} mode: std's symbols in the program: {foreign:?}"
        );
    }
}

/// The `PT_TLS` segment's size in memory, 0 without one.
fn static_tls_bytes(exe: &Path) -> u64 {
    let out = Command::new("readelf")
        .arg("-lW")
        .arg(exe)
        .output()
        .unwrap();
    ok(out)
        .lines()
        .find(|l| l.trim_start().starts_with("TLS"))
        .and_then(|l| l.split_whitespace().nth(5))
        .map_or(0, |memsz| {
            u64::from_str_radix(memsz.trim_start_matches("0x"), 16).unwrap()
        })
}

/// Runs `exe`: its stdout and the peak resident memory it reported.
fn peak_of(exe: &Path, dir: &Path) -> (String, u64) {
    let out = Command::new(exe)
        .current_dir(dir)
        .env("PATHPROF_FILE", dir.join("threads.pprof"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", failure("threads", &out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak_kib "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), peak)
}

/// 256 threads alive at once in path mode, each counting 4 paths of a
/// function whose path array is 128 KiB: the process's peak resident
/// memory is the plain build's (within 10%) plus the pages the threads'
/// counts touched (at most 4 of the path array and one of slots each) and
/// 1 MiB for the runtime itself; the executable's static thread-local data
/// is 8 bytes more than the plain build's (the delta), whatever it counts.
#[test]
fn threads_cost_what_they_count_and_no_static_thread_local_counters() {
    let dir = tempfile::tempdir().unwrap();
    let src = source("threads.c");
    let plain = dir.path().join("threads-plain");
    clang(
        dir.path(),
        &[
            "-O2",
            src.to_str().unwrap(),
            "-o",
            plain.to_str().unwrap(),
            "-lpthread",
        ],
    );
    let path = dir.path().join("threads-path");
    cc(dir.path(), "path", &["-O2", src.to_str().unwrap()], &path);
    assert_eq!(
        static_tls_bytes(&path),
        static_tls_bytes(&plain) + 8,
        "static thread-local data: the delta only"
    );
    let (plain_out, plain_peak) = peak_of(&plain, dir.path());
    let (path_out, path_peak) = peak_of(&path, dir.path());
    assert_eq!(path_out, plain_out, "the same work");
    const THREADS: u64 = 256;
    let touched_kib = THREADS * 5 * 4;
    let allowed = plain_peak + plain_peak / 10 + touched_kib + 1024;
    assert!(
        path_peak <= allowed,
        "path mode peaks at {path_peak} KiB, plain at {plain_peak} KiB: at most {allowed} KiB"
    );
    // The counts are all there: every thread's 4 paths.
    let report = json_report_in(dir.path(), "threads.pprof", &[&path]);
    let classify = crate::support::report::function(&report, "classify");
    assert_eq!(
        classify["entry_count"].as_u64(),
        Some(THREADS * 4),
        "{classify}"
    );
}

/// 64 path-mode shared libraries, each its own build, `dlopen`ed one after
/// another by an instrumented executable: every one loads (a library's
/// static thread-local data is its 8-byte delta) and every library's counts
/// are written, in its own section.
#[test]
fn sixty_four_dlopened_libraries_load_and_write_their_counts() {
    const LIBRARIES: usize = 64;
    let dir = tempfile::tempdir().unwrap();
    let lib_src = source("library.c");
    let mut libs = Vec::new();
    for i in 1..=LIBRARIES {
        let lib = dir.path().join(format!("lib{i}.so"));
        let id = format!("-DID={i}");
        let args = ["-O1", "-fPIC", "-shared", &id, lib_src.to_str().unwrap()];
        cc(dir.path(), "path", &args, &lib);
        libs.push(lib);
    }
    let host = dir.path().join("host");
    cc(
        dir.path(),
        "edge",
        &["-O1", source("host.c").to_str().unwrap(), "-ldl"],
        &host,
    );
    let out = Command::new(&host)
        .current_dir(dir.path())
        .env("PATHPROF_FILE", "many.pprof")
        .args(&libs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", failure("host", &out));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (i, lib) in libs.iter().enumerate() {
        let report = json_report_in(dir.path(), "many.pprof", &[lib]);
        let n = i as u64 + 1;
        let f = crate::support::report::function(&report, &format!("f{n}"));
        assert_eq!(f["entry_count"].as_u64(), Some(n), "lib{n}.so: {f}");
        assert_eq!(report["processes"].as_u64(), Some(1), "lib{n}.so");
    }
}

/// An executable that sets its own GS base (where its probes count) to 0:
/// the dump at exit says so; the counts made since went to the counters
/// themselves, which the dump reads too.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_changed_gs_base_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("gs_changed");
    cc(
        dir.path(),
        "edge",
        &["-O1", source("gs_changed.c").to_str().unwrap()],
        &exe,
    );
    let out = Command::new(&exe)
        .current_dir(dir.path())
        .env("PATHPROF_FILE", "gs.pprof")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", failure("gs_changed", &out));
    if String::from_utf8_lossy(&out.stdout).trim() == "no fsgsbase" {
        return; // the kernel does not let a program set its base with wrgsbase
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the program changed a thread's GS base"),
        "stderr: {stderr}"
    );
    let report = json_report_in(dir.path(), "gs.pprof", &[&exe]);
    let work = crate::support::report::function(&report, "work");
    assert_eq!(work["entry_count"].as_u64(), Some(2), "{work}");
}
