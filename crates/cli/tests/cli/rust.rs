//! Rust programs built with `pathprof cargo` (`tests/projects/rustprog`: a
//! binary and its library, a build script, a proc-macro, a unit test and a
//! doctest; its counts by hand in `src/main.rs`). Checked: every mode's
//! program prints and exits as the plain build's; counts are the source's,
//! exact however the program ends (`std::process::exit`, a panic out of
//! `main`, panics caught by `catch_unwind`, `abort`, SIGUSR1 then SIGKILL)
//! and across threads; path, edge and block modes agree (`pathprof
//! verify`); names are demangled with their generic arguments; std's code is
//! counted only with `--count-std`; the build script and the proc-macro run
//! uninstrumented; each binary's map lies beside it (also where `cargo
//! install` puts it); `cargo test` profiles the tests and the doctests; a
//! fat-LTO build (std's bitcode linked in) links with the runtime's std kept
//! to itself; `--profile-use` builds an optimised program from a profile
//! that prints as the plain one and counts nothing.

use crate::support::build::{copy_dir, data, line_of};
use crate::support::command::{cargo_command, ok_in, pathprof_ok, PATHPROF};
use crate::support::report::json_report;
use crate::support::run::signal_of;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The fixture copied into a directory of its own, built plain and in each
/// mode (path and edge with `--early-exit`, so that every run's paths are
/// counted and `verify` compares everything), and in path mode with std's
/// code counted too (`t-std`).
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

const MODES: [(&str, &[&str]); 3] = [
    ("path", &["--mode=path", "--early-exit"]),
    ("edge", &["--mode=edge", "--early-exit"]),
    ("block", &["--mode=block"]),
];

/// The project, built once for all the tests.
fn project() -> &'static Project {
    static PROJECT: OnceLock<Project> = OnceLock::new();
    PROJECT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("rustprog");
        copy_dir(&data("projects/rustprog"), &root);
        cargo(
            &root,
            None,
            &["build", "--release", "--target-dir", "plain"],
        );
        for (mode, flags) in MODES {
            let target = format!("t-{mode}");
            let args = ["build", "--release", "--target-dir", &target];
            cargo(&root, Some(flags), &args);
        }
        let args = ["build", "--release", "--target-dir", "t-std"];
        cargo(&root, Some(&["--mode=path", "--count-std"]), &args);
        Project { _dir: dir, root }
    })
}

impl Project {
    /// The program of the build in `target` (`plain`, `t-path`...).
    fn exe(&self, target: &str) -> PathBuf {
        self.root.join(target).join("release/rust-prog")
    }
}

/// `cargo ARGS` in `dir`, through `pathprof cargo FLAGS` when `flags` is
/// given; it must succeed.
fn cargo(dir: &Path, flags: Option<&[&str]>, args: &[&str]) -> String {
    ok_in(dir, cargo_command(flags).args(args), &[])
}

/// Runs `exe ARG` (no argument when empty) with its counts going to
/// `profile`, or uninstrumented when `None`.
fn run(exe: &Path, arg: &str, profile: Option<&Path>) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args((!arg.is_empty()).then_some(arg))
        .env_remove("PATHPROF_FILE");
    if let Some(p) = profile {
        cmd.env("PATHPROF_FILE", p);
    }
    cmd.output().unwrap()
}

/// The function of a JSON report whose demangled name is `name`.
fn shown<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["display_name"] == name)
        .unwrap_or_else(|| panic!("no function shown as {name}"))
}

/// Calls of the function shown as `name`.
fn calls(report: &Value, name: &str) -> u64 {
    shown(report, name)["entry_count"].as_u64().unwrap()
}

