//! The runtime linked into C programs that register a hand-written module
//! (tests/c/pathprof_test.h), checked by decoding the files they write.
//!
//! The crate is an rlib for tests, so the first test builds the archive as
//! pathprof's build script does (`cargo rustc --crate-type staticlib
//! --profile runtime --features archive`) into a target directory of its own
//! (no contention with the outer cargo's lock) for `libpathprof_rt.a`; the
//! programs are compiled with clang-22 and linked with `-lpthread -ldl`.

use pathprof_format::{Facts, ProfileFile, RawFunction, RawProfile};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BUILD: u64 = 0xB0B0_0000_0000_0001;

fn runtime_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rt-staticlib");
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["rustc", "--quiet", "-p", "pathprof-rt", "--lib"])
            .args(["--crate-type", "staticlib", "--profile", "runtime"])
            .args(["--features", "archive", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "building the runtime archive failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lib = target.join("runtime/libpathprof_rt.a");
        assert!(lib.exists(), "{} is missing", lib.display());
        lib
    })
}

fn clang() -> String {
    for c in ["/usr/lib/llvm-22/bin/clang", "clang-22", "clang"] {
        if Command::new(c).arg("--version").output().is_ok() {
            return c.to_string();
        }
    }
    panic!("clang-22 not found");
}

/// A fresh directory for one test.
fn test_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("rt-c")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles tests/c/<name>.c into `dir`.
fn build(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    build_as(dir, name, name, defines, &[])
}

