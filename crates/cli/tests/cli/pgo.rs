//! Profile use (`pathprof cc --profile-use`, `pathprof index`): every
//! branch's weights in the optimised build's IR against counts derived by
//! hand, the same from every mode's profile; optimised programs that print
//! what plain ones print and carry no probes; functions changed since the
//! profile named and left without counts; another program's profile
//! refused; damaged profiles and indexes refused with their reason;
//! path-guided duplication's copies and their weights, derived by hand.

use crate::support::build::{data, CLANG};
use crate::support::command::{ok, pathprof};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// What a `pathprof` that must have succeeded printed on standard error.
fn stderr_of_ok(out: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    ok(out);
    stderr
}

/// A directory holding `tests/programs/pgo.c`.
fn program() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(data("programs/pgo.c"), dir.path().join("pgo.c")).unwrap();
    dir
}

/// Builds `pgo.c` with `mode` (`--mode=MODE` and any more flags, split at
/// spaces) at `opt` as `exe` and runs it with `arg`, writing `exe.pprof`;
/// returns what it printed.
fn train(dir: &Path, mode: &str, opt: &str, exe: &str, arg: &str) -> String {
    let mut args = vec!["cc".to_string()];
    let (mode, more) = mode.split_once(' ').unwrap_or((mode, ""));
    args.push(format!("--mode={mode}"));
    args.extend(more.split(' ').filter(|f| !f.is_empty()).map(String::from));
    args.extend([opt, "pgo.c", "-o", exe].map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(pathprof(dir, &args));
    let out = Command::new(dir.join(exe))
        .arg(arg)
        .current_dir(dir)
        .env("PATHPROF_FILE", dir.join(format!("{exe}.pprof")))
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// Each defined function's `function_entry_count` and the weights of its
/// branches (sorted), read from IR text.
type Weights = BTreeMap<String, (Option<u64>, Vec<Vec<u64>>)>;

fn weights_in(ir: &str) -> Weights {
    let mut nodes: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for line in ir.lines() {
        if let Some((id, rest)) = line.split_once(" = !{!\"") {
            let numbers = rest
                .split(", ")
                .skip(1)
                .filter_map(|f| f.trim_end_matches('}').rsplit(' ').next()?.parse().ok())
                .collect();
            nodes.insert(id, numbers);
        }
    }
    let prof = |line: &str| -> Option<Vec<u64>> {
        let id = line.split("!prof ").nth(1)?.split([',', ' ']).next()?;
        nodes.get(id).cloned()
    };
    let mut out = Weights::new();
    let mut current: Option<String> = None;
    for line in ir.lines() {
        if line.starts_with("define ") {
            let name = line.split('@').nth(1).unwrap().split('(').next().unwrap();
            let entry = prof(line).map(|v| v[0]);
            out.insert(name.to_string(), (entry, Vec::new()));
            current = Some(name.to_string());
        } else if line == "}" {
            current = None;
        } else if let (Some(f), Some(w)) = (&current, prof(line)) {
            out.get_mut(f).unwrap().1.push(w);
        }
    }
    for (_, branches) in out.values_mut() {
        branches.sort();
    }
    out
}

/// `pathprof cc --profile-use=PROFILE OPT -S -emit-llvm pgo.c`'s weights
/// (`opt`: flags split at spaces).
fn annotated(dir: &Path, profile: &str, opt: &str) -> Weights {
    let use_flag = format!("--profile-use={profile}");
    let mut args = vec!["cc", use_flag.as_str()];
    args.extend(opt.split(' '));
    args.extend(["-S", "-emit-llvm", "pgo.c", "-o", "pgo.ll"]);
    ok(pathprof(dir, &args));
    let ir = std::fs::read_to_string(dir.join("pgo.ll")).unwrap();
    assert!(
        ir.contains("!\"ProfileSummary\""),
        "no profile summary:\n{ir}"
    );
    weights_in(&ir)
}

/// What `pgo 12` gives every branch at -O0 (clamp inlined into both of its
/// call sites with its own counts: 6 of 15 calls above 100).
fn by_hand() -> Weights {
    let f = |entry: u64, branches: &[&[u64]]| {
        let mut b: Vec<Vec<u64>> = branches.iter().map(|w| w.to_vec()).collect();
        b.sort();
        (Some(entry), b)
    };
    Weights::from([
        // argc > 5, argc > 1, the loop (12 turns, 1 exit), clamp twice,
        // i % 4 == 0.
        (
            "main".to_string(),
            f(1, &[&[0, 1], &[1, 0], &[12, 1], &[6, 9], &[6, 9], &[3, 9]]),
        ),
        ("never".to_string(), f(0, &[])),
        // The default (x & 3 == 3) first, then cases 0, 1, 2.
        ("kind".to_string(), f(12, &[&[3, 3, 3, 3]])),
        ("fib".to_string(), f(465, &[&[233, 232]])),
    ])
}

#[test]
fn every_branch_gets_its_counts_from_every_mode() {
    let dir = program();
    let d = dir.path();
    // Block mode counts a spanning tree's chords, --every-block every block
    // (the edges follow from the blocks by flow, here every one).
    for mode in ["path", "edge", "block", "block --every-block"] {
        let exe = format!("pgo-{}", mode.replace(' ', ""));
        assert_eq!(train(d, mode, "-O0", &exe, "12"), "912 144\n");
        let profile = format!("{exe}.pprof");
        assert_eq!(annotated(d, &profile, "-O0"), by_hand(), "{mode} mode");
        // As clang's IR PGO marks them: the hottest function's entries are
        // hot, the one never called is cold.
        let ir = std::fs::read_to_string(d.join("pgo.ll")).unwrap();
        assert!(
            attributes_of(&ir, "fib").contains(&"inlinehint"),
            "{mode}: {ir}"
        );
        assert!(
            attributes_of(&ir, "never").contains(&"cold"),
            "{mode}: {ir}"
        );
        assert!(
            !attributes_of(&ir, "main").contains(&"cold"),
            "{mode}: {ir}"
        );
    }
}

/// The attributes of function `name`'s attribute group in IR text.
fn attributes_of<'a>(ir: &'a str, name: &str) -> Vec<&'a str> {
    let define = ir
        .lines()
        .find(|l| l.starts_with("define ") && l.contains(&format!("@{name}(")))
        .unwrap_or_else(|| panic!("no {name} in the IR"));
    let group = define
        .split(' ')
        .find(|w| w.starts_with('#'))
        .expect("an attribute group");
    let line = ir
        .lines()
        .find(|l| l.starts_with(&format!("attributes {group} = {{")))
        .expect("the group's definition");
    line.split(['{', '}', ' '])
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn indexes_merge_with_weights() {
    let dir = program();
    let d = dir.path();
    train(d, "edge", "-O0", "pgo", "12");
    ok(pathprof(d, &["index", "pgo.pprof", "-o", "one.ppdata"]));
    ok(pathprof(
        d,
        &[
            "index",
            "one.ppdata",
            "--weight=3:pgo.pprof",
            "-o",
            "four.ppdata",
        ],
    ));
    // The index serves alone: without the instrumented program.
    std::fs::remove_file(d.join("pgo")).unwrap();
    assert_eq!(annotated(d, "one.ppdata", "-O0"), by_hand());
    // What an index holds, as `pathprof info` shows it.
    let info = ok(pathprof(d, &["info", "one.ppdata"]));
    assert!(
        info.starts_with("one.ppdata: indexed profile of pgo (5 functions, 4 of them run)")
            && info.contains("\n        465  fib\n         15  clamp\n         12  kind\n"),
        "{info}"
    );
    // Trained without -g, built with it: names and shapes still match.
    assert_eq!(annotated(d, "one.ppdata", "-O0 -g"), by_hand());
    let four = annotated(d, "four.ppdata", "-O0");
    let times_four: Weights = by_hand()
        .into_iter()
        .map(|(f, (entry, branches))| {
            let b = branches
                .into_iter()
                .map(|w| w.iter().map(|c| c * 4).collect())
                .collect();
            (f, (entry.map(|e| e * 4), b))
        })
        .collect();
    assert_eq!(four, times_four);
}

#[test]
fn an_optimised_build_prints_what_plain_prints_and_carries_no_probes() {
    let dir = program();
    let d = dir.path();
    train(d, "path", "-O2", "pgo", "20");
    let plain = Command::new(CLANG)
        .current_dir(d)
        .args(["-O2", "pgo.c", "-o", "plain"])
        .status()
        .unwrap();
    assert!(plain.success());
    let link = pathprof(
        d,
        &[
            "cc",
            "--profile-use=pgo.pprof",
            "-O2",
            "pgo.c",
            "-o",
            "fast",
        ],
    );
    assert_eq!(String::from_utf8_lossy(&link.stderr), "", "a quiet build");
    ok(link);
    // Separate compile and link steps, from an index.
    ok(pathprof(d, &["index", "pgo.pprof", "-o", "pgo.ppdata"]));
    ok(pathprof(
        d,
        &[
            "cc",
            "--profile-use=pgo.ppdata",
            "-O2",
            "-c",
            "pgo.c",
            "-o",
            "pgo.o",
        ],
    ));
    ok(pathprof(
        d,
        &["cc", "--profile-use=pgo.ppdata", "pgo.o", "-o", "fast2"],
    ));
    let run = |exe: &str| {
        let out = Command::new(d.join(exe)).arg("25").output().unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(run("fast"), run("plain"));
    assert_eq!(run("fast2"), run("plain"));
    for exe in ["fast", "fast2"] {
        let nm = Command::new("nm").arg(d.join(exe)).output().unwrap();
        let symbols = String::from_utf8_lossy(&nm.stdout);
        assert!(
            !symbols.contains("__pathprof"),
            "{exe} has pathprof's symbols:\n{symbols}"
        );
    }
    // At -O2 the counts reach the optimiser: main ran once.
    let o2 = annotated(d, "pgo.pprof", "-O2");
    assert_eq!(o2["main"].0, Some(1), "{o2:?}");
}

#[test]
fn a_function_changed_since_the_profile_gets_no_counts_and_is_named() {
    let dir = program();
    let d = dir.path();
    train(d, "edge", "-O0", "pgo", "12");
    let source = std::fs::read_to_string(d.join("pgo.c")).unwrap();
    let edited = source.replace(
        "  case 2:\n    return 30;",
        "  case 2:\n    return 30;\n  case 7:\n    return 70;",
    );
    assert_ne!(edited, source);
    std::fs::write(d.join("pgo.c"), edited).unwrap();
    let link = pathprof(
        d,
        &[
            "cc",
            "--profile-use=pgo.pprof",
            "-O0",
            "pgo.c",
            "-o",
            "edited",
        ],
    );
    let stderr = stderr_of_ok(link);
    assert!(
        stderr.contains("edited: 1 function changed since the profile: kind;")
            && stderr.contains("rebuild the profile"),
        "{stderr}"
    );
    let w = annotated(d, "pgo.pprof", "-O0");
    assert_eq!(w["kind"], (None, vec![]), "no counts from another shape");
    assert_eq!(w["fib"], by_hand()["fib"]);
}

#[test]
fn another_programs_profile_is_refused_before_anything_is_linked() {
    let dir = program();
    let d = dir.path();
    train(d, "edge", "-O0", "pgo", "12");
    std::fs::write(d.join("other.c"), "int main(void) { return 0; }\n").unwrap();
    let before = std::fs::read(d.join("pgo")).unwrap();
    let out = pathprof(
        d,
        &[
            "cc",
            "--profile-use=pgo.pprof",
            "-O2",
            "other.c",
            "-o",
            "pgo",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("pgo.pprof is not a profile of this build of pgo")
            && stderr.contains("use its profile"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(d.join("pgo")).unwrap(),
        before,
        "the instrumented program is kept"
    );
    // A program the profile never ran (a helper a build makes) builds, with a note.
    let helper = pathprof(
        d,
        &[
            "cc",
            "--profile-use=pgo.pprof",
            "-O2",
            "other.c",
            "-o",
            "helper",
        ],
    );
    let stderr = stderr_of_ok(helper);
    assert!(
        stderr.contains("helper: none of its 1 functions is in the profile"),
        "{stderr}"
    );
}

#[test]
fn damaged_profiles_and_indexes_are_refused_with_their_reason() {
    let dir = program();
    let d = dir.path();
    train(d, "edge", "-O0", "pgo", "12");
    ok(pathprof(d, &["index", "pgo.pprof", "-o", "pgo.ppdata"]));
    for name in ["pgo.pprof", "pgo.ppdata"] {
        let bytes = std::fs::read(d.join(name)).unwrap();
        for (damage, cut) in [("cut", bytes.len() / 2), ("cut", 20)] {
            let broken = format!("{damage}-{cut}-{name}");
            std::fs::write(d.join(&broken), &bytes[..cut]).unwrap();
            let out = pathprof(
                d,
                &[
                    "cc",
                    &format!("--profile-use={broken}"),
                    "-O2",
                    "-c",
                    "pgo.c",
                ],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{broken}: {stderr}");
            assert!(
                stderr.contains(&broken) && stderr.lines().count() == 1,
                "{stderr}"
            );
        }
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x40;
        std::fs::write(d.join(format!("flipped-{name}")), flipped).unwrap();
        let out = pathprof(
            d,
            &[
                "cc",
                &format!("--profile-use=flipped-{name}"),
                "-O2",
                "-c",
                "pgo.c",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = pathprof(
        d,
        &["cc", "--profile-use=absent.pprof", "-O2", "-c", "pgo.c"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(1) && stderr.contains("absent.pprof"),
        "{stderr}"
    );
}

/// Builds `tests/programs/NAME` plain, in path mode (run to a profile) and
/// with that profile, with `driver` (`cc` or `c++`) at -O2; the optimised
/// build must print and exit as the plain one does, and count nothing.
fn optimised_like_plain(name: &str, driver: &str, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(data(&format!("programs/{name}")), d.join(name)).unwrap();
    let clang = if driver == "c++" {
        format!("{CLANG}++")
    } else {
        CLANG.to_string()
    };
    let plain = Command::new(&clang)
        .current_dir(d)
        .args(["-O2", name, "-o", "plain"])
        .args(flags)
        .status();
    assert!(plain.unwrap().success());
    let build = |extra: &str, exe: &str| {
        let mut args = vec![driver, extra, "-O2", name, "-o", exe];
        args.extend(flags);
        ok(pathprof(d, &args));
    };
    build("--mode=path", "trained");
    let run = |exe: &str, profile: Option<&str>| {
        let mut cmd = Command::new(d.join(exe));
        cmd.current_dir(d);
        if let Some(p) = profile {
            cmd.env("PATHPROF_FILE", d.join(p));
        }
        let out = cmd.output().unwrap();
        (out.status.code(), out.stdout)
    };
    let expected = run("plain", None);
    assert_eq!(run("trained", Some("trained.pprof")), expected);
    build("--profile-use=trained.pprof", "optimised");
    assert_eq!(run("optimised", Some("optimised.pprof")), expected);
    assert!(
        !d.join("optimised.pprof").exists(),
        "the optimised build counts nothing"
    );
    let ir = pathprof(
        d,
        &[
            driver,
            "--profile-use=trained.pprof",
            "-O2",
            "-S",
            "-emit-llvm",
            name,
            "-o",
            "x.ll",
        ],
    );
    ok(ir);
    let ir = std::fs::read_to_string(d.join("x.ll")).unwrap();
    assert!(
        ir.contains("branch_weights") && ir.contains("function_entry_count"),
        "{ir}"
    );
}

#[test]
fn cxx_exceptions_keep_their_behaviour() {
    optimised_like_plain("invoke.cpp", "c++", &[]);
}

#[test]
fn threads_keep_their_behaviour() {
    optimised_like_plain("threads.c", "cc", &["-pthread"]);
}

#[test]
fn a_p3_runs_merged_profile_serves_through_the_path_builds_map() {
    let dir = program();
    let d = dir.path();
    ok(pathprof(
        d,
        &["cc", "--mode=p3", "--copies=2", "-O2", "pgo.c", "-o", "pgo"],
    ));
    // The merged profile names copy 0, whose map is the path build's.
    ok(pathprof(
        d,
        &[
            "p3", "run", "-k", "2", "-o", "p3.pprof", "--", "./pgo", "12",
        ],
    ));
    let link = pathprof(
        d,
        &["cc", "--profile-use=p3.pprof", "-O2", "pgo.c", "-o", "fast"],
    );
    assert_eq!(String::from_utf8_lossy(&link.stderr), "", "a quiet build");
    ok(link);
    let note = crate::third_party::profile_use_note(&d.join("fast"));
    assert!(note.matched >= 4 && note.changed.is_empty(), "{note:?}");
    let out = Command::new(d.join("fast")).arg("12").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "912 144\n");
}

/// `tests/programs/correlated.c` trained in path mode at -O0 on `correlated
/// 100`, in a directory of its own, as `c.pprof`.
fn trained_correlated(mode: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(data("programs/correlated.c"), d.join("correlated.c")).unwrap();
    let mode = format!("--mode={mode}");
    ok(pathprof(
        d,
        &["cc", &mode, "-O0", "correlated.c", "-o", "trained"],
    ));
    let run = Command::new(d.join("trained"))
        .arg("100")
        .env("PATHPROF_FILE", d.join("c.pprof"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "3750 1200 3750 1200\n"
    );
    dir
}

/// `step`'s weights in `pathprof cc --profile-use=c.pprof FLAGS -O0 -S
/// -emit-llvm correlated.c`, and what it said.
fn step_weights(d: &Path, flags: &[&str]) -> (Vec<Vec<u64>>, String) {
    let mut args = vec!["cc", "--profile-use=c.pprof"];
    args.extend(flags);
    args.extend(["-O0", "-S", "-emit-llvm", "correlated.c", "-o", "c.ll"]);
    let stderr = stderr_of_ok(pathprof(d, &args));
    let ir = std::fs::read_to_string(d.join("c.ll")).unwrap();
    (weights_in(&ir)["step"].1.clone(), stderr)
}

/// `pathprof cc --profile-use=c.pprof --duplicate-hot-paths -O2
/// correlated.c -o fast`'s standard error.
fn build_duplicated(d: &Path) -> String {
    let args = [
        "cc",
        "--profile-use=c.pprof",
        "--duplicate-hot-paths",
        "-O2",
        "correlated.c",
        "-o",
        "fast",
    ];
    stderr_of_ok(pathprof(d, &args))
}

#[test]
fn correlated_branches_get_copies_with_the_weights_of_their_paths() {
    let dir = trained_correlated("path");
    let d = dir.path();
    // The edge profile: 75:25 at both branches of step.
    let (plain_weights, said) = step_weights(d, &[]);
    assert_eq!(plain_weights, vec![vec![75, 25], vec![75, 25]]);
    assert!(!said.contains("copied"), "{said}");
    // The paths: the second test copied for the 75 that came the first way
    // (75:0), the original keeps the 25 that came the other way (0:25).
    let (weights, _) = step_weights(d, &["--duplicate-hot-paths"]);
    assert_eq!(weights, vec![vec![0, 25], vec![75, 0], vec![75, 25]]);
    // Optimised, it prints what the plain build prints.
    let plain = Command::new(CLANG)
        .current_dir(d)
        .args(["-O2", "correlated.c", "-o", "plain"])
        .status()
        .unwrap();
    assert!(plain.success());
    let said = build_duplicated(d);
    assert!(
        said.contains("fast: 1 tail of hot paths copied ("),
        "{said}"
    );
    for args in [&["100"][..], &["37"], &["1000"], &["99", "table"]] {
        let out = |exe: &str| Command::new(d.join(exe)).args(args).output().unwrap();
        let (fast, plain) = (out("fast"), out("plain"));
        assert!(fast.status.success());
        assert_eq!(fast.stdout, plain.stdout, "{args:?}");
    }
}

#[test]
fn duplication_from_a_profile_without_paths_says_so_and_copies_nothing() {
    let dir = trained_correlated("edge");
    let d = dir.path();
    let (weights, _) = step_weights(d, &["--duplicate-hot-paths"]);
    assert_eq!(weights, vec![vec![75, 25], vec![75, 25]]);
    let said = build_duplicated(d);
    assert!(said.contains("needs a path-mode profile"), "{said}");
}
