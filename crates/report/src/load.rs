//! Loading what every report reads: a map file and one or more profile files
//! (summed), of which the section of the map's build is interpreted into
//! per-function counts. What the counts say
//! about themselves (paths lost to early termination, flow that does not
//! balance) is written to stderr here, once, whatever the report.

use anyhow::{bail, Context as _, Result};
use pathprof_core::combine::{combine, Combined, Main};
use pathprof_core::derive::{FlowNode, FunctionCounts};
use pathprof_core::layout::{FlowEdge, Layout};
use pathprof_core::map::MapFile;
use pathprof_core::profile::{interpret, ProfileError};
use pathprof_format::ProfileFile;
use pathprof_io::map::read_fragments;
use pathprof_io::profile::read_file;
use std::path::PathBuf;

/// A map with the counts of its profile(s).
pub struct Loaded {
    pub map: MapFile,
    pub map_path: PathBuf,
    pub counts: Vec<FunctionCounts>,
    /// What the profile(s) record about the processes that wrote them.
    pub facts: Facts,
    /// Each function's name where its shown name alone is ambiguous
    /// ([`crate::names::qualified`]; empty: none is).
    pub(crate) qualified_names: Vec<Option<crate::names::Qualified>>,
    /// Each function's executables and libraries: those whose profile
    /// sections hold its counts (`pathprof_core::combine::Combined::objects`;
    /// empty where no run of its build was loaded).
    pub(crate) objects: Vec<Vec<String>>,
}

/// Profile-level facts: how many processes and threads wrote the counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Processes whose final write added to the profile(s).
    pub processes: u64,
    /// How many of them were fork children (they never entered `main`).
    pub forked: u64,
    /// Threads started in those processes.
    pub threads: u64,
    /// Whether the build counted with atomic updates (exact across threads).
    pub atomic: bool,
    /// Whether each thread counted into counters of its own (exact across
    /// threads).
    pub per_thread: bool,
    /// Path and edge modes: processes that entered `main` but whose call of it
    /// was never counted (they ended inside a call from it), added to `main`'s
    /// lost paths; with how many entered it.
    pub ended_in_calls: Option<(u64, u64)>,
    /// Path and edge modes: how many more times `main` was counted as called
    /// than processes entered it: fork children that returned into `main`
    /// from a call it was in at the fork (a build without early-exit counting
    /// counts such a frame's path in both processes), with how many entered.
    pub returned_in_children: Option<(u64, u64)>,
    /// Path and edge modes: how many more times `main` was counted as
    /// called than fork children can explain: processes whose counts were
    /// written (by SIGUSR1 or a periodic write) but which never wrote a
    /// final time (killed), so were not counted as processes. Their counts
    /// are what that write saw; nothing is counted twice.
    pub unfinished: Option<u64>,
}

impl Facts {
    /// Whether counts can be wrong: threads ran in a build without atomic
    /// updates (lost increments), or fork children returned into frames of
    /// their parent's (counted twice).
    pub fn exact(&self) -> bool {
        !self.threads_raced() && self.returned_in_children.is_none()
    }

    /// Threads ran in a build whose threads shared counters without atomic
    /// updates (built before per-thread counters): increments may be lost.
    pub fn threads_raced(&self) -> bool {
        self.threads > 0 && !self.atomic && !self.per_thread
    }
}

/// Reads the fragments of `maps` (map files, or executables and libraries
/// built by `pathprof cc`) and sums `profiles` (at least one); each fragment's
/// section is interpreted, and the whole read as one program.
pub fn load(maps: &[PathBuf], profiles: &[PathBuf]) -> Result<Loaded> {
    let fragments = read_maps(maps)?;
    let file = read_profiles(profiles)?;
    load_read(&fragments, &file, names(maps), names(profiles))
}

