//! The totals every report shows, computed once: per function, per source
//! file and for the whole program: calls, instructions (in the code, executed,
//! never executed), and coverage of lines, blocks, edges and paths, each a
//! [`Ratio`]. Text, HTML and JSON renderers read these; none counts again.
//!
//! What each level counts:
//! - *blocks*: blocks reachable from the function's entry; executed when their
//!   count is not 0. Instructions likewise over reachable blocks.
//! - *edges* (every mode but block mode's `--every-block`): edges leaving reachable blocks.
//! - *paths* (path mode): distinct executed paths of potential paths
//!   (Ball-Larus section 1).
//! - *lines*: a function's lines are those of its reachable blocks and its
//!   own line (where its name is declared, which counts its calls as in gcov
//!   and llvm-cov); a line is executed when its count ([`crate::lines`], over
//!   every function with code on it) is not 0. A file's and the program's lines are the lines of
//!   [`line_counts`] (every block's lines, and each function's own line),
//!   one per source file and line whatever the spelling of the file name
//!   ([`normalize_path`]): the lines the LCOV export's `LF`/`LH` and the HTML
//!   report count. A line shared by several functions (a macro, a header's
//!   function compiled into several units) is one line there, so the
//!   functions' line ratios do not add up to the total.

use crate::lines::{line_counts, FileLines};
use crate::load::Loaded;
use pathprof_core::layout::Layout;
use pathprof_core::map::normalize_path;
use pathprof_core::Mode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How many of a set were covered (executed), of how many.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ratio {
    pub hit: u64,
    pub total: u64,
}

impl Ratio {
    pub fn new(hit: u64, total: u64) -> Ratio {
        Ratio { hit, total }
    }

    /// `hit` out of `total` as a percentage; `None` for an empty set.
    pub fn percent(self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.hit as f64 / self.total as f64)
    }

    /// Adds another set's counts.
    pub fn add(&mut self, other: Ratio) {
        self.hit = self.hit.saturating_add(other.hit);
        self.total = self.total.saturating_add(other.total);
    }

    fn count(&mut self, hit: bool) {
        self.add(Ratio::new(u64::from(hit), 1));
    }
}

/// Instructions of a set of blocks: in the code, executed (count ×
/// instructions, Weinberger's measure) and in blocks never executed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instructions {
    pub static_count: u64,
    pub executed: u128,
    pub never_executed: u64,
}

impl Instructions {
    fn add(&mut self, o: Instructions) {
        self.static_count = self.static_count.saturating_add(o.static_count);
        self.executed = self.executed.saturating_add(o.executed);
        self.never_executed = self.never_executed.saturating_add(o.never_executed);
    }
}

/// One function's totals.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionSummary {
    /// Index into the map's functions (and the loaded counts).
    pub index: usize,
    /// The name a person reads (demangled where the map has it).
    pub name: String,
    /// The source file that defines it, as the map names it.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub calls: u64,
    pub instructions: Instructions,
    pub blocks: Ratio,
    pub lines: Ratio,
    /// Every mode but block mode built with `--every-block`.
    pub edges: Option<Ratio>,
    /// Path mode: distinct executed paths of potential paths.
    pub paths: Option<Ratio>,
    /// Path mode: executions of all its paths.
    pub path_executions: u128,
    /// Path mode, a function whose paths count in a hash table (more
    /// potential paths than the array limit): the executions counted there
    /// (all of them; in a PPP build, its residual paths'). `None`: an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hashed_executions: Option<u128>,
    /// A PPP build: its residual paths executed (not interesting), and
    /// their executions.
    #[serde(default)]
    pub residual: Residual,
    /// Lines of its reachable blocks that never ran, ascending.
    pub never_executed_lines: Vec<u32>,
}

/// One source file's totals (every function the map places in it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    /// The file's name as the map records it ([`normalize_path`]'s form), or
    /// `(no debug info)` for the functions without one.
    pub name: String,
    /// Functions defined in it, executed of all.
    pub functions: Ratio,
    pub calls: u64,
    pub instructions: Instructions,
    pub blocks: Ratio,
    /// Its lines (see the module doc).
    pub lines: Ratio,
}