/// The counts by hand of `runs` runs of which `panics` ended with main's
/// panic: (function, calls).
fn by_hand(runs: u64, panics: u64) -> [(&'static str, u64); 8] {
    [
        ("rustprog::largest::<u32>", runs),
        ("rustprog::largest::<f64>", runs),
        ("rustprog::fib", 5 * 177 * runs),
        ("rustprog::area", 12 * runs),
        ("rustprog::parse", 4 * runs),
        ("rustprog::risky", 8 * runs),
        ("rust_prog::main::{closure#0}", 2 * runs + panics),
        ("rust_prog::main", runs),
    ]
}

#[test]
fn every_mode_prints_what_the_plain_build_prints_and_counts_by_hand() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    for (mode, _) in MODES {
        let profile = work.path().join(format!("{mode}.pprof"));
        for arg in ["", "exit", "panic"] {
            let plain = run(&p.exe("plain"), arg, None);
            let profiled = run(&p.exe(&format!("t-{mode}")), arg, Some(&profile));
            assert_eq!(profiled.stdout, plain.stdout, "{mode} {arg}: stdout");
            assert_eq!(profiled.status.code(), plain.status.code(), "{mode} {arg}");
        }
        assert_eq!(
            run(&p.exe("plain"), "exit", None).status.code(),
            Some(3),
            "the plain program's own status"
        );
        let report = json_report(&p.exe(&format!("t-{mode}")), &profile);
        assert_eq!(report["processes"], 3, "{mode}");
        assert_eq!(report["threads"], 12, "{mode}: 4 threads a run");
        assert_eq!(report["exact"], true, "{mode}");
        for (name, expected) in by_hand(3, 1) {
            assert_eq!(calls(&report, name), expected, "{mode}: {name}");
        }
        // The library's function is the source's: its one line counted
        // as often as it is called.
        let lib = p.root.join("src/lib.rs");
        let line = line_of(&lib, "pub fn fib");
        let lines = pathprof_ok([
            "lines".as_ref(),
            "--map".as_ref(),
            p.exe(&format!("t-{mode}")).as_os_str(),
            profile.as_os_str(),
            lib.as_os_str(),
        ]);
        let fib = lines
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(&line.to_string()))
            .unwrap_or_else(|| panic!("{mode}: no line {line} in\n{lines}"));
        assert_eq!(fib.split_whitespace().next(), Some("2655"), "{mode}: {fib}");
    }
    for other in ["edge", "block"] {
        let out = pathprof_ok([
            "verify".as_ref(),
            "--map".as_ref(),
            p.exe("t-path").as_os_str(),
            work.path().join("path.pprof").as_os_str(),
            "--edge-map".as_ref(),
            p.exe(&format!("t-{other}")).as_os_str(),
            work.path().join(format!("{other}.pprof")).as_os_str(),
        ]);
        assert!(out.starts_with("verified:"), "path against {other}: {out}");
    }
}

#[test]
fn a_profile_builds_an_optimised_program_that_prints_as_plain() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    let profile = work.path().join("train.pprof");
    run(&p.exe("t-path"), "", Some(&profile));
    let use_flag = format!("--profile-use={}", profile.display());
    let args = ["build", "--release", "--target-dir", "t-pgo"];
    cargo(&p.root, Some(&[use_flag.as_str()]), &args);
    let exe = p.exe("t-pgo");
    for arg in ["", "exit", "panic"] {
        let plain = run(&p.exe("plain"), arg, None);
        let optimised = run(&exe, arg, Some(&work.path().join("none.pprof")));
        assert_eq!(optimised.stdout, plain.stdout, "{arg}: stdout");
        assert_eq!(optimised.status.code(), plain.status.code(), "{arg}");
    }
    assert!(
        !work.path().join("none.pprof").exists(),
        "the optimised build counts nothing"
    );
    let nm = Command::new("nm").arg(&exe).output().unwrap();
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(
        !symbols.contains("__pathprof"),
        "pathprof's runtime is linked in"
    );
    // What the program's module took from the profile.
    let note = crate::third_party::profile_use_note(&exe);
    assert!(note.matched >= 5 && note.changed.is_empty(), "{note:?}");
}

