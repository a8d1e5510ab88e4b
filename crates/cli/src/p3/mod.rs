//! `pathprof p3 run`: the K copies of a `pathprof cc --mode=p3` program
//! run in parallel on the same input, each writing a partial profile into
//! the working directory (`<OUTPUT stem>.p3.<i>.pprof`, absolute paths, so
//! copies started elsewhere through a launcher write there too), and their
//! partial profiles merged into one path-mode profile of the map's build
//! (`pathprof_core::p3::MapProgram::merge_partials`).
//!
//! Divergence is detected, never merged: a copy that cannot be started,
//! dies by a signal, or whose exit status or standard output differs from
//! copy 0's, or whose counts break the merge's checks (the copies' facts,
//! per-path agreement, totals, flow conservation), fails the run with a
//! message naming the copy and the first difference, and nothing is
//! written (the partial profiles stay for a look). Otherwise the partial
//! profiles are removed and the run exits with copy 0's status.
//!
//! - [`launch`]: starting a copy, directly or through `--launcher`;
//! - [`copies`]: running them at once on one input;
//! - [`diff`]: the first difference between two outputs.

pub mod copies;
pub mod diff;
pub mod launch;

use crate::driver::copy_name;
use anyhow::{anyhow, bail, Context as _, Result};
use copies::Outcome;
use launch::Launcher;
use pathprof_core::map::MapFile;
use pathprof_core::p3::{MapProgram, Strategy};
use pathprof_format::RawProfile;
use pathprof_io::map::read_fragments;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// What `pathprof p3 run` was asked.
#[derive(Debug)]
pub struct RunOptions {
    /// `-k`: the copies the program was built with (checked against the map).
    pub copies: Option<usize>,
    /// `-o`: the merged profile.
    pub output: PathBuf,
    /// `--map` (default `PROGRAM.ppmap`, else the program itself).
    pub map: Option<PathBuf>,
    pub launcher: Launcher,
    /// The program as built with `-o`, and its arguments.
    pub command: Vec<OsString>,
}

/// Runs the copies and merges their profiles into `o.output`.
pub fn run(o: RunOptions) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let (arg0, args) = o
        .command
        .split_first()
        .context("name the program to run after `--`")?;
    let program = cwd.join(arg0);
    let map_path = o.map.clone().unwrap_or_else(|| default_map(&program));
    let map = read_p3_map(&map_path)?;
    let (mp, record) =
        MapProgram::recorded(&map).with_context(|| format!("{}", map_path.display()))?;
    let k = record.copies as usize;
    if let Some(asked) = o.copies.filter(|&asked| asked != k) {
        bail!(
            "-k {asked}, but {} was built with --copies={k}: run it with -k {k}, or rebuild it \
             with --copies={asked}",
            program.display()
        );
    }
    let copies: Vec<PathBuf> = (0..k).map(|i| copy_name(&program, i)).collect();
    if let Some((i, missing)) = copies.iter().enumerate().find(|(_, c)| !c.exists()) {
        bail!(
            "copy {i} of {} ({}) does not exist: build the program with `pathprof cc \
             --mode=p3 --copies={k} ... -o {}`",
            program.display(),
            missing.display(),
            program.display()
        );
    }
    let partials: Vec<PathBuf> = (0..k).map(|i| partial_name(&cwd, &o.output, i)).collect();
    for p in &partials {
        remove_stale(p)?;
    }
    let scratch = tempfile::Builder::new().prefix("pathprof-p3-").tempdir()?;
    let commands = (0..k)
        .map(|i| o.launcher.command(i, &copies[i], arg0, args, &partials[i]))
        .collect();
    let outcomes = copies::run_all(commands, scratch.path())?;
    let refusal = Refusal {
        program: &program,
        output: &o.output,
        kept: partials[0].with_file_name(partial_file_name(&o.output, "*")),
    };
    if let Some(failure) = first_failure(&outcomes)? {
        return Err(match failure {
            Failure::Crashed(d) => refusal.refused(d),
            Failure::Differs(d) => refusal.diverged(d),
        });
    }
    let sections = partials
        .iter()
        .enumerate()
        .map(|(i, p)| read_partial(i, p, mp.copy_build_id(k, i)))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|d| refusal.refused(d))?;
    let plan = mp.plan(k, Strategy::P3);
    let merged = mp.merge_partials(&plan, &sections).map_err(|e| {
        if e.is_divergence() {
            refusal.diverged(e.to_string())
        } else {
            refusal.refused(e.to_string())
        }
    })?;
    pathprof_io::output::write_new(&o.output, &merged.encode())
        .with_context(|| format!("cannot write {}", o.output.display()))?;
    for p in &partials {
        let _ = std::fs::remove_file(p);
    }
    let code = outcomes[0].status.code().unwrap_or(1);
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// The messages a refused run ends with.
struct Refusal<'a> {
    program: &'a Path,
    output: &'a Path,
    /// The partial profiles, as a pattern.
    kept: PathBuf,
}

