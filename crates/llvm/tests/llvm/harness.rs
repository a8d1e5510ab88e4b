//! Compiling test programs, running the whole pipeline, and reading the fake
//! runtime's report.

use pathprof_core::plan::FunctionPlan;
use pathprof_core::profile::mode_number;
use pathprof_core::Mode;
use pathprof_format::abi::ABI_VERSION;
use pathprof_llvm::{
    extract, instrument, optimize, write_object, Context, Extracted, ModuleInfo, OptLevel,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The directory holding the test programs.
pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/llvm")
}

pub fn clang() -> PathBuf {
    if let Some(c) = std::env::var_os("PATHPROF_CLANG") {
        return c.into();
    }
    let debian = Path::new("/usr/lib/llvm-22/bin/clang");
    if debian.exists() {
        return debian.to_path_buf();
    }
    "clang-22".into()
}

/// Runs `command`, panicking with its output when it fails.
pub fn run_ok(command: &mut Command) -> std::process::Output {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// How a source file is compiled to bitcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `-O1`: clang's optimised IR.
    Optimised,
    /// `-O1 -Xclang -disable-llvm-passes`: clang's IR before any LLVM pass.
    Unoptimised,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Optimised, Variant::Unoptimised];
}

/// Compiles `tests/llvm/<source>` to bitcode in `dir`.
pub fn bitcode(dir: &Path, source: &str, variant: Variant) -> PathBuf {
    let out = dir.join(format!("{source}.{variant:?}.bc"));
    let mut cmd = Command::new(clang());
    cmd.args(["-O1", "-g", "-c", "-emit-llvm"]);
    if variant == Variant::Unoptimised {
        cmd.args(["-Xclang", "-disable-llvm-passes"]);
    }
    cmd.arg(source_dir().join(source)).arg("-o").arg(&out);
    run_ok(&mut cmd);
    out
}

/// The program's stdout when built by clang alone (`sources` may hold flags).
pub fn reference_stdout(dir: &Path, sources: &[&str]) -> String {
    let exe = dir.join("reference");
    let mut cmd = Command::new(clang());
    cmd.arg("-O1");
    for s in sources {
        if s.starts_with('-') {
            cmd.arg(s);
        } else {
            cmd.arg(source_dir().join(s));
        }
    }
    run_ok(cmd.arg("-o").arg(&exe));
    String::from_utf8(run_ok(&mut Command::new(&exe)).stdout).unwrap()
}

/// One instrumented build.
pub struct Build<'a> {
    pub mode: Mode,
    pub atomic: bool,
    pub level: OptLevel,
    pub build_id: u64,
    /// Linked after the object (e.g. `-lstdc++`).
    pub link_args: &'a [&'a str],
}

impl Default for Build<'_> {
    fn default() -> Self {
        Build {
            mode: Mode::Block,
            atomic: false,
            level: OptLevel::O2,
            build_id: 0x0123_4567_89ab_cdef,
            link_args: &[],
        }
    }
}

/// What one run of an instrumented program produced.
pub struct Run {
    pub extracted: Extracted,
    pub stdout: String,
    pub report: Report,
}

/// Loads `bitcode`, plans with `plan`, instruments, optimises, links with the fake
/// runtime and runs the program.
pub fn build_and_run(
    dir: &Path,
    bitcode: &[PathBuf],
    build: &Build<'_>,
    plan: impl Fn(&Extracted) -> Vec<FunctionPlan>,
) -> Run {
    build_program(dir, bitcode, build, plan).run(&[])
}

/// An instrumented program, linked with the fake runtime.
pub struct Program {
    pub extracted: Extracted,
    pub plans: Vec<FunctionPlan>,
    pub exe: PathBuf,
    mode: Mode,
    build_id: u64,
}

/// What `instrument` needs to know of the module `extracted` came from.
pub fn module_info(extracted: &Extracted, mode: Mode, build_id: u64, atomic: bool) -> ModuleInfo {
    ModuleInfo {
        mode,
        build_id,
        hashes: extracted
            .functions
            .iter()
            .map(|f| f.cfg.shape_hash())
            .collect(),
        atomic,
        continuous: false,
    }
}