/// [`load`] of fragments and a profile file already read; `map_name` and
/// `profile_name` name them in messages.
pub fn load_read(
    fragments: &[MapFile],
    file: &ProfileFile,
    map_name: String,
    profile_name: String,
) -> Result<Loaded> {
    let combined = combine(fragments, &file.sections, &map_name, &profile_name)?;
    if combined.matched == 0 {
        return Err(ProfileError::OtherBuild {
            profile: profile_name,
            map: map_name,
            found: file.build_ids(),
            expected: combined.map.build_id,
        }
        .into());
    }
    let Combined {
        map,
        raw,
        mains,
        entry_doubts,
        objects,
        ..
    } = combined;
    let mut counts = interpret(&map, &map_name, &raw, &profile_name)?;
    for (i, doubt) in entry_doubts {
        counts[i as usize].imbalance.nodes.push(doubt);
    }
    let qualified_names = crate::names::qualified(&map, &objects);
    let mut loaded = Loaded {
        facts: Facts {
            processes: raw.processes,
            forked: raw.forked,
            threads: raw.threads,
            atomic: map.atomic,
            per_thread: map.per_thread,
            ended_in_calls: None,
            returned_in_children: None,
            unfinished: None,
        },
        qualified_names,
        objects,
        map,
        map_path: PathBuf::from(map_name),
        counts,
    };
    loaded.count_processes_lost_in_calls(&mains);
    for line in loaded.notes() {
        eprintln!("{line}");
    }
    Ok(loaded)
}

/// Reads `maps` as one map (for reports that need no counts).
pub fn read_map(maps: &[PathBuf]) -> Result<MapFile> {
    Ok(combine(&read_maps(maps)?, &[], &names(maps), "")?.map)
}

/// The fragments of every map in `maps` (at least one), each build once
/// (a library given directly and through a program's map, say).
pub(crate) fn read_maps(maps: &[PathBuf]) -> Result<Vec<MapFile>> {
    let mut fragments: Vec<MapFile> = Vec::new();
    for m in maps {
        add_fragments(&mut fragments, read_fragments(m)?);
    }
    if fragments.is_empty() {
        bail!("no map given: pass --map with the program, library or .ppmap to report on");
    }
    Ok(fragments)
}

/// Adds `more` to `fragments`, each build once.
pub(crate) fn add_fragments(fragments: &mut Vec<MapFile>, more: Vec<MapFile>) {
    for f in more {
        if !fragments.iter().any(|g| g.build_id == f.build_id) {
            fragments.push(f);
        }
    }
}

