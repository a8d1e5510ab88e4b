//! What every report must satisfy whatever the program (see [`check_report`]
//! and [`check_modes`]), and the end-to-end tests' machinery around it.
//!
//! A test calls [`profile`] once per program: that builds the program once per
//! optimisation level and mode, runs every build, and checks the invariants. The
//! test then states the program's hand-derived counts with the `expect_*`
//! methods of [`Profiled`], which collect failures instead of stopping at the
//! first, and ends with [`Profiled::finish`], which panics with all of them.
//!
//! Source lines are named by markers: `/* @name */` at the end of a line of a
//! program in `tests/programs/`.

use super::build::{
    build, line_of, map_of, programs_dir, Builds, Compiler, Mode, Opt, Program, ALL, MODES,
};
use super::command::PATHPROF;
use super::report::{names, report, Edge, Function, FunctionExt, Report};
use super::run::{run, Run};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{Debug, Display};
use std::path::PathBuf;
use std::process::Command;

// ---------------------------------------------------------------------------
// Collecting failures

/// Failed checks, reported together at the end of a test.
#[derive(Default)]
pub struct Checks {
    failures: Vec<String>,
}

impl Checks {
    pub fn fail(&mut self, msg: impl Into<String>) {
        self.failures.push(msg.into());
    }

    pub fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) {
        if !ok {
            self.failures.push(msg());
        }
    }

    pub fn eq<T: PartialEq + Debug>(&mut self, what: impl Display, expected: T, got: T) {
        if expected != got {
            self.failures
                .push(format!("{what}: expected {expected:?}, got {got:?}"));
        }
    }

    /// Panics listing every failure, if any.
    pub fn finish(self, title: &str) {
        if !self.failures.is_empty() {
            panic!(
                "{} check(s) failed for {title}:\n  - {}",
                self.failures.len(),
                self.failures.join("\n  - ")
            );
        }
    }
}

// ---------------------------------------------------------------------------
// One program, profiled in every build

/// One instrumented build of a program, run once.
pub struct Built {
    pub exe: PathBuf,
    pub map: PathBuf,
    pub profile: PathBuf,
    /// `None` when `pathprof report` failed (that is a recorded failure).
    pub report: Option<Report>,
}

/// One function as one build's report has it.
pub struct Seen {
    /// "program -Ox --mode=m: function", to start messages with.
    pub ctx: String,
    pub opt: Opt,
    pub mode: Mode,
    pub f: Function,
}

/// A program built plain and in every mode at the given levels, each build run
/// once and its report checked against the invariants.
pub struct Profiled {
    pub prog: &'static Program,
    /// Holds every build; removed when dropped, kept when a check fails.
    pub dir: tempfile::TempDir,
    /// The plain clang -O2 build's run.
    pub reference: Run,
    pub builds: BTreeMap<(Opt, Mode), Built>,
    pub checks: Checks,
}

