//! Partitioned path profiling end to end (Afraz et al. 2015; `pathprof cc
//! --mode=p3`, `pathprof p3 run`, `pathprof p3 stats`), on real programs
//! run for real: programs of `tests/programs/` built as K = 2, 4 and 8
//! copies, run in parallel on one input, their profiles merged; the merged
//! profile must be, function for function and path for path, the profile
//! of the same program built in path mode (`--whole-program`, the route P3
//! takes) and run on the same input, and verify against an edge profile.
//! A program that is not deterministic is refused with the copy named; a
//! launcher runs the copies in directories and environments of their own;
//! and bzip2 (third party) goes through it all at K = 2 and 4.

use crate::support::build::{cc, map_of, programs_dir};
use crate::support::command::{describe, failure, pathprof, pathprof_env, PATHPROF};
use crate::support::report::json_report;
use crate::support::run::{profiled, with_input};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A program of `tests/programs/` as P3's tests run it.
struct Case {
    name: &'static str,
    sources: &'static [&'static str],
    /// pathprof's and clang's flags for every build of it.
    flags: &'static [&'static str],
    /// Its standard input.
    input: &'static [u8],
}

/// `p3_input.c`'s input: every class of character it tells apart.
const TEXT: &[u8] =
    b"Partitioned path profiling, 2015!\nK copies; one input.\n\tTabs, 42 digits?\n#\n";

const fn case(name: &'static str, sources: &'static [&'static str]) -> Case {
    Case {
        name,
        sources,
        flags: &[],
        input: b"",
    }
}

/// Loops, a shared `switch`, recursion, function pointers across files,
/// 2^20 paths, computed goto, `exit()` and C++ exceptions counted with
/// `--early-exit`, `fork`, and standard input.
const CASES: &[Case] = &[
    case("loops", &["loops.c"]),
    case("switch", &["switch.c"]),
    case("recursion", &["recursion.c"]),
    case("fnptr", &["fnptr.c", "fnptr_ops.c"]),
    case("manypaths", &["manypaths.c"]),
    case("interp", &["interp.c"]),
    Case {
        flags: &["--early-exit"],
        ..case("exit", &["exit.c"])
    },
    Case {
        flags: &["--early-exit", "-lstdc++"],
        ..case("invoke", &["invoke.cpp"])
    },
    case("fork", &["fork.c"]),
    Case {
        input: TEXT,
        ..case("p3_input", &["p3_input.c"])
    },
];

const P3_INPUT: Case = Case {
    input: TEXT,
    ..case("p3_input", &["p3_input.c"])
};

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pathprof-p3-")
        .tempdir()
        .unwrap()
}

/// `pathprof cc --mode=<mode> EXTRA -O2 -g SOURCES FLAGS -o DIR/NAME`, which
/// must succeed; the program.
fn build(dir: &Path, c: &Case, mode: &str, extra: &[&str], name: &str) -> PathBuf {
    let sources: Vec<String> = c
        .sources
        .iter()
        .map(|s| programs_dir().join(s).display().to_string())
        .collect();
    let mut args: Vec<&str> = extra.to_vec();
    args.extend(["-O2", "-g"]);
    args.extend(sources.iter().map(String::as_str));
    args.extend(c.flags);
    let exe = dir.join(name);
    cc(dir, mode, &args, &exe);
    exe
}

/// Runs `exe` on `c`'s input as `./NAME` in its directory (as `p3 run --
/// ./NAME` runs the copies), its counts going to `profile`.
fn run_on(c: &Case, exe: &Path, profile: &Path) -> Output {
    let _ = std::fs::remove_file(profile);
    let name = Path::new(".").join(exe.file_name().unwrap());
    with_input(
        profiled(&name, profile).current_dir(exe.parent().unwrap()),
        c.input,
    )
}

