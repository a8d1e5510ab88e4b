//! Running built programs: with a time limit and their output captured (the
//! end-to-end tests), with their counts going to a given profile, or with
//! a given standard input.

use super::command::describe;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one run of a test program may take before it is killed.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// What a process did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// `None` when killed by a signal.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {:?}\n--- stdout\n{}--- stderr\n{}---",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `exe` (with no input, in its own directory) writing counts to `profile`;
/// `None` runs without `PATHPROF_FILE`.
pub fn run(exe: &Path, profile: Option<&Path>) -> Run {
    let mut cmd = Command::new(exe);
    cmd.current_dir(exe.parent().unwrap())
        .env_remove("PATHPROF_FILE");
    if let Some(profile) = profile {
        cmd.env("PATHPROF_FILE", profile);
    }
    execute(&mut cmd, Some(RUN_TIMEOUT))
}

/// Runs `cmd` with no input, capturing its output, killing it after `timeout`.
pub fn execute(cmd: &mut Command, timeout: Option<Duration>) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", describe(cmd)));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break status;
        }
        if timeout.is_some_and(|t| start.elapsed() > t) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not finish in {:?}", describe(cmd), timeout.unwrap());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        status: status.code(),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// A command running `exe` with its counts going to `profile` (to add
/// arguments, a directory or more environment to).
pub fn profiled(exe: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(exe);
    cmd.env("PATHPROF_FILE", profile);
    cmd
}

/// Runs an instrumented program with no arguments, its counts going to
/// `profile`; what it did, whatever its status.
pub fn run_profiled(exe: &Path, profile: &Path) -> Output {
    profiled(exe, profile).output().unwrap()
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(&status)
}

/// Runs `cmd` with `input` on its standard input, capturing its output.
pub fn with_input(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", describe(cmd)));
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    // A program that stops reading early closes the pipe: not an error.
    let writer = std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut stdin, &data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}
