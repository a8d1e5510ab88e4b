//! `pathprof html`: a self-contained static report, readable from `file://` with
//! no server and no network (CSS and script inline, nothing fetched).
//!
//! Files written into the output directory:
//! - `index.html`: the program summary (functions, calls, line / block / edge /
//!   path coverage, instructions executed), the source files, every function, and
//!   the hottest paths program-wide, each linking to its source page.
//! - `src-<n>-<name>.html`, one per source file with code: the annotated source
//!   (execution count in the margin as `pathprof lines` prints it, never-executed
//!   lines marked) beside the file's functions, each with its hottest paths
//!   (count and share of the function's path executions).
//!
//! Every source line is an element with `data-line` (and `id="L<n>"`). Clicking a
//! path marks the lines it runs through with the class `hot-path`; the page
//! starts with its hottest path selected (marked in the HTML itself, so the
//! highlight shows even with scripts off), and `#path-<key>` in the address
//! selects another. A missing source shows its counts without text, with a note.

mod text;

use crate::report::lines::{line_counts, LineCount};
use crate::report::load::Loaded;
use crate::report::paths::{describe_end, short_name, source_ranges};
use crate::report::source::{warning, Source, SourceRoot};
use anyhow::{Context as _, Result};
use pathprof_core::layout::Layout;
use pathprof_core::Mode;
use pathprof_report::summary::Summary;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use text::{bar, esc, num, pct, plural};

/// Paths listed per function on a source page.
const PATHS_PER_FUNCTION: usize = 10;
/// Paths listed on the index.
const TOP_PATHS: usize = 20;

/// Writes the report into `dir` (created if needed).
pub fn write(loaded: &Loaded, dir: &Path, sources: &SourceRoot) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the report directory {}", dir.display()))?;
    let report = Report::new(loaded);
    let put = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    for &file in &report.files {
        put(&report.page_name(file), report.source_page(file, sources))?;
    }
    put("index.html", report.index())?;
    Ok(())
}

/// One executed path as the report shows it.
struct PathView {
    function: usize,
    id: u64,
    count: u64,
    /// Share of the function's path executions.
    share: f64,
    blocks: usize,
    /// Lines of each file the path runs through, in file order.
    lines: BTreeMap<u32, BTreeSet<u32>>,
    ranges: String,
    title: String,
}

impl PathView {
    fn key(&self) -> String {
        format!("f{}p{}", self.function, self.id)
    }
}

/// Everything computed once for all pages.
struct Report<'a> {
    loaded: &'a Loaded,
    lines: BTreeMap<u32, BTreeMap<u32, LineCount>>,
    /// Files with code, in map order.
    files: Vec<u32>,
    /// Per function, its hottest paths (at most [`PATHS_PER_FUNCTION`]).
    paths: Vec<Vec<PathView>>,
    /// Per function, its distinct executed paths and their executions.
    path_totals: Vec<(usize, u128)>,
    /// `(function, index into paths[function])`, hottest first, program-wide.
    hottest: Vec<(usize, usize)>,
}

