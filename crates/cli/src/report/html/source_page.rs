//! `src-<n>-<name>.html`: one source file annotated with its line counts
//! (never-run lines marked, the hottest path's lines marked `hot-path`),
//! beside the file's functions and their hottest paths, and the data the page
//! script reads to mark another path's lines.

use super::layout::{page, scripts};
use super::text::{num, pct, plural};
use super::{PathView, Report};
use crate::report::lines::{last_line, LineCount};
use crate::report::paths::short_name;
use crate::report::source::{warning, Source, SourceRoot};
use maud::{html, Markup};
use pathprof_core::Mode;
use std::collections::{BTreeMap, BTreeSet};

impl Report<'_> {
    /// The page of source file `file`, its text read from `sources`.
    pub(super) fn source_page(&self, file: u32, sources: &SourceRoot) -> Markup {
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
        let initial_key = initial.map(PathView::key);
        let initial_lines: BTreeSet<u32> = initial
            .and_then(|p| p.lines.get(&file))
            .cloned()
            .unwrap_or_default();

        let lines = self.file_summary(file).map(|s| s.lines).unwrap_or_default();
        let (run, all) = (lines.hit.into(), lines.total.into());
        let path_mode = map.mode == Mode::Path;
        let rows = (1..=last_line(counts, text))
            .filter(|line| !text.is_empty() || counts.contains_key(line))
            .map(|line| {
                let src = text.get(line as usize - 1).map_or("", String::as_str);
                source_row(line, counts.get(&line), src, initial_lines.contains(&line))
            });
        page(
            &format!("{} · pathprof", short_name(recorded)),
            html! {
                header {
                    p { a href="index.html" { "← summary" } }
                    h1 { (recorded) }
                    p.muted {
                        (num(run)) " of " (num(all)) " executable lines ran ("
                        (pct(run, all)) "); lines that never ran are "
                        span.key.never { "marked" }
                        @if path_mode {
                            "; click a path to mark its lines "
                            span.key.hot-path { "like this" } "."
                            @if self.summary.program.residual.is_some() {
                                " Paths the training ran are " (ppp_mark(true))
                                ", the others " (ppp_mark(false)) "."
                            }
                        } @else {
                            ". Paths need a path profile (build with "
                            code { "pathprof cc --mode=path" } ")."
                        }
                    }
                    @if let Some(w) = warning(&source) {
                        p.note {
                            "Note: " (w) "."
                            @if let Source::Missing(_) = source {
                                " The counts are shown without the source text."
                            }
                        }
                    }
                }
                div.layout {
                    main {
                        table.src {
                            thead { tr { th.cnt { "count" } th.no { "line" } th { "source" } } }
                            tbody { @for row in rows { (row) } }
                        }
                    }
                    aside {
                        h2 {
                            @if path_mode {
                                "Functions and their hottest paths"
                            } @else {
                                "Functions"
                            }
                        }
                        @if fns.is_empty() {
                            p.muted {
                                "No function is defined in this file; "
                                "its lines come from code inlined elsewhere."
                            }
                        }
                        @for &i in &fns {
                            (self.function_panel(i, file, &data, initial_key.as_deref()))
                        }
                    }
                }
                (scripts(&data, initial_key.as_deref()))
            },
        )
    }

    /// Function `i` in the side panel of `file`'s page: its calls and paths,
    /// and its hottest paths (`here`: each one's lines on this page).
    fn function_panel(
        &self,
        i: usize,
        file: u32,
        here: &BTreeMap<String, Vec<u32>>,
        selected: Option<&str>,
    ) -> Markup {
        let f = &self.loaded.map.functions[i];
        let s = &self.summary.functions[i];
        let paths = &self.paths[i];
        let more = s
            .paths
            .map_or(0, |r| r.hit)
            .saturating_sub(paths.len() as u64);
        html! {
            section.fn.uncalled[s.calls == 0] id={ "fn-" (i) } {
                h3 { (f.shown_name()) }
                p.muted {
                    (plural(s.calls.into(), "call"))
                    @if let Some(l) = f.line { " " a href={ "#L" (l) } { "line " (l) } }
                    @match s.paths {
                        Some(r) => {
                            " · " (num(r.hit.into())) " of " (plural(r.total.into(), "path"))
                            " ran, " (plural(s.path_executions, "time"))
                        }
                        None if self.loaded.map.mode == Mode::Path => {
                            " · too many paths: counted by blocks"
                        }
                        None => {}
                    }
                }
                @if !paths.is_empty() {
                    ol.paths {
                        @for p in paths {
                            @let key = p.key();
                            @let lines: Vec<String> =
                                here[&key].iter().map(u32::to_string).collect();
                            li.path.selected[selected == Some(key.as_str())]
                                id={ "path-" (key) } data-path=(key) data-lines=(lines.join(" "))
                                tabindex="0" title=[(!p.title.is_empty()).then_some(&p.title)] {
                                span.pc { (num(p.count.into())) }
                                " " span.ps { (format!("{:.1}%", 100.0 * p.share)) }
                                " " span.pb { (plural(p.blocks as u128, "block")) }
                                @if let Some(interesting) = p.interesting {
                                    " " (ppp_mark(interesting))
                                }
                                br;
                                span.pl { (p.ranges) }
                                @if p.lines.keys().any(|&f| f != file) {
                                    " " span.muted { "(also in other files)" }
                                }
                            }
                        }
                    }
                    @if more > 0 {
                        p.muted { "and " (num(more.into())) " more paths" }
                    }
                }
            }
        }
    }
}

/// A PPP build's mark of an interesting or a residual path.
pub(super) fn ppp_mark(interesting: bool) -> Markup {
    html! {
        @if interesting {
            span.pi title="one of the interesting paths the build numbered" { "interesting" }
        } @else {
            span.pi.residual title="a residual path: the training never ran it" { "residual" }
        }
    }
}

/// One line of the listing: its count in the margin (instructions in the
/// tooltip), its number and its text.
fn source_row(line: u32, count: Option<&LineCount>, src: &str, on_hot_path: bool) -> Markup {
    let mut class = vec!["ln"];
    match count {
        Some(c) if c.count > 0 => class.push("exec"),
        Some(_) => class.push("never"),
        None => {}
    }
    if on_hot_path {
        class.push("hot-path");
    }
    let title = count.map(|c| {
        format!(
            "{} instructions, {} executed",
            num(c.instructions.into()),
            num(c.instructions_executed.into())
        )
    });
    html! {
        tr id={ "L" (line) } data-line=(line) class=(class.join(" ")) {
            td.cnt title=[title] { @if let Some(c) = count { (num(c.count.into())) } }
            td.no { (line) }
            td.code { (src) }
        }
    }
}
