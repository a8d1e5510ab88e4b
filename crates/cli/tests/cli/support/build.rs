//! Building programs: where the compilers and the tests' data are, the
//! programs of `tests/programs/` in every mode and at every level (the
//! end-to-end tests), the fixtures of `tests/reports_fixtures/` (the report
//! tests), and what a built library exports.

use super::command::{describe, failure, stdout_of, PATHPROF};
use super::run::{execute, profiled};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where LLVM 22's tools are.
pub const LLVM_BIN: &str = "/usr/lib/llvm-22/bin";

/// The compiler of the reference builds, the one `pathprof cc` drops in for.
pub const CLANG: &str = "/usr/lib/llvm-22/bin/clang";

/// LLVM's tool `name` (`llvm-ar`, `llvm-nm`, ...).
pub fn llvm_tool(name: &str) -> String {
    format!("{LLVM_BIN}/{name}")
}

/// `tests/<path>` of this crate: the tests' data (sources, projects, fixtures).
pub fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(path)
}

/// The end-to-end tests' programs.
pub fn programs_dir() -> PathBuf {
    data("programs")
}

// ---------------------------------------------------------------------------
// What is built

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Block,
    Edge,
    Path,
}

pub const MODES: [Mode; 3] = [Mode::Block, Mode::Edge, Mode::Path];

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Block => "block",
            Mode::Edge => "edge",
            Mode::Path => "path",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Opt {
    /// Blocks follow the source: exact per-line counts hold.
    O0,
    O1,
    /// What users build: only counts that survive optimisation are asserted.
    O2,
    O3,
}

pub const OPTS: [Opt; 2] = [Opt::O0, Opt::O2];

impl Opt {
    pub fn flag(self) -> &'static str {
        match self {
            Opt::O0 => "-O0",
            Opt::O1 => "-O1",
            Opt::O2 => "-O2",
            Opt::O3 => "-O3",
        }
    }
}

/// Which builds of a program an expectation is about.
#[derive(Clone, Copy, Debug)]
pub struct Builds {
    pub opts: &'static [Opt],
    pub modes: &'static [Mode],
}

/// Every build.
pub const ALL: Builds = Builds {
    opts: &OPTS,
    modes: &MODES,
};
/// The -O0 builds, in every mode.
pub const AT_O0: Builds = Builds {
    opts: &[Opt::O0],
    modes: &MODES,
};
/// The block-mode builds, at every level.
pub const BLOCK_MODE: Builds = Builds {
    opts: &OPTS,
    modes: &[Mode::Block],
};
/// The builds that count edges (edge and path mode), at every level.
pub const EDGE_COUNTS: Builds = Builds {
    opts: &OPTS,
    modes: &[Mode::Edge, Mode::Path],
};
/// The path-mode builds, at every level.
pub const PATH_MODE: Builds = Builds {
    opts: &OPTS,
    modes: &[Mode::Path],
};
/// The -O0 path-mode build.
pub const O0_PATH: Builds = Builds {
    opts: &[Opt::O0],
    modes: &[Mode::Path],
};

/// One test program of `tests/programs/`.
#[derive(Debug)]
pub struct Program {
    pub name: &'static str,
    /// Files of `tests/programs/`; the first one defines `main`.
    pub sources: &'static [&'static str],
    /// Flags for both compilers, after the sources (`-pthread`, `-lstdc++`).
    pub flags: &'static [&'static str],
    /// Flags for `pathprof cc` only (`--atomic`).
    pub pathprof_flags: &'static [&'static str],
    /// The exit status the program is written to return.
    pub status: i32,
    /// Functions with activations that never return (they call `exit()`, are
    /// unwound by a throw, or straddle a `fork()`). Counting schemes legitimately
    /// disagree on those activations, so these functions are left out of the
    /// cross-mode and flow-conservation checks.
    pub cut_short: &'static [&'static str],
}

impl Program {
    fn source_paths(&self) -> Vec<PathBuf> {
        self.sources
            .iter()
            .map(|s| programs_dir().join(s))
            .collect()
    }
}

