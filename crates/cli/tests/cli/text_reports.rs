//! Golden tests of the text reports (`report`, `paths`, `lines`, `funcs`,
//! `files`, `coverage`, `verify`, `merge`, `info`) on `text_reports/classify.c`, whose
//! counts are known by hand: `classify` runs 10 times (x % 3 == 0 for 0, 3, 6, 9;
//! == 1 for 1, 4, 7; else 2, 5, 8), the loop runs 10 times, `never` never runs.
//! Built at -O0 so blocks follow the source. And every report's errors for a
//! wrong, truncated or mismatched input.

use crate::support::build::{cc, data};
use crate::support::command::pathprof_text;
use crate::support::report::{function_index, json_report};
use crate::support::run::run_profiled;
use std::path::{Path, PathBuf};

struct Built {
    dir: tempfile::TempDir,
}

impl Built {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Builds classify.c in `mode` (copied into a fresh directory, so sources are
/// found) and runs it once.
fn build(mode: &str) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("classify.c");
    std::fs::copy(data("text_reports/classify.c"), &src).unwrap();
    let exe = dir.path().join(format!("classify-{mode}"));
    cc(
        dir.path(),
        mode,
        &["-O0", "-g", src.to_str().unwrap()],
        &exe,
    );
    let run = run_profiled(&exe, &dir.path().join(format!("classify-{mode}.pprof")));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "4 3 3\n");
    Built { dir }
}

/// Runs a report on a build and returns stdout with the build directory
/// replaced by `<dir>`.
fn report(b: &Built, mode: &str, cmd: &[&str]) -> String {
    let map = b.path(&format!("classify-{mode}.ppmap"));
    let profile = b.path(&format!("classify-{mode}.pprof"));
    let mut args: Vec<&str> = cmd.to_vec();
    args.extend(["--map", map.to_str().unwrap(), profile.to_str().unwrap()]);
    let (out, err, ok) = pathprof_text(&args);
    assert!(ok, "{cmd:?} failed: {err}");
    out.replace(b.dir.path().to_str().unwrap(), "<dir>")
}

fn assert_golden(got: &str, want: &str) {
    if got.trim_end() != want.trim_end() {
        panic!("report differs from the golden text.\n--- want\n{want}\n--- got\n{got}");
    }
}

