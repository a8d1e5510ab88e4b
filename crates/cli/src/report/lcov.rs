//! `pathprof export --format lcov`: an LCOV tracefile (the `geninfo` format that
//! `genhtml`, IDEs and coverage services read), exactly one record per source
//! file:
//!
//! - `SF:` the file as the debug info recorded it ([`normalize_path`]'s form);
//!   when it is not there but is found under `--source-root`, the relocated path
//!   (so `genhtml` can read it). Map entries that come to the same `SF:` name
//!   (spelled differently in an older map, or found at one place under the
//!   root) make one record: their line counts add up, as lcov adds up records
//!   of one file when it merges tracefiles.
//! - `FN:line,name` / `FNDA:calls,name` per function defined in the file, by
//!   linkage name (LCOV names may not contain commas, and `genhtml
//!   --demangle-cpp` demangles them), then `FNF` / `FNH`.
//! - `BRDA:line,block,branch,count` for every block with two or more out-edges,
//!   one per out-edge in successor order, on the line of the block's test (see
//!   [`branch_line`]); the count is the edge's, or `-` when the block never ran. Block-mode profiles
//!   built with `--every-block` know no edge counts and have no branch records. Branches of several
//!   functions with the same line, block and branch (copies of one header
//!   function) are one record whose count is their sum, as lcov merges them.
//!   Then `BRF` / `BRH`.
//! - `DA:line,count` from [`super::lines::line_counts`], the same counts as
//!   `pathprof lines`, then `LF` / `LH`.

use super::lines::line_counts;
use super::load::Loaded;
use super::source::SourceRoot;
use anyhow::Result;
use pathprof_core::map::{normalize_path, LineSpan, MapFunction};
use pathprof_core::BlockId;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Where `recorded` is (see [`SourceRoot::locate`]), else `recorded` unchanged.
fn locate(recorded: &str, sources: &SourceRoot) -> String {
    sources
        .locate(recorded)
        .map_or_else(|| recorded.to_string(), |p| p.display().to_string())
}

/// The source line to show a block's branches on. The map does not record the
/// terminator's own line, so: the last line of the block (in first-seen order)
/// that is not after the first line of any of its successors, which skips code
/// the optimiser hoisted from the arms into the test (`if (c) { .. x / 7 .. }`
/// computing `x / 7` early); else the block's last line (a loop test after its
/// body's first statement).
fn branch_line(f: &MapFunction, b: BlockId) -> Option<LineSpan> {
    let spans = &f.blocks[b.index()].lines;
    let last = *spans.iter().rev().find(|s| s.line > 0)?;
    let first_after = f
        .cfg
        .succs(b)
        .iter()
        .filter_map(|&e| {
            let to = &f.blocks[f.cfg.edge(e).to.index()];
            to.lines
                .first()
                .filter(|s| s.file == last.file)
                .map(|s| s.line)
        })
        .min();
    let Some(limit) = first_after else {
        return Some(last);
    };
    Some(
        spans
            .iter()
            .rev()
            .find(|s| s.line > 0 && s.file == last.file && s.line <= limit)
            .copied()
            .unwrap_or(last),
    )
}

/// Everything one `SF:` record says, gathered from every map entry and
/// function that names its file.
#[derive(Default)]
struct Record<'a> {
    /// Linkage name -> (line of the definition, calls).
    functions: BTreeMap<&'a str, (u32, u64)>,
    /// (line, block, branch) -> count, `None` while no block behind it ran.
    branches: BTreeMap<(u32, u32, usize), Option<u64>>,
    /// Line -> count.
    lines: BTreeMap<u32, u64>,
}

/// Adds a branch count that may be unknown (its block never ran) to another.
fn add_branch(sum: Option<u64>, count: Option<u64>) -> Option<u64> {
    match (sum, count) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

/// The records being gathered, keyed by their `SF:` name.
struct Records<'a> {
    /// The `SF:` name of each file index.
    names: Vec<String>,
    by_name: BTreeMap<String, Record<'a>>,
}

impl<'a> Records<'a> {
    /// The record of file index `file`; `None` for an index beyond the files
    /// (which a map that passed its checks does not have).
    fn of(&mut self, file: u32) -> Option<&mut Record<'a>> {
        let name = self.names.get(file as usize)?;
        Some(self.by_name.entry(name.clone()).or_default())
    }
}

/// Gathers the records, keyed by their `SF:` name.
fn records<'a>(loaded: &'a Loaded, sources: &SourceRoot) -> BTreeMap<String, Record<'a>> {
    let map = &loaded.map;
    let mut out = Records {
        names: map
            .files
            .iter()
            .map(|f| locate(&normalize_path(f), sources))
            .collect(),
        by_name: BTreeMap::new(),
    };
    for (file, ls) in line_counts(loaded) {
        let Some(Record { lines, .. }) = out.of(file) else {
            continue;
        };
        for (line, lc) in ls.into_iter().filter(|&(l, _)| l > 0) {
            let n = lines.entry(line).or_default();
            *n = n.saturating_add(lc.count);
        }
    }
    for (f, c) in map.functions.iter().zip(&loaded.counts) {
        let line = f
            .line
            .or_else(|| f.blocks.iter().find_map(|b| b.line))
            .filter(|&l| l > 0);
        if let (Some(r), Some(line)) = (f.file.and_then(|file| out.of(file)), line) {
            let entry = r.functions.entry(&f.name).or_insert((line, 0));
            entry.1 = entry.1.saturating_add(c.entry);
        }
        let Some(edges) = &c.edges else {
            continue;
        };
        for b in f.cfg.blocks() {
            let succs = f.cfg.succs(b);
            if succs.len() < 2 {
                continue;
            }
            let Some(span) = branch_line(f, b) else {
                continue;
            };
            let ran = c.blocks[b.index()] > 0;
            let Some(Record { branches, .. }) = out.of(span.file) else {
                continue;
            };
            for (k, &e) in succs.iter().enumerate() {
                let sum = branches.entry((span.line, b.0, k)).or_default();
                *sum = add_branch(*sum, ran.then(|| edges[e.index()]));
            }
        }
    }
    out.by_name
}

