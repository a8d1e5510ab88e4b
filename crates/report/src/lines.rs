//! Per-line counts, the basis of `lines`, `coverage`, the LCOV export and the HTML
//! listing. A line's *count* is how often it was reached: in each function, the
//! largest count of the function's blocks that have instructions on it (as gcov
//! and llvm-cov show a line), added up over the functions with code on it, so
//! that the copies of one source function (a header's `static inline` function
//! compiled into several translation units, or inlined into several callers)
//! count together. A function's own line (where its name is declared) counts
//! its calls, as in gcov and llvm-cov, also when optimisation left no
//! instruction there. Its *instructions executed* is the exact sum over those
//! blocks of block count × the block's instructions on the line (Weinberger's
//! measure).

use crate::load::Loaded;
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
        // (file, line) -> this function's count of the line.
        let mut reached: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        for (b, info) in f.blocks.iter().enumerate() {
            let n = c.blocks[b];
            for span in &info.lines {
                let lc = out
                    .entry(span.file)
                    .or_default()
                    .entry(span.line)
                    .or_default();
                lc.instructions += span.instructions as u64;
                lc.instructions_executed = lc
                    .instructions_executed
                    .saturating_add(n.saturating_mul(span.instructions as u64));
                let r = reached.entry((span.file, span.line)).or_default();
                *r = (*r).max(n);
            }
        }
        if let (Some(file), Some(line)) = (f.file, f.line) {
            out.entry(file).or_default().entry(line).or_default();
            let r = reached.entry((file, line)).or_default();
            *r = (*r).max(c.entry);
        }
        for ((file, line), n) in reached {
            if let Some(lc) = out.get_mut(&file).and_then(|f| f.get_mut(&line)) {
                lc.count = lc.count.saturating_add(n);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::two_copies;

    #[test]
    fn counts_are_largest_in_a_function_and_added_over_functions() {
        let mut l = two_copies(0);
        // f's b1 (3 runs) also has code on line 10, like b0 (3 runs).
        l.map.functions[0].blocks[1]
            .lines
            .push(pathprof_core::map::LineSpan {
                file: 0,
                line: 10,
                instructions: 1,
            });
        let counts: Vec<(u32, u64)> = line_counts(&l)[&0]
            .iter()
            .map(|(&line, c)| (line, c.count))
            .collect();
        // Line 9, where f and g are declared, counts their calls.
        assert_eq!(
            counts,
            [(9, 3 + 2), (10, 3 + 2), (11, 3), (12, 3 + 2), (13, 0)]
        );
        // Instructions executed add up over every block: line 10 has f's b0
        // (1 instruction) and b1 (1), and g's b0 (1).
        assert_eq!(line_counts(&l)[&0][&10].instructions_executed, 3 + 3 + 2);
    }
}
