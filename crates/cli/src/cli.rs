//! The command-line interface: every subcommand and flag defined once, with its
//! help text; parsed arguments become plain values for the command modules.

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// pathprof: exact basic-block, edge and Ball-Larus path profiles of C, C++ and
/// Rust programs built with LLVM 22.
#[derive(Parser, Debug)]
#[command(name = "pathprof", version, about, long_about = None)]
#[command(
    after_help = "Compiler wrapper (all clang arguments pass through):\n  pathprof cc [--FLAG=VALUE...] CLANG-ARGS...   (`pathprof cc --help`: pathprof's flags, then clang's)\n  pathprof c++ ...   (the same, with clang++)\nCargo (Rust programs, every crate instrumented at the link):\n  pathprof cargo [--FLAG=VALUE...] CARGO-COMMAND [ARGS...]   (`pathprof cargo --help`)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// How to instrument: pathprof's own flags, the one definition `pathprof
/// instrument` and `pathprof cc` / `pathprof c++` share. Each flag but
/// `--dot-dir` has its environment variable (for build systems that only let
/// you set `CC`); a flag on the command line wins over it. A switch's
/// variable (`PATHPROF_ATOMIC`...) counts only when it is `1`. In `pathprof
/// cc` the flags take their values after `=` only (`--mode=edge`), as clang's
/// own arguments go past them; `pathprof cc --help` lists them from here.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct InstrumentOptions {
    /// What to count (ppp: path mode, the --interesting paths in arrays;
    /// p3: path mode, split over --copies programs run in parallel).
    #[arg(
        long,
        value_name = "block|edge|path|ppp|p3",
        env = "PATHPROF_MODE",
        default_value = "path",
        value_parser = parse_mode
    )]
    pub mode: ModeArg,
    /// The interesting-path list --mode=ppp numbers (`pathprof interesting`).
    #[arg(long, value_name = "FILE", env = "PATHPROF_INTERESTING", value_parser = parse_path)]
    pub interesting: Option<PathBuf>,
    /// With --mode=p3: how many copies to build, OUTPUT.p3.0 and on (run
    /// them with `pathprof p3 run`).
    #[arg(long, value_name = "K", env = "PATHPROF_COPIES", value_parser = parse_copies)]
    pub copies: Option<u32>,
    /// With --mode=p3: a training run's paths and counts (`pathprof
    /// interesting` of a path-mode profile), to balance the copies by what
    /// their probes would execute instead of by probe counts.
    #[arg(long, value_name = "FILE", env = "PATHPROF_P3_TRAIN", value_parser = parse_path)]
    pub p3_train: Option<PathBuf>,
    /// The map file to write, default OUTPUT.ppmap.
    #[arg(long, value_name = "FILE", env = "PATHPROF_MAP", value_parser = parse_path)]
    pub map: Option<PathBuf>,
    /// Most acyclic paths per function before paths are cut.
    #[arg(long, value_name = "N", env = "PATHPROF_MAX_PATHS", value_parser = parse_number)]
    pub max_paths: Option<u64>,
    /// Functions with at most N paths count into arrays, others into hash tables.
    #[arg(long, value_name = "N", env = "PATHPROF_ARRAY_LIMIT", value_parser = parse_number)]
    pub array_limit: Option<u64>,
    /// With --mode=ppp: number only functions of more than N potential paths
    /// (default: the array limit; path mode's arrays count the others).
    #[arg(long, value_name = "N", env = "PATHPROF_PPP_MIN_PATHS", value_parser = parse_number)]
    pub ppp_min_paths: Option<u64>,
    /// With --mode=ppp: the largest PPP interval a function's array may
    /// have (default: the array limit); a function whose interesting paths
    /// need more is profiled as in path mode.
    #[arg(long, value_name = "N", env = "PATHPROF_PPP_INTERVAL_LIMIT", value_parser = parse_number)]
    pub ppp_interval_limit: Option<u64>,
    /// With --mode=ppp: leave a function whose paths hash to path mode's
    /// inline cache when it has at most N interesting paths (default 1024;
    /// 0 numbers every such function).
    #[arg(long, value_name = "N", env = "PATHPROF_PPP_CACHE_PATHS", value_parser = parse_number)]
    pub ppp_cache_paths: Option<u64>,
    /// With --mode=ppp: keep the PPP and Ball-Larus registers in two words
    /// (section 5 of the paper) even where both fit one (an ablation; the
    /// counts are the same).
    #[arg(long, env = "PATHPROF_PPP_TWO_REGISTERS", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub ppp_two_registers: bool,
    /// Thread-safe (atomic) counter updates.
    #[arg(long, env = "PATHPROF_ATOMIC", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub atomic: bool,
    /// Run the build's programs in continuous mode by default: counters in
    /// a live file beside the profile, so that a process killed with
    /// SIGKILL loses nothing (at run time, PATHPROF_CONTINUOUS=0 turns it
    /// off, =1 on).
    #[arg(long, env = "PATHPROF_CONTINUOUS", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub continuous: bool,
    /// Count executions cut short inside calls (exit, longjmp) exactly.
    #[arg(long, env = "PATHPROF_EARLY_EXIT", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub early_exit: bool,
    /// With --mode=block: a counter at the top of every block (Weinberger's
    /// scheme) instead of on the chords of a spanning tree: exact also in a
    /// dump taken while a thread runs between calls (a signal), at a higher
    /// price.
    #[arg(long, env = "PATHPROF_EVERY_BLOCK", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub every_block: bool,
    /// Rust programs: profile the standard library's code too (its generic
    /// functions instantiated for the program; with fat LTO, all of std).
    #[arg(long, env = "PATHPROF_COUNT_STD", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub count_std: bool,
    /// Count every function's entries in the function itself, also where
    /// its callers' counts give them (an internal function called only
    /// directly, outside recursion): an ablation, the counts are the same.
    #[arg(long, env = "PATHPROF_COUNT_ENTRIES", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub count_entries: bool,
    /// Say what is instrumented, function by function, on standard error.
    #[arg(long = "pathprof-verbose", env = "PATHPROF_VERBOSE", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub verbose: bool,
    /// Print where the invocation's wall-clock time went, phase by phase, on
    /// standard error.
    #[arg(long, env = "PATHPROF_TIME_REPORT", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub time_report: bool,
    /// Write a DOT file of each instrumented function's path DAG into DIR.
    #[arg(long, value_name = "DIR")]
    pub dot_dir: Option<PathBuf>,
}