/// The tracefile.
pub fn export(loaded: &Loaded, sources: &SourceRoot) -> Result<String> {
    let mut out = String::new();
    for (name, r) in records(loaded, sources) {
        let _ = writeln!(out, "TN:\nSF:{name}");
        let mut functions: Vec<(u32, &str, u64)> = r
            .functions
            .iter()
            .map(|(&name, &(line, calls))| (line, name, calls))
            .collect();
        functions.sort();
        for (line, name, _) in &functions {
            let _ = writeln!(out, "FN:{line},{name}");
        }
        for (_, name, calls) in &functions {
            let _ = writeln!(out, "FNDA:{calls},{name}");
        }
        let hit = functions.iter().filter(|f| f.2 > 0).count();
        let _ = writeln!(out, "FNF:{}\nFNH:{hit}", functions.len());
        if !r.branches.is_empty() {
            for (&(line, block, branch), count) in &r.branches {
                let count = count.map_or("-".to_string(), |n| n.to_string());
                let _ = writeln!(out, "BRDA:{line},{block},{branch},{count}");
            }
            let hit = r.branches.values().filter(|c| c.is_some_and(|n| n > 0));
            let _ = writeln!(out, "BRF:{}\nBRH:{}", r.branches.len(), hit.count());
        }
        for (line, count) in &r.lines {
            let _ = writeln!(out, "DA:{line},{count}");
        }
        let hit = r.lines.values().filter(|&&n| n > 0).count();
        let _ = writeln!(out, "LF:{}\nLH:{hit}\nend_of_record", r.lines.len());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures::loaded;
    use pathprof_report::fixtures::two_copies;

    #[test]
    fn records_functions_branches_and_lines() {
        // b0 branches to b1 (3 runs) or b2 (never); b3 never runs and branches too.
        let mut l = loaded(
            4,
            &[(0, 1), (0, 2), (1, 2), (3, 1), (3, 2)],
            &[(&[0, 1, 2], 3)],
            &[],
        );
        l.map.files = vec!["/nonexistent/dir/t.c".into()];
        let text = export(&l, &SourceRoot(None)).unwrap();
        let expected = "TN:
SF:/nonexistent/dir/t.c
FN:9,f
FNDA:3,f
FNF:1
FNH:1
BRDA:10,0,0,3
BRDA:10,0,1,0
BRDA:13,3,0,-
BRDA:13,3,1,-
BRF:4
BRH:1
DA:9,3
DA:10,3
DA:11,3
DA:12,3
DA:13,0
LF:5
LH:4
end_of_record
";
        assert_eq!(text, expected);
    }

    /// A source root (a temporary directory) that holds `src/t.c`.
    fn root_holding_src_t_c() -> (tempfile::TempDir, SourceRoot) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/t.c"), "int x;\n").unwrap();
        let root = SourceRoot(Some(dir.path().to_path_buf()));
        (dir, root)
    }

    #[test]
    fn sources_are_relocated_only_when_found() {
        let (dir, root) = root_holding_src_t_c();
        assert_eq!(
            locate("/build/elsewhere/src/t.c", &root),
            dir.path().join("src/t.c").display().to_string()
        );
        assert_eq!(
            locate("/build/elsewhere/u.c", &root),
            "/build/elsewhere/u.c"
        );
    }

    #[test]
    fn spellings_of_one_file_are_one_record() {
        // f: b0 -> b1 3 times; g: b0 -> b2 twice; b3 never runs in either.
        let text = export(&two_copies(1), &SourceRoot(None)).unwrap();
        let expected = "TN:
SF:/src/dir/t.c
FN:9,f
FN:9,g
FNDA:3,f
FNDA:2,g
FNF:2
FNH:2
BRDA:10,0,0,3
BRDA:10,0,1,2
BRDA:13,3,0,-
BRDA:13,3,1,-
BRF:4
BRH:2
DA:9,5
DA:10,5
DA:11,3
DA:12,5
DA:13,0
LF:5
LH:4
end_of_record
";
        assert_eq!(text, expected);
    }

    #[test]
    fn files_found_at_one_place_under_the_root_are_one_record() {
        let (dir, root) = root_holding_src_t_c();
        let mut l = two_copies(1);
        l.map.files = vec!["/build/one/src/t.c".into(), "/build/two/src/t.c".into()];
        let text = export(&l, &root).unwrap();
        let sf = format!("SF:{}\n", dir.path().join("src/t.c").display());
        assert_eq!(text.matches("SF:").count(), 1, "{text}");
        assert!(text.contains(&sf), "{text}");
        assert!(text.contains("\nDA:10,5\n"), "{text}");
    }

    #[test]
    fn block_mode_has_no_branches() {
        let mut l = loaded(3, &[(0, 1), (0, 2), (1, 2)], &[(&[0, 1, 2], 1)], &[]);
        l.counts[0].edges = None;
        let text = export(&l, &SourceRoot(None)).unwrap();
        assert!(!text.contains("BRDA"), "{text}");
        assert!(text.contains("DA:10,1\n"), "{text}");
    }
}
