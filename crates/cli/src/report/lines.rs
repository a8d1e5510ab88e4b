//! Per-line counts, the basis of `lines`, `coverage`, the LCOV export and the HTML
//! listing. A line's *count* is the largest count of the blocks that have
//! instructions on it (how often the line was reached, as gcov and llvm-cov show
//! it); its *instructions executed* is the exact sum over those blocks of block
//! count × the block's instructions on the line (Weinberger's measure).

use super::load::Loaded;
use std::collections::BTreeMap;

/// One executable source line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineCount {
    pub count: u64,
    pub instructions: u64,
    pub instructions_executed: u64,
}

/// Per file index, per line number.
pub type FileLines = BTreeMap<u32, BTreeMap<u32, LineCount>>;

/// Aggregates every block's lines.
pub fn line_counts(loaded: &Loaded) -> FileLines {
    let mut out: FileLines = BTreeMap::new();
    for (f, c) in loaded.map.functions.iter().zip(&loaded.counts) {
        for (b, info) in f.blocks.iter().enumerate() {
            let n = c.blocks[b];
            for span in &info.lines {
                let lc = out
                    .entry(span.file)
                    .or_default()
                    .entry(span.line)
                    .or_default();
                lc.count = lc.count.max(n);
                lc.instructions += span.instructions as u64;
                lc.instructions_executed = lc
                    .instructions_executed
                    .saturating_add(n.saturating_mul(span.instructions as u64));
            }
        }
    }
    out
}

/// The last line a listing of a file shows: its last line of code or of text.
pub fn last_line(lines: &BTreeMap<u32, LineCount>, text: &[String]) -> u32 {
    lines
        .keys()
        .next_back()
        .copied()
        .unwrap_or(0)
        .max(text.len() as u32)
}
