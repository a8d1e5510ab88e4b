//! Shared by the `reports_*` tests: build a fixture program with `pathprof cc`,
//! run it, and run `pathprof` report commands on its map and profiles.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn pathprof() -> &'static str {
    env!("CARGO_BIN_EXE_pathprof")
}

/// A fixture's source, from `tests/reports_fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reports_fixtures")
        .join(name)
}

/// Where tests keep files a person may want to look at afterwards.
pub fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("pathprof-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A built program in its own directory.
pub struct Program {
    pub dir: tempfile::TempDir,
    pub source: PathBuf,
    pub exe: PathBuf,
    pub map: PathBuf,
}

fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A fresh directory for one program.
pub fn program_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("pathprof-reports-")
        .tempdir()
        .unwrap()
}

/// Runs `pathprof cc --mode=<mode> ARGS -o EXE` in `dir` (so relative names in
/// `args` are under it), which must succeed, and returns the map it wrote.
pub fn cc(dir: &Path, mode: &str, args: &[&str], exe: &Path) -> PathBuf {
    let out = Command::new(pathprof())
        .current_dir(dir)
        .arg("cc")
        .arg(format!("--mode={mode}"))
        .args(args)
        .arg("-o")
        .arg(exe)
        .output()
        .expect("run pathprof cc");
    assert!(
        out.status.success(),
        "{}\n(the runtime libpathprof_rt.a must sit next to the pathprof binary: `cargo build -p pathprof-rt`; clang-22 comes from scripts/install-deps.sh)",
        describe("pathprof cc", &out)
    );
    let map = PathBuf::from(format!("{}.ppmap", exe.display()));
    assert!(
        map.exists(),
        "pathprof cc wrote no map at {}",
        map.display()
    );
    map
}

/// Copies fixture `name` into a fresh directory and builds it with
/// `pathprof cc --mode=<mode> -O1 -g`.
pub fn build(name: &str, mode: &str) -> Program {
    let dir = program_dir();
    let source = dir.path().join(name);
    std::fs::copy(fixture(name), &source).unwrap();
    let exe = dir.path().join(name.trim_end_matches(".c"));
    let map = cc(
        dir.path(),
        mode,
        &["-O1", "-g", &source.display().to_string()],
        &exe,
    );
    Program {
        dir,
        source,
        exe,
        map,
    }
}

impl Program {
    /// Runs the program with `args`, writing profile `name` in its directory.
    pub fn run(&self, args: &[&str], name: &str) -> PathBuf {
        let profile = self.dir.path().join(name);
        let out = Command::new(&self.exe)
            .args(args)
            .env("PATHPROF_FILE", &profile)
            .output()
            .expect("run the instrumented program");
        assert!(out.status.success(), "{}", describe("the program", &out));
        assert!(profile.exists(), "the program wrote no profile");
        profile
    }
}

/// Runs `pathprof ARGS` and returns its output, whatever the status.
pub fn pathprof_output<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(pathprof())
        .args(args)
        .output()
        .expect("run pathprof")
}

/// Runs `pathprof ARGS`, which must succeed, and returns its standard output.
pub fn pathprof_ok<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let out = pathprof_output(&args);
    assert!(
        out.status.success(),
        "{}",
        describe(&format!("pathprof {args:?}"), &out)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The line of `text` containing `needle`, for readable assertions.
pub fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// The 1-based number of the line of `path` containing `marker`.
pub fn line_of(path: &Path, marker: &str) -> u32 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker} in {}", path.display())) as u32
        + 1
}

/// Whether `tool` runs (`tool VERSION_FLAG` succeeds).
pub fn have(tool: &str, version_flag: &str) -> bool {
    Command::new(tool)
        .arg(version_flag)
        .output()
        .is_ok_and(|o| o.status.success())
}
