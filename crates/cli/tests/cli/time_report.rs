//! `--time-report` (`PATHPROF_TIME_REPORT=1`): the table of each phase's
//! wall-clock time that `pathprof cc` (the per-compile route through the
//! pass plugin, and `--whole-program`) and `pathprof instrument` print at
//! the end; the phases that ran, in order, and a total that covers them.

use crate::support::build::CLANG;
use crate::support::command::{ok, pathprof, pathprof_env};
use std::path::Path;
use std::process::{Command, Output};

const PROG: &str = "#include <stdio.h>\n\
    static int step(int x) { return x % 3 ? x * 2 : x + 1; }\n\
    int main(void) { int s = 0; for (int i = 0; i < 10; i++) s += step(i); printf(\"%d\\n\", s); return 0; }\n";

const HEADER: &str = "pathprof: time report (wall clock):";

/// A fresh directory holding `prog.c`.
fn prog_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prog.c"), PROG).unwrap();
    dir
}

/// The one table in `out`'s standard error: its rows, each name with its
/// number (seconds, or the count of functions), in order.
fn table(out: &Output) -> Vec<(String, f64)> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches(HEADER).count(), 1, "one table:\n{stderr}");
    let rows = stderr
        .lines()
        .skip_while(|l| *l != HEADER)
        .skip(1)
        .take_while(|l| l.starts_with("  "));
    rows.map(|row| {
        let words: Vec<&str> = row.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| w.parse::<f64>().is_ok())
            .unwrap_or_else(|| panic!("no number in `{row}`:\n{stderr}"));
        (words[..at].join(" "), words[at].parse().unwrap())
    })
    .collect()
}

/// Checks `out`'s table: exactly the phases `phases`, in that order, then
/// the total, at least their sum, and the functions when `functions`.
fn check(out: &Output, phases: &[&str], functions: bool) {
    let rows = table(out);
    let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    let mut expected = phases.to_vec();
    expected.push("total");
    if functions {
        expected.push("functions");
    }
    assert_eq!(names, expected, "{}", String::from_utf8_lossy(&out.stderr));
    let sum: f64 = rows[..phases.len()].iter().map(|(_, s)| s).sum();
    let total = rows[phases.len()].1;
    // Each row is rounded to the millisecond.
    let rounding = 0.0005 * (phases.len() + 1) as f64;
    assert!(
        total > 0.0 && sum <= total + rounding,
        "total {total} below the phases' sum {sum}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(rows.iter().all(|(_, s)| *s >= 0.0));
    if functions {
        assert!(rows[phases.len() + 1].1 >= 2.0, "main and step");
    }
}

/// Runs the program `exe` built from `prog.c`.
fn runs(exe: &Path) {
    let run = Command::new(exe)
        .env("PATHPROF_FILE", exe.with_extension("pprof"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "76\n");
}

/// What an `-O2` compile does after clang's front end (and reading
/// bitcode, on the whole-program route).
const COMPILE_PHASES: [&str; 6] = [
    "early simplification",
    "CFG extraction",
    "planning",
    "instrumentation",
    "optimisation",
    "code generation",
];

/// `pathprof cc --mode=path <route> --time-report -O2 prog.c -o prog` in
/// `d`: its table has `before` the compile's phases, then the link; the
/// program it built runs.
fn builds_with_phases(d: &Path, route: &[&str], before: &[&str]) {
    let mut args = vec!["cc", "--mode=path"];
    args.extend(route);
    args.extend(["--time-report", "-O2", "prog.c", "-o", "prog"]);
    let build = pathprof(d, &args);
    let phases: Vec<&str> = [before, &COMPILE_PHASES[..], &["link"]].concat();
    check(&build, &phases, true);
    ok(build);
    runs(&d.join("prog"));
}

#[test]
fn the_per_compile_route_reports_the_phases_inside_clang() {
    let dir = prog_dir();
    let d = dir.path();
    builds_with_phases(d, &[], &["front end"]);
    // A compile step alone, asked for by the variable, at -O0: no early
    // simplification there, no link.
    let compile = pathprof_env(
        d,
        &[("PATHPROF_TIME_REPORT", "1")],
        &["cc", "--mode=path", "-O0", "-c", "prog.c", "-o", "prog.o"],
    );
    let phases = [&["front end"][..], &COMPILE_PHASES[1..]].concat();
    check(&compile, &phases, true);
    ok(compile);
    let link = pathprof(d, &["cc", "--time-report", "prog.o", "-o", "prog0"]);
    check(&link, &["link"], false);
    ok(link);
    runs(&d.join("prog0"));
}

#[test]
fn the_whole_program_route_reports_its_phases() {
    let dir = prog_dir();
    let d = dir.path();
    builds_with_phases(d, &["--whole-program"], &["front end", "reading bitcode"]);
}

#[test]
fn instrument_reports_its_phases() {
    let dir = prog_dir();
    let d = dir.path();
    let status = Command::new(CLANG)
        .current_dir(d)
        .args(["-O0", "-c", "-emit-llvm", "prog.c", "-o", "prog.bc"])
        .status()
        .unwrap();
    assert!(status.success());
    let out = pathprof(
        d,
        &[
            "instrument",
            "prog.bc",
            "-o",
            "out.bc",
            "--mode",
            "path",
            "--time-report",
        ],
    );
    check(
        &out,
        &[
            "reading bitcode",
            "CFG extraction",
            "planning",
            "instrumentation",
        ],
        true,
    );
    ok(out);
}

#[test]
fn no_table_without_the_flag() {
    let dir = prog_dir();
    let d = dir.path();
    for (vars, route) in [
        (&[][..], "--mode=path"),
        (&[("PATHPROF_TIME_REPORT", "0")][..], "--whole-program"),
    ] {
        let out = pathprof_env(d, vars, &["cc", route, "-O2", "prog.c", "-o", "prog"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("time report"), "{route}:\n{stderr}");
        ok(out);
        runs(&d.join("prog"));
    }
}