/// File names for messages, comma-separated.
pub(crate) fn names(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Loaded {
    /// In path and edge modes, each program's `main` runs once per process of
    /// that program that was not forked; each one fewer ended inside a call
    /// from `main` before any of its paths there was counted. Those are lost
    /// paths of `main`.
    fn count_processes_lost_in_calls(&mut self, mains: &[Main]) {
        if self.map.mode == pathprof_core::Mode::Block {
            return;
        }
        let (mut missing_all, mut surplus_all, mut entered_all) = (0u64, 0u64, 0u64);
        let mut unfinished_all = 0u64;
        for m in mains.iter().filter(|m| m.processes > 0) {
            let c = &mut self.counts[m.function as usize];
            let entered = m.processes.saturating_sub(m.forked);
            let missing = entered.saturating_sub(c.entry);
            c.lost = c.lost.saturating_add(missing);
            missing_all = missing_all.saturating_add(missing);
            // A fork child returns into its parent's frame of main at most
            // once; more than the children can explain came from processes
            // that were written but never finished.
            let surplus = c.entry.saturating_sub(entered);
            let from_children = surplus.min(m.forked);
            surplus_all = surplus_all.saturating_add(from_children);
            unfinished_all = unfinished_all.saturating_add(surplus - from_children);
            entered_all = entered_all.saturating_add(entered);
        }
        if unfinished_all > 0 {
            self.facts.unfinished = Some(unfinished_all);
        }
        if missing_all > 0 {
            self.facts.ended_in_calls = Some((missing_all, entered_all));
        }
        if surplus_all > 0 {
            self.facts.returned_in_children = Some((surplus_all, entered_all));
        }
    }

    /// The name a person reads for function `i` (qualified where one
    /// source function was built in two shapes, [`crate::names`]).
    pub fn name(&self, i: usize) -> &str {
        match self.qualified_names.get(i) {
            Some(Some(q)) => &q.name,
            _ => self.map.functions[i].shown_name(),
        }
    }

    /// The executables and libraries whose runs hold function `i`'s counts,
    /// where its shown name, file and line alone are ambiguous (the JSON
    /// report's `objects`); empty elsewhere.
    pub(crate) fn ambiguous_objects(&self, i: usize) -> Vec<String> {
        match self.qualified_names.get(i) {
            Some(Some(q)) if q.one_of_builds => self.objects.get(i).cloned().unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Functions whose flow does not balance, with the size of the imbalance.
    pub fn unbalanced(&self) -> Vec<(usize, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.imbalance.is_balanced())
            .map(|(i, c)| (i, c.imbalance.total()))
            .collect()
    }

    /// Whether function `i` counts edges as if every call returned (edge
    /// mode without --early-exit: no call's exit is counted) and makes calls
    /// that might not return, so that its counts fall short where one did
    /// not.
    fn may_have_left_through_a_call(&self, i: usize) -> bool {
        let f = &self.map.functions[i];
        let Layout::Edge {
            counted,
            net_call_exits: false,
            ..
        } = &f.layout
        else {
            return false;
        };
        let counts_call_exits = counted
            .iter()
            .any(|e| matches!(e, FlowEdge::Exit(b) if !f.cfg.is_exit(*b)));
        !counts_call_exits && f.cfg.blocks().any(|b| f.cfg.calls(b) > 0)
    }

    /// What the counts say about themselves, one line each (for stderr).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some((missing, entered)) = self.facts.ended_in_calls {
            notes.push(format!(
                "pathprof: warning: {missing} of {entered} processes ended inside a call from main; \
                 the paths in progress there and in the functions it was calling were not counted; \
                 build with --early-exit to count them."
            ));
        }
        if let Some((surplus, entered)) = self.facts.returned_in_children {
            notes.push(format!(
                "pathprof: warning: main is counted {} times but only {entered} processes entered it: \
                 {surplus} fork child(ren) returned from a call main was in at the fork, and the paths in \
                 progress in main and in the functions between it and the fork were counted by both \
                 processes, so their counts are too high. Build with --early-exit for exact counts.",
                entered + surplus
            ));
        }
        if let Some(unfinished) = self.facts.unfinished {
            notes.push(format!(
                "pathprof: note: main is counted {unfinished} more time(s) than processes finished: \
                 process(es) whose counts were written (on SIGUSR1 or every \
                 PATHPROF_DUMP_INTERVAL) and which never ended normally (killed); their counts \
                 are those of their last write."
            ));
        }
        if self.facts.threads_raced() {
            notes.push(format!(
                "pathprof: warning: {} thread(s) ran in a build whose threads shared counters \
                 (made by a pathprof older than per-thread counters, without --atomic): where \
                 threads ran the same code at once, counts may have lost increments (and may not \
                 balance). Rebuild with this pathprof for exact counts in threaded programs.",
                self.facts.threads
            ));
        }
        let lost: u64 = self
            .counts
            .iter()
            .map(|c| c.lost)
            .fold(0, u64::saturating_add);
        if lost > 0 {
            notes.push(format!(
                "pathprof: note: {lost} execution(s) ended inside a call that never returned (exit, longjmp); \
                 their last partial paths were not counted. Rebuild with --early-exit to count them."
            ));
        }
        const SHOWN: usize = 8;
        let listed = |functions: &[(usize, u64)]| {
            let mut names: Vec<String> = functions
                .iter()
                .take(SHOWN)
                .map(|&(i, n)| format!("{}: {n}", self.name(i)))
                .collect();
            if functions.len() > SHOWN {
                names.push(format!("{} more", functions.len() - SHOWN));
            }
            names.join(", ")
        };
        // Functions whose own flow does not balance, apart from those whose
        // entry counts come from callers whose counts do not.
        let (doubted, unbalanced): (Vec<_>, Vec<_>) =
            self.unbalanced().into_iter().partition(|&(i, _)| {
                self.counts[i]
                    .imbalance
                    .nodes
                    .iter()
                    .all(|n| n.node == FlowNode::Callers)
            });
        if !doubted.is_empty() {
            let s = if doubted.len() == 1 { "" } else { "s" };
            notes.push(format!(
                "pathprof: warning: {} function{s} ({}) take their entry counts from callers whose \
                 counts do not balance or lost executions: each entry count may be off by up to \
                 the number shown. `pathprof verify` names them.",
                doubted.len(),
                listed(&doubted)
            ));
        }
        // In an edge-mode build without --early-exit, a call that never
        // returns leaves its function's flow short: name that cause first.
        let (calls_left, unbalanced): (Vec<_>, Vec<_>) = unbalanced
            .into_iter()
            .partition(|&(i, _)| self.may_have_left_through_a_call(i));
        if !calls_left.is_empty() {
            let (s, each) = if calls_left.len() == 1 {
                ("", "it makes")
            } else {
                ("s", "each makes")
            };
            notes.push(format!(
                "pathprof: warning: counts do not balance in {} edge-mode function{s} ({}): \
                 {each} calls, and a call that never returned (exit(), or a longjmp out \
                 of a callee, such as a library's error handler) leaves executions that \
                 entered a block without leaving it, which edge mode without --early-exit \
                 does not count. Rebuild with --early-exit for exact counts; the reports show \
                 the counts as recorded (a count that would be negative is 0). \
                 `pathprof verify` names the blocks.",
                calls_left.len(),
                listed(&calls_left)
            ));
        }
        if !unbalanced.is_empty() {
            let s = if unbalanced.len() == 1 { "" } else { "s" };
            notes.push(format!(
                "pathprof: warning: counts do not balance in {} function{s} ({}): more executions \
                 left some blocks than entered them, which no complete run does. Threads sharing \
                 counters (threads the runtime did not start, or a build older than per-thread \
                 counters), a process killed in the middle of a path, or a damaged profile do \
                 this; the reports show the counts as recorded (a count that would be negative \
                 is 0). `pathprof verify` names the blocks.",
                unbalanced.len(),
                listed(&unbalanced)
            ));
        }
        let guessed: usize = self.counts.iter().map(|c| c.imbalance.guessed.len()).sum();
        if guessed > 0 {
            notes.push(format!(
                "pathprof: note: {guessed} edge count(s) that carry no code could not be told \
                 apart by flow conservation; they show one split consistent with the counts around them."
            ));
        }
        notes
    }
}

