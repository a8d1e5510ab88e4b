//! `pathprof dot` on a real program: the path DAG of a loop (dummy edges, the
//! backedge, values and increments), hot paths from a profile, `--hot N` and
//! the warning for big graphs, the CFG of a block-mode build, and near names
//! for a misspelt function. When Graphviz is installed, `dot -Tsvg` must
//! accept every graph.

use crate::support::build::{build_fixture, fixture, CLANG};
use crate::support::command::{have, pathprof_ok, pathprof_output, succeed};
use crate::support::report::{function, json_report};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};

/// Checks `text` with Graphviz when it is installed.
fn graphviz_accepts(text: &str) {
    if !have("dot", "-V") {
        eprintln!("graphviz `dot` is not installed: skipping the syntax check");
        return;
    }
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "dot rejected the graph: {stderr}\n{text}"
    );
    assert!(stderr.trim().is_empty(), "dot warned: {stderr}\n{text}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("<svg"));
}

#[test]
fn path_dag_of_a_loop_with_hot_paths() {
    let p = build_fixture("hot.c", "path");
    let profile = p.run(&["100"], "hot.pprof");
    let plain = dot(&p.map, "main", None);
    assert!(plain.starts_with("digraph \"pathdag.main\" {"), "{plain}");
    assert!(plain.contains("ENTRY [shape=ellipse"), "{plain}");
    assert!(plain.contains("-> EXIT"), "{plain}");
    assert!(plain.contains("Val 0"), "{plain}");
    assert!(
        plain.contains("\\nInc "),
        "chords carry increments: {plain}"
    );
    // The loop's backedge: dummy ENTRY->head and latch->EXIT, and the CFG edge.
    assert!(plain.contains("(backedge b"), "{plain}");
    assert!(plain.contains("style=dashed"), "{plain}");
    assert!(
        plain.contains("[label=\"backedge\", style=dotted"),
        "{plain}"
    );
    assert!(
        plain.contains("hot.c:"),
        "blocks carry source lines: {plain}"
    );
    assert!(!plain.contains("penwidth"), "no profile, no hot paths");
    graphviz_accepts(&plain);

    let hot = dot(&p.map, "main", Some(&profile));
    // 100 iterations of the loop as written (instrumented before the
    // optimiser rotates it): its test runs 101 times, the body 100, the
    // backedge is taken 100 times.
    assert!(hot.contains("\\n×101\"]"), "{hot}");
    assert!(hot.contains("\\n×100\"]"), "{hot}");
    assert!(hot.contains("backedge\\n100×"), "{hot}");
    assert!(
        hot.contains("penwidth=6.00"),
        "the busiest edge is the widest: {hot}"
    );
    assert!(hot.contains("color=\"#c0392b\""), "{hot}");
    graphviz_accepts(&hot);

    let step = dot(&p.map, "step", Some(&profile));
    // step runs 200 times; 172 take the HOT return.
    assert!(step.contains("\\n172×"), "{step}");
    assert!(step.contains("\\n28×"), "{step}");
    graphviz_accepts(&step);
}

/// The `bN` nodes a graph declares.
fn declared_blocks(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix('b'))
        .filter_map(|l| l.split_once(" [label="))
        .filter(|(n, _)| n.bytes().all(|c| c.is_ascii_digit()))
        .map(|(n, _)| format!("b{n}"))
        .collect()
}

