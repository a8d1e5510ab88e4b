//! What profile files hold, without a map (`pathprof info`): per file, each
//! section (build) with its mode, the processes (and fork children among
//! them) and threads that wrote it, how many functions have counts, the total
//! of its counters and the executables and shared libraries it was loaded
//! from; and the same grouped by program or library, as a user asks: a
//! program of 42 translation units is one row, not 42. The serde types are the
//! JSON form's (`"format": "pathprof-info"`, version 1).

use pathprof_format::{ProfileFile, RawProfile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Info {
    /// Always `pathprof-info`.
    pub format: &'static str,
    /// Version of this form: 1.
    pub version: u32,
    pub files: Vec<InfoFile>,
    /// Indexed profiles (`.ppdata`) given among the files.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<IndexInfo>,
}

/// What one indexed profile holds.
#[derive(Clone, Debug, Serialize)]
pub struct IndexInfo {
    pub path: String,
    /// The programs and libraries whose runs made it.
    pub programs: Vec<String>,
    pub functions: u64,
    /// Of them, those that ran (an entry count above zero).
    pub functions_run: u64,
    /// Every entry and block count added up, and the largest entry count
    /// (the profile summary's).
    pub total_count: u64,
    pub max_function_count: u64,
    /// The most called functions (at most 10), most first: name and calls.
    pub hottest: Vec<(String, u64)>,
}

impl IndexInfo {
    /// What `index`, read from `path`, holds.
    pub fn of(path: &std::path::Path, index: &pathprof_core::pgo::Index) -> Self {
        let mut by_calls: Vec<(String, u64)> = index
            .functions
            .iter()
            .filter(|f| f.profile.entry > 0)
            .map(|f| (f.name.clone(), f.profile.entry))
            .collect();
        let functions_run = by_calls.len() as u64;
        by_calls.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        by_calls.truncate(10);
        IndexInfo {
            path: path.display().to_string(),
            programs: index.programs.clone(),
            functions: index.functions.len() as u64,
            functions_run,
            total_count: index.summary.total_count,
            max_function_count: index.summary.max_function_count,
            hottest: by_calls,
        }
    }
}

/// One profile file.
#[derive(Clone, Debug, Serialize)]
pub struct InfoFile {
    pub path: String,
    /// Each section (build), in the file's order.
    pub sections: Vec<Section>,
    /// The sections grouped by the objects they were loaded from: one
    /// entry per program or library (or set of them), in the order of each
    /// group's first section.
    pub programs: Vec<Program>,
}

/// One section: one build's counts.
#[derive(Clone, Debug, Serialize)]
pub struct Section {
    /// The build id, 16 hex digits.
    pub build_id: String,
    pub mode: String,
    #[serde(flatten)]
    pub totals: Totals,
    pub objects: Vec<String>,
    pub objects_truncated: bool,
}

/// The sections of one program or library (the same objects).
#[derive(Clone, Debug, Serialize)]
pub struct Program {
    pub objects: Vec<String>,
    pub objects_truncated: bool,
    /// How many sections (builds: translation units, or whole programs).
    pub builds: usize,
    /// The sections' mode, or `mixed`.
    pub mode: String,
    /// The most processes, fork children and threads any of its sections
    /// records (every process that ran the program wrote each of them);
    /// functions with counts and counts over its sections.
    #[serde(flatten)]
    pub totals: Totals,
}

/// What a section, or a program's sections, record.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Totals {
    pub processes: u64,
    pub forked: u64,
    /// Processes killed before their final write (SIGKILL, a fault),
    /// merged from their live files (continuous mode).
    pub killed: u64,
    /// How many of `killed` died while writing their final profile at
    /// exit, and while writing it for a fatal signal; the others died
    /// running, by an end no handler sees (SIGKILL, the OOM killer, a
    /// fault the handler could not run for).
    pub killed_at_exit: u64,
    pub killed_in_signal: u64,
    /// Those fatal signals (bit `n - 1` for signal `n`), by name in the
    /// JSON (`["SIGTERM"]`).
    #[serde(serialize_with = "signal_names")]
    pub killed_signals: u64,
    pub threads: u64,
    pub functions: usize,
    /// Every slot counter and path count added up, saturating.
    pub counts: u64,
}

