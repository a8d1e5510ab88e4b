//! `pathprof coverage`: line, block, edge and path coverage per function and in
//! total, with each function's never-executed lines. Path coverage is executed
//! paths out of potential paths (Ball-Larus section 1: feasible for most
//! routines).

use super::lines::line_counts;
use super::load::Loaded;
use pathprof_core::layout::Layout;
use pathprof_core::BlockId;
use std::collections::BTreeSet;
use std::fmt::Write as _;

#[derive(Clone, Copy, Default)]
struct Ratio(u128, u128);

impl Ratio {
    fn add(&mut self, o: Ratio) {
        self.0 += o.0;
        self.1 += o.1;
    }
    fn show(self) -> String {
        let text = if self.1 == 0 {
            "-".to_string()
        } else {
            format!(
                "{}/{} {:5.1}%",
                self.0,
                self.1,
                100.0 * self.0 as f64 / self.1 as f64
            )
        };
        format!("{text:>22}")
    }
}

/// Compresses sorted line numbers into `3-5, 9`.
pub fn ranges(lines: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        while i + 1 < lines.len() && lines[i + 1] == lines[i] + 1 {
            i += 1;
        }
        out.push(if lines[i] > start {
            format!("{start}-{}", lines[i])
        } else {
            start.to_string()
        });
        i += 1;
    }
    out.join(", ")
}

/// The report.
pub fn report(loaded: &Loaded) -> String {
    let map = &loaded.map;
    let per_line = line_counts(loaded);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<28} {:>22} {:>22} {:>22} {:>22}",
        "function", "lines", "blocks", "edges", "paths"
    );
    let mut totals = [Ratio::default(); 4];
    for (f, c) in map.functions.iter().zip(&loaded.counts) {
        let mut lines: BTreeSet<(u32, u32)> = BTreeSet::new();
        let mut blocks = Ratio::default();
        for (b, info) in f.blocks.iter().enumerate() {
            if !f.cfg.is_reachable(BlockId::new(b)) {
                continue;
            }
            blocks.1 += 1;
            blocks.0 += (c.blocks[b] > 0) as u128;
            lines.extend(info.lines.iter().map(|s| (s.file, s.line)));
        }
        let hit_line = |&(file, line): &(u32, u32)| per_line[&file][&line].count > 0;
        let line_ratio = Ratio(
            lines.iter().filter(|l| hit_line(l)).count() as u128,
            lines.len() as u128,
        );
        let edge_ratio = match &c.edges {
            Some(e) => {
                let reachable: Vec<usize> = (0..e.len())
                    .filter(|&i| f.cfg.is_reachable(f.cfg.edges()[i].from))
                    .collect();
                Ratio(
                    reachable.iter().filter(|&&i| e[i] > 0).count() as u128,
                    reachable.len() as u128,
                )
            }
            None => Ratio::default(),
        };
        let path_ratio = match &f.layout {
            Layout::Path { dag, .. } => Ratio(c.paths.len() as u128, dag.num_paths() as u128),
            _ => Ratio::default(),
        };
        let row = [line_ratio, blocks, edge_ratio, path_ratio];
        for (t, r) in totals.iter_mut().zip(row) {
            t.add(r);
        }
        let name = f.display_name.as_deref().unwrap_or(&f.name);
        let _ = writeln!(
            out,
            "{:<28} {} {} {} {}",
            name,
            row[0].show(),
            row[1].show(),
            row[2].show(),
            row[3].show()
        );
        let never: Vec<u32> = lines.iter().filter(|l| !hit_line(l)).map(|l| l.1).collect();
        if !never.is_empty() && c.entry > 0 {
            let _ = writeln!(out, "    never executed: lines {}", ranges(&never));
        } else if c.entry == 0 {
            let _ = writeln!(out, "    never called");
        }
    }
    let _ = writeln!(
        out,
        "{:<28} {} {} {} {}",
        "TOTAL",
        totals[0].show(),
        totals[1].show(),
        totals[2].show(),
        totals[3].show()
    );
    out
}
