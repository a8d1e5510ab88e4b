//! `pathprof report` in text: one line per executed function (calls, blocks
//! executed, executed paths of potential paths), hottest first.

use super::load::Loaded;
use pathprof_core::layout::Layout;
use std::fmt::Write as _;

/// The text report.
pub fn report(loaded: &Loaded) -> String {
    let map = &loaded.map;
    let mut rows: Vec<usize> = (0..map.functions.len()).collect();
    rows.sort_by_key(|&i| std::cmp::Reverse(loaded.counts[i].blocks.iter().sum::<u64>()));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>9} {:>15}  function",
        "calls", "blocks", "paths run/all"
    );
    for i in rows {
        let (f, c) = (&map.functions[i], &loaded.counts[i]);
        let reachable = (0..f.cfg.num_blocks())
            .filter(|&b| f.cfg.is_reachable(pathprof_core::BlockId::new(b)))
            .count();
        let run = c.blocks.iter().filter(|&&n| n > 0).count();
        let paths = match &f.layout {
            Layout::Path { dag, .. } => format!("{}/{}", c.paths.len(), dag.num_paths()),
            _ => "-".to_string(),
        };
        let where_ = match (map.file_name(f.file), f.line) {
            (Some(file), Some(line)) => format!("  ({file}:{line})"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "{:>12} {:>9} {:>15}  {}{}",
            c.entry,
            format!("{run}/{reachable}"),
            paths,
            f.display_name.as_deref().unwrap_or(&f.name),
            where_
        );
    }
    out
}