/// Loads `bitcode`, plans with `plan`, instruments, optimises and links with the
/// fake runtime into `dir/prog<n>` (a new name each time).
pub fn build_program(
    dir: &Path,
    bitcode: &[PathBuf],
    build: &Build<'_>,
    plan: impl Fn(&Extracted) -> Vec<FunctionPlan>,
) -> Program {
    let context = Context::create();
    let module = pathprof_llvm::link_bitcode_files(&context, bitcode).unwrap();
    let extracted = extract(&module).unwrap();
    let plans = plan(&extracted);
    let info = module_info(&extracted, build.mode, build.build_id, build.atomic);
    instrument(&module, &plans, &info).unwrap();
    optimize(&module, build.level).unwrap();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let obj = dir.join(format!("prog{n}.o"));
    write_object(&module, &obj, build.level).unwrap();
    let exe = dir.join(format!("prog{n}"));
    let mut cmd = Command::new(clang());
    cmd.arg(&obj)
        .arg(source_dir().join("fake_rt.c"))
        .arg(format!(
            "-DHASH_CACHE_SLOTS={}",
            pathprof_format::abi::HASH_CACHE_SLOTS
        ))
        .arg("-o")
        .arg(&exe);
    run_ok(cmd.args(build.link_args));
    Program {
        extracted,
        plans,
        exe,
        mode: build.mode,
        build_id: build.build_id,
    }
}

impl Program {
    /// Runs the program with `args` and reads the fake runtime's report.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = run_ok(Command::new(&self.exe).args(args));
        let report = Report::parse(&String::from_utf8(out.stderr).unwrap());
        assert_eq!(report.modules.len(), 1, "one module registered");
        let m = &report.modules[0];
        assert_eq!(
            (m.abi_version, m.mode, m.build_id),
            (ABI_VERSION, mode_number(self.mode), self.build_id)
        );
        let (extracted, plans) = (&self.extracted, &self.plans);
        assert_eq!(m.functions.len(), extracted.functions.len());
        for (i, (f, e)) in m.functions.iter().zip(&extracted.functions).enumerate() {
            assert_eq!(f.index as usize, i);
            assert_eq!(f.hash, e.cfg.shape_hash(), "hash of {}", e.name);
            assert_eq!(
                f.slots.len() as u32,
                plans[i].num_slots,
                "slots of {}",
                e.name
            );
        }
        Run {
            extracted: extracted.clone(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            report,
        }
    }
}

/// The fake runtime's report (see `fake_rt.c`).
#[derive(Debug, Default)]
pub struct Report {
    pub modules: Vec<ModuleReport>,
}

#[derive(Debug)]
pub struct ModuleReport {
    pub abi_version: u32,
    pub mode: u32,
    pub build_id: u64,
    pub functions: Vec<FunctionReport>,
}

#[derive(Debug)]
pub struct FunctionReport {
    pub index: u32,
    pub hash: u64,
    pub path_kind: u32,
    pub num_paths: u64,
    pub slots: Vec<u64>,
    pub paths: BTreeMap<u64, u64>,
}

impl Report {
    pub fn parse(text: &str) -> Report {
        let mut report = Report::default();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            match words.next() {
                Some("pp-module") => {
                    let w: Vec<&str> = words.collect();
                    report.modules.push(ModuleReport {
                        abi_version: w[0].parse().unwrap(),
                        mode: w[1].parse().unwrap(),
                        build_id: u64::from_str_radix(w[2], 16).unwrap(),
                        functions: Vec::new(),
                    });
                }
                Some("pp-function") => {
                    let w: Vec<&str> = words.collect();
                    assert_eq!(w[4], "slots");
                    let m = report.modules.last_mut().expect("a module line first");
                    m.functions.push(FunctionReport {
                        index: w[0].parse().unwrap(),
                        hash: u64::from_str_radix(w[1], 16).unwrap(),
                        path_kind: w[2].parse().unwrap(),
                        num_paths: w[3].parse().unwrap(),
                        slots: w[5..].iter().map(|s| s.parse().unwrap()).collect(),
                        paths: BTreeMap::new(),
                    });
                }
                Some("pp-paths") => {
                    let index: u32 = words.next().unwrap().parse().unwrap();
                    let m = report.modules.last_mut().unwrap();
                    let f = m.functions.iter_mut().find(|f| f.index == index).unwrap();
                    for pair in words {
                        let (id, count) = pair.split_once(':').unwrap();
                        let old = f.paths.insert(id.parse().unwrap(), count.parse().unwrap());
                        assert!(old.is_none(), "path {id} reported twice");
                    }
                }
                Some("pp-error") => panic!("the fake runtime found an ABI violation: {line}"),
                _ => {}
            }
        }
        report
    }

    /// The counters of the function named `name` in `extracted`.
    pub fn function<'a>(&'a self, extracted: &Extracted, name: &str) -> &'a FunctionReport {
        let i = function_index(extracted, name);
        &self.modules[0].functions[i]
    }
}

/// Index of the function named `name`.
pub fn function_index(extracted: &Extracted, name: &str) -> usize {
    extracted
        .functions
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// The 1-based line of the first line of `source` containing `needle`.
pub fn line_of(source: &str, needle: &str) -> u32 {
    let text = std::fs::read_to_string(source_dir().join(source)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {source}")) as u32
        + 1
}
