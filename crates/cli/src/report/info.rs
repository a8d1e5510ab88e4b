//! `pathprof info`: renders [`pathprof_report::info`], what profile files hold
//! without a map: per file, one line per program or library (its builds
//! added up), or with `--builds` one line per section (build). Or the same as
//! JSON.

use pathprof_format::ProfileFile;
use pathprof_report::info::{info, signals, InfoFile, Totals};
use std::path::PathBuf;

/// Objects as a table cell.
fn objects(objects: &[String], truncated: bool) -> String {
    let mut text = if objects.is_empty() {
        "-".to_string()
    } else {
        objects.join(", ")
    };
    if truncated {
        text.push_str(" (and more)");
    }
    text
}

/// A table's cells, right-aligned in columns of their widest cell (the
/// columns `left` and the last left-aligned, the last unpadded).
fn table(rows: &[Vec<String>], left: &[usize]) -> String {
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
                _ if left.contains(&c) => {
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

/// The text report: per file a line `FILE: N builds in K programs and
/// libraries` and its table, of programs or (`builds`) of builds.
pub fn text(files: &[(PathBuf, ProfileFile)], builds: bool) -> String {
    let mut out = String::new();
    for (i, file) in info(files).files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (n, k) = (file.sections.len(), file.programs.len());
        out.push_str(&format!(
            "{}: {n} build{} in {k} {}\n",
            file.path,
            if n == 1 { "" } else { "s" },
            if k == 1 {
                "program or library"
            } else {
                "programs and libraries"
            }
        ));
        if n > 0 {
            out.push_str(&if builds {
                // Build id and mode left-aligned.
                table(&build_rows(file), &[0, 1])
            } else {
                table(&program_rows(file), &[1])
            });
            let killed = if builds {
                file.sections
                    .iter()
                    .map(|s| (format!("build {}", s.build_id), &s.totals))
                    .collect::<Vec<_>>()
            } else {
                file.programs
                    .iter()
                    .map(|p| (objects(&p.objects, p.objects_truncated), &p.totals))
                    .collect()
            };
            for (what, t) in killed {
                out.push_str(&killed_line(&what, t));
            }
        }
    }
    out
}

/// `killed in WHAT: N processes ...`: how the killed processes of a row
/// ended, where known; empty when none was killed.
fn killed_line(what: &str, t: &Totals) -> String {
    if t.killed == 0 {
        return String::new();
    }
    let running = t
        .killed
        .saturating_sub(t.killed_at_exit)
        .saturating_sub(t.killed_in_signal);
    let mut how = Vec::new();
    if running > 0 {
        how.push(format!(
            "{running} while running (SIGKILL, the OOM killer, or a fault no handler sees)"
        ));
    }
    if t.killed_at_exit > 0 {
        how.push(format!("{} while writing at exit", t.killed_at_exit));
    }
    if t.killed_in_signal > 0 {
        let names = signals(t.killed_signals);
        how.push(format!(
            "{} while writing for a fatal signal{}",
            t.killed_in_signal,
            if names.is_empty() {
                String::new()
            } else {
                format!(" ({})", names.join(", "))
            }
        ));
    }
    format!(
        "killed in {what}: {} process{}, merged from live files: {}\n",
        t.killed,
        if t.killed == 1 { "" } else { "es" },
        how.join("; ")
    )
}

/// Header and cells of a table of `file`'s builds.
fn build_rows(file: &InfoFile) -> Vec<Vec<String>> {
    let rows = file.sections.iter().map(|s| {
        let objects = objects(&s.objects, s.objects_truncated);
        (s.build_id.clone(), &s.mode, &s.totals, objects)
    });
    table_rows("build id", rows)
}

/// Header and cells of a table of `file`'s programs and libraries.
fn program_rows(file: &InfoFile) -> Vec<Vec<String>> {
    let rows = file.programs.iter().map(|p| {
        let objects = objects(&p.objects, p.objects_truncated);
        (p.builds.to_string(), &p.mode, &p.totals, objects)
    });
    table_rows("builds", rows)
}

/// The header (`first` naming the first column) and the cells of rows of
/// a first cell, a mode, totals and objects.
fn table_rows<'a>(
    first: &str,
    rows: impl Iterator<Item = (String, &'a String, &'a Totals, String)>,
) -> Vec<Vec<String>> {
    let header = [
        first,
        "mode",
        "processes",
        "forked",
        "killed",
        "threads",
        "functions",
        "counts",
        "objects",
    ];
    let mut out = vec![header.map(String::from).to_vec()];
    out.extend(rows.map(|(first, mode, t, objects)| {
        vec![
            first,
            mode.clone(),
            t.processes.to_string(),
            t.forked.to_string(),
            t.killed.to_string(),
            t.threads.to_string(),
            t.functions.to_string(),
            t.counts.to_string(),
            objects,
        ]
    }));
    out
}

