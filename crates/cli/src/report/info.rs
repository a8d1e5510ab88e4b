//! `pathprof info`: what profile files hold, without a map. One table per
//! file, one line per section (build): its build id, mode, the processes
//! (and fork children among them) and threads that wrote it, how many
//! functions have counts, the total of all its counters (slot counters and
//! path counts, before resumes are subtracted), and the executables and
//! shared libraries the build was loaded from. Or the same as JSON.

use pathprof_format::{ProfileFile, RawProfile};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The name of a mode number as the profile records it.
fn mode_name(mode: u32) -> String {
    match pathprof_format::abi::mode_name(mode) {
        "unknown" => format!("mode {mode}"),
        name => name.into(),
    }
}

/// The total of all counters of a section: every slot counter and every path
/// count, saturating.
pub fn total_counts(s: &RawProfile) -> u64 {
    s.functions
        .iter()
        .flat_map(|f| f.slots.iter().copied().chain(f.paths.iter().map(|p| p.1)))
        .fold(0u64, u64::saturating_add)
}

/// The object paths of a section, for the table.
fn objects(s: &RawProfile) -> String {
    let mut text = if s.objects.is_empty() {
        "-".to_string()
    } else {
        s.objects.join(", ")
    };
    if s.objects_truncated {
        text.push_str(" (and more)");
    }
    text
}

/// A table's cells, right-aligned in columns of their widest cell (the last
/// column left-aligned, unpadded).
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            match c {
                // Build id and mode: left-aligned.
                0 | 1 => {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                }
                _ if c + 1 == columns => line.push_str(cell),
                _ => {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
            if c + 1 < columns {
                line.push_str("  ");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The text report: per file a line `FILE: N builds` and its table.
pub fn text(files: &[(PathBuf, ProfileFile)]) -> String {
    let mut out = String::new();
    for (i, (path, file)) in files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let n = file.sections.len();
        let s = if n == 1 { "" } else { "s" };
        out.push_str(&format!("{}: {n} build{s}\n", path.display()));
        if n == 0 {
            continue;
        }
        let mut rows = vec![[
            "build id",
            "mode",
            "processes",
            "forked",
            "threads",
            "functions",
            "counts",
            "objects",
        ]
        .map(String::from)
        .to_vec()];
        for sec in &file.sections {
            rows.push(vec![
                format!("{:016x}", sec.build_id),
                mode_name(sec.mode),
                sec.processes.to_string(),
                sec.forked.to_string(),
                sec.threads.to_string(),
                sec.functions.len().to_string(),
                total_counts(sec).to_string(),
                objects(sec),
            ]);
        }
        out.push_str(&table(&rows));
    }
    out
}

/// The JSON report: `{"format": "pathprof-info", "version": 1, "files":
/// [{"path", "sections": [{"build_id", "mode", "processes", "forked",
/// "threads", "functions", "counts", "objects", "objects_truncated"}]}]}`.
pub fn json(files: &[(PathBuf, ProfileFile)]) -> Value {
    let file = |path: &Path, f: &ProfileFile| {
        let sections: Vec<Value> = f
            .sections
            .iter()
            .map(|s| {
                json!({
                    "build_id": format!("{:016x}", s.build_id),
                    "mode": mode_name(s.mode),
                    "processes": s.processes,
                    "forked": s.forked,
                    "threads": s.threads,
                    "functions": s.functions.len(),
                    "counts": total_counts(s),
                    "objects": s.objects,
                    "objects_truncated": s.objects_truncated,
                })
            })
            .collect();
        json!({"path": path.display().to_string(), "sections": sections})
    };
    json!({
        "format": "pathprof-info",
        "version": 1,
        "files": files.iter().map(|(p, f)| file(p, f)).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_format::RawFunction;

    fn sample() -> Vec<(PathBuf, ProfileFile)> {
        let mut a = RawProfile::new(0x1b, 2);
        a.processes = 3;
        a.forked = 1;
        a.objects = vec!["/lib/liba.so".into()];
        a.functions = vec![RawFunction {
            index: 0,
            hash: 1,
            slots: vec![2, 3],
            paths: vec![(4, 10), (9, u64::MAX)],
            ..Default::default()
        }];
        let mut b = RawProfile::new(0xb0b0_0000_0000_0001, 0);
        b.threads = 12;
        b.objects = vec!["/bin/p".into(), "/bin/q".into()];
        b.objects_truncated = true;
        vec![
            (
                PathBuf::from("all.pprof"),
                ProfileFile {
                    sections: vec![a, b],
                },
            ),
            (PathBuf::from("empty.pprof"), ProfileFile::default()),
        ]
    }

    #[test]
    fn text_table() {
        let want = "\
all.pprof: 2 builds
build id          mode   processes  forked  threads  functions                counts  objects
000000000000001b  path           3       1        0          1  18446744073709551615  /lib/liba.so
b0b0000000000001  block          0       0       12          0                     0  /bin/p, /bin/q (and more)

empty.pprof: 0 builds
";
        assert_eq!(text(&sample()), want);
    }

    #[test]
    fn json_report() {
        let v = json(&sample());
        assert_eq!(v["format"], "pathprof-info");
        let s = &v["files"][0]["sections"];
        assert_eq!(s[0]["build_id"], "000000000000001b");
        assert_eq!(s[0]["counts"], u64::MAX);
        assert_eq!(s[0]["forked"], 1);
        assert_eq!(s[1]["mode"], "block");
        assert_eq!(s[1]["objects"], json!(["/bin/p", "/bin/q"]));
        assert_eq!(s[1]["objects_truncated"], true);
        assert_eq!(v["files"][1]["sections"], json!([]));
    }
}