impl<'a> Report<'a> {
    fn new(loaded: &'a Loaded) -> Report<'a> {
        let map = &loaded.map;
        let lines = line_counts(loaded);
        let mut files: BTreeSet<u32> = lines.keys().copied().collect();
        files.extend(map.functions.iter().filter_map(|f| f.file));
        let files: Vec<u32> = files
            .into_iter()
            .filter(|&f| (f as usize) < map.files.len())
            .collect();
        let mut paths = Vec::with_capacity(map.functions.len());
        let mut path_totals = Vec::with_capacity(map.functions.len());
        for (i, (f, c)) in map.functions.iter().zip(&loaded.counts).enumerate() {
            let Layout::Path { dag, .. } = &f.layout else {
                paths.push(Vec::new());
                path_totals.push((0, 0));
                continue;
            };
            let executed: Vec<_> = c.paths.iter().filter(|p| p.count > 0).collect();
            let total: u128 = executed.iter().map(|p| p.count as u128).sum();
            path_totals.push((executed.len(), total));
            let mut order = executed;
            order.sort_by(|a, b| b.count.cmp(&a.count).then(a.id.cmp(&b.id)));
            let views = order
                .into_iter()
                .take(PATHS_PER_FUNCTION)
                .map(|p| {
                    let blocks = p.path.blocks(dag);
                    let mut lines: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
                    for b in &blocks {
                        for s in &f.blocks[b.index()].lines {
                            lines.entry(s.file).or_default().insert(s.line);
                        }
                    }
                    let mut title = Vec::new();
                    if let Some(s) = describe_end(f, p.path.start(dag), true) {
                        title.push(s);
                    }
                    if let Some(s) = describe_end(f, p.path.end(dag), false) {
                        title.push(s);
                    }
                    PathView {
                        function: i,
                        id: p.id,
                        count: p.count,
                        share: if total == 0 {
                            0.0
                        } else {
                            p.count as f64 / total as f64
                        },
                        blocks: blocks.len(),
                        lines,
                        ranges: source_ranges(map, f, dag, &p.path),
                        title: title.join("; "),
                    }
                })
                .collect();
            paths.push(views);
        }
        let mut hottest: Vec<(usize, usize)> = paths
            .iter()
            .enumerate()
            .flat_map(|(f, v)| (0..v.len()).map(move |k| (f, k)))
            .collect();
        hottest.sort_by(|&(fa, ka), &(fb, kb)| {
            paths[fb][kb]
                .count
                .cmp(&paths[fa][ka].count)
                .then((fa, ka).cmp(&(fb, kb)))
        });
        Report {
            loaded,
            lines,
            files,
            paths,
            path_totals,
            hottest,
        }
    }

    fn page_name(&self, file: u32) -> String {
        let base: String = short_name(&self.loaded.map.files[file as usize])
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("src-{file}-{base}.html")
    }

    /// Where function `i` is defined, as a link, or plain text.
    fn function_link(&self, i: usize) -> String {
        let f = &self.loaded.map.functions[i];
        match (f.file, f.line) {
            (Some(file), line) if self.files.contains(&file) => {
                let name = short_name(&self.loaded.map.files[file as usize]);
                let anchor = format!("#fn-{i}");
                let at = line.map_or(String::new(), |l| format!(":{l}"));
                format!(
                    "<a href=\"{}{anchor}\">{}{at}</a>",
                    esc(&self.page_name(file)),
                    esc(&name)
                )
            }
            _ => "<span class=\"muted\">no source</span>".into(),
        }
    }

    fn index(&self) -> String {
        let map = &self.loaded.map;
        let counts = &self.loaded.counts;
        let program = self
            .loaded
            .map_path
            .file_stem()
            .map_or("program".into(), |s| s.to_string_lossy().into_owned());
        let total = Summary::with_lines(self.loaded, &self.lines).program;
        let (executed_fns, all_fns) = (total.functions.hit, total.functions.total);
        let (lines_run, lines_all) = (total.lines.hit.into(), total.lines.total.into());
        let (blocks_run, blocks_all) = (total.blocks.hit.into(), total.blocks.total.into());
        let edges = total.edges.unwrap_or_default();
        let (edges_run, edges_all) = (edges.hit.into(), edges.total.into());
        let (calls, instructions) = (total.calls, total.instructions.executed);
        let mut h = page_start(&format!("pathprof: {program}"));
        let _ = writeln!(h, "<header><h1>pathprof report: {}</h1>", esc(&program));
        let _ = writeln!(
            h,
            "<p class=\"muted\">{} profile &middot; map {}</p></header>",
            map.mode.name(),
            esc(&self.loaded.map_path.display().to_string())
        );
        let _ = writeln!(h, "<section class=\"cards\">");
        let card = |h: &mut String, label: &str, value: String, detail: String| {
            let _ = writeln!(
                h,
                "<div class=\"card\"><div class=\"label\">{label}</div><div class=\"value\">{value}</div><div class=\"detail\">{detail}</div></div>"
            );
        };
        card(
            &mut h,
            "functions executed",
            format!("{} / {}", num(executed_fns.into()), num(all_fns.into())),
            pct(executed_fns.into(), all_fns.into()),
        );
        card(&mut h, "calls", num(calls), "function entries".into());
        card(
            &mut h,
            "line coverage",
            pct(lines_run, lines_all),
            format!("{} of {} lines", num(lines_run), num(lines_all)),
        );
        card(
            &mut h,
            "block coverage",
            pct(blocks_run, blocks_all),
            format!("{} of {} blocks", num(blocks_run), num(blocks_all)),
        );
        if map.mode != Mode::Block {
            card(
                &mut h,
                "edge coverage",
                pct(edges_run, edges_all),
                format!("{} of {} edges", num(edges_run), num(edges_all)),
            );
        }
        if map.mode == Mode::Path {
            card(
                &mut h,
                "paths executed",
                num(total.paths.unwrap_or_default().hit.into()),
                format!("{} path executions", num(total.path_executions)),
            );
        }
        card(
            &mut h,
            "instructions executed",
            num(instructions),
            "LLVM IR instructions".into(),
        );
        let _ = writeln!(h, "</section>");

        // Files.
        let _ = writeln!(h, "<h2>Source files</h2>\n<table class=\"grid\"><thead><tr><th>file</th><th>lines run</th><th>line coverage</th><th>functions</th></tr></thead><tbody>");
        let mut by_name = self.files.clone();
        by_name.sort_by(|a, b| map.files[*a as usize].cmp(&map.files[*b as usize]));
        for file in by_name {
            let ls = self.lines.get(&file);
            let all = ls.map_or(0, |l| l.len()) as u128;
            let run = ls.map_or(0, |l| l.values().filter(|c| c.count > 0).count()) as u128;
            let fns = map
                .functions
                .iter()
                .filter(|f| f.file == Some(file))
                .count();
            let _ = writeln!(
                h,
                "<tr><td><a href=\"{}\">{}</a></td><td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&self.page_name(file)),
                esc(&map.files[file as usize]),
                num(run),
                num(all),
                bar(run, all),
                fns
            );
        }
        let _ = writeln!(h, "</tbody></table>");

        // Hottest paths.
        if map.mode == Mode::Path && !self.hottest.is_empty() {
            let total: u128 = self.path_totals.iter().map(|t| t.1).sum();
            let _ = writeln!(h, "<h2>Hottest paths</h2>\n<table class=\"grid\"><thead><tr><th>count</th><th>share</th><th>blocks</th><th>function</th><th>source lines</th></tr></thead><tbody>");
            for &(fi, k) in self.hottest.iter().take(TOP_PATHS) {
                let p = &self.paths[fi][k];
                let f = &map.functions[fi];
                let link = match f.file {
                    Some(file) if self.files.contains(&file) => format!(
                        "<a href=\"{}#path-{}\">{}</a>",
                        esc(&self.page_name(file)),
                        p.key(),
                        esc(&p.ranges)
                    ),
                    _ => esc(&p.ranges),
                };
                let _ = writeln!(
                    h,
                    "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                    num(p.count as u128),
                    pct(p.count as u128, total),
                    p.blocks,
                    esc(f.shown_name()),
                    link
                );
            }
            let _ = writeln!(h, "</tbody></table>");
        }

        // Functions.
        let mut order: Vec<usize> = (0..map.functions.len()).collect();
        let instrs = |i: usize| -> u128 {
            let (f, c) = (&map.functions[i], &counts[i]);
            f.blocks
                .iter()
                .zip(&c.blocks)
                .map(|(b, &n)| n as u128 * b.instructions as u128)
                .sum()
        };
        order.sort_by_key(|&i| (std::cmp::Reverse(instrs(i)), i));
        let _ = writeln!(h, "<h2>Functions</h2>\n<table class=\"grid\"><thead><tr><th>function</th><th>defined at</th><th>calls</th><th>blocks run</th><th>paths run / potential</th><th>instructions executed</th></tr></thead><tbody>");
        for i in order {
            let (f, c) = (&map.functions[i], &counts[i]);
            let reachable = f.cfg.blocks().filter(|&b| f.cfg.is_reachable(b)).count();
            let run = c.blocks.iter().filter(|&&n| n > 0).count();
            let paths = match &f.layout {
                Layout::Path { dag, .. } => {
                    format!(
                        "{} / {}",
                        num(self.path_totals[i].0 as u128),
                        num(dag.num_paths() as u128)
                    )
                }
                _ => "–".into(),
            };
            let _ = writeln!(
                h,
                "<tr{}><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                if c.entry == 0 { " class=\"never\"" } else { "" },
                esc(f.shown_name()),
                self.function_link(i),
                num(c.entry as u128),
                run,
                reachable,
                paths,
                num(instrs(i))
            );
        }
        let _ = writeln!(h, "</tbody></table>");
        h.push_str(PAGE_END);
        h
    }

