//! `pathprof export --format lcov` on a real program: `genhtml` (Debian's lcov,
//! installed by scripts/install-deps.sh) must accept the tracefile without a
//! warning, and its line counts must be exactly those `pathprof lines` prints.

use crate::support::build::{build_fixture, cc, line_of, program_dir, Fixture};
use crate::support::command::{have, pathprof_ok, succeed};
use crate::support::report::lcov_lines;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// `pathprof export --format lcov` of `profile`, with `extra` arguments, into
/// `name` in the program's directory: the tracefile's path and text.
fn export_lcov(
    p: &Fixture,
    profile: &Path,
    extra: &[&OsStr],
    name: &str,
) -> (std::path::PathBuf, String) {
    let tracefile = p.dir.path().join(name);
    let mut args: Vec<&OsStr> = vec![
        "export".as_ref(),
        "--format".as_ref(),
        "lcov".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
    ];
    args.extend(extra);
    args.extend(["-o".as_ref(), tracefile.as_os_str()]);
    pathprof_ok(args);
    let text = std::fs::read_to_string(&tracefile).unwrap();
    (tracefile, text)
}

/// Per source file, per line: the `DA` counts of a tracefile.
fn da_counts(tracefile: &str) -> BTreeMap<String, BTreeMap<u32, u64>> {
    let mut out: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    for (file, line, count) in lcov_lines(tracefile) {
        out.entry(file.to_string()).or_default().insert(line, count);
    }
    out
}