/// Reads and merges raw profile files, section by section (sections of one
/// build added, other builds kept apart).
pub fn read_profiles(profiles: &[PathBuf]) -> Result<ProfileFile> {
    let Some((first, rest)) = profiles.split_first() else {
        bail!("no profile given: name the .pprof file(s) the program wrote");
    };
    let mut raw = read_file(first)?;
    for p in rest {
        let other = read_file(p)?;
        raw.merge(&other)
            .with_context(|| format!("cannot add {} to {}", p.display(), first.display()))?;
    }
    Ok(raw)
}

/// Splits arguments into profiles (files that are, or look like, profiles:
/// they start with the profile magic, or do not exist and end in `.pprof`) and
/// the rest (source file names).
pub fn split_profiles(args: Vec<PathBuf>) -> (Vec<PathBuf>, Vec<String>) {
    let mut profiles = Vec::new();
    let mut others = Vec::new();
    for a in args {
        let is_profile = match std::fs::File::open(&a) {
            Ok(mut f) => {
                let mut magic = [0u8; 8];
                std::io::Read::read_exact(&mut f, &mut magic).is_ok()
                    && pathprof_format::is_profile(&magic)
            }
            Err(_) => a.extension().is_some_and(|e| e == "pprof"),
        };
        if is_profile || profiles.is_empty() {
            profiles.push(a);
        } else {
            others.push(a.display().to_string());
        }
    }
    (profiles, others)
}
