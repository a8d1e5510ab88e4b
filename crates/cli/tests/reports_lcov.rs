//! `pathprof export --format lcov` on a real program: `genhtml` (Debian's lcov,
//! installed by scripts/install-deps.sh) must accept the tracefile without a
//! warning, and its line counts must be exactly those `pathprof lines` prints.

mod reports_common;

use reports_common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Per source file, per line: the `DA` counts of a tracefile.
fn da_counts(tracefile: &str) -> BTreeMap<String, BTreeMap<u32, u64>> {
    let mut out: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut file = String::new();
    for line in tracefile.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = f.to_string();
        } else if let Some(da) = line.strip_prefix("DA:") {
            let (l, c) = da.split_once(',').unwrap();
            out.entry(file.clone())
                .or_default()
                .insert(l.parse().unwrap(), c.parse().unwrap());
        }
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
    let out = Command::new("genhtml")
        .args(extra)
        .arg("-o")
        .arg(out_dir)
        .arg(tracefile)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "genhtml failed:\n{text}");
    assert!(!text.contains("WARNING"), "genhtml warned:\n{text}");
    assert!(out_dir.join("index.html").exists());
}

#[test]
fn genhtml_accepts_the_tracefile_and_counts_match_lines() {
    let p = build("hot.c", "path");
    let profile = p.run(&["100"], "hot.pprof");
    let tracefile = p.dir.path().join("hot.info");
    pathprof_ok([
        "export".as_ref(),
        "--format".as_ref(),
        "lcov".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
        "-o".as_ref(),
        tracefile.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&tracefile).unwrap();
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
    let p = build("hot.c", "edge");
    let profile = p.run(&["10"], "hot.pprof");
    let moved = p.dir.path().join("elsewhere");
    std::fs::create_dir_all(&moved).unwrap();
    let relocated = moved.join("hot.c");
    std::fs::rename(&p.source, &relocated).unwrap();
    let tracefile = p.dir.path().join("hot.info");
    pathprof_ok([
        "export".as_ref(),
        "--format".as_ref(),
        "lcov".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
        "--source-root".as_ref(),
        moved.as_os_str(),
        "-o".as_ref(),
        tracefile.as_os_str(),
    ]);
    let text = std::fs::read_to_string(&tracefile).unwrap();
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
fn block_profiles_have_lines_but_no_branches() {
    let p = build("hot.c", "block");
    let profile = p.run(&["10"], "hot.pprof");
    let text = pathprof_ok([
        "export".as_ref(),
        "--format".as_ref(),
        "lcov".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        profile.as_os_str(),
    ]);
    assert!(!text.contains("BRDA:"), "{text}");
    let hot = line_of(&p.source, "/* HOT */");
    // 20 calls of step, 20 - 2 of them (7 and 14) take the HOT return.
    assert!(text.contains(&format!("\nDA:{hot},18\n")), "{text}");
    let tracefile = p.dir.path().join("hot.info");
    std::fs::write(&tracefile, &text).unwrap();
    genhtml(&tracefile, &p.dir.path().join("genhtml"), &[]);
}
