//! `pathprof funcs` and `pathprof files`: Weinberger's summaries. Per function:
//! instructions executed, calls, instructions in the function, instructions never
//! executed. Per file: instructions executed, blocks executed, blocks, blocks
//! never entered. Sortable; totals at the bottom.

use super::load::Loaded;
use crate::cli::SortKey;
use pathprof_core::BlockId;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Static and dynamic totals of a set of blocks.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub instructions_executed: u128,
    pub calls: u64,
    pub instructions: u64,
    pub instructions_unexecuted: u64,
    pub blocks: u64,
    pub blocks_executed: u64,
}

impl Totals {
    fn add(&mut self, other: &Totals) {
        self.instructions_executed += other.instructions_executed;
        self.calls = self.calls.saturating_add(other.calls);
        self.instructions += other.instructions;
        self.instructions_unexecuted += other.instructions_unexecuted;
        self.blocks += other.blocks;
        self.blocks_executed += other.blocks_executed;
    }
}

/// The totals of function `i`.
pub fn function_totals(loaded: &Loaded, i: usize) -> Totals {
    let (f, c) = (&loaded.map.functions[i], &loaded.counts[i]);
    let mut t = Totals {
        calls: c.entry,
        ..Totals::default()
    };
    for (b, info) in f.blocks.iter().enumerate() {
        if !f.cfg.is_reachable(BlockId::new(b)) {
            continue;
        }
        let n = c.blocks[b];
        t.blocks += 1;
        t.instructions += info.instructions as u64;
        t.instructions_executed += n as u128 * info.instructions as u128;
        if n == 0 {
            t.instructions_unexecuted += info.instructions as u64;
        } else {
            t.blocks_executed += 1;
        }
    }
    t
}

fn sort_rows(rows: &mut [(String, Totals)], key: SortKey) {
    rows.sort_by(|(na, a), (nb, b)| {
        let ord = match key {
            SortKey::Instructions => b.instructions_executed.cmp(&a.instructions_executed),
            SortKey::Calls => b.calls.cmp(&a.calls),
            SortKey::Size => b.instructions.cmp(&a.instructions),
            SortKey::Unexecuted => b.instructions_unexecuted.cmp(&a.instructions_unexecuted),
            SortKey::Name => std::cmp::Ordering::Equal,
        };
        ord.then_with(|| na.cmp(nb))
    });
}

/// The per-function summary.
pub fn functions(loaded: &Loaded, sort: SortKey) -> String {
    let mut rows: Vec<(String, Totals)> = (0..loaded.map.functions.len())
        .map(|i| {
            let f = &loaded.map.functions[i];
            (
                f.display_name.clone().unwrap_or_else(|| f.name.clone()),
                function_totals(loaded, i),
            )
        })
        .collect();
    sort_rows(&mut rows, sort);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>16} {:>12} {:>8} {:>10}  function",
        "instrs executed", "calls", "instrs", "never run"
    );
    let mut total = Totals::default();
    for (name, t) in &rows {
        let _ = writeln!(
            out,
            "{:>16} {:>12} {:>8} {:>10}  {name}",
            t.instructions_executed, t.calls, t.instructions, t.instructions_unexecuted
        );
        total.add(t);
    }
    let _ = writeln!(
        out,
        "{:>16} {:>12} {:>8} {:>10}  total ({} functions)",
        total.instructions_executed,
        total.calls,
        total.instructions,
        total.instructions_unexecuted,
        rows.len()
    );
    out
}

/// The per-file summary.
pub fn files(loaded: &Loaded, sort: SortKey) -> String {
    let mut by_file: BTreeMap<String, Totals> = BTreeMap::new();
    for (i, f) in loaded.map.functions.iter().enumerate() {
        let name = loaded
            .map
            .file_name(f.file)
            .unwrap_or("(no debug info)")
            .to_string();
        by_file
            .entry(name)
            .or_default()
            .add(&function_totals(loaded, i));
    }
    let mut rows: Vec<(String, Totals)> = by_file.into_iter().collect();
    sort_rows(&mut rows, sort);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>16} {:>10} {:>8} {:>12}  file",
        "instrs executed", "blocks run", "blocks", "never entered"
    );
    let mut total = Totals::default();
    for (name, t) in &rows {
        let _ = writeln!(
            out,
            "{:>16} {:>10} {:>8} {:>12}  {name}",
            t.instructions_executed,
            t.blocks_executed,
            t.blocks,
            t.blocks - t.blocks_executed
        );
        total.add(t);
    }
    let _ = writeln!(
        out,
        "{:>16} {:>10} {:>8} {:>12}  total ({} files)",
        total.instructions_executed,
        total.blocks_executed,
        total.blocks,
        total.blocks - total.blocks_executed,
        rows.len()
    );
    out
}