/// The names of the signals in `mask` (bit `n - 1` for signal `n`).
pub fn signals(mask: u64) -> Vec<String> {
    (1..=64u32)
        .filter(|n| mask >> (n - 1) & 1 != 0)
        .map(signal_name)
        .collect()
}

/// Linux's name of signal `n` (`SIGTERM`), or `signal N` for a number
/// without one (the real-time signals).
pub fn signal_name(n: u32) -> String {
    const NAMES: [&str; 31] = [
        "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2",
        "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG",
        "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
    ];
    match n.checked_sub(1).and_then(|i| NAMES.get(i as usize)) {
        Some(name) => format!("SIG{name}"),
        None => format!("signal {n}"),
    }
}

fn signal_names<S: serde::Serializer>(mask: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(signals(*mask))
}

/// The name of a mode number as the profile records it.
fn mode_name(mode: u32) -> String {
    match pathprof_format::abi::mode_name(mode) {
        "unknown" => format!("mode {mode}"),
        name => name.into(),
    }
}

/// The total of all counters of a section: every slot counter and every path
/// count, saturating.
pub fn total_counts(s: &RawProfile) -> u64 {
    s.functions
        .iter()
        .flat_map(|f| f.slots.iter().copied().chain(f.paths.iter().map(|p| p.1)))
        .fold(0u64, u64::saturating_add)
}

/// The report of `files` (each path with its decoded file).
pub fn info(files: &[(PathBuf, ProfileFile)]) -> Info {
    Info {
        format: "pathprof-info",
        version: 1,
        files: files
            .iter()
            .map(|(path, file)| {
                let sections: Vec<Section> = file.sections.iter().map(section).collect();
                InfoFile {
                    path: path.display().to_string(),
                    programs: programs(&sections),
                    sections,
                }
            })
            .collect(),
        indexes: Vec::new(),
    }
}

fn section(s: &RawProfile) -> Section {
    Section {
        build_id: format!("{:016x}", s.build_id),
        mode: mode_name(s.mode),
        totals: Totals {
            processes: s.processes,
            forked: s.forked,
            killed: s.killed,
            killed_at_exit: s.killed_at_exit,
            killed_in_signal: s.killed_in_signal,
            killed_signals: s.killed_signals,
            threads: s.threads,
            functions: s.functions.len(),
            counts: total_counts(s),
        },
        objects: s.objects.clone(),
        objects_truncated: s.objects_truncated,
    }
}

/// `sections` grouped by their objects.
fn programs(sections: &[Section]) -> Vec<Program> {
    let mut order: Vec<Program> = Vec::new();
    let mut index: BTreeMap<(&[String], bool), usize> = BTreeMap::new();
    for s in sections {
        let key = (s.objects.as_slice(), s.objects_truncated);
        let i = *index.entry(key).or_insert_with(|| {
            order.push(Program {
                objects: s.objects.clone(),
                objects_truncated: s.objects_truncated,
                builds: 0,
                mode: s.mode.clone(),
                totals: Totals::default(),
            });
            order.len() - 1
        });
        let p = &mut order[i];
        p.builds += 1;
        if p.mode != s.mode {
            p.mode = "mixed".into();
        }
        let (t, u) = (&mut p.totals, &s.totals);
        t.processes = t.processes.max(u.processes);
        t.forked = t.forked.max(u.forked);
        t.killed = t.killed.max(u.killed);
        t.killed_at_exit = t.killed_at_exit.max(u.killed_at_exit);
        t.killed_in_signal = t.killed_in_signal.max(u.killed_in_signal);
        t.killed_signals |= u.killed_signals;
        t.threads = t.threads.max(u.threads);
        t.functions += u.functions;
        t.counts = t.counts.saturating_add(u.counts);
    }
    order
}