    fn source_page(&self, file: u32, sources: &SourceRoot) -> String {
        let map = &self.loaded.map;
        let recorded = &map.files[file as usize];
        let source = sources.read(map, file as usize);
        let text: &[String] = match &source {
            Source::Text(t) | Source::Changed(_, t) => t,
            Source::Missing(_) => &[],
        };
        let empty = BTreeMap::new();
        let counts = self.lines.get(&file).unwrap_or(&empty);
        let mut fns: Vec<usize> = (0..map.functions.len())
            .filter(|&i| map.functions[i].file == Some(file))
            .collect();
        fns.sort_by_key(|&i| (map.functions[i].line, i));

        // Paths of this page's functions and the lines they run through here.
        let mut data: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut initial: Option<&PathView> = None;
        for &i in &fns {
            for p in &self.paths[i] {
                let here: Vec<u32> = p
                    .lines
                    .get(&file)
                    .map_or(Vec::new(), |s| s.iter().copied().collect());
                data.insert(p.key(), here);
                if initial.is_none_or(|q| p.count > q.count) {
                    initial = Some(p);
                }
            }
        }
        let initial_lines: BTreeSet<u32> = initial
            .and_then(|p| p.lines.get(&file))
            .cloned()
            .unwrap_or_default();

        let mut h = page_start(&format!("{} · pathprof", short_name(recorded)));
        let _ = writeln!(
            h,
            "<header><p><a href=\"index.html\">&larr; summary</a></p><h1>{}</h1>",
            esc(recorded)
        );
        let all = counts.len() as u128;
        let run = counts.values().filter(|c| c.count > 0).count() as u128;
        let _ = writeln!(
            h,
            "<p class=\"muted\">{} of {} executable lines ran ({}); lines that never ran are <span class=\"key never\">marked</span>{}</p>",
            num(run),
            num(all),
            pct(run, all),
            if map.mode == Mode::Path {
                "; click a path to mark its lines <span class=\"key hot-path\">like this</span>."
            } else {
                ". Paths need a path profile (build with <code>pathprof cc --mode=path</code>)."
            }
        );
        if let Some(w) = warning(&source) {
            let what = match source {
                Source::Missing(_) => " The counts are shown without the source text.",
                _ => "",
            };
            let _ = writeln!(h, "<p class=\"note\">Note: {}.{what}</p>", esc(&w));
        }
        let _ = writeln!(h, "</header>\n<div class=\"layout\"><main>");
        let _ = writeln!(
            h,
            "<table class=\"src\"><thead><tr><th class=\"cnt\">count</th><th class=\"no\">line</th><th>source</th></tr></thead><tbody>"
        );
        let last = super::lines::last_line(counts, text);
        for line in 1..=last {
            let lc = counts.get(&line);
            if text.is_empty() && lc.is_none() {
                continue;
            }
            let mut class = vec!["ln"];
            match lc {
                Some(c) if c.count > 0 => class.push("exec"),
                Some(_) => class.push("never"),
                None => {}
            }
            if initial_lines.contains(&line) {
                class.push("hot-path");
            }
            let (margin, title) = match lc {
                Some(c) => (
                    num(c.count as u128),
                    format!(
                        " title=\"{} instructions, {} executed\"",
                        num(c.instructions as u128),
                        num(c.instructions_executed as u128)
                    ),
                ),
                None => (String::new(), String::new()),
            };
            let src = text.get(line as usize - 1).map_or("", String::as_str);
            let _ = writeln!(
                h,
                "<tr id=\"L{line}\" data-line=\"{line}\" class=\"{}\"><td class=\"cnt\"{title}>{margin}</td><td class=\"no\">{line}</td><td class=\"code\">{}</td></tr>",
                class.join(" "),
                esc(src)
            );
        }
        let _ = writeln!(h, "</tbody></table></main>");

        // Side panel: this file's functions and their hottest paths.
        let _ = writeln!(
            h,
            "<aside><h2>{}</h2>",
            if map.mode == Mode::Path {
                "Functions and their hottest paths"
            } else {
                "Functions"
            }
        );
        if fns.is_empty() {
            let _ = writeln!(
                h,
                "<p class=\"muted\">No function is defined in this file; its lines come from code inlined elsewhere.</p>"
            );
        }
        for &i in &fns {
            let (f, c) = (&map.functions[i], &self.loaded.counts[i]);
            let at = f.line.map_or(String::new(), |l| {
                format!(" <a href=\"#L{l}\">line {l}</a>")
            });
            let _ = writeln!(
                h,
                "<section class=\"fn{}\" id=\"fn-{i}\"><h3>{}</h3><p class=\"muted\">{}{at}",
                if c.entry == 0 { " uncalled" } else { "" },
                esc(f.shown_name()),
                plural(c.entry as u128, "call")
            );
            match &f.layout {
                Layout::Path { dag, .. } => {
                    let (distinct, executions) = self.path_totals[i];
                    let _ = writeln!(
                        h,
                        " &middot; {} of {} ran, {}</p>",
                        num(distinct as u128),
                        plural(dag.num_paths() as u128, "path"),
                        plural(executions, "time")
                    );
                }
                _ if map.mode == Mode::Path => {
                    let _ = writeln!(h, " &middot; too many paths: counted by blocks</p>");
                }
                _ => {
                    let _ = writeln!(h, "</p>");
                }
            }
            if self.paths[i].is_empty() {
                continue;
            }
            let _ = writeln!(h, "<ol class=\"paths\">");
            for p in &self.paths[i] {
                let key = p.key();
                let here = &data[&key];
                let selected = initial.is_some_and(|q| q.key() == key);
                let elsewhere = if p.lines.keys().any(|&f| f != file) {
                    " <span class=\"muted\">(also in other files)</span>"
                } else {
                    ""
                };
                let title = if p.title.is_empty() {
                    String::new()
                } else {
                    format!(" title=\"{}\"", esc(&p.title))
                };
                let lines_attr: Vec<String> = here.iter().map(u32::to_string).collect();
                let _ = writeln!(
                    h,
                    "<li class=\"path{}\" id=\"path-{key}\" data-path=\"{key}\" data-lines=\"{}\" tabindex=\"0\"{title}><span class=\"pc\">{}</span> <span class=\"ps\">{:.1}%</span> <span class=\"pb\">{}</span><br><span class=\"pl\">{}</span>{elsewhere}</li>",
                    if selected { " selected" } else { "" },
                    lines_attr.join(" "),
                    num(p.count as u128),
                    100.0 * p.share,
                    plural(p.blocks as u128, "block"),
                    esc(&p.ranges)
                );
            }
            let _ = writeln!(h, "</ol>");
            if self.path_totals[i].0 > self.paths[i].len() {
                let _ = writeln!(
                    h,
                    "<p class=\"muted\">and {} more paths</p>",
                    num((self.path_totals[i].0 - self.paths[i].len()) as u128)
                );
            }
            let _ = writeln!(h, "</section>");
        }
        let _ = writeln!(h, "</aside></div>");
        let json = serde_json::to_string(&data).expect("path lines serialize");
        let _ = writeln!(
            h,
            "<script type=\"application/json\" id=\"pp-paths\">{}</script>",
            json.replace("</", "<\\/")
        );
        let _ = writeln!(
            h,
            "<script>var PP_INITIAL = {};</script>",
            serde_json::to_string(&initial.map(|p| p.key())).expect("key serializes")
        );
        let _ = writeln!(h, "<script>{SCRIPT}</script>");
        h.push_str(PAGE_END);
        h
    }
}

fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(title)
    )
}

const PAGE_END: &str = "<footer class=\"muted\">Generated by pathprof.</footer>\n</body></html>\n";

const STYLE: &str = include_str!("style.css");

/// The page script; `PP_INITIAL` is defined before it (the initially selected path).
const SCRIPT: &str = include_str!("script.js");

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures::loaded;

    #[test]
    fn pages_mark_the_hottest_path_and_never_run_lines() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.c");
        let text: String = (1..=20).map(|i| format!("line {i} <&>\n")).collect();
        std::fs::write(&src, text).unwrap();
        let mut l = loaded(
            5,
            &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (0, 4)],
            &[(&[0, 1, 3, 4], 7), (&[0, 2, 3, 4], 2)],
            &[],
        );
        l.map.files = vec![src.display().to_string()];
        let out = dir.path().join("report");
        write(&l, &out, &SourceRoot(None)).unwrap();
        let index = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(index.contains("src-0-t.c.html#path-f0p"), "{index}");
        let page = std::fs::read_to_string(out.join("src-0-t.c.html")).unwrap();
        // Hot path 0 1 3 4: lines 10, 11, 13, 14.
        for line in [10, 11, 13, 14] {
            assert!(
                page.contains(&format!(
                    "<tr id=\"L{line}\" data-line=\"{line}\" class=\"ln exec hot-path\">"
                )),
                "line {line}: {page}"
            );
        }
        assert!(page.contains("<tr id=\"L12\" data-line=\"12\" class=\"ln exec\">"));
        assert!(page.contains("line 12 &lt;&amp;&gt;"));
        assert!(page.contains("<span class=\"pc\">7</span> <span class=\"ps\">77.8%</span>"));
        assert!(!page.contains("class=\"ln never"), "all blocks ran");
        assert!(!page.contains("http"), "no external resources");
    }

    #[test]
    fn missing_sources_show_counts_and_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = loaded(3, &[(0, 1), (0, 2), (1, 2)], &[(&[0, 2], 4)], &[]);
        l.map.files = vec!["/nonexistent/t.c".into()];
        write(&l, dir.path(), &SourceRoot(None)).unwrap();
        let page = std::fs::read_to_string(dir.path().join("src-0-t.c.html")).unwrap();
        assert!(page.contains("not found"), "{page}");
        assert!(page.contains("shown without the source text"));
        assert!(page.contains("class=\"ln never\"><td class=\"cnt\""));
        assert!(page.contains(">4</td><td class=\"no\">10</td>"), "{page}");
        assert!(!page.contains("data-line=\"1\""), "only lines with counts");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(1234567), "1,234,567");
    }
}