/// How to compile.
#[derive(Clone, Copy, Debug)]
pub enum Compiler {
    /// The reference build: plain clang.
    Clang,
    /// `pathprof cc`, with `--mode=M` or, for `None`, the default mode.
    Pathprof(Option<Mode>),
}

// ---------------------------------------------------------------------------
// The three helpers: build, run, report

/// Builds `prog` into `dir` and returns the executable; `pathprof cc` writes the
/// map beside it ([`map_of`]). Panics with the command and its output on failure.
pub fn build(prog: &Program, compiler: Compiler, opt: Opt, dir: &Path) -> PathBuf {
    let tag = match compiler {
        Compiler::Clang => "clang".to_string(),
        Compiler::Pathprof(None) => "default".to_string(),
        Compiler::Pathprof(Some(m)) => m.name().to_string(),
    };
    let exe = dir.join(format!("{}{}-{}", prog.name, opt.flag(), tag));
    let mut cmd = match compiler {
        Compiler::Clang => Command::new(CLANG),
        Compiler::Pathprof(mode) => {
            let mut cmd = Command::new(PATHPROF);
            cmd.arg("cc");
            if let Some(mode) = mode {
                cmd.arg(format!("--mode={}", mode.name()));
            }
            cmd.args(prog.pathprof_flags);
            cmd
        }
    };
    cmd.arg(opt.flag())
        .arg("-g")
        .args(prog.source_paths())
        .args(prog.flags)
        .arg("-o")
        .arg(&exe)
        .current_dir(dir);
    let out = execute(&mut cmd, None);
    if out.status != Some(0) {
        panic!("build failed: {}\n{}", describe(&cmd), out);
    }
    exe
}

/// The map `pathprof cc -o exe` writes: `exe.ppmap`.
pub fn map_of(exe: &Path) -> PathBuf {
    let mut name = exe.as_os_str().to_owned();
    name.push(".ppmap");
    PathBuf::from(name)
}

// ---------------------------------------------------------------------------
// The report tests' fixtures

/// A fixture's source, from `tests/reports_fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    data("reports_fixtures").join(name)
}

/// A built program in its own directory.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub source: PathBuf,
    pub exe: PathBuf,
    pub map: PathBuf,
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
    let out = Command::new(PATHPROF)
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
        failure("pathprof cc", &out)
    );
    let map = map_of(exe);
    assert!(
        map.exists(),
        "pathprof cc wrote no map at {}",
        map.display()
    );
    map
}

/// Copies fixture `name` into a fresh directory and builds it with
/// `pathprof cc --mode=<mode> -O1 -g`.
pub fn build_fixture(name: &str, mode: &str) -> Fixture {
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
    Fixture {
        dir,
        source,
        exe,
        map,
    }
}

impl Fixture {
    /// Runs the program with `args`, writing profile `name` in its directory.
    pub fn run(&self, args: &[&str], name: &str) -> PathBuf {
        let profile = self.dir.path().join(name);
        let out = profiled(&self.exe, &profile)
            .args(args)
            .output()
            .expect("run the instrumented program");
        assert!(out.status.success(), "{}", failure("the program", &out));
        assert!(profile.exists(), "the program wrote no profile");
        profile
    }
}

/// Copies the directory `from` to `to` (a new directory), as `cp -r` does.
pub fn copy_dir(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "cp -r {} {}",
        from.display(),
        to.display()
    );
}

/// The 1-based number of the first line of `path` containing `marker`.
pub fn line_of(path: &Path, marker: &str) -> u32 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker} in {}", path.display())) as u32
        + 1
}

// ---------------------------------------------------------------------------
// What was built

/// Defined dynamic symbols (`type name`) of a shared library or executable:
/// its exports.
pub fn exports(lib: &Path) -> Vec<String> {
    let out = stdout_of(
        Command::new(llvm_tool("llvm-nm"))
            .args(["-D", "--defined-only"])
            .arg(lib),
    );
    String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest.to_string()))
        .collect()
}