/// Builds, runs and checks `prog` (see [`Profiled`]).
pub fn profile(prog: &'static Program, opts: &[Opt]) -> Profiled {
    let dir = tempfile::Builder::new()
        .prefix(&format!("pathprof-e2e-{}-", prog.name))
        .tempdir()
        .expect("temporary directory");
    let reference_exe = build(prog, Compiler::Clang, Opt::O2, dir.path());
    let reference = run(&reference_exe, None);
    assert_eq!(
        reference.status,
        Some(prog.status),
        "the plain clang build of {} does not behave as written:\n{reference}",
        prog.name
    );
    let mut checks = Checks::default();
    let mut builds = BTreeMap::new();
    for &opt in opts {
        for mode in MODES {
            let ctx = format!("{} {} --mode={}", prog.name, opt.flag(), mode.name());
            let exe = build(prog, Compiler::Pathprof(Some(mode)), opt, dir.path());
            let map = map_of(&exe);
            checks.check(map.is_file(), || {
                format!("{ctx}: no map at {}", map.display())
            });
            let profile = exe.with_extension("pprof");
            let out = run(&exe, Some(&profile));
            if out != reference {
                checks.fail(format!(
                    "{ctx}: the instrumented program behaves differently from the plain clang -O2 build\n\
                     instrumented: {out}\nplain: {reference}"
                ));
            }
            let report = match report(&map, &profile) {
                Ok(r) => {
                    check_report(&ctx, prog, mode, &r, &mut checks);
                    Some(r)
                }
                Err(f) => {
                    checks.fail(format!("{ctx}: `{}` failed:\n{}", f.command, f.run));
                    None
                }
            };
            builds.insert(
                (opt, mode),
                Built {
                    exe,
                    map,
                    profile,
                    report,
                },
            );
        }
        let reports: Vec<&Report> = MODES
            .iter()
            .filter_map(|&m| builds[&(opt, m)].report.as_ref())
            .collect();
        if reports.len() == MODES.len() {
            let ctx = format!("{} {}", prog.name, opt.flag());
            check_modes(
                &ctx,
                prog,
                [reports[0], reports[1], reports[2]],
                &mut checks,
            );
        }
        // The LLVM notes' verifier: path-derived edge counts equal the edge
        // profile, and block mode's (its chords give every edge), unless
        // exit() cut paths short and nothing counted them.
        let exact = prog.cut_short.is_empty() || prog.pathprof_flags.contains(&"--early-exit");
        for reference in [Mode::Edge, Mode::Block].into_iter().filter(|_| exact) {
            let (path, edge) = (&builds[&(opt, Mode::Path)], &builds[&(opt, reference)]);
            let out = Command::new(PATHPROF)
                .arg("verify")
                .arg("--map")
                .arg(&path.map)
                .arg(&path.profile)
                .arg("--edge-map")
                .arg(&edge.map)
                .arg(&edge.profile)
                .output()
                .expect("pathprof verify runs");
            checks.check(out.status.success(), || {
                format!(
                    "{} {}: pathprof verify against {} mode fails:\n{}{}",
                    prog.name,
                    opt.flag(),
                    reference.name(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        }
    }
    let mut p = Profiled {
        prog,
        dir,
        reference,
        builds,
        checks,
    };
    p.expect_main_position();
    p
}

impl Profiled {
    /// The line of marker `/* @name */` (give `"@name"`) in the program's sources.
    pub fn line(&self, marker: &str) -> u32 {
        let needle = format!("/* {marker} */");
        let mut found = Vec::new();
        for src in self.prog.sources {
            let text = std::fs::read_to_string(programs_dir().join(src)).unwrap();
            for (i, l) in text.lines().enumerate() {
                if l.contains(&needle) {
                    found.push(i as u32 + 1);
                }
            }
        }
        assert_eq!(
            found.len(),
            1,
            "marker {needle} must be on exactly one line of {:?}",
            self.prog.sources
        );
        found[0]
    }

    /// The line of the first source line of `file` containing `text`.
    pub fn line_containing(&self, file: &str, text: &str) -> u32 {
        line_of(&programs_dir().join(file), text)
    }

    /// `func` in each selected build; a build whose report lacks it is a
    /// failure.
    pub fn functions(&mut self, at: Builds, func: &str) -> Vec<Seen> {
        let mut out = Vec::new();
        for (&(opt, mode), b) in &self.builds {
            if !at.opts.contains(&opt) || !at.modes.contains(&mode) {
                continue;
            }
            let ctx = format!(
                "{} {} --mode={}: {func}",
                self.prog.name,
                opt.flag(),
                mode.name()
            );
            let Some(report) = &b.report else { continue };
            match report.function(func) {
                Some(f) => out.push(Seen {
                    ctx,
                    opt,
                    mode,
                    f: f.clone(),
                }),
                None => self.checks.fail(format!(
                    "{ctx}: no such function in the report (it has {:?})",
                    names(report)
                )),
            }
        }
        out
    }

    /// The report says it is exact, with `threads` threads started.
    pub fn expect_exact(&mut self, at: Builds, threads: u64) {
        for (&(opt, mode), b) in &self.builds {
            if !at.opts.contains(&opt) || !at.modes.contains(&mode) {
                continue;
            }
            let ctx = format!("{} {} --mode={}", self.prog.name, opt.flag(), mode.name());
            if let Some(r) = &b.report {
                self.checks.eq(
                    format!("{ctx}: (threads, exact)"),
                    (threads, true),
                    (r.threads, r.exact),
                );
            }
        }
    }

    /// `func` was called `calls` times.
    pub fn expect_calls(&mut self, at: Builds, func: &str, calls: u64) {
        for Seen { ctx, f, .. } in self.functions(at, func) {
            self.checks
                .eq(format!("{ctx}: entry_count"), calls, f.entry_count);
        }
    }

    /// The blocks of `func` starting on the line of `marker` ran `count` times
    /// in all.
    pub fn expect_line(&mut self, at: Builds, func: &str, marker: &str, count: u64) {
        let line = self.line(marker);
        for Seen { ctx, f, .. } in self.functions(at, func) {
            match f.line_count(line) {
                Some(got) => {
                    self.checks
                        .eq(format!("{ctx}: line {line} ({marker}) count"), count, got)
                }
                None => self.checks.fail(format!(
                    "{ctx}: no block starts on line {line} ({marker}); block lines: {:?}",
                    f.blocks.iter().map(|b| b.line).collect::<Vec<_>>()
                )),
            }
        }
    }

    /// The edges of `func` from the blocks starting on the line of `from` to
    /// those starting on the line of `to` ran `count` times in all.
    pub fn expect_edge(&mut self, at: Builds, func: &str, from: &str, to: &str, count: u64) {
        let (lf, lt) = (self.line(from), self.line(to));
        for Seen { ctx, f, .. } in self.functions(at, func) {
            let (sources, targets) = (f.blocks_on(lf), f.blocks_on(lt));
            let edges: Vec<&Edge> = f
                .edges
                .iter()
                .filter(|e| sources.contains(&e.from) && targets.contains(&e.to))
                .collect();
            if edges.is_empty() {
                self.checks.fail(format!(
                    "{ctx}: no edge from line {lf} ({from}) to line {lt} ({to})"
                ));
                continue;
            }
            let got: u64 = edges.iter().filter_map(|e| e.count).sum();
            self.checks.eq(
                format!("{ctx}: edges line {lf} ({from}) -> line {lt} ({to})"),
                count,
                got,
            );
        }
    }

    /// `func`'s executed paths, sorted by count, have exactly these counts.
    pub fn expect_path_counts(&mut self, at: Builds, func: &str, counts: &[u64]) {
        for Seen { ctx, f, .. } in self.functions(at, func) {
            let mut got: Vec<u64> = f
                .paths()
                .iter()
                .map(|p| p.count)
                .filter(|&c| c > 0)
                .collect();
            got.sort_unstable();
            self.checks.eq(
                format!("{ctx}: executed path counts (sorted)"),
                counts.to_vec(),
                got,
            );
        }
    }

    /// `func` is defined in `file`, on the first line containing `text`.
    pub fn expect_position(&mut self, func: &str, file: &str, text: &str) {
        let line = self.line_containing(file, text);
        for Seen { ctx, f, .. } in self.functions(ALL, func) {
            self.checks
                .check(f.file.as_deref().is_some_and(|p| p.ends_with(file)), || {
                    format!("{ctx}: file should name {file}, got {:?}", f.file)
                });
            self.checks
                .eq(format!("{ctx}: line of the definition"), Some(line), f.line);
        }
    }

    fn expect_main_position(&mut self) {
        let main_file = self.prog.sources[0];
        let text = if main_file.ends_with(".cpp") {
            "int main()"
        } else {
            "int main(void)"
        };
        self.expect_position("main", main_file, text);
    }

    /// Runs build `(opt, mode)` a second time into the same profile file and
    /// checks that every count doubled.
    pub fn expect_second_run_doubles(&mut self, opt: Opt, mode: Mode) {
        let ctx = format!(
            "{} {} --mode={} (second run)",
            self.prog.name,
            opt.flag(),
            mode.name()
        );
        let b = &self.builds[&(opt, mode)];
        let Some(first) = b.report.clone() else {
            return;
        };
        let out = run(&b.exe, Some(&b.profile));
        self.checks
            .eq(format!("{ctx}: behaviour"), &self.reference, &out);
        let second = match report(&b.map, &b.profile) {
            Ok(r) => r,
            Err(f) => {
                return self
                    .checks
                    .fail(format!("{ctx}: `{}` failed:\n{}", f.command, f.run))
            }
        };
        let doubled = |f: &Function| {
            let mut f = f.clone();
            f.entry_count *= 2;
            f.blocks.iter_mut().for_each(|b| b.count *= 2);
            f.edges
                .iter_mut()
                .for_each(|e| e.count = e.count.map(|c| c * 2));
            f.paths.iter_mut().flatten().for_each(|p| p.count *= 2);
            f
        };
        self.checks
            .eq(format!("{ctx}: functions"), names(&first), names(&second));
        for (a, b) in first.functions.iter().zip(&second.functions) {
            let want = doubled(a);
            self.checks.eq(
                format!("{ctx}: {} entry_count", a.name),
                want.entry_count,
                b.entry_count,
            );
            self.checks.eq(
                format!("{ctx}: {} block counts", a.name),
                counts(&want),
                counts(b),
            );
            self.checks.eq(
                format!("{ctx}: {} edge counts", a.name),
                want.edges.iter().map(|e| e.count).collect::<Vec<_>>(),
                b.edges.iter().map(|e| e.count).collect::<Vec<_>>(),
            );
            self.checks.eq(
                format!("{ctx}: {} path counts", a.name),
                want.paths()
                    .iter()
                    .map(|p| (p.id, p.count))
                    .collect::<Vec<_>>(),
                b.paths()
                    .iter()
                    .map(|p| (p.id, p.count))
                    .collect::<Vec<_>>(),
            );
        }
    }

    /// Panics with every failed check, keeping the builds for a look.
    pub fn finish(self) {
        if self.checks.failures.is_empty() {
            return;
        }
        let kept = self.dir.keep();
        self.checks.finish(&format!(
            "{} (builds kept in {})",
            self.prog.name,
            kept.display()
        ));
    }
}

fn counts(f: &Function) -> Vec<u64> {
    f.blocks.iter().map(|b| b.count).collect()
}

// ---------------------------------------------------------------------------
// Invariants of every report

/// Checks one report against the contract and against itself: block ids dense,
/// edges between existing blocks, counts present exactly in the modes that have
/// them, unreachable blocks never run, and in path mode that paths are chains of
/// edges whose counts add up to the edge and block counts. Flow conservation is
/// checked for the functions whose activations all returned.
pub fn check_report(ctx: &str, prog: &Program, mode: Mode, r: &Report, c: &mut Checks) {
    c.eq(
        format!("{ctx}: format"),
        "pathprof-report",
        r.format.as_str(),
    );
    c.eq(format!("{ctx}: version"), 1, r.version);
    c.eq(format!("{ctx}: mode"), mode.name(), r.mode.as_str());
    let mut seen = BTreeSet::new();
    for f in &r.functions {
        c.check(seen.insert(&f.name), || {
            format!("{ctx}: function {} listed twice", f.name)
        });
        let ctx = format!("{ctx}: {}", f.name);
        if !check_structure(&ctx, mode, f, c) {
            continue;
        }
        if mode == Mode::Path {
            check_paths(&ctx, f, c);
        }
        if !prog.cut_short.contains(&f.name.as_str()) {
            check_flow(&ctx, mode, f, c);
        }
    }
}

/// Returns false when the function is too broken for further checks.
fn check_structure(ctx: &str, mode: Mode, f: &Function, c: &mut Checks) -> bool {
    let n = f.blocks.len() as u32;
    if n == 0 {
        c.fail(format!("{ctx}: no blocks"));
        return false;
    }
    let ids: Vec<u32> = f.blocks.iter().map(|b| b.id).collect();
    if ids != (0..n).collect::<Vec<_>>() {
        c.fail(format!("{ctx}: block ids are not 0..{n} in order: {ids:?}"));
        return false;
    }
    if let Some(e) = f.edges.iter().find(|e| e.from >= n || e.to >= n) {
        c.fail(format!(
            "{ctx}: edge b{}->b{} names a block that does not exist",
            e.from, e.to
        ));
        return false;
    }
    let counted = f.edges.iter().filter(|e| e.count.is_some()).count();
    match mode {
        // A counter in every block (--every-block) gives no edge counts;
        // counters on a spanning tree's chords give all of them.
        Mode::Block => c.check(counted == 0 || counted == f.edges.len(), || {
            format!(
                "{ctx}: {counted} of {} edges with a count in block mode",
                f.edges.len()
            )
        }),
        _ => c.eq(
            format!("{ctx}: edges without a count"),
            0,
            f.edges.len() - counted,
        ),
    }
    match mode {
        Mode::Path => c.check(f.potential_paths.is_some_and(|p| p >= 1), || {
            format!(
                "{ctx}: potential_paths should be a positive number, got {:?}",
                f.potential_paths
            )
        }),
        _ => c.eq(format!("{ctx}: potential_paths"), None, f.potential_paths),
    }
    if mode != Mode::Path {
        c.eq(
            format!("{ctx}: number of paths outside path mode"),
            0,
            f.paths().len(),
        );
    }
    c.eq(
        format!("{ctx}: entry_count vs count of entry block b0"),
        f.entry_count,
        f.blocks[0].count,
    );
    // Blocks that cannot be reached from the entry never run.
    let mut reach = vec![false; n as usize];
    let mut stack = vec![0u32];
    reach[0] = true;
    while let Some(b) = stack.pop() {
        for e in f.edges.iter().filter(|e| e.from == b) {
            if !reach[e.to as usize] {
                reach[e.to as usize] = true;
                stack.push(e.to);
            }
        }
    }
    for b in &f.blocks {
        c.check(reach[b.id as usize] || b.count == 0, || {
            format!("{ctx}: unreachable block b{} has count {}", b.id, b.count)
        });
    }
    true
}

/// Path-mode consistency: every path is a chain of CFG edges ending as its
/// `exit` says, and the edge and block counts are what the paths add up to.
fn check_paths(ctx: &str, f: &Function, c: &mut Checks) {
    let n = f.blocks.len();
    let edge_sums = f.edge_sums();
    let potential = f.potential_paths.unwrap_or(0);
    let mut ids = BTreeSet::new();
    // Per (from, to): traversals implied by the paths (consecutive blocks and
    // ending backedges or cuts).
    let mut derived: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    // Per block: runs implied by the paths.
    let mut through = vec![0u64; n];
    // Per block: counts of paths that ended before its (unsplittable) terminator.
    let mut unsplit: BTreeMap<u32, u64> = BTreeMap::new();
    let mut from_entry = 0u64;
    let mut executed = 0u64;
    // A resume edge (after fork/setjmp) is taken once per return: by the paths
    // that start after it, not those that end before its call.
    let resumes: BTreeSet<(u32, u32)> = f
        .edges
        .iter()
        .filter(|e| e.resume)
        .map(|e| (e.from, e.to))
        .collect();
    for p in f.paths() {
        if let Some((Some(a), Some(b))) = p.start {
            if resumes.contains(&(a, b)) {
                *derived.entry((a, b)).or_insert(0) += p.count;
            }
        }
        let pctx = format!("{ctx}: path {} {:?} exit {:?}", p.id, p.blocks, p.exit);
        c.check(ids.insert(p.id), || format!("{pctx}: id listed twice"));
        c.check(p.id < potential, || {
            format!("{pctx}: id not below potential_paths {potential}")
        });
        if p.count > 0 {
            executed += 1;
        }
        if p.blocks.is_empty() || p.blocks.iter().any(|&b| b as usize >= n) {
            c.fail(format!(
                "{pctx}: empty or names a block that does not exist"
            ));
            continue;
        }
        let distinct: BTreeSet<_> = p.blocks.iter().collect();
        c.check(distinct.len() == p.blocks.len(), || {
            format!("{pctx}: not acyclic (repeats a block)")
        });
        for w in p.blocks.windows(2) {
            let pair = (w[0], w[1]);
            c.check(edge_sums.contains_key(&pair), || {
                format!(
                    "{pctx}: b{}->b{} is not an edge of the function",
                    w[0], w[1]
                )
            });
            *derived.entry(pair).or_insert(0) += p.count;
        }
        for &b in &p.blocks {
            through[b as usize] += p.count;
        }
        let last = *p.blocks.last().unwrap();
        match p.exit {
            // Cut short inside a call of its last block (`--early-exit`).
            Some((from, None)) if p.terminated => c.check(from == last, || {
                format!("{pctx}: terminated path does not end in its last block")
            }),
            None => c.check(
                f.edges.iter().all(|e| e.from != last || e.to == last),
                || format!("{pctx}: ends by leaving the function from a block that has successors"),
            ),
            Some((from, to)) => {
                c.check(from == last, || {
                    format!("{pctx}: exit does not leave from the last block")
                });
                match to {
                    Some(to) => {
                        c.check(edge_sums.contains_key(&(from, to)), || {
                            format!("{pctx}: exit b{from}->b{to} is not an edge of the function")
                        });
                        if !resumes.contains(&(from, to)) {
                            *derived.entry((from, to)).or_insert(0) += p.count;
                        }
                    }
                    None => *unsplit.entry(from).or_insert(0) += p.count,
                }
            }
        }
        if p.blocks[0] == 0 {
            from_entry += p.count;
        }
    }
    // Resumed paths did not run up to their call: take them back.
    for p in f.resumed_paths.iter().flatten() {
        let pctx = format!("{ctx}: resumed path {} {:?}", p.id, p.blocks);
        c.check(p.terminated, || format!("{pctx}: does not end in a call"));
        let mut back = |n: &mut u64| {
            c.check(*n >= p.count, || {
                format!("{pctx}: resumed more often than counted")
            });
            *n = n.saturating_sub(p.count);
        };
        if let Some((Some(a), Some(b))) = p.start {
            if resumes.contains(&(a, b)) {
                back(derived.entry((a, b)).or_insert(0));
            }
        }
        for w in p.blocks.windows(2) {
            back(derived.entry((w[0], w[1])).or_insert(0));
        }
        for &b in &p.blocks {
            if let Some(n) = through.get_mut(b as usize) {
                back(n);
            }
        }
        if p.blocks.first() == Some(&0) {
            back(&mut from_entry);
        }
    }
    c.check(executed <= potential, || {
        format!("{ctx}: {executed} executed paths but potential_paths is {potential}")
    });
    c.eq(
        format!("{ctx}: entry_count vs paths starting at b0"),
        f.entry_count,
        from_entry,
    );
    for (&(a, b), &count) in &edge_sums {
        let d = derived.get(&(a, b)).copied().unwrap_or(0);
        if unsplit.contains_key(&a) {
            c.eq(format!("{ctx}: paths crossing b{a}->b{b}, out of a block whose paths end before its terminator"), 0, d);
        } else if a == b && d == 0 {
            // A self loop counted apart (Ball-Larus 4.1): checked by the block counts.
        } else if resumes.contains(&(a, b)) && f.lost() > 0 {
            // Returns are counted as they happen; paths lost after one (a
            // longjmp out of a call) are among the function's lost paths.
            c.check(d <= count && count - d <= f.lost(), || {
                format!(
                    "{ctx}: resume edge b{a}->b{b}: {count} returns, {d} paths after them, {} lost",
                    f.lost()
                )
            });
        } else {
            c.eq(
                format!("{ctx}: edge b{a}->b{b} count vs the paths through it"),
                d,
                count,
            );
        }
    }
    for (&b, &ended) in &unsplit {
        let out: u64 = f
            .edges
            .iter()
            .filter(|e| e.from == b)
            .filter_map(|e| e.count)
            .sum();
        // Activations that ended inside the terminator (an invoke) left along
        // no edge.
        // Without --early-exit they are among the function's lost paths.
        let left = out + f.blocks[b as usize].exits.unwrap_or(0);
        c.check(left <= ended && ended - left <= f.lost(), || {
            format!(
                "{ctx}: b{b}: {ended} paths end before its unsplittable terminator, \
                 {left} leave along its edges or inside it, {} lost",
                f.lost()
            )
        });
    }
    for blk in &f.blocks {
        let b = blk.id;
        let self_loop = edge_sums.get(&(b, b)).copied().unwrap_or(0);
        let apart = if unsplit.contains_key(&b) {
            0
        } else {
            self_loop.saturating_sub(derived.get(&(b, b)).copied().unwrap_or(0))
        };
        if f.lost() > 0 {
            // Paths lost to exit() ran through some blocks uncounted.
            c.check(through[b as usize] + apart <= blk.count, || {
                format!("{ctx}: b{b} has more path runs than block runs")
            });
        } else {
            c.eq(
                format!("{ctx}: count of b{b} vs paths through it + self loops counted apart"),
                through[b as usize] + apart,
                blk.count,
            );
        }
    }
}

/// Flow conservation, for functions whose activations all returned: a block
/// runs as often as control enters it and as often as it leaves; calls equal
/// returns.
fn check_flow(ctx: &str, mode: Mode, f: &Function, c: &mut Checks) {
    let exits: u64 = f
        .blocks
        .iter()
        .filter(|b| !f.has_out_edges(b.id))
        .map(|b| b.count)
        .sum();
    // Calls that return more than once (fork, setjmp): control enters again
    // after each return and leaves before each call.
    let resumes: Vec<&Edge> = f.edges.iter().filter(|e| e.resume).collect();
    let edge_counts = f.edges.iter().any(|e| e.count.is_some());
    if mode == Mode::Block && !resumes.is_empty() && !edge_counts {
        return;
    }
    let returns = f.resume_returns();
    let before_calls: u64 = resumes
        .iter()
        .map(|e| f.blocks[e.from as usize].count)
        .sum();
    c.eq(
        format!("{ctx}: calls (+ returns after fork/setjmp) vs runs of exit blocks (+ fork/setjmp calls)"),
        f.entry_count + returns,
        exits + before_calls,
    );
    if mode == Mode::Block && !edge_counts {
        return;
    }
    c.eq(format!("{ctx}: flow_imbalance"), 0, f.flow_imbalance);
    for b in &f.blocks {
        let inflow: u64 = f
            .edges
            .iter()
            .filter(|e| e.to == b.id)
            .filter_map(|e| e.count)
            .sum::<u64>()
            + if b.id == 0 { f.entry_count } else { 0 };
        c.eq(
            format!("{ctx}: count of b{} vs control entering it", b.id),
            inflow,
            b.count,
        );
        if f.has_out_edges(b.id) && !resumes.iter().any(|e| e.from == b.id) {
            let outflow: u64 = f
                .edges
                .iter()
                .filter(|e| e.from == b.id)
                .filter_map(|e| e.count)
                .sum();
            c.eq(
                format!("{ctx}: count of b{} vs control leaving it", b.id),
                outflow,
                b.count,
            );
        }
    }
}

/// Checks the three modes' reports of one build level against each other: the
/// same functions, blocks and edges (ids are those of the module before
/// instrumentation); the same calls and block counts in all modes and the same
/// edge counts in edge and path mode, except for functions cut short.
pub fn check_modes(ctx: &str, prog: &Program, [block, edge, path]: [&Report; 3], c: &mut Checks) {
    let listed = names(block);
    if names(edge) != listed || names(path) != listed {
        c.fail(format!(
            "{ctx}: the modes list different functions:\n  block {:?}\n  edge  {:?}\n  path  {:?}",
            listed,
            names(edge),
            names(path)
        ));
        return;
    }
    for ((b, e), p) in block
        .functions
        .iter()
        .zip(&edge.functions)
        .zip(&path.functions)
    {
        let ctx = format!("{ctx}: {}", b.name);
        let shape = |f: &Function| {
            (
                f.file.clone(),
                f.line,
                f.blocks
                    .iter()
                    .map(|b| (b.id, b.line, b.instructions))
                    .collect::<Vec<_>>(),
                f.edges.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>(),
            )
        };
        let shape_b = shape(b);
        c.check(shape_b == shape(e) && shape_b == shape(p), || {
            format!(
                "{ctx}: position, blocks or edges differ between modes:\n  block {:?}\n  edge  {:?}\n  path  {:?}",
                shape_b,
                shape(e),
                shape(p)
            )
        });
        // With --early-exit, activations cut short are counted exactly in every
        // mode, so they must agree too.
        let early_exit = prog.pathprof_flags.contains(&"--early-exit");
        if (prog.cut_short.contains(&b.name.as_str()) && !early_exit)
            || b.blocks.len() != e.blocks.len()
            || b.blocks.len() != p.blocks.len()
        {
            continue;
        }
        c.check(
            b.entry_count == e.entry_count && b.entry_count == p.entry_count,
            || {
                format!(
                    "{ctx}: entry_count differs between modes: block {}, edge {}, path {}",
                    b.entry_count, e.entry_count, p.entry_count
                )
            },
        );
        let differing: Vec<String> = b
            .blocks
            .iter()
            .zip(&e.blocks)
            .zip(&p.blocks)
            .filter(|((x, y), z)| x.count != y.count || x.count != z.count)
            .map(|((x, y), z)| {
                format!(
                    "b{} (line {:?}): block {}, edge {}, path {}",
                    x.id, x.line, x.count, y.count, z.count
                )
            })
            .collect();
        c.check(differing.is_empty(), || {
            format!(
                "{ctx}: block counts differ between modes:\n    {}",
                differing.join("\n    ")
            )
        });
        for (other, name) in [(e, "edge"), (b, "block")] {
            if other.edges.len() != p.edges.len() || other.edges.iter().any(|x| x.count.is_none()) {
                continue;
            }
            let differing: Vec<String> = other
                .edges
                .iter()
                .zip(&p.edges)
                .enumerate()
                .filter(|(_, (x, y))| x.count != y.count)
                .map(|(i, (x, y))| {
                    format!(
                        "edge #{i} b{}->b{}: {name} {:?}, path {:?}",
                        x.from, x.to, x.count, y.count
                    )
                })
                .collect();
            c.check(differing.is_empty(), || {
                format!(
                    "{ctx}: edge counts differ between {name} and path mode:\n    {}",
                    differing.join("\n    ")
                )
            });
        }
    }
}