/// Per source file, per executable line: the counts `pathprof lines` prints
/// (`#####` is a line that never ran, `-` a line without code).
fn listing_counts(listing: &str) -> BTreeMap<String, BTreeMap<u32, u64>> {
    let mut out: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut file = String::new();
    for line in listing.lines() {
        if let Some(f) = line
            .strip_prefix("==> ")
            .and_then(|l| l.strip_suffix(" <=="))
        {
            file = f.to_string();
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(margin), Some(number)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(number) = number.parse::<u32>() else {
            continue;
        };
        let count = match margin {
            "-" => continue,
            "#####" => 0,
            n => match n.parse() {
                Ok(n) => n,
                Err(_) => continue,
            },
        };
        out.entry(file.clone()).or_default().insert(number, count);
    }
    out
}

fn genhtml(tracefile: &Path, out_dir: &Path, extra: &[&str]) {
    assert!(
        have("genhtml", "--version"),
        "genhtml is not installed: run scripts/install-deps.sh (it installs lcov)"
    );
    quiet_success(
        Command::new("genhtml")
            .args(extra)
            .arg("-o")
            .arg(out_dir)
            .arg(tracefile),
    );
    assert!(out_dir.join("index.html").exists());
}

/// Runs an lcov tool, which must succeed without a warning; its output.
fn quiet_success(command: &mut Command) -> String {
    let out = succeed(command);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let tool = command.get_program().to_string_lossy().into_owned();
    assert!(!text.contains("WARNING"), "{tool} warned:\n{text}");
    text
}

#[test]
fn genhtml_accepts_the_tracefile_and_counts_match_lines() {
    let p = build_fixture("hot.c", "path");
    let profile = p.run(&["100"], "hot.pprof");
    let (tracefile, text) = export_lcov(&p, &profile, &[], "hot.info");
    genhtml(&tracefile, &p.dir.path().join("genhtml"), &[]);
    genhtml(
        &tracefile,
        &p.dir.path().join("genhtml-branches"),
        &["--branch-coverage"],
    );

    // The same counts as `pathprof lines`, file by file.
    let listing = pathprof_ok([
        "lines".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
    ]);
    assert_eq!(
        da_counts(&text),
        listing_counts(&listing),
        "{text}\n{listing}"
    );

    // Hand-checked records of hot.c.
    let source = p.source.display().to_string();
    let record = text
        .split("end_of_record\n")
        .find(|r| r.contains(&format!("SF:{source}\n")))
        .unwrap_or_else(|| panic!("no record for {source}:\n{text}"));
    let hot = line_of(&p.source, "/* HOT */");
    let cold = line_of(&p.source, "/* COLD */");
    let never = line_of(&p.source, "/* NEVER */");
    assert!(record.contains(&format!("\nDA:{hot},172\n")), "{record}");
    assert!(record.contains(&format!("\nDA:{cold},28\n")), "{record}");
    assert!(record.contains(&format!("\nDA:{never},0\n")), "{record}");
    assert!(record.contains("\nFNDA:200,step\n"), "{record}");
    assert!(record.contains("\nFNDA:1,main\n"), "{record}");
    assert!(record.contains("\nFNF:3\nFNH:3\n"), "{record}");
    // step's `if`: 28 of 200 calls go to the COLD arm.
    let if_line = line_of(&p.source, "if (x % 7 == 0)");
    let branches: Vec<&str> = record
        .lines()
        .filter(|l| l.starts_with(&format!("BRDA:{if_line},")))
        .collect();
    let mut taken: Vec<&str> = branches
        .iter()
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    taken.sort();
    assert_eq!(taken, ["172", "28"], "{record}");
    // The `if (argc > 2)` never took its NEVER arm.
    let argc_line = line_of(&p.source, "if (argc > 2)");
    let mut taken: Vec<&str> = record
        .lines()
        .filter(|l| l.starts_with(&format!("BRDA:{argc_line},")))
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    taken.sort();
    assert_eq!(taken, ["0", "1"], "{record}");
    let brf: usize = record.lines().filter(|l| l.starts_with("BRDA:")).count();
    assert!(record.contains(&format!("\nBRF:{brf}\n")), "{record}");
}

#[test]
fn moved_sources_are_found_under_the_source_root() {
    let p = build_fixture("hot.c", "edge");
    let profile = p.run(&["10"], "hot.pprof");
    let moved = p.dir.path().join("elsewhere");
    std::fs::create_dir_all(&moved).unwrap();
    let relocated = moved.join("hot.c");
    std::fs::rename(&p.source, &relocated).unwrap();
    let source_root: [&OsStr; 2] = ["--source-root".as_ref(), moved.as_os_str()];
    let (tracefile, text) = export_lcov(&p, &profile, &source_root, "hot.info");
    assert!(
        text.contains(&format!("SF:{}\n", relocated.display())),
        "{text}"
    );
    genhtml(
        &tracefile,
        &p.dir.path().join("genhtml"),
        &["--branch-coverage"],
    );
}

#[test]
fn block_profiles_have_the_branches_of_their_chords_unless_every_block_counts() {
    let hot = |p: &Fixture| line_of(&p.source, "/* HOT */");
    let lines_of = |text: &str, prefix: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_string)
            .collect()
    };
    // Block mode counts on a spanning tree's chords: the edges, and so the
    // branches, are known, and equal edge mode's.
    let block = build_fixture("hot.c", "block");
    let profile = block.run(&["10"], "hot.pprof");
    let (tracefile, text) = export_lcov(&block, &profile, &[], "hot.info");
    // 20 calls of step, 20 - 2 of them (7 and 14) take the HOT return.
    assert!(
        text.contains(&format!("\nDA:{},18\n", hot(&block))),
        "{text}"
    );
    let edge = build_fixture("hot.c", "edge");
    let edge_profile = edge.run(&["10"], "hot.pprof");
    let (_, edge_text) = export_lcov(&edge, &edge_profile, &[], "hot.info");
    let branches = lines_of(&text, "BRDA:");
    assert!(!branches.is_empty(), "{text}");
    assert_eq!(branches, lines_of(&edge_text, "BRDA:"));
    genhtml(&tracefile, &block.dir.path().join("genhtml"), &[]);
    // A counter in every block: lines, no branches.
    let exe = block.dir.path().join("every");
    let source = block.source.display().to_string();
    let map = cc(
        block.dir.path(),
        "block",
        &["--every-block", "-O1", "-g", &source],
        &exe,
    );
    let every = Fixture { exe, map, ..block };
    let profile = every.run(&["10"], "every.pprof");
    let (_, text) = export_lcov(&every, &profile, &[], "every.info");
    assert!(!text.contains("BRDA:"), "{text}");
    assert!(
        text.contains(&format!("\nDA:{},18\n", hot(&every))),
        "{text}"
    );
    assert_eq!(lines_of(&text, "DA:"), lines_of(&edge_text, "DA:"));
}

/// A header whose `static inline` function has one copy in each of three
/// translation units, each naming the header differently: `sub/../h.h` and
/// `./h.h` in `#include`s, `lib/../sub/../h.h` through `-Ilib/../sub/..`.
const HEADER: &str = "\
static inline int tri(int n) { /* TRI */
  int s = 0;                   /* SUM */
  for (int i = 0; i < n; i++)  /* LOOP */
    s += i;                    /* BODY */
  return s;                    /* RET */
}
";

const A_C: &str = "\
#include \"sub/../h.h\"
int a(int n) { return tri(n); }
";

const B_C: &str = "\
#include \"h.h\"
int b(int n) { return tri(n) + 1; }
";

const M_C: &str = "\
#include \"./h.h\"
int a(int);
int b(int);
int main(void) { return a(3) + a(4) + b(5) + tri(6) == 3 + 6 + 10 + 1 + 15 ? 0 : 1; }
";

