//! Reading `pathprof report --format json`: typed, as the contract's types
//! (`pathprof_report::json`) with what the end-to-end tests ask of them beyond
//! the contract's fields, and untyped, as JSON values; and the other reports'
//! text (LCOV tracefiles, lines of a text report).

use super::command::{describe, stdout_of, PATHPROF};
use super::run::{execute, Run, RUN_TIMEOUT};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

pub use pathprof_report::json::{Block, Edge, Function, Report};

/// A `pathprof report` that did not succeed.
#[derive(Debug)]
pub struct Failure {
    pub command: String,
    pub run: Run,
}

/// `pathprof report --map MAP PROFILE --format json`, parsed. Panics when the
/// command succeeds but its output is not a report as the contract describes.
pub fn report(map: &Path, profile: &Path) -> Result<Report, Failure> {
    let mut cmd = Command::new(PATHPROF);
    cmd.arg("report")
        .arg("--map")
        .arg(map)
        .arg(profile)
        .args(["--format", "json"]);
    let out = execute(&mut cmd, Some(RUN_TIMEOUT));
    let command = describe(&cmd);
    if out.status != Some(0) {
        return Err(Failure { command, run: out });
    }
    let value: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command} printed something that is not JSON ({e}):\n{}",
            excerpt(&out.stdout)
        )
    });
    let missing = missing_keys(&value);
    if !missing.is_empty() {
        panic!(
            "{command}: the report lacks keys of the contract:\n  {}\n{}",
            missing.join("\n  "),
            excerpt(&out.stdout)
        );
    }
    Ok(serde_json::from_value(value).unwrap_or_else(|e| {
        panic!(
            "{command}: the report does not match the contract: {e}\n{}",
            excerpt(&out.stdout)
        )
    }))
}

fn excerpt(s: &str) -> String {
    if s.len() > 3000 {
        let mut end = 3000;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} bytes)", &s[..end], s.len())
    } else {
        s.to_string()
    }
}

/// How a path ended: `None` leaving the function, else `[from, to]`.
pub type PathExit = Option<(u32, Option<u32>)>;

/// The report's function names (for messages).
pub fn names(r: &Report) -> Vec<&str> {
    r.functions.iter().map(|f| f.name.as_str()).collect()
}

/// What the tests ask of a function beyond the contract's fields.
pub trait FunctionExt {
    /// Ids of the blocks whose first line is `line`.
    fn blocks_on(&self, line: u32) -> Vec<u32>;
    /// The summed count of the blocks whose first line is `line`, `None` when
    /// no block starts on it.
    fn line_count(&self, line: u32) -> Option<u64>;
    /// Returns along resume edges (after `fork`, `setjmp`): their counts.
    fn resume_returns(&self) -> u64;
    /// Summed edge counts per `(from, to)` pair (multi-edges added up).
    fn edge_sums(&self) -> BTreeMap<(u32, u32), u64>;
    fn has_out_edges(&self, b: u32) -> bool;
    /// Executions whose last partial path was lost (0 in block mode).
    fn lost(&self) -> u64;
}

impl FunctionExt for Function {
    /// Ids of the blocks whose first line is `line`.
    fn blocks_on(&self, line: u32) -> Vec<u32> {
        self.blocks
            .iter()
            .filter(|b| b.line == Some(line))
            .map(|b| b.id)
            .collect()
    }

    /// The summed count of the blocks whose first line is `line`, `None` when no
    /// block starts on it.
    fn line_count(&self, line: u32) -> Option<u64> {
        let on: Vec<&Block> = self
            .blocks
            .iter()
            .filter(|b| b.line == Some(line))
            .collect();
        (!on.is_empty()).then(|| on.iter().map(|b| b.count).sum())
    }

    fn resume_returns(&self) -> u64 {
        self.edges
            .iter()
            .filter(|e| e.resume)
            .filter_map(|e| e.count)
            .sum()
    }

    fn edge_sums(&self) -> BTreeMap<(u32, u32), u64> {
        let mut m = BTreeMap::new();
        for e in &self.edges {
            *m.entry((e.from, e.to)).or_insert(0) += e.count.unwrap_or(0);
        }
        m
    }