/// The whole program's totals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgramSummary {
    /// Functions executed of all.
    pub functions: Ratio,
    pub calls: u128,
    pub instructions: Instructions,
    pub blocks: Ratio,
    pub lines: Ratio,
    pub edges: Option<Ratio>,
    pub paths: Option<Ratio>,
    pub path_executions: u128,
    /// Path mode: functions whose paths count in hash tables, and the path
    /// executions counted there.
    #[serde(default)]
    pub hashed_functions: u64,
    #[serde(default)]
    pub hashed_executions: u128,
    /// A PPP build (`--mode=ppp`): its residual paths; `None` elsewhere.
    #[serde(default)]
    pub residual: Option<Residual>,
}

/// Residual paths (executed, not interesting) of a PPP build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residual {
    /// Distinct residual paths executed.
    pub paths: u64,
    /// Their executions.
    pub executions: u128,
}

impl Residual {
    fn add(&mut self, o: Residual) {
        self.paths = self.paths.saturating_add(o.paths);
        self.executions = self.executions.saturating_add(o.executions);
    }
}

/// Every total of one loaded profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// In the map's order.
    pub functions: Vec<FunctionSummary>,
    /// By file name.
    pub files: Vec<FileSummary>,
    pub program: ProgramSummary,
}

/// Name of the file group of functions the map places in no file.
pub const NO_FILE: &str = "(no debug info)";

impl Summary {
    /// Computes every total of `loaded`.
    pub fn of(loaded: &Loaded) -> Summary {
        Summary::with_lines(loaded, &line_counts(loaded))
    }

    /// The same, from line counts already computed.
    pub fn with_lines(loaded: &Loaded, per_line: &FileLines) -> Summary {
        let mode = loaded.map.mode;
        let functions: Vec<FunctionSummary> = (0..loaded.map.functions.len())
            .map(|i| function_summary(loaded, per_line, i))
            .collect();
        let line_sets = lines_by_file(loaded, per_line);
        let mut files: BTreeMap<String, FileSummary> = BTreeMap::new();
        let mut program = ProgramSummary {
            // Block mode counts edges too, unless built with a counter in
            // every block.
            edges: functions
                .iter()
                .any(|f| f.edges.is_some())
                .then(Ratio::default),
            paths: (mode == Mode::Path).then(Ratio::default),
            residual: loaded.map.is_ppp().then(Residual::default),
            ..ProgramSummary::default()
        };
        for f in &functions {
            let name = f
                .file
                .as_deref()
                .map_or(NO_FILE.to_string(), normalize_path);
            let file = files.entry(name.clone()).or_insert_with(|| FileSummary {
                name,
                ..FileSummary::default()
            });
            file.functions.count(f.calls > 0);
            file.calls = file.calls.saturating_add(f.calls);
            file.instructions.add(f.instructions);
            file.blocks.add(f.blocks);
            program.functions.count(f.calls > 0);
            program.calls += u128::from(f.calls);
            program.instructions.add(f.instructions);
            program.blocks.add(f.blocks);
            if let (Some(t), Some(e)) = (&mut program.edges, f.edges) {
                t.add(e);
            }
            if let (Some(t), Some(p)) = (&mut program.paths, f.paths) {
                t.add(p);
            }
            program.path_executions = program.path_executions.saturating_add(f.path_executions);
            if let Some(r) = &mut program.residual {
                r.add(f.residual);
            }
            if let Some(n) = f.hashed_executions {
                program.hashed_functions += 1;
                program.hashed_executions = program.hashed_executions.saturating_add(n);
            }
        }
        for (name, lines) in line_sets {
            let file = files.entry(name.clone()).or_insert_with(|| FileSummary {
                name,
                ..FileSummary::default()
            });
            file.lines = lines;
            program.lines.add(lines);
        }
        Summary {
            functions,
            files: files.into_values().collect(),
            program,
        }
    }
}

/// The lines of each source file, by normalised name: one per line however
/// many file indices spell the file.
fn lines_by_file(loaded: &Loaded, per_line: &FileLines) -> BTreeMap<String, Ratio> {
    let mut hit: BTreeMap<String, BTreeMap<u32, bool>> = BTreeMap::new();
    for (&file, lines) in per_line {
        let Some(name) = loaded.map.files.get(file as usize) else {
            continue;
        };
        let set = hit.entry(normalize_path(name)).or_default();
        for (&line, lc) in lines.iter().filter(|(&l, _)| l > 0) {
            *set.entry(line).or_default() |= lc.count > 0;
        }
    }
    hit.into_iter()
        .map(|(name, lines)| {
            let run = lines.values().filter(|&&h| h).count() as u64;
            (name, Ratio::new(run, lines.len() as u64))
        })
        .collect()
}