impl InstrumentOptions {
    /// What to hand the instrumentation pipeline (DOT files are drawn by
    /// the caller from the map: [`crate::driver::instrument`]). A P3 build's
    /// copies are planned from path mode's map, which these settings make.
    pub fn settings(&self) -> pathprof_llvm::pipeline::Settings {
        pathprof_llvm::pipeline::Settings {
            mode: self.mode.mode,
            ppp: self.mode.ppp(),
            interesting: self.interesting.clone(),
            max_paths: self.max_paths,
            array_limit: self.array_limit,
            ppp_min_paths: self.ppp_min_paths,
            ppp_interval_limit: self.ppp_interval_limit,
            ppp_cache_paths: self.ppp_cache_paths,
            ppp_two_registers: self.ppp_two_registers,
            early_exit: self.early_exit,
            every_block: self.every_block,
            count_std: self.count_std,
            count_entries: self.count_entries,
            atomic: self.atomic,
            continuous: self.continuous,
            verbose: self.verbose,
            timings_file: None,
            profile_use: None,
            duplicate_hot_paths: false,
        }
    }

    /// The number of copies `--mode=p3` builds (`None` in other modes).
    /// Checked when the options are parsed: `--mode=p3` needs `--copies`.
    pub fn p3_copies(&self) -> Result<Option<usize>, String> {
        match (self.mode.p3(), self.copies) {
            (false, _) => Ok(None),
            (true, Some(k)) => Ok(Some(k as usize)),
            (true, None) => Err(
                "--mode=p3 needs --copies=K (or PATHPROF_COPIES): how many copies to build, \
                 one per core or machine that will run them"
                    .to_string(),
            ),
        }
    }
}

/// `--mode`: one of the map's modes, or `ppp` or `p3`, which build a
/// path-mode map and profile (preferential and partitioned path profiling
/// count Ball-Larus paths too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeArg {
    /// The mode of the map and the profile.
    pub mode: pathprof_core::Mode,
    pub scheme: Scheme,
}

/// How path mode's paths are counted: by one program as Ball and Larus do,
/// in preferential path profiling's arrays, or by K partial copies (P3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Plain,
    /// `--mode=ppp`.
    Ppp,
    /// `--mode=p3`.
    P3,
}

impl ModeArg {
    pub fn name(self) -> &'static str {
        match self.scheme {
            Scheme::Plain => self.mode.name(),
            Scheme::Ppp => "ppp",
            Scheme::P3 => "p3",
        }
    }

    /// `--mode=ppp`.
    pub fn ppp(self) -> bool {
        self.scheme == Scheme::Ppp
    }

    /// `--mode=p3`.
    pub fn p3(self) -> bool {
        self.scheme == Scheme::P3
    }
}