#[test]
fn profiles_are_written_on_abort_and_on_sigusr1() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    for (arg, signal) in [("abort", libc_signal::ABRT), ("usr1", libc_signal::KILL)] {
        let profile = work.path().join(format!("{arg}.pprof"));
        let out = run(&p.exe("t-path"), arg, Some(&profile));
        assert_eq!(signal_of(out.status), Some(signal), "{arg}");
        let report = json_report(&p.exe("t-path"), &profile);
        assert_eq!(calls(&report, "rustprog::fib"), 5 * 177, "{arg}");
        assert_eq!(calls(&report, "rustprog::risky"), 8, "{arg}");
    }
}

#[test]
fn a_process_killed_after_sigusr1_is_not_taken_for_a_fork_child() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    let profile = work.path().join("p.pprof");
    // One run that ends, one written on SIGUSR1 and killed: main's paths
    // (counted at the write, --early-exit) outnumber the finished processes.
    run(&p.exe("t-path"), "", Some(&profile));
    run(&p.exe("t-path"), "usr1", Some(&profile));
    let out = Command::new(PATHPROF)
        .args(["report", "--format", "json", "--map"])
        .arg(p.exe("t-path"))
        .arg(&profile)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("fork child"), "{stderr}");
    assert!(
        stderr.contains("1 more time(s) than processes finished"),
        "{stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exact"], true);
    assert_eq!(calls(&report, "rustprog::fib"), 2 * 5 * 177);
}

/// Signal numbers (Linux).
mod libc_signal {
    pub const ABRT: i32 = 6;
    pub const KILL: i32 = 9;
}

#[test]
fn names_are_demangled_with_their_generic_arguments_and_std_is_counted_on_request() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    for (target, std_too) in [("t-path", false), ("t-std", true)] {
        let profile = work.path().join(format!("{target}.pprof"));
        run(&p.exe(target), "", Some(&profile));
        let report = pathprof_ok([
            "report".as_ref(),
            "--map".as_ref(),
            p.exe(target).as_os_str(),
            profile.as_os_str(),
        ]);
        for name in [
            "rustprog::fib",
            "rustprog::largest::<u32>",
            "rustprog::largest::<f64>",
        ] {
            assert!(
                report.contains(&format!("  {name}  ")),
                "{target}: {name}\n{report}"
            );
        }
        assert!(
            !report.contains("_RNv"),
            "{target}: a name left mangled:\n{report}"
        );
        // Generic std code instantiated for the program's own types.
        let std_instance = "<alloc::vec::Vec<rustprog::Shape>>::";
        assert_eq!(
            report.contains(std_instance),
            std_too,
            "{target}:\n{report}"
        );
        let std_files = report.contains("(/rustc/");
        assert_eq!(std_files, std_too, "{target}: std's functions\n{report}");
    }
}

#[test]
fn build_time_code_is_not_instrumented_and_maps_lie_beside_binaries() {
    let p = project();
    for (mode, _) in MODES {
        let target = p.root.join(format!("t-{mode}/release"));
        let map = target.join("rust-prog.ppmap");
        let names: Vec<String> = pathprof_io::map::read_fragments(&map)
            .unwrap()
            .iter()
            .flat_map(|m| &m.functions)
            .map(|f| f.shown_name().to_string())
            .collect();
        assert!(
            names.iter().any(|n| n == "rustprog::fib"),
            "{mode}: {}",
            map.display()
        );
        for host in ["derive_describe", "build_script"] {
            assert!(
                !names.iter().any(|n| n.contains(host)),
                "{mode}: {host} instrumented"
            );
        }
    }
    // Build scripts and proc-macros run where cargo runs them: an
    // instrumented one would have written its counts there.
    let written: Vec<_> = walk(&p.root)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "pprof"))
        .collect();
    assert!(written.is_empty(), "written during the builds: {written:?}");
}