/// Compiles tests/c/<name>.c into `dir/<output>`, with more clang arguments
/// (`-shared -fPIC` for a library, libraries to link).
fn build_as(dir: &Path, name: &str, output: &str, defines: &[&str], more: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let exe = dir.join(output);
    let out = Command::new(clang())
        .args(["-O1", "-g", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(src.join(format!("{name}.c")))
        .arg(format!("-I{}", src.display()))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .args(more)
        .arg(runtime_lib())
        .args(["-lpthread", "-ldl"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clang failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// A test program's command. Every signal starts at its default action: a
/// shell that starts the tests in the background leaves SIGINT and SIGQUIT
/// ignored, the program would inherit that, and the runtime keeps a signal
/// that is ignored.
fn command(exe: &Path, dir: &Path, file: &str) -> Command {
    let mut c = Command::new(exe);
    c.current_dir(dir)
        .env("PATHPROF_FILE", file)
        .env_remove("PATHPROF_VERBOSE");
    // Safety: between fork and exec the closure only sets signal
    // dispositions (signal(2), which glibc makes one sigaction call).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            for sig in 1..32 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            Ok(())
        });
    }
    c
}

fn run(exe: &Path, dir: &Path, file: &str, args: &[&str]) -> Output {
    command(exe, dir, file).args(args).output().unwrap()
}

/// The profile at `path` (of one build), with its process facts and
/// object paths.
fn read_all(path: &Path) -> RawProfile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    RawProfile::decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The profile file at `path`, all its sections.
fn read_file(path: &Path) -> ProfileFile {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ProfileFile::decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `p` without its process facts and object paths (to compare counts).
fn counts(mut p: RawProfile) -> RawProfile {
    p.set_facts(Facts::default());
    p.objects.clear();
    p.objects_truncated = false;
    p
}

/// The profile at `path` (of one build), its process facts set to zero and
/// its object paths left out (to compare counts).
fn read(path: &Path) -> RawProfile {
    counts(read_all(path))
}

/// The section of `build` in the file at `path`, counts only.
fn section(path: &Path, build: u64) -> RawProfile {
    let file = read_file(path);
    let s = file
        .section(build)
        .unwrap_or_else(|| panic!("{} has no build {build:016x}", path.display()));
    counts(s.clone())
}

/// The files in `dir` whose names end in `.pprof`, sorted.
fn profiles_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pprof"))
        .collect();
    names.sort();
    names
}

/// `path` with its symbolic links resolved, as a string (what the runtime
/// records as an object path).
fn real(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// (processes, forked, threads) of the profile at `path`.
fn facts(path: &Path) -> (u64, u64, u64) {
    let p = read_all(path);
    (p.processes, p.forked, p.threads)
}

/// What `work(n)` in pathprof_test.h counts.
fn work(n: u64) -> RawProfile {
    work_of(BUILD, n)
}

/// What `work(n)` in pathprof_test.h built with `-DBUILD=<build>` counts.
fn work_of(build: u64, n: u64) -> RawProfile {
    let mut p = RawProfile::new(build, 2);
    if n == 0 {
        return p;
    }
    let count = |k: u64, m: u64| n / m + u64::from(k < n % m);
    p.functions.push(RawFunction {
        index: 0,
        hash: 0x1111,
        slots: vec![n, 0, n],
        paths: (0..4)
            .map(|k| (k, count(k, 4)))
            .filter(|e| e.1 > 0)
            .collect(),
        ..Default::default()
    });
    p.functions.push(RawFunction {
        index: 5,
        hash: 0x2222,
        slots: vec![n],
        paths: (0..10)
            .map(|k| (k * 100, count(k, 10)))
            .filter(|e| e.1 > 0)
            .collect(),
        ..Default::default()
    });
    p
}

fn sum(parts: &[RawProfile]) -> RawProfile {
    let mut total = RawProfile::new(parts.first().map_or(BUILD, |p| p.build_id), 2);
    for p in parts {
        total.merge(p).unwrap();
    }
    total
}

/// Runs `cmd` to its end, its standard output discarded and its standard
/// error kept: the child's pid (for its side file's name) and what it did.
fn pid_and_output(cmd: &mut Command) -> (u32, Output) {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (pid, child.wait_with_output().unwrap())
}

fn assert_quiet(out: &Output) {
    assert!(
        out.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn writes_exact_counts_and_leaves_the_program_alone() {
    let dir = test_dir("basic");
    let exe = build(&dir, "basic", &[]);
    let out = run(&exe, &dir, "prof.pprof", &["13"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"hello from the program\n");
    assert_quiet(&out);
    let p = read(&dir.join("prof.pprof"));
    assert_eq!(p, work(13));
    assert!(
        p.functions.iter().all(|f| f.index != 2),
        "function 2 never ran"
    );

    assert_eq!(facts(&dir.join("prof.pprof")), (1, 0, 0));
    // The section names the executable the module was loaded from.
    assert_eq!(read_all(&dir.join("prof.pprof")).objects, vec![real(&exe)]);

    // A second run merges: counts doubled.
    let out = run(&exe, &dir, "prof.pprof", &["13"]);
    assert_quiet(&out);
    assert_eq!(read(&dir.join("prof.pprof")), sum(&[work(13), work(13)]));
    assert_eq!(facts(&dir.join("prof.pprof")), (2, 0, 0));
}

#[test]
fn explicit_dump_then_exit_gives_the_total() {
    let dir = test_dir("explicit");
    let exe = build(&dir, "basic", &[]);
    let out = run(&exe, &dir, "p.pprof", &["6", "9"]);
    assert_quiet(&out);
    assert_eq!(read(&dir.join("p.pprof")), sum(&[work(6), work(9)]));
    assert_eq!(
        facts(&dir.join("p.pprof")),
        (1, 0, 0),
        "an explicit dump is not a process"
    );
}

#[test]
fn no_counts_still_writes_the_header() {
    let dir = test_dir("empty");
    let exe = build(&dir, "basic", &[]);
    let out = run(&exe, &dir, "p.pprof", &["0"]);
    assert_quiet(&out);
    assert_eq!(read(&dir.join("p.pprof")), RawProfile::new(BUILD, 2));
}

#[test]
fn file_name_patterns() {
    let dir = test_dir("patterns");
    let exe = build(&dir, "basic", &[]);
    let child = command(&exe, &dir, "out-%p-100%%.pprof")
        .arg("2")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(3));
    assert_eq!(read(&dir.join(format!("out-{pid}-100%.pprof"))), work(2));
    // Default name, and verbose mode says where the profile went.
    let out = Command::new(&exe)
        .current_dir(&dir)
        .env_remove("PATHPROF_FILE")
        .env("PATHPROF_VERBOSE", "1")
        .arg("1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("pathprof: wrote default.pprof"), "{err}");
    assert_eq!(read(&dir.join("default.pprof")), work(1));
}

/// Starts eight processes (`exes` in turn) that wait on their stdin, writing
/// to `all.pprof` in `dir`, then closes every stdin at once so all eight exit
/// together; each must succeed without a word.
fn exit_together(exes: &[&Path], dir: &Path) {
    let mut children: Vec<Child> = (0..8)
        .map(|i| {
            command(exes[i % exes.len()], dir, "all.pprof")
                .arg("1000")
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in &mut children {
        drop(c.stdin.take());
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        assert_quiet(&out);
    }
}

#[test]
fn many_processes_exiting_at_once_lose_nothing() {
    let dir = test_dir("eight");
    let exe = build(&dir, "wait_stdin", &[]);
    exit_together(&[&exe], &dir);
    let one = work(1000);
    assert_eq!(read(&dir.join("all.pprof")), sum(&vec![one; 8]));
    assert_eq!(facts(&dir.join("all.pprof")), (8, 0, 0));
}

#[test]
fn a_file_of_another_build_gets_a_section_of_ours() {
    let dir = test_dir("foreign");
    let exe = build(&dir, "basic", &[]);
    let mut foreign = work_of(0x999, 3);
    foreign.processes = 2;
    foreign.objects = vec!["/elsewhere/other-program".into()];
    std::fs::write(dir.join("other.pprof"), foreign.encode()).unwrap();
    let out = run(&exe, &dir, "other.pprof", &["5"]);
    assert_eq!(out.status.code(), Some(3));
    assert_quiet(&out);
    let file = read_file(&dir.join("other.pprof"));
    assert_eq!(file.build_ids(), vec![0x999, BUILD]);
    assert_eq!(
        file.sections[0], foreign,
        "the other build's section is kept"
    );
    assert_eq!(counts(file.sections[1].clone()), work(5));
    assert_eq!(file.sections[1].processes, 1);
    assert_eq!(file.sections[1].objects, vec![real(&exe)]);
    assert_eq!(profiles_in(&dir), vec!["other.pprof"], "no side file");
}

#[test]
fn damage_is_never_overwritten() {
    let dir = test_dir("damaged");
    let exe = build(&dir, "basic", &[]);
    for (name, contents) in [
        ("junk.pprof", b"not a profile at all".to_vec()),
        ("cut.pprof", work(3).encode()[..50].to_vec()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &contents).unwrap();
        let (pid, out) = pid_and_output(command(&exe, &dir, name).arg("5"));
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(
            std::fs::read(&path).unwrap(),
            contents,
            "{name} was changed"
        );
        let stem = name.strip_suffix(".pprof").unwrap();
        let side = format!("{stem}.{pid}.pprof");
        assert_eq!(read(&dir.join(&side)), work(5));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("pathprof: left "), "{err}");
        assert!(err.contains(&side), "{err}");
    }
}

#[test]
fn unwritable_path_warns_and_keeps_the_exit_status() {
    let dir = test_dir("unwritable");
    let exe = build(&dir, "basic", &[]);
    let out = run(&exe, &dir, "no/such/dir/p.pprof", &["1"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"hello from the program\n");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("pathprof: could not write profile no/such/dir/p.pprof"),
        "{err}"
    );
}

/// Starts `exe` with piped standard streams and waits for its first line,
/// which must be `ready`; returns the child, its stdout and that line.
fn spawn_ready(
    exe: &Path,
    dir: &Path,
    profile: &str,
    args: &[&str],
    ready: &str,
) -> (Child, BufReader<std::process::ChildStdout>, String) {
    let mut child = command(exe, dir, profile)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, ready);
    (child, stdout, line)
}

/// Sends SIGUSR1 to `child` and waits until `file` holds a whole profile.
fn signal_and_await_dump(child: &Child, file: &Path) -> RawProfile {
    // Safety: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) }, 0);
    let start = Instant::now();
    loop {
        if let Some(p) = std::fs::read(file)
            .ok()
            .and_then(|b| RawProfile::decode(&b).ok())
        {
            return p;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no dump");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn sigusr1_dumps_while_blocked_and_the_program_goes_on() {
    let dir = test_dir("signal");
    let exe = build(&dir, "signal", &[]);
    let file = dir.join("sig.pprof");
    let (mut child, mut stdout, line) =
        spawn_ready(&exe, &dir, "sig.pprof", &["11", "7", "5"], "ready\n");
    assert!(!file.exists());
    // The program is blocked in read(2) now.
    let partial = signal_and_await_dump(&child, &file);
    assert_eq!(counts(partial), work(11));
    child.stdin.as_mut().unwrap().write_all(b"x").unwrap();
    let out = child.wait_with_output().unwrap();
    let mut rest = line.clone();
    stdout.read_line(&mut rest).unwrap();
    assert!(out.status.success(), "{rest}");
    assert_eq!(rest, "ready\ndone\n", "the interrupted read went on");
    assert_quiet(&out);
    assert_eq!(read(&file), sum(&[work(11), work(7), work(5)]));
    assert_eq!(facts(&file), (1, 0, 0));
}

#[test]
fn sigusr1_storm_during_hot_loop_keeps_counts_exact() {
    let dir = test_dir("storm");
    let exe = build(&dir, "storm", &[]);
    let n = 20_000_000u64;
    let mut child = command(&exe, &dir, "storm.pprof")
        .arg(n.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    let mut signals = 0;
    while child.try_wait().unwrap().is_none() {
        // Safety: signalling our own child (a zombie at worst, never reaped yet).
        unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
        signals += 1;
        std::thread::sleep(Duration::from_micros(500));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_quiet(&out);
    eprintln!("{signals} SIGUSR1 sent during the loop");
    assert!(
        signals > 10,
        "only {signals} signals: the loop was too short"
    );
    assert_eq!(read(&dir.join("storm.pprof")), work(n));
}

#[test]
fn sigusr1_dump_does_not_allocate() {
    let dir = test_dir("nomalloc");
    let exe = build(&dir, "nomalloc", &[]);
    let file = dir.join("n.pprof");
    let (mut child, mut stdout, mut line) =
        spawn_ready(&exe, &dir, "n.pprof", &[], "ready counting\n");
    signal_and_await_dump(&child, &file);
    child.stdin.as_mut().unwrap().write_all(b"x").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_quiet(&out);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "0\n", "allocations during the SIGUSR1 dump");
    assert_eq!(read(&file), work(100));
}

#[test]
fn dev_null_is_fine() {
    let dir = test_dir("devnull");
    let exe = build(&dir, "basic", &[]);
    let out = run(&exe, &dir, "/dev/null", &["3"]);
    assert_eq!(out.status.code(), Some(3));
    assert_quiet(&out);
}

#[test]
fn program_handler_for_sigusr1_is_kept() {
    let dir = test_dir("own_handler");
    let exe = build(&dir, "own_handler", &[]);
    let out = run(&exe, &dir, "h.pprof", &[]);
    assert!(out.status.success());
    assert_eq!(out.stdout, b"handler ran 1 times\n");
    assert_quiet(&out);
    assert_eq!(read(&dir.join("h.pprof")), work(7));
}

#[test]
fn fork_child_and_parent_counts_are_exact() {
    let dir = test_dir("fork");
    let exe = build(&dir, "fork", &[]);
    let out = run(&exe, &dir, "f.pprof", &["10", "3", "6"]);
    assert!(out.status.success());
    assert_quiet(&out);
    assert_eq!(
        read(&dir.join("f.pprof")),
        sum(&[work(10), work(3), work(6)])
    );
    assert_eq!(facts(&dir.join("f.pprof")), (2, 1, 0));
}

#[test]
fn threads_hash_paths_exactly() {
    let dir = test_dir("threads");
    let exe = build(&dir, "threads", &[]);
    let n = 200_000u64;
    let out = run(&exe, &dir, "t.pprof", &[&n.to_string()]);
    assert!(out.status.success());
    assert_quiet(&out);
    let mut expect = vec![0u64; 5000];
    for t in 0..4 {
        for i in 0..n {
            expect[((i * 7 + t) % 5000) as usize] += 1;
        }
    }
    assert_eq!(facts(&dir.join("t.pprof")), (1, 0, 4));
    let p = read(&dir.join("t.pprof"));
    assert_eq!(p.functions.len(), 1);
    let f = &p.functions[0];
    assert_eq!((f.index, &f.slots[..]), (5, &[0][..]));
    let got: Vec<(u64, u64)> = f.paths.clone();
    let want: Vec<(u64, u64)> = expect
        .iter()
        .enumerate()
        .map(|(id, &c)| (id as u64, c))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn big_arrays_dump_counts_on_every_touched_page() {
    let dir = test_dir("bigarray");
    let exe = build(&dir, "bigarray", &[]);
    let out = run(&exe, &dir, "big.pprof", &[]);
    assert!(out.status.success());
    assert_quiet(&out);
    let p = read(&dir.join("big.pprof"));
    assert_eq!(
        p.functions[0].paths,
        vec![(0, 1), (300000, 3), (700001, 1), ((1 << 20) - 1, 1)]
    );
}

#[test]
fn counts_saturate_at_u64_max() {
    let dir = test_dir("saturate");
    let exe = build(&dir, "saturate", &[]);
    for _ in 0..2 {
        let out = run(&exe, &dir, "s.pprof", &[]);
        assert!(out.status.success());
        assert_quiet(&out);
    }
    let p = read(&dir.join("s.pprof"));
    assert_eq!(p.functions[0].slots, vec![u64::MAX, 0, 0]);
    assert_eq!(p.functions[0].paths, vec![(1, u64::MAX)]);
    assert_eq!(p.functions[1].slots, vec![u64::MAX]);
}

/// A path array read page by page: a fork child whose undo takes a path's
/// count below its mark writes the resume, though its counters hold
/// nothing on that page any more.
#[test]
fn counts_taken_back_after_a_fork_on_a_page_read_alone_are_resumes() {
    let dir = test_dir("paged_resume");
    let exe = build(&dir, "paged_resume", &[]);
    let out = run(&exe, &dir, "t.pprof", &[]);
    assert!(out.status.success(), "{out:?}");
    assert_quiet(&out);
    let file = read_file(&dir.join("t.pprof"));
    let section = file.section(BUILD).expect("the module's section");
    assert_eq!(section.functions.len(), 1, "{section:?}");
    let f = &section.functions[0];
    assert_eq!((f.index, f.hash), (0, 0x4444));
    assert_eq!(f.slots, vec![1, 0], "the parent's count, once");
    assert_eq!(f.paths, vec![], "counted and undone before any dump");
    assert_eq!(f.path_resumes, vec![(7000, 1)], "the child's undo");
    assert_eq!(facts(&dir.join("t.pprof")), (2, 1, 0));
}

#[test]
fn uncounts_undo_counts_and_dumps_during_calls_stay_consistent() {
    let dir = test_dir("uncount");
    let exe = build(&dir, "uncount", &[]);
    let out = run(&exe, &dir, "u.pprof", &[]);
    assert!(out.status.success());
    assert_quiet(&out);
    // Counted and undone (id 7, slot 0.1, path 0.3): nothing. In progress at a
    // dump and returned later: slot 0.1, path 0.3 and hash ids 42 and 100,
    // whose undos come after their counts were written: resumes. In progress
    // at exit: id 5, slot 0.1 and path 0.3 once. Counts minus resumes are
    // exactly what the counters ended at.
    let mut extra = RawProfile::new(BUILD, 2);
    extra.functions.push(RawFunction {
        index: 0,
        hash: 0x1111,
        slots: vec![0, 1, 0],
        paths: vec![(3, 1)],
        ..Default::default()
    });
    extra.functions.push(RawFunction {
        index: 5,
        hash: 0x2222,
        slots: vec![0],
        paths: vec![(5, 1)],
        ..Default::default()
    });
    let p = read(&dir.join("u.pprof"));
    assert_eq!(net(&p), sum(&[work(3), work(2), extra]), "{p:?}");
    let resumed = |i: usize| (&p.functions[i].slot_resumes, &p.functions[i].path_resumes);
    assert!(resumed(0).0.iter().any(|&(k, _)| k == 1), "{p:?}");
    assert!(resumed(0).1.iter().any(|&(id, _)| id == 3), "{p:?}");
    assert!(resumed(1).1.iter().any(|&(id, _)| id == 42), "{p:?}");
    let f5 = p.functions.iter().find(|f| f.index == 5).unwrap();
    assert!(f5.paths.iter().all(|&(id, _)| id != 7 && id != 999));
}

/// `p` with every resume subtracted from its counter (zero path counts
/// dropped): what the counters ended at.
fn net(p: &RawProfile) -> RawProfile {
    let mut p = p.clone();
    for f in &mut p.functions {
        for &(k, n) in &f.slot_resumes {
            f.slots[k as usize] -= n;
        }
        for &(id, n) in &f.path_resumes {
            let c = f
                .paths
                .iter_mut()
                .find(|(i, _)| *i == id)
                .expect("a resumed path was counted");
            c.1 -= n;
        }
        f.paths.retain(|&(_, c)| c != 0);
        f.slot_resumes.clear();
        f.path_resumes.clear();
    }
    p
}

#[test]
fn two_builds_in_one_process_write_one_file() {
    let dir = test_dir("two_builds");
    let exe = build(&dir, "two_builds", &[]);
    let out = command(&exe, &dir, "b.pprof")
        .env("PATHPROF_VERBOSE", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    // One write, naming both sections.
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "pathprof: wrote b.pprof (build 00c0ffee00000002: 1 function with new counts; \
             build b0b0000000000001: 2 functions with new counts)"
        ),
        "{err}"
    );
    assert_eq!(profiles_in(&dir), vec!["b.pprof"], "no other file");
    let file = read_file(&dir.join("b.pprof"));
    assert_eq!(file.build_ids(), vec![0x00C0_FFEE_0000_0002, BUILD]);
    let other = &file.sections[0];
    assert_eq!(other.mode, 0);
    assert_eq!(other.functions.len(), 1);
    assert_eq!(other.functions[0].slots, vec![0, 1]);
    assert_eq!(counts(file.sections[1].clone()), work(4));
    // The final write counts the process once in every section.
    for s in &file.sections {
        assert_eq!((s.processes, s.forked, s.threads), (1, 0, 0));
        assert_eq!(s.objects, vec![real(&exe)]);
    }
    // A second run adds to both sections.
    let out = run(&exe, &dir, "b.pprof", &[]);
    assert_quiet(&out);
    let file = read_file(&dir.join("b.pprof"));
    assert_eq!(counts(file.sections[1].clone()), sum(&[work(4), work(4)]));
    assert_eq!(file.sections[0].functions[0].slots, vec![0, 2]);
    assert!(file.sections.iter().all(|s| s.processes == 2));
}

#[test]
fn two_modules_of_one_build_share_a_section() {
    let dir = test_dir("twin_modules");
    let exe = build(&dir, "twin_modules", &[]);
    // What the second module counts per round: slot 0 of function 0 three
    // times, hash path 100 of function 5 twice.
    let twin = RawProfile {
        functions: vec![
            RawFunction {
                index: 0,
                hash: 0x1111,
                slots: vec![3, 0, 0],
                ..Default::default()
            },
            RawFunction {
                index: 5,
                hash: 0x2222,
                slots: vec![0],
                paths: vec![(100, 2)],
                ..Default::default()
            },
        ],
        ..RawProfile::new(BUILD, 2)
    };
    for (args, rounds) in [(&[][..], 1), (&["again"][..], 2)] {
        let _ = std::fs::remove_file(dir.join("t.pprof"));
        let out = run(&exe, &dir, "t.pprof", args);
        assert!(out.status.success());
        assert_quiet(&out);
        let file = read_file(&dir.join("t.pprof"));
        assert_eq!(file.build_ids(), vec![BUILD]);
        let mut want = vec![work(4), twin.clone()];
        if rounds == 2 {
            want.extend([work(4), twin.clone()]);
        }
        assert_eq!(counts(file.sections[0].clone()), sum(&want), "{args:?}");
        let s = &file.sections[0];
        assert_eq!(
            (s.processes, s.forked, s.threads),
            (1, 0, 0),
            "counted once"
        );
        assert_eq!(s.objects, vec![real(&exe)]);
    }
}

#[test]
fn many_processes_of_two_builds_exiting_at_once_lose_nothing() {
    let dir = test_dir("eight_two_builds");
    const OTHER: u64 = 0x0DD0_0000_0000_0002;
    let a = build_as(&dir, "wait_stdin", "a", &[], &[]);
    let b = build_as(
        &dir,
        "wait_stdin",
        "b",
        &["BUILD=0x0DD0000000000002ull"],
        &[],
    );
    exit_together(&[&a, &b], &dir);
    assert_eq!(profiles_in(&dir), vec!["all.pprof"], "no side file");
    let file = read_file(&dir.join("all.pprof"));
    assert_eq!(file.build_ids(), vec![OTHER, BUILD]);
    let four = |build| sum(&vec![work_of(build, 1000); 4]);
    assert_eq!(section(&dir.join("all.pprof"), BUILD), four(BUILD));
    assert_eq!(section(&dir.join("all.pprof"), OTHER), four(OTHER));
    assert!(file.sections.iter().all(|s| s.processes == 4));
    assert_eq!(file.sections[0].objects, vec![real(&b)]);
    assert_eq!(file.sections[1].objects, vec![real(&a)]);
}

/// Builds the instrumented library `liblm.so` (build LIB) and `with_lib`
/// linked with it in `dir`.
const LIB: u64 = 0x1B00_0000_0000_0003;

fn build_with_lib(dir: &Path) -> (PathBuf, PathBuf) {
    let lib = build_as(
        dir,
        "lib_module",
        "liblm.so",
        &["BUILD=0x1B00000000000003ull"],
        &["-shared", "-fPIC"],
    );
    let exe = build_as(
        dir,
        "with_lib",
        "with_lib",
        &[],
        &[
            &format!("-L{}", dir.display()),
            "-llm",
            "-Wl,-rpath,$ORIGIN",
        ],
    );
    (exe, lib)
}

#[test]
fn an_instrumented_executable_and_library_write_one_file() {
    let dir = test_dir("with_lib");
    let (exe, lib) = build_with_lib(&dir);
    let out = run(&exe, &dir, "w.pprof", &["3", "5"]);
    assert!(out.status.success(), "{out:?}");
    assert_quiet(&out);
    assert_eq!(profiles_in(&dir), vec!["w.pprof"], "no side file");
    let file = read_file(&dir.join("w.pprof"));
    assert_eq!(file.build_ids(), vec![LIB, BUILD]);
    assert_eq!(section(&dir.join("w.pprof"), BUILD), work(3));
    assert_eq!(section(&dir.join("w.pprof"), LIB), work_of(LIB, 5));
    for s in &file.sections {
        assert_eq!((s.processes, s.forked, s.threads), (1, 0, 0), "{s:?}");
    }
    // Each section names the object its module was loaded from.
    assert_eq!(file.sections[0].objects, vec![real(&lib)]);
    assert_eq!(file.sections[1].objects, vec![real(&exe)]);

    // Loaded with dlopen and closed again: the library's destructor writes
    // its section (the process counted there), the exit the program's.
    let dl = build_as(&dir, "with_lib", "dl_prog", &["NO_LINKED_LIB"], &[]);
    let lib = lib.to_str().unwrap();
    for _ in 0..2 {
        let out = command(&dl, &dir, "d.pprof")
            .args(["2", "7", "dlopen", lib])
            .env("PATHPROF_VERBOSE", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(lines[0].contains("(build 1b00000000000003: "), "{err}");
        assert!(lines[1].contains("(build b0b0000000000001: "), "{err}");
    }
    let file = read_file(&dir.join("d.pprof"));
    assert_eq!(file.build_ids(), vec![LIB, BUILD]);
    assert_eq!(
        section(&dir.join("d.pprof"), BUILD),
        sum(&[work(2), work(2)])
    );
    assert_eq!(
        section(&dir.join("d.pprof"), LIB),
        sum(&[work_of(LIB, 7), work_of(LIB, 7)])
    );
    for s in &file.sections {
        assert_eq!((s.processes, s.forked, s.threads), (2, 0, 0), "{s:?}");
    }
    assert_eq!(file.sections[0].objects, vec![real(Path::new(lib))]);
    assert_eq!(file.sections[1].objects, vec![real(&dl)]);
}

/// Runs `ends <how> <n> <exe> [more]` in a fresh directory with `PATH` set
/// to it (for the `execvp` family) and returns the exit status and profile.
fn end_by(how: &str, n: u64, more: &[&str]) -> (std::process::ExitStatus, PathBuf, String) {
    let dir = test_dir(&format!("ends-{how}-{}", more.join("-")));
    let exe = build(&dir, "ends", &[]);
    let mut args = vec![how.to_string(), n.to_string(), exe.display().to_string()];
    args.extend(more.iter().map(|s| s.to_string()));
    let out = command(&exe, &dir, "e.pprof")
        .args(&args)
        .env("PATH", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status, dir.join("e.pprof"), err)
}

fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

#[test]
fn every_way_a_process_ends_writes_its_counts_once() {
    for how in ["exit", "return", "_exit", "_Exit"] {
        let (status, file, err) = end_by(how, 9, &[]);
        assert_eq!(status.code(), Some(4), "{how}: {err}");
        assert_eq!(read(&file), work(9), "{how}");
        assert_eq!(facts(&file), (1, 0, 0), "{how}");
    }
    for how in ["abort", "assert"] {
        let (status, file, _) = end_by(how, 9, &[]);
        assert_eq!(signal_of(status), Some(libc::SIGABRT), "{how}");
        assert_eq!(read(&file), work(9), "{how}");
        assert_eq!(facts(&file), (1, 0, 0), "{how}");
    }
    // The program's atexit handler (run before ours) calls _exit: its counts
    // land, through the _exit hook, once.
    let (status, file, err) = end_by("atexit_exit", 9, &[]);
    assert_eq!(status.code(), Some(6), "{err}");
    assert_eq!(read(&file), sum(&[work(9), work(5)]));
    assert_eq!(facts(&file), (1, 0, 0));
}

#[test]
fn fatal_signals_write_then_kill_with_the_same_signal() {
    for sig in [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGPIPE,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGILL,
        libc::SIGSYS,
        libc::SIGXCPU,
        libc::SIGXFSZ,
    ] {
        let (status, file, err) = end_by("raise", 8, &[&sig.to_string()]);
        assert_eq!(signal_of(status), Some(sig), "signal {sig}: {err}");
        assert_eq!(read(&file), work(8), "signal {sig}");
        assert_eq!(facts(&file), (1, 0, 0), "signal {sig}");
    }
    // Real faults: the handler writes, then the faulting instruction runs
    // again with the default action back and the process dies by it.
    for (how, sig) in [("segv", libc::SIGSEGV), ("fpe", libc::SIGFPE)] {
        let (status, file, err) = end_by(how, 8, &[]);
        assert_eq!(signal_of(status), Some(sig), "{how}: {err}");
        assert_eq!(read(&file), work(8), "{how}");
        assert_eq!(facts(&file), (1, 0, 0), "{how}");
    }
    // A dump, more counts, then SIGTERM: each count written once.
    let (status, file, _) = end_by("dump_then_term", 8, &[]);
    assert_eq!(signal_of(status), Some(libc::SIGTERM));
    assert_eq!(read(&file), sum(&[work(8), work(2)]));
    assert_eq!(facts(&file), (1, 0, 0));
    // A handler of the program's own is left alone: it exits normally.
    let (status, file, _) = end_by("own_term", 8, &[]);
    assert_eq!(status.code(), Some(4));
    assert_eq!(read(&file), work(8));
    assert_eq!(facts(&file), (1, 0, 0));

    // From outside, while the program waits in pause().
    let dir = test_dir("ends-sigterm-outside");
    let exe = build(&dir, "ends", &[]);
    let (mut child, _stdout, _) = spawn_ready(&exe, &dir, "w.pprof", &["wait", "12"], "ready\n");
    // Safety: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(signal_of(status), Some(libc::SIGTERM));
    assert_eq!(read(&dir.join("w.pprof")), work(12));
    assert_eq!(facts(&dir.join("w.pprof")), (1, 0, 0));
}

#[test]
fn exec_writes_first_and_a_failed_exec_counts_nothing_twice() {
    for how in [
        "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "fexecve",
    ] {
        let (status, file, err) = end_by(how, 9, &[]);
        // The new image is `ends exit 7`: it exits with 4.
        assert_eq!(status.code(), Some(4), "{how}: {err}");
        assert_eq!(read(&file), sum(&[work(9), work(7)]), "{how}");
        assert_eq!(facts(&file), (2, 0, 0), "{how}: two process images");
    }
    let (status, file, err) = end_by("exec_fail", 9, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert_eq!(read(&file), sum(&[work(9), work(7)]));
    assert_eq!(facts(&file), (1, 0, 0), "one process, counted once");
}

#[test]
fn fork_children_count_as_forked_processes() {
    // The child ends with _exit, as forked children usually do.
    let (status, file, err) = end_by("fork_exit", 9, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert_eq!(read(&file), sum(&[work(9), work(3)]));
    assert_eq!(facts(&file), (2, 1, 0));
    // fork then exec: parent, child (before its exec), the new image.
    let (status, file, err) = end_by("fork_exec", 9, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert_eq!(read(&file), sum(&[work(9), work(7)]));
    assert_eq!(facts(&file), (3, 1, 0));
    // A vfork child shares its parent's memory: it writes nothing itself.
    let (status, file, err) = end_by("vfork_exec", 9, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert_eq!(read(&file), sum(&[work(9), work(7)]));
    assert_eq!(facts(&file), (2, 0, 0));
}

#[test]
fn threads_started_are_counted() {
    let (status, file, err) = end_by("threads", 2, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert_eq!(read(&file), work(2));
    assert_eq!(facts(&file), (1, 0, 3));
}

#[test]
fn periodic_dumps_survive_sigkill() {
    let dir = test_dir("interval");
    let exe = build(&dir, "ends", &[]);
    let file = dir.join("i.pprof");
    let mut child = command(&exe, &dir, "i.pprof")
        .args(["wait", "21"])
        .env("PATHPROF_DUMP_INTERVAL", "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no periodic dump"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let a few more periodic dumps (with nothing new) happen.
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(read(&file), work(21));
    assert_eq!(facts(&file), (0, 0, 0), "a killed process is not counted");
}

#[test]
fn writers_killed_mid_write_lose_nothing_already_on_disk() {
    let dir = test_dir("killed");
    let exe = build(&dir, "killed", &[]);
    let file = dir.join("k.pprof");
    let (rounds, per_round) = (4u64, 30u64);
    let mut landed_at_least = 0u64;
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut ok_ids = Vec::new();
    for round in 0..rounds {
        let mut children: Vec<(u64, Child)> = (0..per_round)
            .map(|i| {
                let id = round * per_round + i;
                let child = command(&exe, &dir, "k.pprof")
                    .arg(id.to_string())
                    .env("PATHPROF_TEST_WRITE_DELAY_US", "3000")
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                (id, child)
            })
            .collect();
        // Kill about a third of them at random moments of the round (the
        // dumps, 2 x 3 ms each under the lock, take ~200 ms in all).
        let start = Instant::now();
        let mut victims: Vec<(Duration, usize)> = Vec::new();
        for k in 0..per_round as usize {
            if rand(3) == 0 {
                victims.push((Duration::from_micros(rand(250_000)), k));
            }
        }
        victims.sort();
        for (at, k) in victims {
            if let Some(wait) = at.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            let _ = children[k].1.kill();
        }
        for (id, c) in children {
            let out = c.wait_with_output().unwrap();
            if out.status.success() {
                assert_quiet(&out);
                ok_ids.push(id);
            } else {
                assert_eq!(signal_of(out.status), Some(libc::SIGKILL));
            }
        }
        landed_at_least = ok_ids.len() as u64;
        // After every round the file decodes and holds exactly the counts of
        // the processes that wrote it: each once, all of them complete.
        let p = read_all(&file);
        let f5 = p.functions.iter().find(|f| f.index == 5).unwrap();
        let landed: Vec<u64> = f5
            .paths
            .iter()
            .filter(|&&(id, _)| id >= 1000)
            .map(|&(id, c)| {
                assert_eq!(c, 1, "process {} counted {c} times", id - 1000);
                id - 1000
            })
            .collect();
        for id in &ok_ids {
            assert!(
                landed.contains(id),
                "process {id} exited but its counts are missing"
            );
        }
        assert!(landed.iter().all(|&id| id < (round + 1) * per_round));
        let n = landed.len() as u64;
        assert_eq!(p.processes, n, "one process per landed write");
        let mut expect = sum(&vec![work(100); n as usize]);
        expect.set_facts(Facts {
            processes: n,
            ..Facts::default()
        });
        let e5 = expect.functions.iter_mut().find(|f| f.index == 5).unwrap();
        e5.paths.extend(landed.iter().map(|id| (1000 + id, 1)));
        expect.objects = vec![real(&exe)];
        assert_eq!(p, expect, "round {round}");
    }
    eprintln!(
        "{landed_at_least} of {} processes exited normally",
        rounds * per_round
    );
    assert!(landed_at_least < rounds * per_round, "nothing was killed");
    // No lock is left held, and the next writer removes the killed writers'
    // temporary files (at random names) beside the profile.
    let out = run(&exe, &dir, "k.pprof", &["99999"]);
    assert!(out.status.success());
    assert_quiet(&out);
    let temps: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(temps.is_empty(), "stale temporary files: {temps:?}");
}

#[test]
fn older_profile_versions_are_left_alone() {
    let dir = test_dir("older");
    let exe = build(&dir, "basic", &[]);
    // A version-1 header (no process facts) with no functions.
    let mut v1 = b"PPROFRAW".to_vec();
    v1.extend_from_slice(&1u32.to_le_bytes());
    v1.extend_from_slice(&2u32.to_le_bytes());
    v1.extend_from_slice(&BUILD.to_le_bytes());
    v1.extend_from_slice(&0u64.to_le_bytes());
    let sum = pathprof_format::fnv1a64(&v1);
    v1.extend_from_slice(&sum.to_le_bytes());
    // A version-3 file (one build, no object paths) of this very build,
    // with one function: what pathprof wrote before files held sections.
    let mut v3 = b"PPROFRAW".to_vec();
    v3.extend_from_slice(&3u32.to_le_bytes());
    v3.extend_from_slice(&2u32.to_le_bytes());
    v3.extend_from_slice(&BUILD.to_le_bytes());
    v3.extend_from_slice(&[0; 24]);
    v3.extend_from_slice(&1u64.to_le_bytes());
    v3.extend_from_slice(&5u32.to_le_bytes());
    v3.extend_from_slice(&0x2222u64.to_le_bytes());
    v3.extend_from_slice(&1u64.to_le_bytes());
    v3.extend_from_slice(&9u64.to_le_bytes());
    v3.extend_from_slice(&[0; 24]);
    let sum = pathprof_format::fnv1a64(&v3);
    v3.extend_from_slice(&sum.to_le_bytes());
    for (version, name, old) in [(1, "old", &v1), (3, "old3", &v3)] {
        let file = format!("{name}.pprof");
        std::fs::write(dir.join(&file), old).unwrap();
        let child = command(&exe, &dir, &file)
            .arg("2")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        assert_eq!(&std::fs::read(dir.join(&file)).unwrap(), old);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "version {version} was written by an older pathprof"
            )),
            "{err}"
        );
        assert!(err.contains(&format!("{name}.{pid}.pprof")), "{err}");
        assert_eq!(read(&dir.join(format!("{name}.{pid}.pprof"))), work(2));
    }
}

// Files and links: what the runtime writes in a directory others can write.

/// A file of precious data outside the profile's directory, and the
/// directory `dir/shared` the profiles go to.
fn victim_and_shared(dir: &Path) -> (PathBuf, PathBuf) {
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious data\n").unwrap();
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    (victim, shared)
}

fn assert_untouched(victim: &Path) {
    assert_eq!(
        std::fs::read(victim).unwrap(),
        b"precious data\n",
        "{} was written",
        victim.display()
    );
}

#[test]
fn links_planted_at_the_runtimes_own_names_are_never_written_through() {
    let dir = test_dir("planted");
    let exe = build(&dir, "basic", &[]);
    let (victim, shared) = victim_and_shared(&dir);
    // The temporary file's old, predictable name.
    std::os::unix::fs::symlink(&victim, shared.join("prof.pprof.tmp")).unwrap();
    let out = run(&exe, &shared, "prof.pprof", &["5"]);
    assert_eq!(out.status.code(), Some(3));
    assert_quiet(&out);
    assert_untouched(&victim);
    assert!(std::fs::symlink_metadata(shared.join("prof.pprof"))
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(read(&shared.join("prof.pprof")), work(5));
    // The side file of this process (the profile holds something else):
    // a link planted at its name before the program starts is refused, and
    // the one line says so.
    std::fs::write(shared.join("junk.pprof"), b"not a profile").unwrap();
    let script = format!(
        "ln -s {} junk.$$.pprof && exec {} 5",
        victim.display(),
        exe.display()
    );
    let (pid, out) = pid_and_output(
        Command::new("sh")
            .args(["-c", &script])
            .current_dir(&shared)
            .env("PATHPROF_FILE", "junk.pprof"),
    );
    assert_eq!(out.status.code(), Some(3));
    assert_untouched(&victim);
    assert_eq!(
        std::fs::read(shared.join("junk.pprof")).unwrap(),
        b"not a profile"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("could not write junk.{pid}.pprof either"))
            && err.contains("symbolic link, which pathprof does not follow there"),
        "{err}"
    );
    let left: Vec<String> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n != "prof.pprof.tmp")
        .collect();
    assert_eq!(left, Vec::<String>::new(), "temporary files left behind");
}

#[test]
fn a_link_to_a_profile_of_ones_own_is_followed() {
    let dir = test_dir("own-link");
    let exe = build(&dir, "basic", &[]);
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::os::unix::fs::symlink("real/p.pprof", dir.join("p.pprof")).unwrap();
    for _ in 0..2 {
        let out = run(&exe, &dir, "p.pprof", &["5"]);
        assert_quiet(&out);
    }
    assert!(std::fs::symlink_metadata(dir.join("p.pprof"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read(&dir.join("real/p.pprof")), sum(&[work(5), work(5)]));
}

/// Whether the tests run as root, who can give files and links to another
/// user (uid 4242, no account needed); the tests that need it say why they
/// are skipped otherwise.
fn may_give_files_away(test: &str) -> bool {
    // Safety: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("{test}: skipped: only root can make files of another user here");
    }
    root
}

const OTHER_USER: u32 = 4242;

fn chown_link(path: &Path, uid: u32) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // Safety: lchown on a NUL-terminated path.
    assert_eq!(
        unsafe { libc::lchown(c.as_ptr(), uid, uid) },
        0,
        "lchown {}",
        path.display()
    );
}

#[test]
fn another_users_link_in_a_sticky_shared_directory_is_not_followed() {
    if !may_give_files_away("another_users_link_in_a_sticky_shared_directory_is_not_followed") {
        return;
    }
    let dir = test_dir("sticky");
    let exe = build(&dir, "basic", &[]);
    let (victim, shared) = victim_and_shared(&dir);
    std::fs::set_permissions(
        &shared,
        std::os::unix::fs::PermissionsExt::from_mode(0o1777),
    )
    .unwrap();
    let link = shared.join("prof.pprof");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    chown_link(&link, OTHER_USER);
    let (pid, out) = pid_and_output(command(&exe, &shared, "prof.pprof").arg("5"));
    assert_eq!(out.status.code(), Some(3));
    assert_untouched(&victim);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    let side = format!("prof.{pid}.pprof");
    assert!(
        err.contains(&format!(
            "symbolic link of user {OTHER_USER} in a world-writable sticky directory"
        )) && err.contains(&format!("wrote this run's counts to prof.{pid}.pprof")),
        "{err}"
    );
    assert_eq!(read(&shared.join(side)), work(5));
    // The same link outside a sticky directory is followed, as the kernel
    // would follow it.
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(&victim, b"").unwrap();
    let out = run(&exe, &shared, "prof.pprof", &["5"]);
    assert_quiet(&out);
    assert_eq!(read(&victim), work(5));
}

#[test]
fn another_users_profile_keeps_its_owner_and_inode() {
    if !may_give_files_away("another_users_profile_keeps_its_owner_and_inode") {
        return;
    }
    use std::os::unix::fs::MetadataExt as _;
    let dir = test_dir("owned");
    let exe = build(&dir, "basic", &[]);
    let profile = dir.join("p.pprof");
    let out = run(&exe, &dir, "p.pprof", &["3"]);
    assert_quiet(&out);
    std::os::unix::fs::chown(&profile, Some(OTHER_USER), Some(OTHER_USER)).unwrap();
    let before = std::fs::metadata(&profile).unwrap();
    let out = run(&exe, &dir, "p.pprof", &["5"]);
    assert_quiet(&out);
    let after = std::fs::metadata(&profile).unwrap();
    assert_eq!(
        (after.ino(), after.uid(), after.gid()),
        (before.ino(), OTHER_USER, OTHER_USER)
    );
    assert_eq!(read(&profile), sum(&[work(3), work(5)]));
}