    fn has_out_edges(&self, b: u32) -> bool {
        self.edges.iter().any(|e| e.from == b)
    }

    fn lost(&self) -> u64 {
        self.lost_paths.unwrap_or(0)
    }
}

/// Keys the contract lists that are absent from `v` (present-but-null is fine).
fn missing_keys(v: &Value) -> Vec<String> {
    let mut missing = Vec::new();
    let mut need = |obj: &Value, keys: &[&str], at: &str| {
        for k in keys {
            if obj.get(k).is_none() {
                missing.push(format!("{at}.{k}"));
            }
        }
    };
    need(
        v,
        &[
            "format",
            "version",
            "mode",
            "processes",
            "forked_processes",
            "threads",
            "exact",
            "functions",
        ],
        "report",
    );
    let path_mode = v.get("mode").and_then(Value::as_str) == Some("path");
    for (i, f) in v["functions"].as_array().into_iter().flatten().enumerate() {
        let at = format!("functions[{i}]");
        need(
            f,
            &[
                "name",
                "file",
                "line",
                "entry_count",
                "potential_paths",
                "blocks",
                "edges",
                "flow_imbalance",
            ],
            &at,
        );
        if path_mode {
            need(f, &["paths"], &at);
        }
        for (j, b) in f["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .take(1)
        {
            need(
                b,
                &["id", "line", "instructions", "count"],
                &format!("{at}.blocks[{j}]"),
            );
        }
        for (j, e) in f["edges"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .take(1)
        {
            need(e, &["from", "to", "count"], &format!("{at}.edges[{j}]"));
        }
        for (j, p) in f["paths"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .take(1)
        {
            need(
                p,
                &["id", "count", "blocks", "exit"],
                &format!("{at}.paths[{j}]"),
            );
        }
    }
    missing
}

// ---------------------------------------------------------------------------
// The report as JSON values

/// `cmd` given `--map MAP` for each of `maps`.
pub fn with_maps<'c, S: AsRef<OsStr>>(cmd: &'c mut Command, maps: &[S]) -> &'c mut Command {
    for map in maps {
        cmd.arg("--map").arg(map);
    }
    cmd
}

/// `pathprof report --format json PROFILE --map MAP...` run in `dir` (relative
/// names are under it), which must succeed, parsed.
pub fn json_report_in<S: AsRef<OsStr>>(
    dir: &Path,
    profile: impl AsRef<OsStr>,
    maps: &[S],
) -> Value {
    let mut cmd = Command::new(PATHPROF);
    cmd.current_dir(dir)
        .args(["report", "--format", "json"])
        .arg(profile);
    serde_json::from_slice(&stdout_of(with_maps(&mut cmd, maps))).unwrap()
}

/// `pathprof report --format json --map MAP PROFILE` where the test runs,
/// which must succeed, parsed.
pub fn json_report(map: &Path, profile: &Path) -> Value {
    json_report_in(Path::new("."), profile, &[map])
}

/// The function called `name` in a JSON report, and its index in the list.
pub fn function_index<'a>(report: &'a Value, name: &str) -> (usize, &'a Value) {
    report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .find(|(_, f)| f["name"] == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The function called `name` in a JSON report.
pub fn function<'a>(report: &'a Value, name: &str) -> &'a Value {
    function_index(report, name).1
}

// ---------------------------------------------------------------------------
// Other reports' text

/// The line of `text` containing `needle`, for readable assertions.
pub fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// The `DA` records of an LCOV tracefile, in order: (the `SF` file they are
/// under, line, count; a checksum after them is left out).
pub fn lcov_lines(tracefile: &str) -> Vec<(&str, u32, u64)> {
    let mut out = Vec::new();
    let mut file = "";
    for line in tracefile.lines() {
        if let Some(f) = line.strip_prefix("SF:") {
            file = f;
        } else if let Some(da) = line.strip_prefix("DA:") {
            let mut parts = da.split(',');
            let l = parts.next().unwrap().parse().unwrap();
            let c = parts.next().unwrap().parse().unwrap();
            out.push((file, l, c));
        }
    }
    out
}