impl PartialEq<pathprof_core::Mode> for ModeArg {
    fn eq(&self, other: &pathprof_core::Mode) -> bool {
        self.scheme == Scheme::Plain && self.mode == *other
    }
}

fn parse_mode(value: &str) -> Result<ModeArg, String> {
    let path = pathprof_core::Mode::Path;
    match value {
        "ppp" => Ok(ModeArg {
            mode: path,
            scheme: Scheme::Ppp,
        }),
        "p3" => Ok(ModeArg {
            mode: path,
            scheme: Scheme::P3,
        }),
        _ => value
            .parse()
            .map(|mode| ModeArg {
                mode,
                scheme: Scheme::Plain,
            })
            .map_err(|_| format!("unknown mode `{value}`: expected block, edge, path, ppp or p3")),
    }
}

/// `--copies`: at least 1, at most [`MAX_COPIES`].
fn parse_copies(value: &str) -> Result<u32, String> {
    match value.parse::<u32>() {
        Ok(k) if (1..=MAX_COPIES).contains(&k) => Ok(k),
        _ => Err(format!(
            "expected a number of copies from 1 to {MAX_COPIES}, not `{value}`"
        )),
    }
}

/// The most copies `--mode=p3` builds (each is a whole program).
pub const MAX_COPIES: u32 = 256;

/// Any path, the empty one too (as `PATHPROF_MAP=` always meant).
pub(crate) fn parse_path(value: &str) -> Result<PathBuf, std::convert::Infallible> {
    Ok(PathBuf::from(value))
}

/// `--weight=W:FILE`: a weight of at least 1 and a file.
fn parse_weighted(value: &str) -> Result<(u64, PathBuf), String> {
    let (weight, file) = value
        .split_once(':')
        .ok_or_else(|| format!("expected W:FILE (a weight, a colon, a file), not `{value}`"))?;
    match weight.parse::<u64>() {
        Ok(w) if w >= 1 && !file.is_empty() => Ok((w, PathBuf::from(file))),
        _ => Err(format!(
            "expected a weight of at least 1 and a file in `{value}`"
        )),
    }
}

fn parse_number(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("expected a positive number, not `{value}`"))
}

/// A switch: on when given on the command line (which reads as `1`, its
/// missing value) and when its environment variable is exactly `1`; any other
/// value of the variable (`0`, `true`, empty) leaves it off.
pub(crate) fn parse_switch(value: &str) -> Result<bool, std::convert::Infallible> {
    Ok(value == "1")
}