/// `dir/sub`, made.
fn subdir(dir: &Path, sub: &str) -> PathBuf {
    let d = dir.join(sub);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `pathprof p3 run ARGS -- ./NAME` in `dir` on `input`.
fn p3_run(dir: &Path, args: &[&str], name: &str, input: &[u8]) -> Output {
    let mut cmd = Command::new(PATHPROF);
    cmd.current_dir(dir)
        .args(["p3", "run"])
        .args(args)
        .arg("--")
        .arg(format!("./{name}"));
    with_input(&mut cmd, input)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// That two JSON reports are equal, naming the first function that is not.
fn assert_same_report(what: &str, got: &Value, want: &Value) {
    if got == want {
        return;
    }
    let functions = |r: &Value| r["functions"].as_array().cloned().unwrap_or_default();
    let (g, w) = (functions(got), functions(want));
    let differs = g
        .iter()
        .zip(&w)
        .find(|(a, b)| a != b)
        .map(|(a, b)| format!("function {}:\n got  {a}\n want {b}", b["name"]));
    let mut top = got.clone();
    let mut top_want = want.clone();
    top["functions"] = Value::Null;
    top_want["functions"] = Value::Null;
    panic!(
        "{what}: the merged profile is not path mode's\n{}\n got  {top}\n want {top_want}",
        differs.unwrap_or_else(|| format!("{} functions against {}", g.len(), w.len()))
    );
}

/// The partial profiles `p3 run -o merged.pprof` left in `dir`.
fn partials_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("merged.p3."))
        .collect();
    names.sort();
    names
}

/// The sequential reference of `c` in `dir`: the path-mode build's JSON
/// report, its output and status on the input, and the edge-mode build's
/// map and profile (both builds take the whole-program route, as P3 does).
struct Reference {
    report: Value,
    out: Output,
    edge_map: PathBuf,
    edge_profile: PathBuf,
}

fn reference(dir: &Path, c: &Case) -> Reference {
    // Built in `dir/MODE/NAME` and run: the program, its profile, its run.
    let built_and_run = |mode: &str| {
        let exe = build(&subdir(dir, mode), c, mode, &["--whole-program"], c.name);
        let profile = dir.join(format!("{mode}.pprof"));
        let out = run_on(c, &exe, &profile);
        (exe, profile, out)
    };
    let (path, profile, out) = built_and_run("path");
    let (edge, edge_profile, edge_out) = built_and_run("edge");
    assert_eq!(edge_out.status.code(), out.status.code(), "{}", c.name);
    Reference {
        report: json_report(&map_of(&path), &profile),
        out,
        edge_map: map_of(&edge),
        edge_profile,
    }
}

/// Builds `c` as `k` copies in `dir/k<k>` (with `extra` flags), runs them
/// with `p3 run` and checks the merged profile against `r`; also that the P3
/// build's own program is path mode's build. Returns the directory.
fn check_copies(dir: &Path, c: &Case, k: usize, r: &Reference, extra: &[&str]) -> PathBuf {
    let what = format!("{} with {k} copies {extra:?}", c.name);
    let kdir = subdir(dir, &format!("k{k}"));
    let copies = format!("--copies={k}");
    let mut flags = vec![copies.as_str()];
    flags.extend(extra);
    let exe = build(&kdir, c, "p3", &flags, c.name);
    let map = map_of(&exe);
    for i in 0..k {
        assert!(
            kdir.join(format!("{}.p3.{i}", c.name)).exists(),
            "{what}: no copy {i}"
        );
    }
    let out = p3_run(
        &kdir,
        &["-k", &k.to_string(), "-o", "merged.pprof"],
        c.name,
        c.input,
    );
    assert_eq!(
        out.status.code(),
        r.out.status.code(),
        "{what}: p3 run's status is the program's\n{}",
        stderr(&out)
    );
    assert!(
        out.stdout == r.out.stdout,
        "{what}: p3 run prints copy 0's output\n--- got\n{}\n--- want\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&r.out.stdout),
        stderr(&out)
    );
    assert_eq!(
        partials_in(&kdir),
        Vec::<String>::new(),
        "{what}: partial profiles removed"
    );
    let merged = kdir.join("merged.pprof");
    assert_same_report(&what, &json_report(&map, &merged), &r.report);
    let verify = Command::new(PATHPROF)
        .arg("verify")
        .arg("--map")
        .arg(&map)
        .arg(&merged)
        .arg("--edge-map")
        .arg(&r.edge_map)
        .arg(&r.edge_profile)
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        failure(&format!("{what}: verify"), &verify)
    );
    // `-o`'s own file is path mode's build of the same module.
    let own = kdir.join("own.pprof");
    run_on(c, &exe, &own);
    assert_same_report(
        &format!("{what}, its own build"),
        &json_report(&map, &own),
        &r.report,
    );
    kdir
}