#[test]
fn hot_draws_only_the_hottest_paths_blocks() {
    let p = build_fixture("hot.c", "path");
    let profile = p.run(&["100"], "hot.pprof");
    // The hottest path of main (ties to the lowest id), from the JSON report.
    let json = json_report(&p.map, &profile);
    let main = function(&json, "main");
    let paths = main["paths"].as_array().unwrap();
    assert!(paths.len() > 1, "main's loop has several paths: {main}");
    let hottest = paths
        .iter()
        .filter(|p| p["count"].as_u64().unwrap() > 0)
        .min_by_key(|p| {
            (
                std::cmp::Reverse(p["count"].as_u64().unwrap()),
                p["id"].as_u64().unwrap(),
            )
        })
        .unwrap();
    let want: BTreeSet<String> = hottest["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| format!("b{}", b.as_u64().unwrap()))
        .collect();

    let full = dot(&p.map, "main", Some(&profile));
    let out = dot_output(&p.map, "main", Some(&profile), &["--hot", "1"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(declared_blocks(&text), want, "{text}");
    assert!(
        declared_blocks(&full).len() > want.len(),
        "--hot 1 leaves blocks out: {full}"
    );
    assert!(
        text.contains(&format!(
            "--hot 1: the 1 hottest of {} executed paths",
            paths.len()
        )),
        "the label says what was left out: {text}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("warning"),
        "a small graph needs no warning"
    );
    graphviz_accepts(&text);

    // --hot needs a profile.
    let out = dot_output(&p.map, "main", None, &["--hot", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--profile"));
}

#[test]
fn big_graphs_come_with_a_warning() {
    let p = build_fixture("hot.c", "path");
    let run = |limit: Option<&str>| {
        let extra = match limit {
            Some(l) => vec!["--node-limit", l],
            None => vec![],
        };
        let out = dot_output(&p.map, "main", None, &extra);
        assert!(out.status.success());
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (text, err) = run(None);
    assert!(err.is_empty(), "main is far below 200 nodes: {err}");
    // ENTRY and EXIT are nodes too.
    let nodes = declared_blocks(&text).len() + 2;
    let (over, err) = run(Some("3"));
    assert_eq!(over, text, "the graph is drawn all the same");
    assert!(
        err.contains(&format!(
            "pathprof: warning: the graph of main has {nodes} nodes (more than 3)"
        )),
        "{err}"
    );
    assert!(err.contains("--hot N"), "{err}");
    let (_, err) = run(Some(&nodes.to_string()));
    assert!(err.is_empty(), "{err}");

    let help = pathprof_ok(["dot", "--help"]);
    assert!(help.contains("--hot <N>"), "{help}");
    assert!(help.contains("more than 200"), "{help}");
    assert!(!help.contains("--node-limit"), "a hidden option: {help}");
}

#[test]
fn misspelt_functions_get_suggestions() {
    let p = build_fixture("hot.c", "path");
    let out = pathprof_output([
        "dot".as_ref(),
        "--map".as_ref(),
        p.map.as_os_str(),
        "--function".as_ref(),
        "stpe".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("no function named `stpe`"), "{err}");
    assert!(err.contains("did you mean step"), "{err}");
}

#[test]
fn block_mode_draws_the_cfg_with_counts() {
    let p = build_fixture("hot.c", "block");
    let profile = p.run(&["100"], "hot.pprof");
    let text = dot(&p.map, "step", Some(&profile));
    assert!(
        text.contains("control-flow graph (block counts, from edge counts)"),
        "{text}"
    );
    assert!(text.contains("ENTRY -> b0 [label=\"200×\"]"), "{text}");
    assert!(text.contains("\\n×172\"]"), "{text}");
    graphviz_accepts(&text);
}

#[test]
fn instrument_writes_one_pathdag_file_per_function() {
    let dir = tempfile::tempdir().unwrap();
    let bitcode = dir.path().join("hot.bc");
    // clang-22: scripts/install-deps.sh installs it.
    succeed(
        Command::new(CLANG)
            .args(["-O1", "-g", "-c", "-emit-llvm"])
            .arg(fixture("hot.c"))
            .arg("-o")
            .arg(&bitcode),
    );
    let dots = dir.path().join("dots");
    pathprof_ok([
        "instrument".as_ref(),
        bitcode.as_os_str(),
        "-o".as_ref(),
        dir.path().join("hot.inst.bc").as_os_str(),
        "--dot-dir".as_ref(),
        dots.as_os_str(),
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&dots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["pathdag.main.dot", "pathdag.note.dot", "pathdag.step.dot"]
    );
    for name in names {
        let text = std::fs::read_to_string(dots.join(&name)).unwrap();
        assert!(text.contains("Val "), "{name}: {text}");
        graphviz_accepts(&text);
    }
}

/// `pathprof dot --map MAP --function F [--profile P]`.
fn dot(map: &std::path::Path, function: &str, profile: Option<&std::path::Path>) -> String {
    let out = dot_output(map, function, profile, &[]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `pathprof dot --map MAP --function F [--profile P] EXTRA...`, which may fail.
fn dot_output(
    map: &std::path::Path,
    function: &str,
    profile: Option<&std::path::Path>,
    extra: &[&str],
) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "dot".as_ref(),
        "--map".as_ref(),
        map.as_os_str(),
        "--function".as_ref(),
        function.as_ref(),
    ];
    if let Some(p) = profile {
        args.extend(["--profile".as_ref(), p.as_os_str()]);
    }
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    pathprof_output(args)
}