/// One indexed profile (`.ppdata`), as text: what ran and its most called
/// functions.
pub fn index_text(i: &pathprof_report::info::IndexInfo) -> String {
    let mut out = format!(
        "{}: indexed profile of {} ({} functions, {} of them run); total count {}, most calls {}\n",
        i.path,
        if i.programs.is_empty() {
            "no named program".to_string()
        } else {
            i.programs.join(", ")
        },
        i.functions,
        i.functions_run,
        i.total_count,
        i.max_function_count
    );
    if !i.hottest.is_empty() {
        out.push_str("      calls  function\n");
        for (name, calls) in &i.hottest {
            out.push_str(&format!("{calls:>11}  {name}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_format::{RawFunction, RawProfile};
    use serde_json::json;

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
        let mut c = RawProfile::new(0x2c, 2);
        c.processes = 1;
        c.killed = 1;
        c.killed_in_signal = 1;
        c.killed_signals = 1 << (15 - 1);
        c.objects = vec!["/lib/liba.so".into()];
        c.functions = vec![RawFunction {
            index: 0,
            hash: 2,
            slots: vec![5],
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
                    sections: vec![a, b, c],
                },
            ),
            (PathBuf::from("empty.pprof"), ProfileFile::default()),
        ]
    }

    #[test]
    fn text_tables() {
        let want = "\
all.pprof: 3 builds in 2 programs and libraries
build id          mode   processes  forked  killed  threads  functions                counts  objects
000000000000001b  path           3       1       0        0          1  18446744073709551615  /lib/liba.so
b0b0000000000001  block          0       0       0       12          0                     0  /bin/p, /bin/q (and more)
000000000000002c  path           1       0       1        0          1                     5  /lib/liba.so
killed in build 000000000000002c: 1 process, merged from live files: 1 while writing for a fatal signal (SIGTERM)

empty.pprof: 0 builds in 0 programs and libraries
";
        assert_eq!(text(&sample(), true), want);
        let want = "\
all.pprof: 3 builds in 2 programs and libraries
builds  mode   processes  forked  killed  threads  functions                counts  objects
     2  path           3       1       1        0          2  18446744073709551615  /lib/liba.so
     1  block          0       0       0       12          0                     0  /bin/p, /bin/q (and more)
killed in /lib/liba.so: 1 process, merged from live files: 1 while writing for a fatal signal (SIGTERM)

empty.pprof: 0 builds in 0 programs and libraries
";
        assert_eq!(text(&sample(), false), want);
    }

    #[test]
    fn json_report() {
        let v = serde_json::to_value(info(&sample())).unwrap();
        assert_eq!(v["format"], "pathprof-info");
        assert_eq!(v["version"], 1);
        let s = &v["files"][0]["sections"];
        assert_eq!(s[0]["build_id"], "000000000000001b");
        assert_eq!(s[0]["counts"], u64::MAX);
        assert_eq!(s[0]["forked"], 1);
        assert_eq!(s[1]["mode"], "block");
        assert_eq!(s[1]["objects"], json!(["/bin/p", "/bin/q"]));
        assert_eq!(s[1]["objects_truncated"], true);
        let p = &v["files"][0]["programs"];
        assert_eq!(p[0]["objects"], json!(["/lib/liba.so"]));
        assert_eq!(
            (p[0]["builds"].clone(), p[0]["functions"].clone()),
            (json!(2), json!(2))
        );
        assert_eq!(p[0]["processes"], 3);
        assert_eq!(p[1]["threads"], 12);
        assert_eq!(p[0]["killed"], 1);
        assert_eq!(p[0]["killed_in_signal"], 1);
        assert_eq!(p[0]["killed_at_exit"], 0);
        assert_eq!(p[0]["killed_signals"], json!(["SIGTERM"]));
        assert_eq!(p[1]["killed_signals"], json!([]));
        assert_eq!(v["files"][1]["sections"], json!([]));
        assert_eq!(v["files"][1]["programs"], json!([]));
    }
}