impl Refusal<'_> {
    /// `detail`, and that nothing was written.
    fn refused(&self, detail: String) -> anyhow::Error {
        anyhow!(
            "{detail}; nothing was written to {} (partial profiles kept: {})",
            self.output.display(),
            self.kept.display()
        )
    }

    /// The copies ran differently (`detail`): what P3 needs, and that
    /// nothing was written.
    fn diverged(&self, detail: String) -> anyhow::Error {
        self.refused(format!(
            "the copies of {} ran differently: {detail}. P3 needs a program that runs alike on \
             the same input (address-space randomisation off with `setarch -R`, fixed seeds, \
             no time or thread races)",
            self.program.display()
        ))
    }
}

/// `PROGRAM.ppmap` when it exists, else the program (its map travels in it).
fn default_map(program: &Path) -> PathBuf {
    let map = crate::driver::default_map_path(program);
    if map.exists() {
        map
    } else {
        program.to_path_buf()
    }
}

/// The fragment of `path` that records a P3 build.
fn read_p3_map(path: &Path) -> Result<MapFile> {
    read_fragments(path)?
        .into_iter()
        .find(|f| f.p3.is_some())
        .ok_or_else(|| {
            anyhow!(
                "{} records no P3 build: build the program with `pathprof cc --mode=p3 \
                 --copies=K`, or pass its map with --map",
                path.display()
            )
        })
}

/// `<OUTPUT's name without .pprof>.p3.<copy>.pprof`.
fn partial_file_name(output: &Path, copy: &str) -> String {
    let name = output
        .file_name()
        .map_or_else(|| "p3".into(), |n| n.to_string_lossy().into_owned());
    let stem = name.strip_suffix(".pprof").unwrap_or(&name);
    format!("{stem}.p3.{copy}.pprof")
}

/// Where copy `copy` writes its partial profile: in the working directory.
fn partial_name(cwd: &Path, output: &Path, copy: usize) -> PathBuf {
    cwd.join(partial_file_name(output, &copy.to_string()))
}

/// Removes a partial profile of an earlier run (the runtime would add to it).
fn remove_stale(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e)
            .with_context(|| format!("cannot remove the old partial profile {}", path.display())),
        _ => Ok(()),
    }
}

/// Why the copies' runs are refused.
enum Failure {
    /// A copy died by a signal.
    Crashed(String),
    /// A copy's status or output is not copy 0's.
    Differs(String),
}

/// The first copy that died by a signal, or whose exit status or standard
/// output differs from copy 0's.
fn first_failure(outcomes: &[Outcome]) -> Result<Option<Failure>> {
    let first = &outcomes[0];
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(signal) = o.status.signal() {
            return Ok(Some(Failure::Crashed(format!(
                "copy {i} was killed by signal {signal}{}{}",
                signal_name(signal),
                stderr_tail(o)
            ))));
        }
        if o.status.code() != first.status.code() {
            return Ok(Some(Failure::Differs(format!(
                "copy {i} exited with status {} but copy 0 with status {}{}",
                o.status.code().unwrap_or_default(),
                first.status.code().unwrap_or_default(),
                stderr_tail(o)
            ))));
        }
        if let Some(d) = diff::first_difference(&first.stdout, &o.stdout)? {
            return Ok(Some(Failure::Differs(format!(
                "copy {i}'s standard output differs from copy 0's {d}"
            ))));
        }
    }
    Ok(None)
}

/// ` (SIGSEGV)` for the signals programs commonly die of.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        13 => " (SIGPIPE)",
        15 => " (SIGTERM)",
        _ => "",
    }
}

/// `; its standard error ends: "..."`: the last lines a copy other than 0
/// wrote there (copy 0's went to ours), if any.
fn stderr_tail(o: &Outcome) -> String {
    let Some(text) = o.stderr.as_ref().and_then(|p| std::fs::read(p).ok()) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match lines.len() {
        0 => String::new(),
        n => format!(
            "; its standard error ends: {:?}",
            lines[n.saturating_sub(3)..].join(" / ")
        ),
    }
}

/// Copy `copy`'s section of the partial profile at `path`, which must hold
/// the copy's build (`build_id`).
fn read_partial(copy: usize, path: &Path, build_id: u64) -> Result<RawProfile, String> {
    if !path.exists() {
        return Err(format!(
            "copy {copy} wrote no profile at {} (with a launcher: is the working directory \
             shared with the copies?)",
            path.display()
        ));
    }
    let file = pathprof_io::profile::read_file(path).map_err(|e| e.to_string())?;
    let section = file.section(build_id).cloned().ok_or_else(|| {
        format!(
            "copy {copy}'s profile {} holds no counts of copy {copy} (build ids {:x?}): was it \
             written by another build?",
            path.display(),
            file.build_ids()
        )
    })?;
    if file.sections.len() > 1 {
        eprintln!(
            "pathprof: warning: copy {copy}'s profile {} holds other builds too (instrumented \
             libraries?); only the program's counts are merged",
            path.display()
        );
    }
    Ok(section)
}

/// `cmd` on one line, for messages.
pub(crate) fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
