//! `pathprof export --format lcov`: an LCOV tracefile (the `geninfo` format that
//! `genhtml`, IDEs and coverage services read), one record per source file:
//!
//! - `SF:` the file as the debug info recorded it; when it is not there but is
//!   found under `--source-root`, the relocated path (so `genhtml` can read it).
//! - `FN:line,name` / `FNDA:calls,name` per function defined in the file, by
//!   linkage name (LCOV names may not contain commas, and `genhtml
//!   --demangle-cpp` demangles them), then `FNF` / `FNH`.
//! - `BRDA:line,block,branch,count` for every block with two or more out-edges,
//!   one per out-edge in successor order, on the line of the block's test (see
//!   [`branch_line`]); the count is the edge's, or `-` when the block never ran. Block-mode profiles
//!   know no edge counts and have no branch records. Then `BRF` / `BRH`.
//! - `DA:line,count` from [`super::lines::line_counts`], the same counts as
//!   `pathprof lines`, then `LF` / `LH`.

use super::lines::line_counts;
use super::load::Loaded;
use super::source::SourceRoot;
use anyhow::Result;
use pathprof_core::map::{LineSpan, MapFunction};
use pathprof_core::BlockId;
use std::collections::{BTreeMap, BTreeSet};
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

/// One branch record.
struct Branch {
    line: u32,
    block: u32,
    branch: usize,
    count: Option<u64>,
}

/// The tracefile.
pub fn export(loaded: &Loaded, sources: &SourceRoot) -> Result<String> {
    let map = &loaded.map;
    let lines = line_counts(loaded);
    // Functions per file: (line, linkage name, calls).
    let mut functions: BTreeMap<u32, Vec<(u32, &str, u64)>> = BTreeMap::new();
    let mut branches: BTreeMap<u32, Vec<Branch>> = BTreeMap::new();
    for (f, c) in map.functions.iter().zip(&loaded.counts) {
        if let Some(file) = f.file {
            let line = f
                .line
                .or_else(|| f.blocks.iter().find_map(|b| b.line))
                .filter(|&l| l > 0);
            if let Some(line) = line {
                functions
                    .entry(file)
                    .or_default()
                    .push((line, &f.name, c.entry));
            }
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
            let list = branches.entry(span.file).or_default();
            for (k, &e) in succs.iter().enumerate() {
                list.push(Branch {
                    line: span.line,
                    block: b.0,
                    branch: k,
                    count: ran.then(|| edges[e.index()]),
                });
            }
        }
    }
    let files: BTreeSet<u32> = lines
        .keys()
        .chain(functions.keys())
        .chain(branches.keys())
        .copied()
        .filter(|&f| (f as usize) < map.files.len())
        .collect();
    let mut out = String::new();
    for file in files {
        let _ = writeln!(out, "TN:");
        let _ = writeln!(out, "SF:{}", locate(&map.files[file as usize], sources));
        if let Some(fs) = functions.get_mut(&file) {
            fs.sort();
            for (line, name, _) in fs.iter() {
                let _ = writeln!(out, "FN:{line},{name}");
            }
            for (_, name, calls) in fs.iter() {
                let _ = writeln!(out, "FNDA:{calls},{name}");
            }
            let _ = writeln!(out, "FNF:{}", fs.len());
            let _ = writeln!(out, "FNH:{}", fs.iter().filter(|f| f.2 > 0).count());
        } else {
            let _ = writeln!(out, "FNF:0\nFNH:0");
        }
        if let Some(bs) = branches.get_mut(&file) {
            bs.sort_by_key(|b| (b.line, b.block, b.branch));
            for b in bs.iter() {
                let count = b.count.map_or("-".to_string(), |n| n.to_string());
                let _ = writeln!(out, "BRDA:{},{},{},{count}", b.line, b.block, b.branch);
            }
            let _ = writeln!(out, "BRF:{}", bs.len());
            let _ = writeln!(
                out,
                "BRH:{}",
                bs.iter().filter(|b| b.count.is_some_and(|n| n > 0)).count()
            );
        }
        let mut found = 0;
        let mut hit = 0;
        if let Some(ls) = lines.get(&file) {
            for (&line, lc) in ls.iter().filter(|(&l, _)| l > 0) {
                let _ = writeln!(out, "DA:{line},{}", lc.count);
                found += 1;
                hit += usize::from(lc.count > 0);
            }
        }
        let _ = writeln!(out, "LF:{found}\nLH:{hit}\nend_of_record");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::predict::tests::loaded;

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
DA:10,3
DA:11,3
DA:12,3
DA:13,0
LF:4
LH:3
end_of_record
";
        assert_eq!(text, expected);
    }

    #[test]
    fn sources_are_relocated_only_when_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/t.c"), "int x;\n").unwrap();
        let root = SourceRoot(Some(dir.path().to_path_buf()));
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
    fn block_mode_has_no_branches() {
        let mut l = loaded(3, &[(0, 1), (0, 2), (1, 2)], &[(&[0, 1, 2], 1)], &[]);
        l.counts[0].edges = None;
        let text = export(&l, &SourceRoot(None)).unwrap();
        assert!(!text.contains("BRDA"), "{text}");
        assert!(text.contains("DA:10,1\n"), "{text}");
    }
}
