//! `pathprof predict` and `pathprof diff` on `reports_fixtures/classify.c`, whose
//! paths are derived by hand.
//!
//! classify() as pathprof sees it (one block per test, one per arm, the return):
//!
//! ```text
//!   b0 x<0 ──> b1 negative ───────────────┐
//!    └──> b2 x==0 ──> b3 zero ────────────┤
//!          └──> b4 x<100 ──> b5 small ────┼──> b7 return
//!                 └──> b6 big ────────────┘
//! ```
//!
//! so its four paths have 3, 4, 5 and 5 blocks. The count_* functions have one
//! block and one path each. main's loop is counted as written (instrumented
//! before the optimiser rotates it): one path from the entry through the test
//! into the body, ending at the backedge; one from the backedge through the
//! test into the body; one through the test to the exit. With n arguments they
//! run 1, n - 1 and 1 times; the test's most frequent out-edge (into the body)
//! predicts the first two and mispredicts the exit path right up to the test
//! (1 of its 2 blocks).
//!
//! B = `3 0 200 -1 3 3 3 0 3`: small 5, zero 2, big 1, negative 1.
//! - Edge counts out of b0: b1 1, b2 8; out of b2: b3 2, b4 6; out of b4: b5 5,
//!   b6 1. The most frequent edges predict b0 b2 b4 b5 b7, the small path.
//! - classify: 1 of 4 paths (25%), 5 of 9 executions (55.6%) predicted entirely.
//!   Mispredicted: negative (1×) right up to b0 (1 of 3 blocks), zero (2×) up to
//!   b2 (2 of 4), big (1×) up to b4 (3 of 5): weighted 8/4 = 2.0 blocks predicted
//!   versus 16/4 = 4.0 measured.
//! - main (9 arguments): 3 paths, 10 executions, 2 paths and 9 executions
//!   predicted.
//! - The four one-path functions are always right: 11 paths, 28 executions in
//!   all, 7 paths and 23 executions predicted (63.6%, 82.1%). Mispredicted: 4
//!   paths, 5 executions, (16 + 2)/5 = 3.6 blocks measured, (8 + 1)/5 = 1.8
//!   predicted.
//!
//! A = `-5 3 7`: negative 1, small 2. Against B:
//! - classify: common negative and small, only B zero and big: static 2/4 = 50%,
//!   dynamic (1 + 5)/9 = 66.7%.
//! - count_zero and count_big ran only in B; count_negative, count_small and main
//!   (its 3 paths: A has 3 arguments) ran the same paths in both.
//! - Total: 7 common, 0 only A, 4 only B: static 7/11 = 63.6%, dynamic
//!   (6 + 1 + 5 + 10)/28 = 78.6%.

use crate::support::build::build_fixture;
use crate::support::command::{pathprof_ok, pathprof_output};
use crate::support::report::{function, json_report, line_with};
use std::collections::{HashMap, HashSet};

const B_ARGS: &[&str] = &["3", "0", "200", "-1", "3", "3", "3", "0", "3"];
const A_ARGS: &[&str] = &["-5", "3", "7"];