fn function_summary(loaded: &Loaded, per_line: &FileLines, i: usize) -> FunctionSummary {
    let (f, c) = (&loaded.map.functions[i], &loaded.counts[i]);
    let mut instructions = Instructions::default();
    let mut blocks = Ratio::default();
    let mut lines: BTreeSet<(u32, u32)> = BTreeSet::new();
    for b in f.cfg.blocks().filter(|&b| f.cfg.is_reachable(b)) {
        let (n, info) = (c.blocks[b.index()], &f.blocks[b.index()]);
        let size = u64::from(info.instructions);
        blocks.count(n > 0);
        instructions.static_count += size;
        instructions.executed += u128::from(n) * u128::from(size);
        if n == 0 {
            instructions.never_executed += size;
        }
        lines.extend(info.lines.iter().map(|s| (s.file, s.line)));
    }
    if let (Some(file), Some(line)) = (f.file, f.line) {
        lines.insert((file, line)); // counts its calls, as in gcov and llvm-cov
    }
    lines.retain(|&(_, line)| line > 0);
    let line_hit = |&(file, line): &(u32, u32)| per_line[&file][&line].count > 0;
    let edges = c.edges.as_ref().map(|e| {
        let mut r = Ratio::default();
        for id in f.cfg.edge_ids() {
            if f.cfg.is_reachable(f.cfg.edge(id).from) {
                r.count(e[id.index()] > 0);
            }
        }
        r
    });
    let paths = match &f.layout {
        Layout::Path { dag, .. } => Some(Ratio::new(c.paths.len() as u64, dag.num_paths())),
        _ => None,
    };
    let residual = c
        .paths
        .iter()
        .filter(|p| p.count > 0 && !f.layout.is_interesting(p.id))
        .fold(Residual::default(), |mut r, p| {
            r.add(Residual {
                paths: 1,
                executions: u128::from(p.count),
            });
            r
        });
    let hashed_executions = match &f.layout {
        // A numbered PPP function's interesting paths count in its array.
        Layout::Path {
            hashed: true,
            ppp_owners,
            ..
        } if !ppp_owners.is_empty() => Some(residual.executions),
        Layout::Path { hashed: true, .. } => {
            Some(c.paths.iter().map(|p| u128::from(p.count)).sum())
        }
        _ => None,
    };
    FunctionSummary {
        index: i,
        name: loaded.name(i).to_string(),
        file: loaded.map.file_name(f.file).map(str::to_string),
        line: f.line,
        calls: c.entry,
        instructions,
        blocks,
        lines: Ratio::new(
            lines.iter().filter(|l| line_hit(l)).count() as u64,
            lines.len() as u64,
        ),
        edges,
        paths,
        path_executions: c.paths.iter().map(|p| u128::from(p.count)).sum(),
        hashed_executions,
        residual,
        never_executed_lines: lines.iter().filter(|l| !line_hit(l)).map(|l| l.1).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::two_copies;

    #[test]
    fn a_file_spelled_twice_is_one_file_and_its_lines_count_once() {
        // f and g: the same lines 9..13 of one file under two spellings.
        let l = two_copies(1);
        let s = Summary::of(&l);
        assert_eq!(s.files.len(), 1, "{:?}", s.files);
        assert_eq!(s.files[0].name, "/src/dir/t.c");
        // Lines 9 (declaration), 10..13: 13 never ran in either copy.
        assert_eq!(s.files[0].lines, Ratio::new(4, 5));
        assert_eq!(s.program.lines, Ratio::new(4, 5));
        // Each function counts its own reachable blocks' lines.
        let f_lines: u64 = s.functions.iter().map(|f| f.lines.total).sum();
        assert!(f_lines > s.program.lines.total);
        assert_eq!(s.program.functions, Ratio::new(2, 2));
        assert_eq!(s.program.calls, 3 + 2);
    }
}
