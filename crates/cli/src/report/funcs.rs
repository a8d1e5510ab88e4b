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

/// The columns of one summary: what a row is, the four number columns'
/// headers and widths, and each row's numbers (all of which add up, so the
/// total row is their sums).
struct Table {
    item: &'static str,
    items: &'static str,
    headers: [&'static str; 4],
    widths: [usize; 4],
    cells: fn(&Row<'_>) -> [u128; 4],
}

/// The summary of `rows` sorted by `sort`, with a total row.
fn render(mut rows: Vec<Row<'_>>, sort: SortKey, table: &Table) -> String {
    sort_rows(&mut rows, sort);
    let line = |out: &mut String, cells: [String; 4], name: &str| {
        for (i, (cell, width)) in cells.iter().zip(table.widths).enumerate() {
            let _ = write!(out, "{}{cell:>width$}", if i == 0 { "" } else { " " });
        }
        let _ = writeln!(out, "  {name}");
    };
    let mut out = String::new();
    line(
        &mut out,
        table.headers.map(str::to_string),
        &format!("{} ({})", table.item, sorted_by(sort)),
    );
    let mut total = [0u128; 4];
    for r in &rows {
        let cells = (table.cells)(r);
        for (t, c) in total.iter_mut().zip(cells) {
            *t = t.saturating_add(c);
        }
        line(&mut out, cells.map(|c| c.to_string()), r.name);
    }
    let total_name = format!("total ({} {})", rows.len(), table.items);
    line(&mut out, total.map(|c| c.to_string()), &total_name);
    out
}

/// The per-function summary.
pub fn functions(loaded: &Loaded, sort: SortKey) -> String {
    let summary = Summary::of(loaded);
    let rows = summary.functions.iter().map(|f| Row {
        name: &f.name,
        calls: f.calls,
        instructions: f.instructions,
        blocks: f.blocks,
    });
    let table = Table {
        item: "function",
        items: "functions",
        headers: ["instrs executed", "calls", "instrs", "never run"],
        widths: [16, 12, 8, 10],
        cells: |r| {
            let i = &r.instructions;
            [
                i.executed,
                r.calls.into(),
                i.static_count.into(),
                i.never_executed.into(),
            ]
        },
    };
    render(rows.collect(), sort, &table)
}

/// The per-file summary.
pub fn files(loaded: &Loaded, sort: SortKey) -> String {
    let summary = Summary::of(loaded);
    let rows = summary
        .files
        .iter()
        .filter(|f| f.functions.total > 0)
        .map(|f| Row {
            name: &f.name,
            calls: f.calls,
            instructions: f.instructions,
            blocks: f.blocks,
        });
    let table = Table {
        item: "file",
        items: "files",
        headers: ["instrs executed", "blocks run", "blocks", "never entered"],
        widths: [16, 10, 8, 12],
        cells: |r| {
            let b = r.blocks;
            [
                r.instructions.executed,
                b.hit.into(),
                b.total.into(),
                (b.total - b.hit).into(),
            ]
        },
    };
    render(rows.collect(), sort, &table)
}