/// Per function: path id → (count, instructions along the path once), from the
/// JSON report.
fn paths_of(
    map: &std::path::Path,
    profile: &std::path::Path,
) -> HashMap<String, HashMap<u64, (u64, u64)>> {
    let json = json_report(map, profile);
    let mut out = HashMap::new();
    for f in json["functions"].as_array().unwrap() {
        let instrs: Vec<u64> = f["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["instructions"].as_u64().unwrap())
            .collect();
        let mut paths = HashMap::new();
        for p in f["paths"].as_array().unwrap() {
            let blocks = p["blocks"].as_array().unwrap();
            let n: u64 = blocks
                .iter()
                .map(|b| instrs[b.as_u64().unwrap() as usize])
                .sum();
            paths.insert(p["id"].as_u64().unwrap(), (p["count"].as_u64().unwrap(), n));
        }
        out.insert(f["name"].as_str().unwrap().to_string(), paths);
    }
    out
}

/// The hand derivation assumes classify's CFG as drawn above: check it first
/// so a change in clang shows up as that, not as wrong percentages.
fn check_shape(map: &std::path::Path, profile: &std::path::Path) {
    let json = json_report(map, profile);
    let classify = function(&json, "classify");
    let mut shape: Vec<(usize, u64)> = classify["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["blocks"].as_array().unwrap().len(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect();
    shape.sort();
    assert_eq!(
        shape,
        [(3, 1), (4, 2), (5, 1), (5, 5)],
        "classify's paths (blocks, count) differ from the hand derivation: {classify}"
    );
}

#[test]
fn predict_matches_the_hand_derivation() {
    let p = build_fixture("classify.c", "path");
    let b = p.run(B_ARGS, "ref.pprof");
    check_shape(&p.map, &b);
    let text = pathprof_ok([
        "predict".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        b.as_os_str(),
    ]);
    assert!(
        text.contains("28 executions of 11 distinct paths in 6 executed functions"),
        "{text}"
    );
    assert!(
        text.contains(
            "predicted entirely correctly: 82.1% of executions (23 of 28), 63.6% of distinct paths (7 of 11)"
        ),
        "{text}"
    );
    assert!(
        text.contains("mispredicted paths only (4 distinct, 5 executions):"),
        "{text}"
    );
    let row: Vec<&str> = line_with(&text, " classify").split_whitespace().collect();
    assert_eq!(
        row,
        ["9", "4", "25.0%", "55.6%", "2.0", "/", "4.0", "classify"]
    );
    let row: Vec<&str> = line_with(&text, " count_small")
        .split_whitespace()
        .collect();
    assert_eq!(row, ["5", "1", "100.0%", "100.0%", "-", "count_small"]);
    let measured: Vec<&str> = line_with(&text, "  measured  ")
        .split_whitespace()
        .collect();
    assert_eq!(measured[1], "3.6", "{text}");
    let predicted: Vec<&str> = line_with(&text, "predicted up to the first misprediction")
        .split_whitespace()
        .collect();
    assert_eq!(predicted[6], "1.8", "{text}");
    let row: Vec<&str> = line_with(&text, " main").split_whitespace().collect();
    assert_eq!(
        row,
        ["10", "3", "66.7%", "90.0%", "1.0", "/", "2.0", "main"]
    );
}

#[test]
fn diff_matches_the_hand_derivation() {
    let p = build_fixture("classify.c", "path");
    let a = p.run(A_ARGS, "train.pprof");
    let b = p.run(B_ARGS, "ref.pprof");
    check_shape(&p.map, &b);
    let text = pathprof_ok([
        "diff".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        a.as_os_str(),
        b.as_os_str(),
    ]);
    // Common instructions: B's path executions × instructions, on paths A ran.
    let (pa, pb) = (paths_of(&p.map, &a), paths_of(&p.map, &b));
    let common_instrs = |names: &[&str]| -> (u64, u64) {
        let mut common = 0;
        let mut all = 0;
        for name in names {
            let in_a: HashSet<u64> = pa[*name].keys().copied().collect();
            for (id, (count, instrs)) in &pb[*name] {
                all += count * instrs;
                if in_a.contains(id) {
                    common += count * instrs;
                }
            }
        }
        (common, all)
    };
    let pct = |(c, a): (u64, u64)| format!("{:.1}%", 100.0 * c as f64 / a as f64);

    let (c, all) = common_instrs(&["classify"]);
    let row: Vec<&str> = line_with(&text, " classify").split_whitespace().collect();
    assert_eq!(
        row,
        [
            "2",
            "0",
            "2",
            "50.0%",
            "66.7%",
            &c.to_string(),
            &pct((c, all)),
            "classify"
        ],
        "{text}"
    );
    for only_b in ["count_zero", "count_big"] {
        let row: Vec<&str> = line_with(&text, only_b).split_whitespace().collect();
        assert_eq!(
            row,
            ["0", "0", "1", "0.0%", "0.0%", "0", "0.0%", only_b],
            "{text}"
        );
    }
    assert!(
        text.contains("(3 functions ran the same paths in both)"),
        "{text}"
    );
    let everything = [
        "classify",
        "count_negative",
        "count_zero",
        "count_small",
        "count_big",
        "main",
    ];
    let (c, all) = common_instrs(&everything);
    let row: Vec<&str> = line_with(&text, " total").split_whitespace().collect();
    assert_eq!(
        row,
        [
            "7",
            "0",
            "4",
            "63.6%",
            "78.6%",
            &c.to_string(),
            &pct((c, all)),
            "total"
        ],
        "{text}"
    );
    // Every function's order: the one with most uncovered B executions first.
    let first = text
        .lines()
        .skip_while(|l| !l.contains("common   only A"))
        .nth(1)
        .unwrap();
    assert!(first.ends_with("classify"), "{text}");
}

#[test]
fn predict_and_diff_need_path_profiles() {
    let p = build_fixture("classify.c", "edge");
    let b = p.run(B_ARGS, "ref.pprof");
    let out = pathprof_output([
        "predict".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        b.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("predict needs a path profile"), "{err}");
    assert!(err.contains("built in edge mode"), "{err}");
    let out = pathprof_output([
        "diff".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        b.as_os_str(),
        b.as_os_str(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("diff compares path profiles"), "{err}");
}

#[test]
fn diff_reports_bad_profiles_clearly() {
    let p = build_fixture("classify.c", "path");
    let good = p.run(A_ARGS, "train.pprof");
    let bytes = std::fs::read(&good).unwrap();
    let dir = p.dir.path();
    let truncated = dir.join("truncated.pprof");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let junk = dir.join("junk.pprof");
    std::fs::write(&junk, "not a profile\n").unwrap();
    // A profile of another build: the same source in edge mode.
    let other = build_fixture("classify.c", "edge");
    let other_profile = other.run(A_ARGS, "edge.pprof");
    let cases = [
        (&truncated, "truncated"),
        (&junk, "not a pathprof raw profile"),
        (&other_profile, "another build"),
    ];
    for (bad, expect) in cases {
        for order in [[&good, bad], [bad, &good]] {
            let out = pathprof_output([
                "diff".as_ref(),
                "--map".as_ref(),
                p.map.as_os_str(),
                order[0].as_os_str(),
                order[1].as_os_str(),
            ]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(out.stdout.is_empty(), "no report on error");
            assert!(err.starts_with("pathprof: error: "), "{err}");
            assert!(err.contains(expect), "expected {expect:?} in {err}");
            let name = bad.file_name().unwrap().to_string_lossy();
            assert!(
                err.contains(name.as_ref()),
                "the message names {name}: {err}"
            );
        }
    }
}
