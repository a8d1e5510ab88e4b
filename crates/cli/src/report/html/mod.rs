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
//!
//! The pages are `maud` templates, so every name, path and line of source
//! text is escaped where it is spliced in. Modules: [`index`] (the summary
//! page), [`source_page`] (a source file's page), [`layout`] (the frame of
//! every page, the grid tables, a source page's scripts), [`text`] (numbers,
//! percentages, bars). This module computes what the pages show, once; every
//! total comes from [`Summary`] and the per-line counts from [`line_counts`].

mod index;
mod layout;
mod source_page;
mod text;

use crate::report::lines::{line_counts, LineCount};
use crate::report::load::Loaded;
use crate::report::paths::{describe_end, short_name, source_ranges};
use crate::report::source::SourceRoot;
use anyhow::{Context as _, Result};
use pathprof_core::layout::Layout;
use pathprof_core::map::normalize_path;
use pathprof_report::summary::{FileSummary, Summary};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
#[cfg(test)]
use text::num;

/// Paths listed per function on a source page.
const PATHS_PER_FUNCTION: usize = 10;
/// Paths listed on the index.
const TOP_PATHS: usize = 20;

/// Writes the report into `dir` (created if needed).
pub fn write(loaded: &Loaded, dir: &Path, sources: &SourceRoot) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the report directory {}", dir.display()))?;
    let report = Report::new(loaded);
    let put = |name: &str, page: maud::Markup| {
        let p = dir.join(name);
        pathprof_io::output::write_new(&p, page.into_string().as_bytes())
            .with_context(|| format!("cannot write {}", p.display()))
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
    /// A PPP build: whether the path is one of its function's interesting
    /// paths (else residual: the training never ran it).
    interesting: Option<bool>,
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
    /// Every total the pages show.
    summary: Summary,
    /// Files with code, in map order.
    files: Vec<u32>,
    /// Per function, its hottest paths (at most [`PATHS_PER_FUNCTION`]).
    paths: Vec<Vec<PathView>>,
    /// `(function, index into paths[function])`, hottest first, program-wide.
    hottest: Vec<(usize, usize)>,
}

impl<'a> Report<'a> {
    fn new(loaded: &'a Loaded) -> Report<'a> {
        let map = &loaded.map;
        let lines = line_counts(loaded);
        let summary = Summary::with_lines(loaded, &lines);
        let mut files: BTreeSet<u32> = lines.keys().copied().collect();
        files.extend(map.functions.iter().filter_map(|f| f.file));
        let files: Vec<u32> = files
            .into_iter()
            .filter(|&f| (f as usize) < map.files.len())
            .collect();
        let ppp = map.is_ppp();
        let mut paths = Vec::with_capacity(map.functions.len());
        for (i, (f, c)) in map.functions.iter().zip(&loaded.counts).enumerate() {
            let Layout::Path { dag, .. } = &f.layout else {
                paths.push(Vec::new());
                continue;
            };
            let total = summary.functions[i].path_executions;
            let mut order: Vec<_> = c.paths.iter().filter(|p| p.count > 0).collect();
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
                        interesting: ppp.then(|| f.layout.is_interesting(p.id)),
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
            summary,
            files,
            paths,
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

    /// The totals of source file `file`: the summary's file of that name
    /// (the summary counts a file once however many indices spell it).
    fn file_summary(&self, file: u32) -> Option<&FileSummary> {
        let name = normalize_path(&self.loaded.map.files[file as usize]);
        let files = &self.summary.files;
        files
            .binary_search_by(|s| s.name.as_str().cmp(&name))
            .ok()
            .map(|k| &files[k])
    }
}

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

    /// A PPP build marks each path interesting or residual, on the source
    /// page and in the index's hottest paths, and counts the residual ones.
    #[test]
    fn ppp_builds_mark_interesting_and_residual_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = loaded(
            5,
            &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (0, 4)],
            &[(&[0, 1, 3, 4], 7), (&[0, 2, 3, 4], 2)],
            &[],
        );
        l.map.files = vec!["/nonexistent/t.c".into()];
        let ids: Vec<(u64, u64)> = l.counts[0].paths.iter().map(|p| (p.id, p.count)).collect();
        let hot = ids.iter().find(|p| p.1 == 7).unwrap().0;
        let cold = ids.iter().find(|p| p.1 == 2).unwrap().0;
        let Layout::Path { interesting, .. } = &mut l.map.functions[0].layout else {
            unreachable!()
        };
        *interesting = vec![hot];
        write(&l, dir.path(), &SourceRoot(None)).unwrap();
        let page = std::fs::read_to_string(dir.path().join("src-0-t.c.html")).unwrap();
        let item = |id: u64| {
            let start = page.find(&format!("id=\"path-f0p{id}\"")).unwrap();
            page[start..start + page[start..].find("</li>").unwrap()].to_string()
        };
        assert!(item(hot).contains(">interesting</span>"), "{}", item(hot));
        assert!(item(cold).contains(">residual</span>"), "{}", item(cold));
        let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        assert!(index.contains("residual paths"), "{index}");
        assert!(
            index.contains("executed, not interesting: 2 executions (22.2%)"),
            "{index}"
        );
        // Not a PPP build: no marks.
        let Layout::Path { interesting, .. } = &mut l.map.functions[0].layout else {
            unreachable!()
        };
        interesting.clear();
        let plain = dir.path().join("plain");
        write(&l, &plain, &SourceRoot(None)).unwrap();
        let page = std::fs::read_to_string(plain.join("src-0-t.c.html")).unwrap();
        assert!(!page.contains("class=\"pi"), "{page}");
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
    fn names_are_escaped_on_every_page() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = loaded(3, &[(0, 1), (0, 2), (1, 2)], &[(&[0, 1, 2], 4)], &[]);
        l.map.files = vec!["/nonexistent/<script>&.c".into()];
        l.map.functions[0].display_name = Some("f<script>alert(1)</script>&g".into());
        write(&l, dir.path(), &SourceRoot(None)).unwrap();
        let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        let page = std::fs::read_to_string(dir.path().join("src-0-_script__.c.html")).unwrap();
        let escaped = [
            "f&lt;script&gt;alert(1)&lt;/script&gt;&amp;g",
            "/nonexistent/&lt;script&gt;&amp;.c",
        ];
        for (what, html) in [("index", &index), ("source page", &page)] {
            for name in escaped {
                assert!(html.contains(name), "{what} lacks {name}: {html}");
            }
            for raw in ["<script>alert", "<script>&"] {
                assert!(!html.contains(raw), "{what} has {raw}: {html}");
            }
        }
        assert!(!index.contains("<script"), "{index}");
        // The page's own: its paths' data, the initial path and the script.
        assert_eq!(page.matches("<script").count(), 3, "{page}");
    }

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(1234567), "1,234,567");
    }
}
