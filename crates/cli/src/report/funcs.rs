//! `pathprof funcs` and `pathprof files`: Weinberger's summaries. Per function:
//! instructions executed, calls, instructions in the function, instructions never
//! executed. Per file: instructions executed, blocks executed, blocks, blocks
//! never entered. Sorted by the chosen key (ties by name); totals at the bottom.

use super::load::Loaded;
use crate::cli::SortKey;
use pathprof_report::summary::{Instructions, Ratio, Summary};
use std::fmt::Write as _;

/// One row of either summary: a function or a file.
struct Row<'a> {
    name: &'a str,
    calls: u64,
    instructions: Instructions,
    blocks: Ratio,
}

/// What `key` sorts by, for the header.
fn sorted_by(key: SortKey) -> &'static str {
    match key {
        SortKey::Instructions => "most instructions executed first",
        SortKey::Calls => "most calls first",
        SortKey::Size => "most instructions first",
        SortKey::Unexecuted => "most instructions never run first",
        SortKey::Name => "by name",
    }
}

fn sort_rows(rows: &mut [Row<'_>], key: SortKey) {
    rows.sort_by(|a, b| {
        let (ia, ib) = (&a.instructions, &b.instructions);
        let ord = match key {
            SortKey::Instructions => ib.executed.cmp(&ia.executed),
            SortKey::Calls => b.calls.cmp(&a.calls),
            SortKey::Size => ib.static_count.cmp(&ia.static_count),
            SortKey::Unexecuted => ib.never_executed.cmp(&ia.never_executed),
            SortKey::Name => std::cmp::Ordering::Equal,
        };
        ord.then_with(|| a.name.cmp(b.name))
    });
}

/// The rows' totals (calls, instructions, blocks).
fn total(rows: &[Row<'_>]) -> (u64, u128, u64, u64, Ratio) {
    let mut t = (0u64, 0u128, 0u64, 0u64, Ratio::default());
    for r in rows {
        t.0 = t.0.saturating_add(r.calls);
        t.1 += r.instructions.executed;
        t.2 += r.instructions.static_count;
        t.3 += r.instructions.never_executed;
        t.4.add(r.blocks);
    }
    t
}

/// The per-function summary.
pub fn functions(loaded: &Loaded, sort: SortKey) -> String {
    let summary = Summary::of(loaded);
    let mut rows: Vec<Row> = summary
        .functions
        .iter()
        .map(|f| Row {
            name: &f.name,
            calls: f.calls,
            instructions: f.instructions,
            blocks: f.blocks,
        })
        .collect();
    sort_rows(&mut rows, sort);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>16} {:>12} {:>8} {:>10}  function ({})",
        "instrs executed",
        "calls",
        "instrs",
        "never run",
        sorted_by(sort)
    );
    for r in &rows {
        let i = &r.instructions;
        let _ = writeln!(
            out,
            "{:>16} {:>12} {:>8} {:>10}  {}",
            i.executed, r.calls, i.static_count, i.never_executed, r.name
        );
    }
    let (calls, executed, size, never, _) = total(&rows);
    let _ = writeln!(
        out,
        "{executed:>16} {calls:>12} {size:>8} {never:>10}  total ({} functions)",
        rows.len()
    );
    out
}

/// The per-file summary.
pub fn files(loaded: &Loaded, sort: SortKey) -> String {
    let summary = Summary::of(loaded);
    let mut rows: Vec<Row> = summary
        .files
        .iter()
        .filter(|f| f.functions.total > 0)
        .map(|f| Row {
            name: &f.name,
            calls: f.calls,
            instructions: f.instructions,
            blocks: f.blocks,
        })
        .collect();
    sort_rows(&mut rows, sort);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>16} {:>10} {:>8} {:>12}  file ({})",
        "instrs executed",
        "blocks run",
        "blocks",
        "never entered",
        sorted_by(sort)
    );
    for r in &rows {
        let b = r.blocks;
        let _ = writeln!(
            out,
            "{:>16} {:>10} {:>8} {:>12}  {}",
            r.instructions.executed,
            b.hit,
            b.total,
            b.total - b.hit,
            r.name
        );
    }
    let (_, executed, _, _, b) = total(&rows);
    let _ = writeln!(
        out,
        "{executed:>16} {:>10} {:>8} {:>12}  total ({} files)",
        b.hit,
        b.total,
        b.total - b.hit,
        rows.len()
    );
    out
}
