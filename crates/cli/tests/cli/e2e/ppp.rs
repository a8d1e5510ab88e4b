//! Preferential path profiling end to end on `tests/programs/ppp.c`: the
//! issue's workflow (`cc --mode=path`, a training run, `pathprof
//! interesting`, `cc --mode=ppp --interesting`, a field run, `report`,
//! `residual`, `verify`), every count checked against path mode's profile of
//! the same input.

use crate::support::build::{cc, map_of, programs_dir, CLANG};
use crate::support::command::{failure, pathprof};
use crate::support::report::{report, Report};
use crate::support::run::profiled;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The training input (ppp.c's default text).
const A: &str = "hello world 42";
/// The field input: capitals, punctuation, other spaces.
const B: &str = "Hello, World! It is 42 o'clock; 7 x 6 = 42.";

/// Per function: path id -> (count, interesting).
type Paths = BTreeMap<String, BTreeMap<u64, (u64, Option<bool>)>>;

fn paths_of(r: &Report) -> Paths {
    r.functions
        .iter()
        .map(|f| {
            let paths = f
                .paths()
                .iter()
                .map(|p| (p.id, (p.count, p.interesting)))
                .collect();
            (f.name.clone(), paths)
        })
        .collect()
}

/// Runs `exe` on `input`, its profile `name` in `dir`; returns its stdout.
fn run_on(dir: &Path, exe: &Path, input: &str, name: &str) -> (PathBuf, String) {
    let profile = dir.join(name);
    // A profile merges into an existing file: start afresh.
    let _ = std::fs::remove_file(&profile);
    let out = profiled(exe, &profile).arg(input).output().unwrap();
    assert!(out.status.success(), "{}", failure("the program", &out));
    (profile, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn ok(dir: &Path, args: &[&str]) -> (String, String) {
    let out = pathprof(dir, args);
    assert!(
        out.status.success(),
        "{}",
        failure(&format!("pathprof {args:?}"), &out)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One program directory with ppp.c built in path and edge mode, its
/// path-mode profiles of A and B, and the interesting-path list trained on A.
struct Setup {
    dir: tempfile::TempDir,
    source: String,
    /// Path mode's paths on A and B, and the programs' output.
    path_a: Paths,
    path_b: Paths,
    out_a: String,
    out_b: String,
    edge: (PathBuf, PathBuf, PathBuf),
}

/// A new directory (its name starting `prefix`) holding a copy of ppp.c.
fn dir_with_ppp_c(prefix: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
    std::fs::copy(programs_dir().join("ppp.c"), dir.path().join("ppp.c")).unwrap();
    dir
}

fn setup() -> Setup {
    let dir = dir_with_ppp_c("pathprof-ppp-");
    let d = dir.path();
    let source = d.join("ppp.c").display().to_string();
    let path_exe = d.join("path");
    let path_map = cc(d, "path", &["-O2", "-g", &source], &path_exe);
    let [(train, out_a), (field, out_b)] = train(d, &path_exe, "prog.paths");
    let path_a = paths_of(&report(&path_map, &train).unwrap());
    let path_b = paths_of(&report(&path_map, &field).unwrap());
    let edge_exe = d.join("edge");
    let edge_map = cc(d, "edge", &["-O2", "-g", &source], &edge_exe);
    let (edge_b, _) = run_on(d, &edge_exe, B, "edge_b.pprof");
    Setup {
        dir,
        source,
        path_a,
        path_b,
        out_a,
        out_b,
        edge: (edge_exe, edge_map, edge_b),
    }
}

/// Runs path mode's `exe` (map `path.ppmap`) in `dir` on A (`train.pprof`)
/// and B (`path_b.pprof`) and writes A's interesting paths to `list`:
/// each run's profile and output.
fn train(dir: &Path, exe: &Path, list: &str) -> [(PathBuf, String); 2] {
    let runs = [
        run_on(dir, exe, A, "train.pprof"),
        run_on(dir, exe, B, "path_b.pprof"),
    ];
    let args = [
        "interesting",
        "--map",
        "path.ppmap",
        "train.pprof",
        "-o",
        list,
    ];
    ok(dir, &args);
    runs
}

/// `pathprof ppp-stats` of `ppp.ppmap` in `dir`, checked to start with
/// `head` (how many functions have interesting paths, how many are numbered).
fn ppp_stats(dir: &Path, head: &str) -> String {
    let (stats, _) = ok(dir, &["ppp-stats", "--map", "ppp.ppmap"]);
    assert!(stats.starts_with(head), "{stats}");
    stats
}

/// Counts without the interesting marks.
fn counts(p: &Paths) -> BTreeMap<String, BTreeMap<u64, u64>> {
    p.iter()
        .map(|(f, paths)| {
            (
                f.clone(),
                paths.iter().map(|(&id, &(c, _))| (id, c)).collect(),
            )
        })
        .collect()
}

/// Builds the PPP program with `list` and `extra` flags, runs it on A and B
/// and checks both profiles against path mode's: the same counts; on A every
/// path interesting; on B exactly the paths A ran interesting, the others
/// residual; `verify` against the edge profile of B. Returns cc's stderr.
fn check_ppp(s: &Setup, list: &str, extra: &[&str], stale: &[&str]) -> String {
    let d = s.dir.path();
    let exe = d.join("ppp");
    let interesting = format!("--interesting={list}");
    let mut args = vec![interesting.as_str(), "-O2", "-g", &s.source];
    args.extend_from_slice(extra);
    args.extend(["-o", "ppp"]);
    let out = pathprof(d, &[&["cc", "--mode=ppp"], &args[..]].concat());
    assert!(
        out.status.success(),
        "{}",
        failure("pathprof cc --mode=ppp", &out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let map = d.join("ppp.ppmap");
    let (prof_a, out_a) = run_on(d, &exe, A, "ppp_a.pprof");
    let (prof_b, out_b) = run_on(d, &exe, B, "ppp_b.pprof");
    assert_eq!(
        (&out_a, &out_b),
        (&s.out_a, &s.out_b),
        "the PPP build behaves alike"
    );

    let ra = report(&map, &prof_a).unwrap();
    let rb = report(&map, &prof_b).unwrap();
    assert_eq!(ra.mode, "path");
    let (pa, pb) = (paths_of(&ra), paths_of(&rb));
    assert_eq!(
        counts(&pa),
        counts(&s.path_a),
        "trained input: path mode's counts"
    );
    assert_eq!(
        counts(&pb),
        counts(&s.path_b),
        "other input: path mode's counts"
    );
    for (f, paths) in &pa {
        for (id, &(_, interesting)) in paths {
            let want = !stale.contains(&f.as_str());
            assert_eq!(
                interesting,
                Some(want),
                "{f} path {id} on the trained input"
            );
        }
    }
    let mut residual_want = BTreeSet::new();
    for (f, paths) in &pb {
        for (id, &(_, interesting)) in paths {
            let trained = s.path_a[f].contains_key(id) && !stale.contains(&f.as_str());
            assert_eq!(
                interesting,
                Some(trained),
                "{f} path {id} on the other input"
            );
            if !trained {
                residual_want.insert((f.clone(), *id));
            }
        }
    }
    assert!(!residual_want.is_empty(), "the other input runs new paths");

    // `residual` lists exactly those paths.
    let (text, _) = ok(
        d,
        &[
            "residual",
            "--map",
            "ppp.ppmap",
            "ppp_b.pprof",
            "--top",
            "1000",
        ],
    );
    let listed: BTreeSet<(String, u64)> = text
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.trim_end().rsplit_once(" (path ")?;
            let id = rest.strip_suffix(')')?.parse().ok()?;
            let name = l.split_whitespace().nth(4)?;
            Some((name.to_string(), id))
        })
        .collect();
    assert_eq!(listed, residual_want, "{text}");
    assert!(
        text.starts_with(&format!("{} residual paths", residual_want.len())),
        "{text}"
    );
    // And the edge counts derived from PPP's paths are the edge profile's.
    let (_, edge_map, edge_b) = &s.edge;
    let edge_map = edge_map.display().to_string();
    let edge_b = edge_b.display().to_string();
    let (text, _) = ok(
        d,
        &[
            "verify",
            "--map",
            "ppp.ppmap",
            "ppp_b.pprof",
            "--edge-map",
            &edge_map,
            &edge_b,
        ],
    );
    assert!(text.contains("verified:"), "{text}");
    stderr
}

#[test]
fn ppp_trained_and_field_runs_count_path_modes_paths() {
    let s = setup();
    let stderr = check_ppp(
        &s,
        "prog.paths",
        &["--pathprof-verbose", "--ppp-min-paths=0"],
        &[],
    );
    // Every function the training ran has a PPP numbering; mix's 4096
    // potential paths number the two it ran 0 and 1. No function's
    // Ball-Larus ids hash: two registers.
    assert!(
        stderr.contains(
            "pathprof: mix ppp: 2 interesting of 4096 paths, interval 2, delta 1.000, two registers"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(!stderr.contains("one word"), "{stderr}");
    // Residual paths in hash tables (mix: 4096 > 64) while the interesting
    // ones still fit arrays; there both registers fit one word. The same
    // counts, also with section 5's two registers kept apart.
    for (flag, registers) in [
        ("--pathprof-verbose", "one word"),
        ("--ppp-two-registers", "two registers"),
    ] {
        let stderr = check_ppp(
            &s,
            "prog.paths",
            &[
                "--pathprof-verbose",
                "--ppp-min-paths=0",
                "--array-limit=64",
                "--ppp-cache-paths=0",
                flag,
            ],
            &[],
        );
        assert!(
            stderr.contains(&format!(
                "pathprof: mix ppp: 2 interesting of 4096 paths, interval 2, delta 1.000, {registers}"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("warning"), "{stderr}");
    }
    let stats = ppp_stats(
        s.dir.path(),
        "3 of 4 functions have interesting paths, 3 numbered by PPP",
    );
    assert!(
        stats.contains("4096        2         2   1.000  mix\n"),
        "{stats}"
    );
    // The default --ppp-min-paths (the array limit): only mix, whose 4096
    // paths path mode would hash, is numbered; classify and main count in
    // path mode's arrays, their paths still marked interesting or not.
    let stderr = check_ppp(
        &s,
        "prog.paths",
        &[
            "--array-limit=64",
            "--pathprof-verbose",
            "--ppp-cache-paths=0",
        ],
        &[],
    );
    assert!(
        stderr.contains("pathprof: mix ppp: 2 interesting of 4096 paths, interval 2"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "pathprof: classify ppp: 3 interesting of 5 paths, counted in path mode's array"
        ),
        "{stderr}"
    );
    ppp_stats(
        s.dir.path(),
        "3 of 4 functions have interesting paths, 1 numbered",
    );
    // The default --ppp-cache-paths (1024): mix's two interesting paths
    // are few enough for path mode's inline cache, which counts them as
    // cheaply as PPP's array without a second register: mix stays in path
    // mode too, its paths still marked interesting or not.
    let stderr = check_ppp(
        &s,
        "prog.paths",
        &["--array-limit=64", "--pathprof-verbose"],
        &[],
    );
    assert!(
        stderr.contains(
            "pathprof: mix ppp: 2 interesting of 4096 paths, counted through path mode's inline \
             cache (--ppp-cache-paths 1024)"
        ),
        "{stderr}"
    );
    ppp_stats(
        s.dir.path(),
        "3 of 4 functions have interesting paths, 0 numbered",
    );
    // PATHPROF_INTERESTING instead of the flag; a list the tool wrote reads back.
    let d = s.dir.path();
    let list = std::fs::read_to_string(d.join("prog.paths")).unwrap();
    assert!(list.starts_with("{\n  \"format\": \"pathprof-interesting-paths\",\n  \"version\": 1,"));
    let out = crate::support::command::pathprof_env(
        d,
        &[
            ("PATHPROF_INTERESTING", "prog.paths"),
            ("PATHPROF_MODE", "ppp"),
            ("PATHPROF_ARRAY_LIMIT", "64"),
        ],
        &["cc", "-O2", "-g", &s.source, "-o", "ppp_env"],
    );
    assert!(
        out.status.success(),
        "{}",
        failure("PATHPROF_INTERESTING", &out)
    );
    let env_map = std::fs::read(d.join("ppp_env.ppmap")).unwrap();
    assert_eq!(
        env_map,
        std::fs::read(d.join("ppp.ppmap")).unwrap(),
        "the same build"
    );
    // --ppp-interval-limit: classify (interval 3) and main (5) need more
    // than 2 slots and are profiled as in path mode, after a warning; mix
    // (2) is numbered; counts stay exact.
    let stderr = check_ppp(
        &s,
        "prog.paths",
        &["--ppp-min-paths=0", "--ppp-interval-limit=2"],
        &[],
    );
    for (f, interval) in [("classify", 3), ("main", 5)] {
        assert!(
            stderr.contains(&format!(
                "pathprof: warning: {f}: the PPP interval of its {interval} interesting paths is \
                 {interval}, above the limit 2 (--ppp-interval-limit"
            )),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("warning: mix"), "{stderr}");
    ppp_stats(
        s.dir.path(),
        "3 of 4 functions have interesting paths, 1 numbered",
    );
    // The whole-program route numbers the same functions at the link.
    let stderr = check_ppp(
        &s,
        "prog.paths",
        &["--whole-program", "--ppp-min-paths=0", "--pathprof-verbose"],
        &[],
    );
    assert!(
        stderr.contains("pathprof: mix ppp: 2 interesting of 4096 paths, interval 2"),
        "{stderr}"
    );
}

#[test]
fn ppp_stale_and_unknown_entries_warn_and_still_count_exactly() {
    let s = setup();
    let d = s.dir.path();
    let list = std::fs::read_to_string(d.join("prog.paths")).unwrap();
    // classify's entries name another shape; one entry names a function of
    // its source file that this program does not have (renamed since), one
    // a function of a file it does not compile (another program's).
    let stale: String = list
        .lines()
        .map(|l| {
            if l.contains("\"function\": \"classify\"") {
                let at = l.find("\"shape\": \"").unwrap() + 10;
                format!("{}0000000000000000{}", &l[..at], &l[at + 16..])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let stale = stale.replacen(
        "  \"paths\": [\n",
        "  \"paths\": [\n    {\"function\": \"no_such_function\", \"file\": \"ppp.c\", \"shape\": \"0123456789abcdef\", \"id\": 0, \"blocks\": [0]},\n    \
         {\"function\": \"other_programs\", \"file\": \"other.c\", \"shape\": \"0123456789abcdef\", \"id\": 0, \"blocks\": [0]},\n",
        1,
    );
    std::fs::write(d.join("stale.paths"), stale).unwrap();
    let stderr = check_ppp(&s, "stale.paths", &["--ppp-min-paths=0"], &["classify"]);
    assert!(
        stderr.contains(
            "pathprof: warning: classify has changed since the interesting-path list was made"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("classify is profiled as in path mode"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "stale.paths: 1 function of source files this program compiles is not in it \
             (renamed or removed since the list was made, or compiled out here by other macros), \
             ignored: no_such_function\n"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("other_programs"), "{stderr}");
    // Without a list, --mode=ppp is refused.
    let out = pathprof(d, &["cc", "--mode=ppp", "-O2", &s.source, "-o", "none"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mode=ppp needs the interesting paths"));
}

/// `--early-exit` counts each path that may end inside a call before the
/// call and undoes the count after it returns: with PPP's registers packed
/// into one word (and kept apart) the counts are path mode's, exactly.
#[test]
fn ppp_with_early_exits_counts_path_modes_paths() {
    let dir = dir_with_ppp_c("pathprof-ppp-exit-");
    let d = dir.path();
    let flags = ["-O2", "-g", "ppp.c", "--early-exit", "--array-limit=64"];
    let path_exe = d.join("path");
    let path_map = cc(d, "path", &flags, &path_exe);
    let [(train, out_a), (field, out_b)] = train(d, &path_exe, "exit.paths");
    for registers in ["--pathprof-verbose", "--ppp-two-registers"] {
        let exe = d.join("ppp");
        let args = [
            &flags[..],
            &[
                "--interesting=exit.paths",
                "--ppp-min-paths=0",
                "--ppp-cache-paths=0",
                registers,
            ],
        ];
        let out = pathprof(
            d,
            &[&["cc", "--mode=ppp"], &args.concat()[..], &["-o", "ppp"]].concat(),
        );
        assert!(out.status.success(), "{}", failure("pathprof cc", &out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains("one word"),
            registers != "--ppp-two-registers",
            "{stderr}"
        );
        let (ppp_a, ppp_out_a) = run_on(d, &exe, A, "ppp_a.pprof");
        let (ppp_b, ppp_out_b) = run_on(d, &exe, B, "ppp_b.pprof");
        assert_eq!((&ppp_out_a, &ppp_out_b), (&out_a, &out_b));
        for (ppp, path) in [(&ppp_a, &train), (&ppp_b, &field)] {
            let got = paths_of(&report(&map_of(&exe), ppp).unwrap());
            let want = paths_of(&report(&path_map, path).unwrap());
            assert_eq!(counts(&got), counts(&want), "{registers} {}", ppp.display());
        }
    }
}

/// The step-by-step route of the LLVM notes: `pathprof instrument` of one
/// bitcode file in path mode, trained on A, then in PPP mode with that
/// training's list; linked with the runtime, the PPP program counts exactly
/// path mode's paths on A (every one interesting) and on B.
#[test]
fn ppp_instrument_route_counts_path_modes_paths() {
    let dir = dir_with_ppp_c("pathprof-ppp-inst-");
    let d = dir.path();
    let clang = |args: &[&str]| {
        let out = std::process::Command::new(CLANG)
            .current_dir(d)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", failure("clang", &out));
    };
    clang(&["-O2", "-g", "-c", "-emit-llvm", "ppp.c", "-o", "ppp.bc"]);
    let rt = ok(d, &["rt-path"]).0;
    let build = |name: &str, flags: &[&str]| {
        let (bc, map) = (format!("{name}.bc"), format!("{name}.ppmap"));
        ok(
            d,
            &[&["instrument", "ppp.bc", "-o", &bc, "--map", &map], flags].concat(),
        );
        clang(&[
            "-O2",
            &bc,
            rt.trim(),
            "-lpthread",
            "-ldl",
            "-lm",
            "-o",
            name,
        ]);
        (d.join(name), d.join(map))
    };
    let (path_exe, path_map) = build("path", &["--mode", "path"]);
    let [(train, out_a), (field, out_b)] = train(d, &path_exe, "inst.paths");
    let (ppp_exe, ppp_map) = build(
        "ppp",
        &[
            "--mode",
            "ppp",
            "--interesting",
            "inst.paths",
            "--ppp-min-paths=0",
        ],
    );
    let (ppp_a, ppp_out_a) = run_on(d, &ppp_exe, A, "ppp_a.pprof");
    let (ppp_b, ppp_out_b) = run_on(d, &ppp_exe, B, "ppp_b.pprof");
    assert_eq!((ppp_out_a, ppp_out_b), (out_a, out_b));
    let (stats, _) = ok(d, &["ppp-stats", "--map", "ppp.ppmap"]);
    assert!(stats.contains(" numbered by PPP"), "{stats}");
    assert!(!stats.contains(", 0 numbered by PPP"), "{stats}");
    for (ppp, path) in [(&ppp_a, &train), (&ppp_b, &field)] {
        let got = paths_of(&report(&ppp_map, ppp).unwrap());
        let want = paths_of(&report(&path_map, path).unwrap());
        assert_eq!(counts(&got), counts(&want), "{}", ppp.display());
        if ppp == &ppp_a {
            assert!(got
                .values()
                .flat_map(|p| p.values())
                .all(|&(_, interesting)| interesting == Some(true)));
        }
    }
}