/// The map file and profiles a report reads.
#[derive(Args, Debug, Clone)]
pub struct Inputs {
    /// What was built: the program or shared library itself, or the map
    /// written beside it (`<program>.ppmap`). Give it several times to read
    /// programs and libraries together (a library's counts from every program
    /// add up).
    #[arg(long, value_name = "MAP", required = true)]
    pub map: Vec<PathBuf>,
    /// Profiles written by runs of that program (summed; of a file holding
    /// several builds, the section of the map's build is read).
    #[arg(value_name = "PROFILE", required = true)]
    pub profiles: Vec<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Instrument an LLVM bitcode file yourself (for opt/llc pipelines); link the
    /// result with the runtime printed by `pathprof rt-path`.
    Instrument {
        /// Input bitcode (a whole program, linked with llvm-link).
        input: PathBuf,
        /// Output bitcode.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        options: InstrumentOptions,
    },
    /// Per-function counts: calls, blocks, edges and paths.
    Report {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// The hottest acyclic paths as source lines (Ball-Larus Table 2 figures).
    Paths {
        #[command(flatten)]
        inputs: Inputs,
        /// Only this function (linkage or demangled name).
        #[arg(long)]
        function: Option<String>,
        /// How many paths to show.
        #[arg(long, default_value_t = 10)]
        top: usize,
        /// How to rank them: by the work a path does (executions times its
        /// instructions, Ball and Larus' weighted measure), or by executions.
        #[arg(long, value_enum, default_value = "work")]
        sort: PathSort,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Annotated source listing with execution counts in the margin (lprint).
    ///
    /// `pathprof lines --map MAP PROFILE... [FILE...]`: arguments that are
    /// profiles are read as profiles, the others name source files to list.
    Lines {
        /// The program, library or map file (repeatable, as for `report`).
        #[arg(long, value_name = "MAP", required = true)]
        map: Vec<PathBuf>,
        /// Profiles (summed), then optionally source files to list (as named in
        /// the map, or a suffix of it: `lines --map p.ppmap p.pprof util.c`).
        #[arg(value_name = "PROFILE|FILE", required = true)]
        args: Vec<PathBuf>,
        /// Only this source file (also accepted as a plain argument).
        #[arg(long = "file", value_name = "FILE")]
        files: Vec<String>,
        /// Show instructions executed per line instead of line counts.
        #[arg(long)]
        instructions: bool,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Per-function summary: instructions executed, calls, size, never executed.
    Funcs {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum, default_value = "instructions")]
        sort: SortKey,
    },
    /// Per-file summary: blocks executed, blocks, blocks never entered.
    Files {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum, default_value = "instructions")]
        sort: SortKey,
    },
    /// Line, block, edge and path coverage per function and in total.
    Coverage {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Check a path profile against an edge profile of the same program and input:
    /// the edge counts derived from paths must match exactly.
    Verify {
        /// The map of the path-mode build.
        #[arg(long, value_name = "PATH_MAP", required = true)]
        map: Vec<PathBuf>,
        /// The path-mode profile.
        path_profile: PathBuf,
        /// The map of the edge-mode build.
        #[arg(long, value_name = "EDGE_MAP", required = true)]
        edge_map: Vec<PathBuf>,
        /// The edge-mode profile of the same program, flags and input.
        edge_profile: PathBuf,
    },
    /// Paths predicted from the edge profile (most frequent edge) versus measured.
    Predict {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Compare the paths of two profiles of one build (e.g. train versus ref).
    Diff {
        #[arg(long, value_name = "MAP", required = true)]
        map: Vec<PathBuf>,
        a: PathBuf,
        b: PathBuf,
    },
    /// A function's path DAG for Graphviz, with values, increments and hot paths.
    ///
    /// Graphviz slows down sharply on big functions: a graph of more than 200
    /// nodes comes with a warning on stderr that says how many; `--hot N`
    /// draws a part of it that lays out quickly.
    Dot {
        #[arg(long, value_name = "MAP", required = true)]
        map: Vec<PathBuf>,
        #[arg(long)]
        function: String,
        /// Draw the hot paths of this profile heavier.
        #[arg(long)]
        profile: Option<PathBuf>,
        /// Draw only the blocks and edges of the N hottest paths of the
        /// profile (of the N most executed blocks where the build has no
        /// paths); the graph's label says what was left out.
        #[arg(long, value_name = "N", requires = "profile")]
        hot: Option<usize>,
        /// Warn above this many nodes (tests).
        #[arg(long, hide = true, default_value_t = crate::report::dot::NODE_LIMIT)]
        node_limit: usize,
    },
    /// Sum profile files into one: sections of one build are added, every
    /// other build keeps a section of its own (files from many programs,
    /// libraries and hosts merge into one).
    Merge {
        #[arg(required = true)]
        profiles: Vec<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Index profiles for optimised builds (`pathprof cc --profile-use`):
    /// one self-contained file of every function's counts, keyed by name
    /// and shape, so a build needs no instrumented binary (as `llvm-profdata
    /// merge` makes .profdata). Profiles (.pprof, summed, read with --map or
    /// the programs their sections name) and indexes (.ppdata) merge.
    Index {
        /// The instrumented program, library or .ppmap that reads the
        /// profiles (repeatable; default: the programs and libraries the
        /// profiles name).
        #[arg(long, value_name = "MAP")]
        map: Vec<PathBuf>,
        /// Profiles and indexed profiles, each with weight 1.
        #[arg(value_name = "PROFILE")]
        inputs: Vec<PathBuf>,
        /// An input whose counts count W times (repeatable).
        #[arg(long, value_name = "W:FILE", value_parser = parse_weighted)]
        weight: Vec<(u64, PathBuf)>,
        /// The indexed profile to write.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
    },
    /// List what a profile file holds, one line per program or library (the
    /// builds of its translation units added up): builds, mode, processes
    /// (and fork children among them) and threads that wrote it, functions
    /// with counts, the total of all its counters (before resumes), and the
    /// executables and libraries it was loaded from.
    Info {
        #[arg(value_name = "PROFILE", required = true)]
        profiles: Vec<PathBuf>,
        /// One line per build (section) instead, with its build id.
        #[arg(long)]
        builds: bool,
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
    /// Export as an LCOV tracefile or the JSON report.
    Export {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// A self-contained static HTML report.
    Html {
        #[command(flatten)]
        inputs: Inputs,
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Choose the interesting paths of a path-mode training profile for
    /// `pathprof cc --mode=ppp --interesting=FILE` (a versioned JSON list, one
    /// path per line: function, file, shape hash, Ball-Larus id, blocks).
    Interesting {
        #[command(flatten)]
        inputs: Inputs,
        /// Write the list here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Only paths executed at least N times.
        #[arg(long, value_name = "N", default_value_t = 1)]
        min_count: u64,
        /// Only the hottest paths covering this share (0 < X <= 1) of each
        /// function's executions.
        #[arg(long, value_name = "X")]
        top_share: Option<f64>,
    },
    /// The residual paths of a PPP profile: executed paths that are not
    /// interesting (the training never ran them), as source, most executed first.
    Residual {
        #[command(flatten)]
        inputs: Inputs,
        /// Only this function (linkage or demangled name).
        #[arg(long)]
        function: Option<String>,
        /// How many paths to show.
        #[arg(long, default_value_t = 20)]
        top: usize,
    },
    /// A PPP build's numbering per function: potential paths, interesting
    /// paths |I|, PPP interval and δ = interval / |I| (1: perfectly compact),
    /// with δ's histogram.
    PppStats {
        #[arg(long, value_name = "MAP", required = true)]
        map: Vec<PathBuf>,
    },
    /// Partitioned path profiling (P3): run the copies of a `pathprof cc
    /// --mode=p3 --copies=K` program in parallel and merge their profiles,
    /// or see what P3 gains on a program.
    P3 {
        #[command(subcommand)]
        command: P3Command,
    },
    /// Print the path of the runtime library to link instrumented objects with.
    RtPath,
}

#[derive(Subcommand, Debug)]
pub enum P3Command {
    /// Run a P3 build's K copies in parallel on one input and merge their
    /// profiles into one path-mode profile.
    ///
    /// The copies (PROGRAM.p3.0 ...) get the same arguments and the same
    /// standard input (read once, fed to each); copy 0's output is shown.
    /// Copies that run differently (exit status, output, counts) fail the
    /// run and nothing is written; otherwise it exits with copy 0's status.
    ///
    /// `pathprof p3 run -k K -o merged.pprof [--launcher 'CMD {}'] -- ./prog ARGS...`
    Run {
        /// K, the copies the program was built with (checked; default: the map's).
        #[arg(short = 'k', long = "copies", value_name = "K")]
        copies: Option<usize>,
        /// The merged profile to write.
        #[arg(short, long)]
        output: PathBuf,
        /// The P3 build's map (default PROGRAM.ppmap, else PROGRAM itself).
        #[arg(long, value_name = "MAP")]
        map: Option<PathBuf>,
        /// Start each copy through this command, run by `sh -c`: `{}` is the
        /// copy's command line (shell-quoted, with PATHPROF_FILE set in it),
        /// `{i}` its index, `{host}` one of --hosts. The copies write their
        /// partial profiles into this working directory, which they must
        /// share (e.g. 'srun -N1 -n1 {}', 'ssh {host} "cd $PWD && {}"').
        #[arg(long, value_name = "TEMPLATE")]
        launcher: Option<String>,
        /// Hosts for the launcher's {host}: copy i runs on the (i mod N)-th.
        #[arg(long, value_name = "HOST,...", value_delimiter = ',')]
        hosts: Vec<String>,
        /// The program, as built with `-o`, and its arguments (after `--`).
        #[arg(value_name = "PROGRAM ARGS", last = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Hit counts of SBL, PBL and P3 for each K, and P3's profitable
    /// procedures.
    ///
    /// The paper's Figures 5-7 (probe executions of the slowest copy,
    /// computed from a path-mode profile of one input) and Table 1.
    Stats {
        /// The numbers of copies to compare, e.g. 2,4,8.
        #[arg(short = 'k', long = "copies", value_name = "K,...", value_delimiter = ',',
              required = true, value_parser = clap::value_parser!(u32).range(1..=MAX_COPIES as i64))]
        copies: Vec<u32>,
        /// The P3 build's map (`pathprof cc --mode=p3`): its .ppmap or the program.
        #[arg(long, value_name = "MAP", required = true)]
        map: PathBuf,
        /// A path-mode profile of the input: the program's own (sequential)
        /// build, or a `p3 run`'s merged profile.
        #[arg(value_name = "PROFILE")]
        profile: PathBuf,
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
    },
}

/// Where sources are looked up.
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// Look for sources under DIR (the build tree moved).
    #[arg(long, value_name = "DIR")]
    pub source_root: Option<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    Instructions,
    Calls,
    Size,
    Unexecuted,
    Name,
}

/// How `pathprof paths` ranks paths.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSort {
    /// Executions times instructions per execution, most first.
    Work,
    /// Executions, most first.
    Count,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Lcov,
    Json,
}