/// One question, one answer: the coverage report's TOTAL lines are the LCOV
/// export's `LF`/`LH` and the HTML report's line coverage.
#[test]
fn every_report_counts_the_same_lines() {
    let b = build("path");
    let coverage = report(&b, "path", &["coverage"]);
    let total = coverage.lines().find(|l| l.starts_with("TOTAL")).unwrap();
    let lines = total.split_whitespace().nth(1).unwrap();
    let lcov = report(&b, "path", &["export", "--format", "lcov"]);
    let sum = |key: &str| -> u64 {
        lcov.lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(|n| n.parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(lines, format!("{}/{}", sum("LH:"), sum("LF:")));
    let html = b.path("html");
    report(&b, "path", &["html", "-o", html.to_str().unwrap()]);
    let index = std::fs::read_to_string(html.join("index.html")).unwrap();
    let (hit, all) = lines.split_once('/').unwrap();
    assert!(
        index.contains(&format!("{hit} of {all} lines")),
        "the HTML report's line coverage is not {lines}"
    );
}

#[test]
fn text_reports_golden() {
    let b = build("path");
    assert_golden(
        &report(&b, "path", &["report"]),
        "       calls    blocks   paths run/all  function (most block executions first)
          10       6/6             3/3  classify  (<dir>/classify.c:2)
           1       6/7             3/6  main  (<dir>/classify.c:10)
           0       0/1             0/1  never  (<dir>/classify.c:9)",
    );
    // Weighted instructions per path: 309 instructions over 21 path
    // executions. Ranked by work (count x instructions): classify's path 0
    // runs most often but does the least work of the four.
    assert_golden(
        &report(&b, "path", &["paths", "--top", "4"]),
        "21 executions of 6 distinct paths, most work (executions x instructions) first; weighted instructions per path 14.7
rank        count   share blocks instrs           work  function / path
   1            9  42.86%      3     15            135  main (path 3)
                                        starts after loop back/cut edge b3 (line 12) -> b1 (line 12)
                                        classify.c:12-13, 12
                                        ends with loop back/cut edge b3 (line 12) -> b1 (line 12)
   2            3  14.29%      4     15             45  classify (path 1)
                                        classify.c:3, 5-6, 8
   3            3  14.29%      4     15             45  classify (path 2)
                                        classify.c:3, 5, 7-8
   4            4  19.05%      3     11             44  classify (path 0)
                                        classify.c:3-4, 8",
    );
    assert_golden(
        &report(&b, "path", &["paths", "--top", "4", "--sort", "count"]),
        "21 executions of 6 distinct paths, most executed first; weighted instructions per path 14.7
rank        count   share blocks instrs           work  function / path
   1            9  42.86%      3     15            135  main (path 3)
                                        starts after loop back/cut edge b3 (line 12) -> b1 (line 12)
                                        classify.c:12-13, 12
                                        ends with loop back/cut edge b3 (line 12) -> b1 (line 12)
   2            4  19.05%      3     11             44  classify (path 0)
                                        classify.c:3-4, 8
   3            3  14.29%      4     15             45  classify (path 1)
                                        classify.c:3, 5-6, 8
   4            3  14.29%      4     15             45  classify (path 2)
                                        classify.c:3, 5, 7-8",
    );
    assert_golden(
        &report(
            &b,
            "path",
            &["paths", "--function", "classify", "--top", "1", "--sort", "count"],
        ),
        "10 executions of 3 distinct paths, most executed first; weighted instructions per path 13.4
rank        count   share blocks instrs           work  function / path
   1            4  40.00%      3     11             44  classify (path 0)
                                        classify.c:3-4, 8",
    );
    assert_golden(
        &report(&b, "path", &["lines"]),
        "==> <dir>/classify.c <==
           -     1  #include <stdio.h>
          10     2  static int classify(int x) {
          10     3      if (x % 3 == 0)
           4     4          return 0;
           6     5      if (x % 3 == 1)
           3     6          return 1;
           3     7      return 2;
          10     8  }
       #####     9  static int never(int x) { return x * 2; }
           1    10  int main(int argc, char **argv) {
           1    11      int counts[3] = {0, 0, 0};
          11    12      for (int i = 0; i < 10; i++)
          10    13          counts[classify(i)]++;
           1    14      if (argc > 5)
       #####    15          printf(\"%d\\n\", never(argc));
           1    16      printf(\"%d %d %d\\n\", counts[0], counts[1], counts[2]);
           1    17      return 0;
           -    18  }",
    );
    assert_golden(
        &report(&b, "path", &["funcs"]),
        " instrs executed        calls   instrs  never run  function (most instructions executed first)
             175            1       41          4  main
             134           10       19          0  classify
               0            0        5          5  never
             309           11       65          9  total (3 functions)",
    );
    assert_golden(
        report(&b, "path", &["funcs", "--sort", "calls"])
            .lines()
            .nth(1)
            .unwrap(),
        "             134           10       19          0  classify",
    );
    assert_golden(
        &report(&b, "path", &["files"]),
        " instrs executed blocks run   blocks never entered  file (most instructions executed first)
             309         12       14            2  <dir>/classify.c
             309         12       14            2  total (1 files)",
    );
    assert_golden(
        &report(&b, "path", &["coverage"]),
        "function                                      lines                 blocks                  edges                  paths
main                                     7/8  87.5%             6/7  85.7%             6/8  75.0%             3/6  50.0%
    never executed: lines 15
classify                                 7/7 100.0%             6/6 100.0%             7/7 100.0%             3/3 100.0%
never                                    0/1   0.0%             0/1   0.0%                      -             0/1   0.0%
    never called
TOTAL                                  14/16  87.5%           12/14  85.7%           13/15  86.7%            6/10  60.0%",
    );
}

#[test]
fn instructions_per_line_and_block_mode_listing_agree() {
    let path = build("path");
    let block = build("block");
    let listing = |b: &Built, mode: &str| report(b, mode, &["lines"]);
    assert_eq!(
        listing(&path, "path"),
        listing(&block, "block"),
        "line counts agree across modes"
    );
    let instrs = report(&path, "path", &["lines", "--instructions"]);
    // `classify`'s first test runs 4 instructions per call at -O0: 40 in all.
    assert!(
        instrs.contains("          40     3      if (x % 3 == 0)"),
        "{instrs}"
    );
    assert!(instrs.contains("       #####    15"), "{instrs}");
}

#[test]
fn verify_passes_and_reports_an_altered_edge() {
    let path = build("path");
    let edge = build("edge");
    let args = |edge_profile: &Path| {
        vec![
            "verify".to_string(),
            "--map".into(),
            path.path("classify-path.ppmap").display().to_string(),
            path.path("classify-path.pprof").display().to_string(),
            "--edge-map".into(),
            edge.path("classify-edge.ppmap").display().to_string(),
            edge_profile.display().to_string(),
        ]
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        pathprof_text(&a)
    };
    let (out, _, ok) = run(args(&edge.path("classify-edge.pprof")));
    assert!(ok, "{out}");
    assert_golden(
        &out,
        "verified: 15 edge counts of 3 functions derived from the path profile equal the edge profile",
    );
    // Alter one chord counter of the edge profile: the verifier must name the
    // edges whose derived counts changed, and fail.
    let mut raw = pathprof_format::RawProfile::decode(
        &std::fs::read(edge.path("classify-edge.pprof")).unwrap(),
    )
    .unwrap();
    let f = raw
        .functions
        .iter_mut()
        .find(|f| f.slots.iter().any(|&c| c > 0))
        .unwrap();
    let k = f.slots.iter().position(|&c| c > 0).unwrap();
    f.slots[k] += 1;
    let altered = edge.path("altered.pprof");
    std::fs::write(&altered, raw.encode()).unwrap();
    let (out, _, ok) = run(args(&altered));
    assert!(!ok, "an altered edge profile must fail verification");
    assert!(out.contains("MISMATCH"), "{out}");
    assert!(
        out.contains(": from paths "),
        "lists the differing edges: {out}"
    );
}

/// The build id a profile of one build records.
fn build_id(profile: &Path) -> u64 {
    pathprof_format::RawProfile::decode(&std::fs::read(profile).unwrap())
        .unwrap()
        .build_id
}

#[test]
fn merge_sums_profiles_and_keeps_other_builds_apart() {
    let b = build("path");
    let p = b.path("classify-path.pprof");
    let merged = b.path("merged.pprof");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // A link planted at the output's name is replaced, never written
    // through (the output is a new file renamed into place).
    let victim = b.path("victim.txt");
    std::fs::write(&victim, "precious data\n").unwrap();
    std::os::unix::fs::symlink(&victim, &merged).unwrap();
    let (_, err, ok) = pathprof_text(&["merge", &s(&p), &s(&p), "-o", &s(&merged)]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious data\n");
    assert!(std::fs::symlink_metadata(&merged)
        .unwrap()
        .file_type()
        .is_file());
    let map = b.path("classify-path.ppmap");
    let summary_of = |map: &Path, profile: &Path| {
        let (out, err, ok) = pathprof_text(&["report", "--map", &s(map), &s(profile)]);
        assert!(ok, "{err}");
        out
    };
    assert!(
        summary_of(&map, &merged).contains("          20       6/6             3/3  classify"),
        "{}",
        summary_of(&map, &merged)
    );
    // Another build (the edge-mode one) and the path profile twice more:
    // the path sections add up, the edge build keeps a section of its own.
    let other = build("edge");
    let q = other.path("classify-edge.pprof");
    let all = b.path("all.pprof");
    let (_, err, ok) = pathprof_text(&["merge", &s(&merged), &s(&q), &s(&p), "-o", &s(&all)]);
    assert!(ok, "{err}");
    let file = pathprof_format::ProfileFile::decode(&std::fs::read(&all).unwrap()).unwrap();
    let mut ids = vec![build_id(&p), build_id(&q)];
    ids.sort_unstable();
    assert_eq!(file.build_ids(), ids);
    let path_section = file.section(build_id(&p)).unwrap();
    assert_eq!(path_section.processes, 3);
    assert_eq!(file.section(build_id(&q)).unwrap().processes, 1);
    // Each map reads its own build's section of the merged file.
    assert!(summary_of(&map, &all).contains("          30       6/6             3/3  classify"));
    let edge_map = other.path("classify-edge.ppmap");
    assert_eq!(summary_of(&edge_map, &all), summary_of(&edge_map, &q));
    // Merging is commutative, to the byte.
    let all2 = b.path("all2.pprof");
    let (_, err, ok) = pathprof_text(&["merge", &s(&p), &s(&q), &s(&merged), "-o", &s(&all2)]);
    assert!(ok, "{err}");
    assert_eq!(std::fs::read(&all).unwrap(), std::fs::read(&all2).unwrap());

    // One build in two modes cannot be added.
    let mut clash = pathprof_format::RawProfile::decode(&std::fs::read(&q).unwrap()).unwrap();
    clash.build_id = build_id(&p);
    let clash_file = b.path("clash.pprof");
    std::fs::write(&clash_file, clash.encode()).unwrap();
    let (_, err, ok) = pathprof_text(&["merge", &s(&p), &s(&clash_file), "-o", &s(&merged)]);
    assert!(!ok);
    assert!(err.contains("cannot add"), "{err}");
    assert!(err.contains("different modes cannot be merged"), "{err}");
}

#[test]
fn info_lists_every_build_of_a_file() {
    let path = build("path");
    let edge = build("edge");
    let p = path.path("classify-path.pprof");
    let q = edge.path("classify-edge.pprof");
    let all = path.path("all.pprof");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (_, err, ok) = pathprof_text(&["merge", &s(&p), &s(&q), &s(&p), "-o", &s(&all)]);
    assert!(ok, "{err}");
    let (out, err, ok) = pathprof_text(&["info", "--builds", &s(&all), &s(&q)]);
    assert!(ok, "{err}");
    let exe = |b: &Built, mode: &str| {
        std::fs::canonicalize(b.path(&format!("classify-{mode}")))
            .unwrap()
            .display()
            .to_string()
    };
    let raw = |f: &Path| pathprof_format::RawProfile::decode(&std::fs::read(f).unwrap()).unwrap();
    let (rp, rq) = (raw(&p), raw(&q));
    let total = |r: &pathprof_format::RawProfile| {
        r.functions
            .iter()
            .flat_map(|f| f.slots.iter().copied().chain(f.paths.iter().map(|p| p.1)))
            .sum::<u64>()
    };
    let row =
        |r: &pathprof_format::RawProfile, mode: &str, processes: u64, times: u64, exe: &str| {
            format!(
                "{:016x} {mode} {processes} 0 0 0 {} {} {exe}",
                r.build_id,
                r.functions.len(),
                total(r) * times
            )
        };
    // Compare with the columns' padding squeezed out.
    let lines: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let mut rows = [
        (rp.build_id, row(&rp, "path", 2, 2, &exe(&path, "path"))),
        (rq.build_id, row(&rq, "edge", 1, 1, &exe(&edge, "edge"))),
    ];
    rows.sort();
    let header = "build id mode processes forked killed threads functions counts objects";
    let want = vec![
        format!("{}: 2 builds in 2 programs and libraries", all.display()),
        header.to_string(),
        rows[0].1.clone(),
        rows[1].1.clone(),
        String::new(),
        format!("{}: 1 build in 1 program or library", q.display()),
        header.to_string(),
        row(&rq, "edge", 1, 1, &exe(&edge, "edge")),
    ];
    assert_eq!(lines, want, "{out}");
    // Without --builds: a line per program (here one build each).
    let (grouped, err, ok) = pathprof_text(&["info", &s(&all)]);
    assert!(ok, "{err}");
    let grouped: Vec<String> = grouped
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    let program =
        |r: &pathprof_format::RawProfile, mode: &str, processes: u64, times: u64, exe: &str| {
            format!(
                "1 {mode} {processes} 0 0 0 {} {} {exe}",
                r.functions.len(),
                total(r) * times
            )
        };
    let mut programs = [
        (rp.build_id, program(&rp, "path", 2, 2, &exe(&path, "path"))),
        (rq.build_id, program(&rq, "edge", 1, 1, &exe(&edge, "edge"))),
    ];
    programs.sort();
    assert_eq!(
        grouped,
        [
            format!("{}: 2 builds in 2 programs and libraries", all.display()),
            "builds mode processes forked killed threads functions counts objects".to_string(),
            programs[0].1.clone(),
            programs[1].1.clone(),
        ]
    );
    // The columns line up.
    let first: Vec<&str> = out.lines().skip(1).take(3).collect();
    let at = |l: &str| l.find("objects").or_else(|| l.find('/')).unwrap();
    assert!(first.iter().all(|l| at(l) == at(first[0])), "{out}");

    let (json, err, ok) = pathprof_text(&["info", "--format", "json", &s(&all)]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], "pathprof-info");
    let sections = v["files"][0]["sections"].as_array().unwrap();
    assert_eq!(sections.len(), 2);
    let ps = sections
        .iter()
        .find(|x| x["mode"] == "path")
        .expect("the path build");
    assert_eq!(ps["build_id"], format!("{:016x}", rp.build_id));
    assert_eq!(ps["processes"], 2);
    assert_eq!(ps["counts"], total(&rp) * 2);
    assert_eq!(ps["objects"], serde_json::json!([exe(&path, "path")]));
    assert_eq!(ps["objects_truncated"], false);
    let programs = v["files"][0]["programs"].as_array().unwrap();
    assert_eq!(programs.len(), 2);
    assert!(programs.iter().all(|p| p["builds"] == 1), "{json}");

    // A damaged file: a one-line error.
    let bad = path.path("bad.pprof");
    std::fs::write(&bad, b"PPROFRAW").unwrap();
    let (_, err, ok) = pathprof_text(&["info", &s(&bad)]);
    assert!(!ok);
    assert!(err.contains("truncated"), "{err}");
}

/// A complete version-3 file (one build, no object paths) of `build`, as
/// pathprof wrote before files held a section per build.
fn version_3_file(build: u64) -> Vec<u8> {
    let mut v = b"PPROFRAW".to_vec();
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&2u32.to_le_bytes());
    v.extend_from_slice(&build.to_le_bytes());
    v.extend_from_slice(&[0; 32]);
    let sum = pathprof_format::fnv1a64(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    v
}

#[test]
fn every_report_explains_bad_inputs() {
    let b = build("path");
    let map = b.path("classify-path.ppmap");
    let profile = b.path("classify-path.pprof");
    let bytes = std::fs::read(&profile).unwrap();
    let truncated = b.path("truncated.pprof");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let garbage = b.path("garbage.pprof");
    std::fs::write(&garbage, b"hello, world\n").unwrap();
    let other = build("edge");
    let other_profile = other.path("classify-edge.pprof");
    let damaged_map = b.path("damaged.ppmap");
    let mut m = std::fs::read(&map).unwrap();
    let n = m.len();
    m[n - 10] ^= 0x20;
    std::fs::write(&damaged_map, &m).unwrap();
    let missing = b.path("missing.pprof");
    let older = b.path("older.pprof");
    std::fs::write(&older, version_3_file(build_id(&profile))).unwrap();
    // A file of two builds, neither of them the map's.
    let mut two =
        pathprof_format::ProfileFile::decode(&std::fs::read(&other_profile).unwrap()).unwrap();
    two.merge(&pathprof_format::RawProfile::new(0x1234, 2).into())
        .unwrap();
    let neither = b.path("neither.pprof");
    std::fs::write(&neither, two.encode()).unwrap();
    let neither_ids = format!(
        "build ids {}",
        two.build_ids()
            .iter()
            .map(|b| format!("{b:016x}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for cmd in [
        "report", "paths", "lines", "funcs", "files", "coverage", "predict",
    ] {
        let check = |map: &Path, prof: &Path, want: &str| {
            let (_, err, ok) =
                pathprof_text(&[cmd, "--map", map.to_str().unwrap(), prof.to_str().unwrap()]);
            assert!(!ok, "{cmd} accepted a bad input");
            assert!(err.contains(want), "{cmd}: expected `{want}` in: {err}");
        };
        check(&map, &truncated, "truncated");
        check(&map, &garbage, "not a pathprof raw profile");
        check(&map, &other_profile, "another build");
        check(&map, &neither, "another build");
        check(&map, &neither, &neither_ids);
        check(
            &map,
            &neither,
            "pass the .ppmap written when one of those was built",
        );
        check(&map, &older, "version 3 was written by an older pathprof");
        check(&map, &older, "run the instrumented program again");
        check(&damaged_map, &profile, "damaged");
        check(&map, &missing, "cannot read profile");
        check(&b.path("nope.ppmap"), &profile, "cannot read map file");
    }
}

#[test]
fn lines_takes_source_files_after_the_profiles() {
    let b = build("path");
    let map = b.path("classify-path.ppmap");
    let profile = b.path("classify-path.pprof");
    let (all, _, ok) = pathprof_text(&[
        "lines",
        "--map",
        map.to_str().unwrap(),
        profile.to_str().unwrap(),
    ]);
    assert!(ok);
    let (one, err, ok) = pathprof_text(&[
        "lines",
        "--map",
        map.to_str().unwrap(),
        profile.to_str().unwrap(),
        "classify.c",
    ]);
    assert!(ok, "{err}");
    assert_eq!(one, all, "the only source file, named as a plain argument");
    let (_, err, ok) = pathprof_text(&[
        "lines",
        "--map",
        map.to_str().unwrap(),
        profile.to_str().unwrap(),
        "other.c",
    ]);
    assert!(!ok);
    assert!(
        err.contains("none of other.c is a source file of this program"),
        "{err}"
    );
}

/// Every report command on `map` and `profile` (`good` is an undamaged
/// profile of the same build, for `diff`): each must exit 0 and render
/// something; returns the stderr of each, by command.
fn every_report(b: &Built, map: &Path, profile: &Path, good: &Path) -> Vec<(String, String)> {
    let (m, p, g) = (
        map.to_str().unwrap(),
        profile.to_str().unwrap(),
        good.to_str().unwrap(),
    );
    let html = b.path("html");
    let html = html.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["report", "--map", m, p],
        vec!["report", "--format", "json", "--map", m, p],
        vec!["paths", "--map", m, p],
        vec!["lines", "--map", m, p],
        vec!["funcs", "--map", m, p],
        vec!["files", "--map", m, p],
        vec!["coverage", "--map", m, p],
        vec!["predict", "--map", m, p],
        vec!["diff", "--map", m, g, p],
        vec!["dot", "--map", m, "--function", "main", "--profile", p],
        vec!["export", "--format", "lcov", "--map", m, p],
        vec!["export", "--format", "json", "--map", m, p],
        vec!["html", "--map", m, p, "-o", html],
    ];
    runs.into_iter()
        .map(|args| {
            let (out, err, ok) = pathprof_text(&args);
            assert!(ok, "{args:?} refused the profile: {err}");
            let rendered = !out.trim().is_empty() || Path::new(html).join("index.html").exists();
            assert!(rendered, "{args:?} rendered nothing: {err}");
            (args[..2].join(" "), err)
        })
        .collect()
}

/// Rewrites `profile` into `to` with `damage` applied to function `index`.
fn damaged(
    profile: &Path,
    to: &Path,
    index: usize,
    damage: impl FnOnce(&mut pathprof_format::RawFunction),
) {
    let mut raw = pathprof_format::RawProfile::decode(&std::fs::read(profile).unwrap()).unwrap();
    let f = raw
        .functions
        .iter_mut()
        .find(|f| f.index as usize == index)
        .expect("the function has counts");
    damage(f);
    std::fs::write(to, raw.encode()).unwrap();
}

/// A path counter damaged so that flow cannot balance. `main`'s loop at -O0:
/// b1 tests `i < 10`, b2 calls `classify`, b3 increments and jumps back. Its
/// run counts path "after the backedge, b1 leaves the loop, returns" once;
/// counted 3 times instead, b1 is entered 11 times (1 call, 10 backedges)
/// but left 13 times (10 into the body, 3 out of the loop): an imbalance of 2.
#[test]
fn reports_render_counts_that_do_not_balance() {
    let b = build("path");
    let edge = build("edge");
    let map = b.path("classify-path.ppmap");
    let good = b.path("classify-path.pprof");
    let report = json_report(&map, &good);
    let (index, main) = function_index(&report, "main");
    assert_eq!(main["flow_imbalance"], 0);
    assert_eq!(main["lost_paths"], 0);
    let leaving = main["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| !p["start"].is_null() && p["exit"].is_null())
        .expect("the path leaving the loop");
    assert_eq!(leaving["count"], 1);
    let (id, header) = (
        leaving["id"].as_u64().unwrap(),
        leaving["blocks"][0].as_u64().unwrap(),
    );
    let bad = b.path("damaged.pprof");
    damaged(&good, &bad, index, |f| {
        let p = f.paths.iter_mut().find(|p| p.0 == id).unwrap();
        p.1 = 3;
    });

    for (cmd, err) in every_report(&b, &map, &bad, &good) {
        let want = "pathprof: warning: counts do not balance in 1 function (main: 2): ";
        assert!(err.contains(want), "{cmd}: expected `{want}` in: {err}");
    }
    let report = json_report(&map, &bad);
    let (_, main) = function_index(&report, "main");
    assert_eq!(main["flow_imbalance"], 2);
    assert_eq!(main["lost_paths"], 0);
    assert_eq!(main["entry_count"], 1);
    let count = |b: u64| main["blocks"][b as usize]["count"].as_u64().unwrap();
    assert_eq!(count(header), 11, "flow into the loop header");
    let (_, classify) = function_index(&report, "classify");
    assert_eq!(classify["flow_imbalance"], 0);

    // verify fails, naming the function, the block and its flows.
    let (out, _, ok) = pathprof_text(&[
        "verify",
        "--map",
        map.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--edge-map",
        edge.path("classify-edge.ppmap").to_str().unwrap(),
        edge.path("classify-edge.pprof").to_str().unwrap(),
    ]);
    assert!(!ok, "verify must fail on counts that do not balance: {out}");
    let want = format!("main: block b{header} (line 12): 11 in, 13 out");
    assert!(out.contains(&want), "expected `{want}` in: {out}");
    assert!(out.contains("UNBALANCED"), "{out}");
}

/// The profile's own facts: `main` entered once but 3 processes (1 of them
/// forked) recorded: 1 of the 2 that entered `main` ended inside a call from
/// it uncounted. 4 threads: exact in a build with per-thread counters; in a
/// map of a build without them (and without --atomic), counts may have lost
/// increments.
#[test]
fn processes_and_threads_are_reported() {
    let b = build("path");
    let map = b.path("classify-path.ppmap");
    let good = b.path("classify-path.pprof");
    let mut raw = pathprof_format::RawProfile::decode(&std::fs::read(&good).unwrap()).unwrap();
    raw.processes = 3;
    raw.forked = 1;
    raw.threads = 4;
    let facts = b.path("facts.pprof");
    std::fs::write(&facts, raw.encode()).unwrap();
    let report = json_report(&map, &facts);
    assert_eq!(report["processes"], 3);
    assert_eq!(report["forked_processes"], 1);
    assert_eq!(report["threads"], 4);
    assert_eq!(report["exact"], true, "per-thread counters");
    let (_, main) = function_index(&report, "main");
    assert_eq!(main["entry_count"], 1);
    assert_eq!(main["lost_paths"], 1);
    assert_eq!(main["flow_imbalance"], 0);
    let (_, err, ok) = pathprof_text(&[
        "report",
        "--map",
        map.to_str().unwrap(),
        facts.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    for want in [
        "pathprof: warning: 1 of 2 processes ended inside a call from main;",
        "--early-exit",
    ] {
        assert!(err.contains(want), "expected `{want}` in: {err}");
    }
    assert!(!err.contains("thread(s) ran"), "{err}");
    // The same profile read with the map of a build whose threads shared
    // counters (made before per-thread counters).
    let mut old =
        pathprof_core::map::MapFile::from_bytes(&std::fs::read(&map).unwrap(), "map").unwrap();
    assert!(old.per_thread);
    old.per_thread = false;
    let shared = b.path("shared.ppmap");
    pathprof_io::map::write(&old, &shared).unwrap();
    let report = json_report(&shared, &facts);
    assert_eq!(report["exact"], false);
    let (_, err, ok) = pathprof_text(&[
        "report",
        "--map",
        shared.to_str().unwrap(),
        facts.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let want = "pathprof: warning: 4 thread(s) ran in a build whose threads shared counters";
    assert!(err.contains(want), "expected `{want}` in: {err}");
    // The undamaged run: one process, no threads, exact.
    let report = json_report(&map, &good);
    assert_eq!(report["threads"], 0);
    assert_eq!(report["exact"], true);
    assert_eq!(function_index(&report, "main").1["lost_paths"], 0);
}
