//! `pathprof lines`: the annotated source listing of Weinberger's `lprint`: each
//! line with its execution count (or instructions executed) in the margin;
//! executable lines that never ran are marked `#####` so they stand out; lines
//! without code show `-`.

use super::lines::line_counts;
use super::load::Loaded;
use super::source::{warning, Source, SourceRoot};
use anyhow::{bail, Result};
use std::fmt::Write as _;

/// The listing of `files` (all files with code when empty).
pub fn report(
    loaded: &Loaded,
    files: &[String],
    instructions: bool,
    sources: &SourceRoot,
) -> Result<String> {
    let map = &loaded.map;
    let counts = line_counts(loaded);
    let selected: Vec<u32> = counts
        .keys()
        .copied()
        .filter(|&f| {
            files.is_empty()
                || files
                    .iter()
                    .any(|want| map.files[f as usize].ends_with(want.as_str()))
        })
        .collect();
    if selected.is_empty() {
        if files.is_empty() {
            bail!("the map has no line information; build with -g");
        }
        bail!(
            "none of {} is a source file of this program",
            files.join(", ")
        );
    }
    let mut out = String::new();
    for f in selected {
        let lines = &counts[&f];
        let source = sources.read(map, f as usize);
        let _ = writeln!(out, "==> {} <==", map.files[f as usize]);
        if let Some(w) = warning(&source) {
            eprintln!("pathprof: warning: {w}");
            let _ = writeln!(out, "(warning: {w})");
        }
        let text: &[String] = match &source {
            Source::Text(t) | Source::Changed(_, t) => t,
            Source::Missing(_) => &[],
        };
        let last = super::lines::last_line(lines, text);
        for line in 1..=last {
            let margin = match lines.get(&line) {
                None => "-".to_string(),
                Some(c) if c.count == 0 => "#####".to_string(),
                Some(c) if instructions => c.instructions_executed.to_string(),
                Some(c) => c.count.to_string(),
            };
            let src = text.get(line as usize - 1).map_or("", String::as_str);
            if text.is_empty() && !lines.contains_key(&line) {
                continue;
            }
            let _ = writeln!(out, "{margin:>12} {line:>5}  {src}");
        }
        out.push('\n');
    }
    Ok(out)
}
