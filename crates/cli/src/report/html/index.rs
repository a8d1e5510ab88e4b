//! `index.html`: the program's summary cards, the source files with their
//! line coverage, the hottest paths program-wide and every function, each
//! linking to its source page.

use super::layout::{grid, page};
use super::source_page::ppp_mark;
use super::text::{bar, num, pct};
use super::{Report, TOP_PATHS};
use crate::report::paths::short_name;
use maud::{html, Markup};
use pathprof_core::Mode;
use pathprof_report::summary::Ratio;

/// One summary card: what it counts, the number, and what the number means.
struct Card {
    label: &'static str,
    value: String,
    detail: String,
}

impl Report<'_> {
    /// The summary page.
    pub(super) fn index(&self) -> Markup {
        let map = &self.loaded.map;
        let program = self
            .loaded
            .map_path
            .file_stem()
            .map_or("program".into(), |s| s.to_string_lossy().into_owned());
        page(
            &format!("pathprof: {program}"),
            html! {
                header {
                    h1 { "pathprof report: " (program) }
                    p.muted {
                        (map.mode.name()) " profile · map "
                        (self.loaded.map_path.display().to_string())
                    }
                }
                section.cards {
                    @for c in self.cards() {
                        div.card {
                            div.label { (c.label) }
                            div.value { (c.value) }
                            div.detail { (c.detail) }
                        }
                    }
                }
                (self.files_table())
                @if map.mode == Mode::Path && !self.hottest.is_empty() {
                    (self.hottest_table())
                }
                (self.functions_table())
            },
        )
    }

    /// The program's totals, as the summary counts them.
    fn cards(&self) -> Vec<Card> {
        let mode = self.loaded.map.mode;
        let total = &self.summary.program;
        let ratio = |label, r: Ratio, what: &str| Card {
            label,
            value: pct(r.hit.into(), r.total.into()),
            detail: format!("{} of {} {what}", num(r.hit.into()), num(r.total.into())),
        };
        let functions = total.functions;
        let mut cards = vec![
            Card {
                label: "functions executed",
                value: format!(
                    "{} / {}",
                    num(functions.hit.into()),
                    num(functions.total.into())
                ),
                detail: pct(functions.hit.into(), functions.total.into()),
            },
            Card {
                label: "calls",
                value: num(total.calls),
                detail: "function entries".into(),
            },
            ratio("line coverage", total.lines, "lines"),
            ratio("block coverage", total.blocks, "blocks"),
        ];
        if let Some(edges) = total.edges {
            cards.push(ratio("edge coverage", edges, "edges"));
        }
        if mode == Mode::Path {
            cards.push(Card {
                label: "paths executed",
                value: num(total.paths.unwrap_or_default().hit.into()),
                detail: format!("{} path executions", num(total.path_executions)),
            });
        }
        if let Some(r) = total.residual {
            cards.push(Card {
                label: "residual paths",
                value: num(r.paths.into()),
                detail: format!(
                    "executed, not interesting: {} executions ({})",
                    num(r.executions),
                    pct(r.executions, total.path_executions)
                ),
            });
        }
        cards.push(Card {
            label: "instructions executed",
            value: num(total.instructions.executed),
            detail: "LLVM IR instructions".into(),
        });
        cards
    }

    /// The source files by name, with their line coverage.
    fn files_table(&self) -> Markup {
        let map = &self.loaded.map;
        let mut by_name = self.files.clone();
        by_name.sort_by(|a, b| map.files[*a as usize].cmp(&map.files[*b as usize]));
        html! {
            h2 { "Source files" }
            (grid(&["file", "lines run", "line coverage", "functions"], html! {
                @for file in by_name {
                    @let (lines, functions) = self
                        .file_summary(file)
                        .map(|s| (s.lines, s.functions))
                        .unwrap_or_default();
                    @let (run, all) = (lines.hit.into(), lines.total.into());
                    tr {
                        td { a href=(self.page_name(file)) { (map.files[file as usize]) } }
                        td.n { (num(run)) " / " (num(all)) }
                        td.n { (bar(run, all)) }
                        td.n { (functions.total) }
                    }
                }
            }))
        }
    }

    /// The program's hottest paths, each linking to its function's page.
    fn hottest_table(&self) -> Markup {
        let map = &self.loaded.map;
        let total = self.summary.program.path_executions;
        html! {
            h2 { "Hottest paths" }
            (grid(&["count", "share", "blocks", "function", "source lines"], html! {
                @for &(fi, k) in self.hottest.iter().take(TOP_PATHS) {
                    @let p = &self.paths[fi][k];
                    @let f = &map.functions[fi];
                    tr {
                        td.n { (num(p.count.into())) }
                        td.n { (pct(p.count.into(), total)) }
                        td.n { (p.blocks) }
                        td {
                            (f.shown_name())
                            @if let Some(interesting) = p.interesting {
                                " " (ppp_mark(interesting))
                            }
                        }
                        td {
                            @match f.file {
                                Some(file) if self.files.contains(&file) => {
                                    a href={ (self.page_name(file)) "#path-" (p.key()) } {
                                        (p.ranges)
                                    }
                                }
                                _ => { (p.ranges) }
                            }
                        }
                    }
                }
            }))
        }
    }

    /// Every function, most instructions executed first.
    fn functions_table(&self) -> Markup {
        let map = &self.loaded.map;
        let fs = &self.summary.functions;
        let mut order: Vec<usize> = (0..fs.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(fs[i].instructions.executed), i));
        let head = [
            "function",
            "defined at",
            "calls",
            "blocks run",
            "paths run / potential",
            "instructions executed",
        ];
        html! {
            h2 { "Functions" }
            (grid(&head, html! {
                @for i in order {
                    @let s = &fs[i];
                    tr class=[(s.calls == 0).then_some("never")] {
                        td { (map.functions[i].shown_name()) }
                        td { (self.function_link(i)) }
                        td.n { (num(s.calls.into())) }
                        td.n { (s.blocks.hit) " / " (s.blocks.total) }
                        td.n {
                            @match s.paths {
                                Some(r) => { (num(r.hit.into())) " / " (num(r.total.into())) }
                                None => "–",
                            }
                        }
                        td.n { (num(s.instructions.executed)) }
                    }
                }
            }))
        }
    }

    /// Where function `i` is defined, as a link, or plain text.
    fn function_link(&self, i: usize) -> Markup {
        let f = &self.loaded.map.functions[i];
        html! {
            @match f.file {
                Some(file) if self.files.contains(&file) => {
                    a href={ (self.page_name(file)) "#fn-" (i) } {
                        (short_name(&self.loaded.map.files[file as usize]))
                        @if let Some(l) = f.line { ":" (l) }
                    }
                }
                _ => span.muted { "no source" },
            }
        }
    }
}