#[test]
fn corpus_copies_merge_into_the_path_mode_profile() {
    for c in CASES {
        let dir = tempdir();
        let r = reference(dir.path(), c);
        for k in [2, 4, 8] {
            check_copies(dir.path(), c, k, &r, &[]);
        }
    }
}

/// `--p3-train`: a training run's paths (`pathprof interesting` of the
/// path-mode build's profile) plan the copies by what their probes would
/// execute; the merge stays exactly path mode's profile, and `p3 stats`
/// says the plan was trained. Functions the list names but the program
/// lacks are warned about, never fatal.
#[test]
fn a_training_run_plans_the_copies_and_the_merge_stays_exact() {
    let dir = tempdir();
    let d = dir.path();
    let c = &case("interp", &["interp.c"]);
    let r = reference(d, c);
    let list = d.join("train.paths");
    let out = pathprof(
        d,
        &[
            "interesting",
            "--map",
            &map_of(&d.join("path").join(c.name)).display().to_string(),
            "path.pprof",
            "-o",
            "train.paths",
        ],
    );
    assert!(out.status.success(), "{}", failure("interesting", &out));
    // One entry renamed to a function the program does not have.
    let text = std::fs::read_to_string(&list).unwrap();
    let renamed = text.replacen("\"function\": \"", "\"function\": \"no_such_", 1);
    assert_ne!(text, renamed);
    std::fs::write(&list, renamed).unwrap();
    let train = format!("--p3-train={}", list.display());
    for k in [2, 4] {
        let kdir = check_copies(d, c, k, &r, &[&train]);
        let out = pathprof(
            &kdir,
            &[
                "p3",
                "stats",
                "-k",
                &k.to_string(),
                "--map",
                &format!("{}.ppmap", c.name),
                "merged.pprof",
                "--format",
                "json",
            ],
        );
        assert!(out.status.success(), "{}", failure("p3 stats", &out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["trained_functions"].as_u64() > Some(0), "{v}");
        let placed = v["sbl_trained_placement"].as_u64().unwrap();
        let row = &v["rows"][0];
        let (sbl, p3) = (row["sbl"].as_u64().unwrap(), row["p3"].as_u64().unwrap());
        // The slowest copy runs fewer probes than one copy planned alike.
        assert!(p3 < placed && placed <= sbl, "{v}");
    }
    // The build said which listed function it did not find.
    let out = Command::new(PATHPROF)
        .current_dir(d)
        .arg("cc")
        .args(["--mode=p3", "--copies=2", &train, "-O2"])
        .arg(programs_dir().join("interp.c"))
        .args(["-o", "again"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", failure("cc", &out));
    assert!(
        stderr(&out)
            .contains("train.paths: 1 function of source files this program compiles is not in it")
            && stderr(&out).contains("ignored: no_such_"),
        "{}",
        stderr(&out)
    );
}

/// `p3_aslr.c` prints addresses, which differ from run to run with address
/// randomisation on (as it is on Linux unless turned off): refused, naming
/// the copy and where its output differs; nothing is written.
#[test]
fn a_nondeterministic_program_is_refused_naming_the_copy() {
    assert_ne!(
        std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
            .unwrap_or_default()
            .trim(),
        "0",
        "this test needs address-space randomisation on"
    );
    let dir = tempdir();
    let d = dir.path();
    build(
        d,
        &case("aslr", &["p3_aslr.c"]),
        "p3",
        &["--copies=4"],
        "aslr",
    );
    let out = p3_run(d, &["-o", "merged.pprof"], "aslr", b"");
    let err = stderr(&out);
    assert!(!out.status.success(), "refused:\n{err}");
    for needle in [
        "copy 1's standard output differs from copy 0's at byte",
        "(line 1)",
        "setarch -R",
        "nothing was written to merged.pprof",
    ] {
        assert!(err.contains(needle), "{needle:?} in:\n{err}");
    }
    assert_eq!(err.lines().count(), 1, "one line:\n{err}");
    assert!(!d.join("merged.pprof").exists(), "nothing written");
    assert_eq!(partials_in(d).len(), 4, "partial profiles kept: {err}");
}

/// Every copy writes its standard output and error to regular files,
/// whatever `p3 run`'s own are (pipes, here), and reads its standard input
/// from the file (or device) `p3 run`'s is, so a program that asks what they are
/// (`p3_outputs.c`: the rounds it makes and the branches it takes depend on
/// it) runs alike in every copy: the merged profile is the profile of the
/// program run with `< file > file 2> file` (or `< /dev/null`), and copy
/// 0's output and error are shown on `p3 run`'s.
#[test]
fn every_copy_reads_and_writes_files_so_programs_that_ask_run_alike() {
    let dir = tempdir();
    let d = dir.path();
    let c = &case("p3_outputs", &["p3_outputs.c"]);
    let exe = build(&subdir(d, "path"), c, "path", &["--whole-program"], c.name);
    let map = map_of(&exe);
    let kdir = subdir(d, "k2");
    build(&kdir, c, "p3", &["--copies=2"], c.name);
    let input = d.join("input.txt");
    std::fs::write(&input, TEXT).unwrap();
    let open = |path: &Path| std::fs::File::open(path).unwrap();
    let (out_file, err_file) = (d.join("out.txt"), d.join("err.txt"));
    for from in [input.as_path(), Path::new("/dev/null")] {
        let what = format!("input from {}", from.display());
        let in_files = d.join("files.pprof");
        let _ = std::fs::remove_file(&in_files);
        let status = profiled(&exe, &in_files)
            .stdin(open(from))
            .stdout(std::fs::File::create(&out_file).unwrap())
            .stderr(std::fs::File::create(&err_file).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "{what}");
        let want = json_report(&map, &in_files);
        // Run with pipes, it counts otherwise: what a copy with pipes would.
        let piped = d.join("piped.pprof");
        let bytes = std::fs::read(from).unwrap();
        let out = run_on(c, &exe, &piped);
        if bytes.is_empty() {
            assert_eq!(out.stdout, std::fs::read(&out_file).unwrap(), "{what}");
        }
        assert_ne!(
            json_report(&map, &piped)["functions"],
            want["functions"],
            "{what}"
        );

        let _ = std::fs::remove_file(kdir.join("merged.pprof"));
        let out = Command::new(PATHPROF)
            .current_dir(&kdir)
            .args(["p3", "run", "-k", "2", "-o", "merged.pprof", "--"])
            .arg(format!("./{}", c.name))
            .stdin(open(from))
            .output()
            .unwrap();
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        assert_eq!(out.stdout, std::fs::read(&out_file).unwrap(), "{what}");
        assert_eq!(stderr(&out), std::fs::read_to_string(&err_file).unwrap());
        assert_same_report(
            &what,
            &json_report(&map_of(&kdir.join(c.name)), &kdir.join("merged.pprof")),
            &want,
        );
    }
}

/// The launcher script: runs copy COPY (its first argument) in a directory
/// of its own under LAUNCH_ROOT, with an environment of its own, and notes
/// that it did there.
const LAUNCHER: &str = r#"#!/bin/sh
copy=$1
shift
mkdir -p "$LAUNCH_ROOT/copy$copy" && cd "$LAUNCH_ROOT/copy$copy" || exit 99
export P3_LAUNCHED_COPY="$copy"
pwd > launched
exec "$@"
"#;

/// A launcher runs each copy in another directory and environment; the
/// copies write their partial profiles into the shared working directory.
/// When the environment it gives makes the copies count differently (more
/// rounds over the input) with the same output, the merge refuses them.
#[test]
fn a_launcher_runs_copies_elsewhere_and_divergent_counts_are_refused() {
    let dir = tempdir();
    let d = dir.path();
    let c = &P3_INPUT;
    let r = reference(d, c);
    build(d, c, "p3", &["--copies=3"], "p3_input");
    let script = d.join("launch.sh");
    std::fs::write(&script, LAUNCHER).unwrap();
    let mut chmod = Command::new("chmod");
    chmod.arg("+x").arg(&script);
    assert!(chmod.status().unwrap().success(), "{}", describe(&chmod));
    let root = d.join("elsewhere");
    let launcher = format!("{} {{i}} {{}}", script.display());
    let run = |launcher: &str| {
        let mut cmd = Command::new(PATHPROF);
        cmd.current_dir(d)
            .env("LAUNCH_ROOT", &root)
            .args([
                "p3",
                "run",
                "-k",
                "3",
                "-o",
                "merged.pprof",
                "--launcher",
                launcher,
            ])
            .args(["--", "./p3_input"]);
        with_input(&mut cmd, c.input)
    };
    let out = run(&launcher);
    assert!(
        out.status.code() == r.out.status.code() && out.stdout == r.out.stdout,
        "{}",
        failure("p3 run --launcher", &out)
    );
    for i in 0..3 {
        let note = root.join(format!("copy{i}")).join("launched");
        let at = std::fs::read_to_string(&note).unwrap_or_else(|_| panic!("copy {i} not launched"));
        assert!(at.trim().ends_with(&format!("copy{i}")), "{at}");
    }
    assert_same_report(
        "with a launcher",
        &json_report(&map_of(&d.join("p3_input")), &d.join("merged.pprof")),
        &r.report,
    );

    // Copy i makes 10 + i rounds: the same output, other counts.
    std::fs::remove_file(d.join("merged.pprof")).unwrap();
    let out = run(&format!(
        "{} {{i}} env P3_ROUNDS=1{{i}} {{}}",
        script.display()
    ));
    let err = stderr(&out);
    assert!(!out.status.success(), "refused:\n{err}");
    assert!(out.stdout == r.out.stdout, "copy 0's output is still shown");
    assert!(
        err.contains("ran differently")
            && err.contains(" copy ")
            && err.contains("nothing was written"),
        "{err}"
    );
    assert!(!d.join("merged.pprof").exists());
}

/// `p3 stats`: SBL, PBL and P3 hit counts per K, in text and JSON, alike
/// from the sequential profile and from the merged one (the same input).
#[test]
fn stats_show_hit_counts_and_profitable_procedures() {
    let dir = tempdir();
    let d = dir.path();
    let c = &P3_INPUT;
    let exe = build(d, c, "p3", &["--copies=2"], "p3_input");
    let own = d.join("own.pprof");
    run_on(c, &exe, &own);
    let out = p3_run(d, &["-o", "merged.pprof"], "p3_input", c.input);
    assert!(out.status.code().is_some(), "{}", failure("p3 run", &out));
    let stats = |profile: &str, format: &str| {
        let out = pathprof(
            d,
            &[
                "p3",
                "stats",
                "-k",
                "2,4,8",
                "--map",
                "p3_input.ppmap",
                profile,
                "--format",
                format,
            ],
        );
        assert!(out.status.success(), "{}", failure("p3 stats", &out));
        String::from_utf8(out.stdout).unwrap()
    };
    let json = stats("own.pprof", "json");
    assert_eq!(
        json,
        stats("merged.pprof", "json"),
        "the same input, the same hits"
    );
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], "pathprof-p3-stats");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let sbl = rows[0]["sbl"].as_u64().unwrap();
    assert!(sbl > 0, "{json}");
    for (row, k) in rows.iter().zip([2u64, 4, 8]) {
        assert_eq!(row["copies"].as_u64(), Some(k));
        assert_eq!(row["sbl"].as_u64(), Some(sbl));
        let per_copy = |key: &str| -> Vec<u64> {
            row[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_u64().unwrap())
                .collect()
        };
        let (pbl, p3) = (per_copy("pbl_per_copy"), per_copy("p3_per_copy"));
        assert_eq!((pbl.len(), p3.len()), (k as usize, k as usize));
        // Whole functions distributed: SBL's hits, spread.
        assert_eq!(pbl.iter().sum::<u64>(), sbl, "{json}");
        assert_eq!(row["p3"].as_u64(), p3.iter().max().copied());
    }
    // classify has one call site and a chain of tests: partitioned.
    let profitable = v["profitable"].as_array().unwrap();
    let classify = profitable
        .iter()
        .find(|p| p["name"] == "classify")
        .unwrap_or_else(|| panic!("classify is profitable: {json}"));
    assert_eq!(classify["call_sites"], 1);
    assert!(classify["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.as_u64() > Some(1)));
    let text = stats("own.pprof", "text");
    for needle in [
        "copies",
        "SBL",
        "PBL",
        "P3",
        "Profitable procedures",
        "classify",
    ] {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }
}

/// What `--mode=p3` and `p3 run` refuse, each with a message that says what
/// to do; and the build-system way (compiles one by one, the flags in the
/// environment) builds the same copies.
#[test]
fn misuse_is_refused_and_build_systems_get_the_copies() {
    let dir = tempdir();
    let d = dir.path();
    let src = programs_dir().join("fnptr.c").display().to_string();
    let ops = programs_dir().join("fnptr_ops.c").display().to_string();
    let refused = |vars: &[(&str, &str)], args: &[&str], needle: &str| {
        let out = pathprof_env(d, vars, args);
        assert!(!out.status.success(), "{args:?} refused");
        let err = stderr(&out);
        assert!(err.contains(needle), "{args:?}: {needle:?} in:\n{err}");
    };
    refused(
        &[],
        &["cc", "--mode=p3", "-O2", &src, &ops, "-o", "x"],
        "--mode=p3 needs --copies=K",
    );
    refused(
        &[],
        &["cc", "--mode=p3", "--copies=0", &src],
        "from 1 to 256",
    );
    refused(
        &[("PATHPROF_COPIES", "x")],
        &["cc", "--mode=p3", &src],
        "PATHPROF_COPIES",
    );
    refused(
        &[],
        &[
            "cc",
            "--mode=p3",
            "--copies=2",
            "-shared",
            &ops,
            "-o",
            "lib.so",
        ],
        "builds programs",
    );
    refused(
        &[],
        &["instrument", "in.bc", "-o", "out.bc", "--mode=p3"],
        "pathprof cc --mode=p3",
    );

    // Objects compiled one by one, the mode and K from the environment.
    let env = [("PATHPROF_MODE", "p3"), ("PATHPROF_COPIES", "2")];
    for (source, object) in [(&src, "fnptr.o"), (&ops, "fnptr_ops.o")] {
        let out = pathprof_env(d, &env, &["cc", "-O2", "-g", "-c", source, "-o", object]);
        assert!(out.status.success(), "{}", failure("cc -c", &out));
    }
    let out = pathprof_env(
        d,
        &env,
        &["cc", "-O2", "fnptr.o", "fnptr_ops.o", "-o", "fnptr"],
    );
    assert!(out.status.success(), "{}", failure("cc (link)", &out));
    for f in ["fnptr", "fnptr.ppmap", "fnptr.p3.0", "fnptr.p3.1"] {
        assert!(d.join(f).exists(), "{f}");
    }
    assert!(!d.join("fnptr.p3.2").exists());
    let out = p3_run(d, &["-k", "4", "-o", "merged.pprof"], "fnptr", b"");
    assert!(
        stderr(&out).contains("built with --copies=2: run it with -k 2"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(d.join("fnptr.p3.1")).unwrap();
    let out = p3_run(d, &["-o", "merged.pprof"], "fnptr", b"");
    assert!(stderr(&out).contains("copy 1 of"), "{}", stderr(&out));
    let out = pathprof(
        d,
        &[
            "p3",
            "run",
            "-o",
            "m.pprof",
            "--launcher",
            "sh -c",
            "--",
            "./fnptr",
        ],
    );
    assert!(stderr(&out).contains("has no `{}`"), "{}", stderr(&out));
    assert!(!d.join("merged.pprof").exists() && !d.join("m.pprof").exists());
    // A map of a plain path build records no P3 build.
    cc(d, "path", &["-O2", &src, &ops], &d.join("plain"));
    let out = p3_run(d, &["-o", "merged.pprof"], "plain", b"");
    assert!(
        stderr(&out).contains("records no P3 build"),
        "{}",
        stderr(&out)
    );
}

/// bzip2 1.0.8 (third party) compressing a text as 2 and 4 copies: the
/// compressed output is the path build's, and the merged profile is its
/// profile, path for path, and verifies against an edge profile.
#[test]
#[cfg_attr(
    not(feature = "third-party"),
    ignore = "third-party tier: cargo test --features third-party"
)]
fn third_party_bzip2_copies_merge_into_the_path_mode_profile() {
    let bz = crate::third_party::bzip2();
    let (args, input) = &bz.runs[0];
    let dir = tempdir();
    let d = dir.path();
    let build_bzip2 = |sub: &str, mode: &str, extra: &[&str]| {
        let dir = subdir(d, sub);
        let mut cc_args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        cc_args.push("-O2".into());
        cc_args.extend(bz.cflags.iter().cloned());
        cc_args.extend(bz.sources.iter().map(|s| s.display().to_string()));
        let cc_args: Vec<&str> = cc_args.iter().map(String::as_str).collect();
        let exe = dir.join("bzip2");
        cc(&dir, mode, &cc_args, &exe);
        exe
    };
    // Run as `./bzip2` from its directory, as `p3 run -- ./bzip2` runs the
    // copies: bzip2 reads its name.
    let run_ref = |exe: &Path, profile: &Path| {
        let mut cmd = profiled(Path::new("./bzip2"), profile);
        cmd.current_dir(exe.parent().unwrap()).args(args);
        let out = with_input(&mut cmd, input);
        assert!(out.status.success(), "{}", failure("bzip2", &out));
        out.stdout
    };
    let path = build_bzip2("path", "path", &["--whole-program"]);
    let compressed = run_ref(&path, &d.join("path.pprof"));
    assert!(compressed.starts_with(b"BZh9"));
    let report = json_report(&map_of(&path), &d.join("path.pprof"));
    let edge = build_bzip2("edge", "edge", &["--whole-program"]);
    assert!(run_ref(&edge, &d.join("edge.pprof")) == compressed);
    for k in [2, 4] {
        let copies = format!("--copies={k}");
        let exe = build_bzip2(&format!("k{k}"), "p3", &[&copies]);
        let kdir = exe.parent().unwrap();
        let mut cmd = Command::new(PATHPROF);
        cmd.current_dir(kdir)
            .args(["p3", "run", "-o", "merged.pprof", "--", "./bzip2"])
            .args(args);
        let out = with_input(&mut cmd, input);
        assert!(out.status.success(), "{}", failure("p3 run bzip2", &out));
        assert!(out.stdout == compressed, "{k} copies compress alike");
        let merged = kdir.join("merged.pprof");
        assert_same_report(
            &format!("bzip2, {k} copies"),
            &json_report(&map_of(&exe), &merged),
            &report,
        );
        let verify = Command::new(PATHPROF)
            .arg("verify")
            .arg("--map")
            .arg(map_of(&exe))
            .arg(&merged)
            .arg("--edge-map")
            .arg(map_of(&edge))
            .arg(d.join("edge.pprof"))
            .output()
            .unwrap();
        assert!(
            verify.status.success(),
            "{}",
            failure("verify bzip2", &verify)
        );
    }
}