/// Builds the program of [`HEADER`] at -O0 (the copies stay functions).
fn build_header_program(mode: &str) -> Fixture {
    let dir = program_dir();
    std::fs::create_dir_all(dir.path().join("sub")).unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    for (name, text) in [
        ("h.h", HEADER),
        ("a.c", A_C),
        ("lib/b.c", B_C),
        ("m.c", M_C),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let exe = dir.path().join("prog");
    let args = ["-O0", "-g", "-Ilib/../sub/..", "a.c", "lib/b.c", "m.c"];
    let map = cc(dir.path(), mode, &args, &exe);
    // Debug info names files under the compiler's working directory as it saw it.
    let real = dir.path().canonicalize().unwrap();
    Fixture {
        source: real.join("h.h"),
        dir,
        exe,
        map,
    }
}

/// The source files the fragments of a map name, each once.
fn map_files(map: &Path) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for fragment in pathprof_io::map::read_fragments(map).unwrap() {
        for name in fragment.files {
            if !files.contains(&name) {
                files.push(name);
            }
        }
    }
    files
}

#[test]
fn one_header_spelled_three_ways_is_one_file_and_one_record() {
    let p = build_header_program("path");
    let files = map_files(&p.map);
    let header = p.source.display().to_string();
    let dir = p.source.parent().unwrap().display().to_string();
    let mut expected = ["a.c", "lib/b.c", "m.c", "h.h"].map(|f| format!("{dir}/{f}"));
    expected.sort();
    let mut got = files.clone();
    got.sort();
    assert_eq!(got, expected, "the map's files");

    let profile = p.run(&[], "prog.pprof");
    let (tracefile, text) = export_lcov(&p, &profile, &[], "prog.info");
    let sf: Vec<&str> = text.lines().filter(|l| l.starts_with("SF:")).collect();
    assert_eq!(sf.len(), 4, "one record per file:\n{text}");
    let records: Vec<&str> = text
        .split("end_of_record\n")
        .filter(|r| r.contains(&format!("SF:{header}\n")))
        .collect();
    assert_eq!(records.len(), 1, "{text}");
    let record = records[0];

    // tri runs 2 times in a.c's copy (n = 3, 4), once in b.c's (n = 5) and
    // once in m.c's (n = 6): 4 calls, 3 + 4 + 5 + 6 = 18 loop bodies, and
    // 18 + 4 loop tests (each call's last test leaves the loop).
    let line = |marker| line_of(&p.source, marker);
    for (marker, count) in [
        ("/* SUM */", 4),
        ("/* LOOP */", 22),
        ("/* BODY */", 18),
        ("/* RET */", 4),
    ] {
        assert!(
            record.contains(&format!("\nDA:{},{count}\n", line(marker))),
            "{marker} ran {count} times:\n{record}"
        );
    }
    // Three copies (one per translation unit), one source function at the
    // line of the definition, called 1 + 1 + 2 times.
    let tri = line("/* TRI */");
    let fns = record
        .lines()
        .filter(|l| l.starts_with(&format!("FN:{tri},tri")))
        .count();
    assert_eq!(fns, 1, "{record}");
    assert!(record.contains("\nFNDA:4,tri\n"), "{record}");
    assert!(record.contains("\nFNF:1\nFNH:1\n"), "{record}");
    // The loop test of the three copies is one branch: 18 times into the body,
    // 4 times out.
    let mut taken: Vec<&str> = record
        .lines()
        .filter(|l| l.starts_with("BRDA:"))
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    taken.sort();
    assert_eq!(taken, ["18", "4"], "{record}");
    assert!(record.contains("\nBRF:2\nBRH:2\n"), "{record}");
    let da = record.lines().filter(|l| l.starts_with("DA:")).count();
    assert!(
        record.contains(&format!("\nLF:{da}\nLH:{da}\n")),
        "{record}"
    );

    // `pathprof lines` shows the header once, with the same counts.
    let listing = pathprof_ok([
        "lines".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
    ]);
    assert_eq!(
        listing.matches(&format!("==> {header} <==")).count(),
        1,
        "{listing}"
    );
    assert_eq!(
        da_counts(&text),
        listing_counts(&listing),
        "{text}\n{listing}"
    );

    // lcov reads it as it is written.
    assert!(have("lcov", "--version"), "lcov is not installed");
    let summary = quiet_success(
        Command::new("lcov")
            .arg("--summary")
            .arg(&tracefile)
            .args(["--rc", "lcov_branch_coverage=1"]),
    );
    let sum = |key: &str| -> usize {
        text.lines()
            .filter_map(|l| l.strip_prefix(key))
            .map(|n| n.parse::<usize>().unwrap())
            .sum()
    };
    for (what, found, hit) in [
        ("lines", sum("LF:"), sum("LH:")),
        ("functions", sum("FNF:"), sum("FNH:")),
        ("branches", sum("BRF:"), sum("BRH:")),
    ] {
        assert!(
            summary.contains(&format!("({hit} of {found} {what})")),
            "lcov counts {what} as the tracefile does:\n{summary}\n{text}"
        );
    }
    genhtml(
        &tracefile,
        &p.dir.path().join("genhtml"),
        &["--branch-coverage"],
    );
}