#[test]
fn cargo_install_puts_the_map_beside_the_installed_binary() {
    let p = project();
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().display().to_string();
    let args = [
        "install",
        "--path",
        ".",
        "--root",
        &root_arg,
        "--target-dir",
        "t-path",
    ];
    cargo(&p.root, Some(MODES[0].1), &args);
    let installed = root.path().join("bin/rust-prog");
    let map = root.path().join("bin/rust-prog.ppmap");
    let profile = root.path().join("p.pprof");
    run(&installed, "", Some(&profile));
    let report = json_report(&map, &profile);
    assert_eq!(calls(&report, "rustprog::fib"), 5 * 177);
}

#[test]
fn cargo_test_profiles_the_tests_and_the_doctests() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    let profile = work.path().join("tests.pprof");
    let mut cmd = cargo_command(Some(&["--mode=path"]));
    cmd.args(["test", "--release", "--target-dir"])
        .arg(work.path().join("t"))
        .env("PATHPROF_FILE", &profile);
    let out = ok_in(&p.root, &mut cmd, &[]);
    assert!(out.contains("test tests::fib_of_ten ... ok"), "{out}");
    assert!(out.contains("src/lib.rs - area"), "{out}");
    let info = pathprof_ok(["info".as_ref(), profile.as_os_str()]);
    assert!(
        info.contains(": 3 builds"),
        "the library's tests, the binary's, the doctest:\n{info}"
    );
    assert!(info.contains("rust_out"), "the doctest:\n{info}");
}

#[test]
fn a_fat_lto_build_counts_std_too_with_the_runtime_std_kept_apart() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("fat");
    let target_arg = target.display().to_string();
    cargo(
        &p.root,
        Some(&["--mode=edge", "--count-std"]),
        &["build", "--profile", "fat", "--target-dir", &target_arg],
    );
    let exe = target.join("fat/rust-prog");
    let profile = work.path().join("fat.pprof");
    let out = run(&exe, "", Some(&profile));
    assert_eq!(out.stdout, run(&p.exe("plain"), "", None).stdout);
    let report = json_report(&exe, &profile);
    assert_eq!(calls(&report, "rustprog::fib"), 5 * 177);
    let std_counted = report["functions"].as_array().unwrap().iter().any(|f| {
        f["file"]
            .as_str()
            .is_some_and(|file| file.contains("/library/std/"))
            && f["entry_count"].as_u64() > Some(0)
    });
    assert!(std_counted, "no function of std's own sources counted");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn std_sources_are_listed_from_the_rust_src_component() {
    let p = project();
    let work = tempfile::tempdir().unwrap();
    let profile = work.path().join("p.pprof");
    run(&p.exe("t-std"), "", Some(&profile));
    let report = json_report(&p.exe("t-std"), &profile);
    // A std source rustc recorded as /rustc/<commit>/library/..., with counts.
    let recorded = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["entry_count"].as_u64() > Some(0))
        .filter_map(|f| f["file"].as_str())
        .find(|f| f.starts_with("/rustc/") && f.contains("/library/alloc/"))
        .expect("a std function counted")
        .to_string();
    let inside = recorded.split_once("/library/").unwrap().1;
    let library = work.path().join("rust-src/library");
    let lines = |library: &Path| {
        let out = Command::new(PATHPROF)
            .args(["lines", "--map"])
            .arg(p.exe("t-std"))
            .arg(&profile)
            .arg(&recorded)
            .env("RUST_SRC_PATH", library)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (text(&out.stdout), text(&out.stderr))
    };
    let (_, missing) = lines(&library);
    assert!(
        missing.contains("rustup component add rust-src"),
        "{missing}"
    );
    let file = library.join(inside);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let text: String = (1..=5000).map(|n| format!("std line {n}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let (listing, warnings) = lines(&library);
    assert!(!warnings.contains("not found"), "{warnings}");
    assert!(
        listing.contains(&format!("==> {recorded} <==")),
        "{listing}"
    );
    assert!(listing.contains("  std line 1\n"), "{listing}");
}
