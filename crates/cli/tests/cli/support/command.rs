//! Running `pathprof` subcommands, and any command that must succeed: one
//! helper for each way the tests call them, and the messages they fail with.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

/// The `pathprof` binary under test.
pub const PATHPROF: &str = env!("CARGO_BIN_EXE_pathprof");

/// `cmd` on one line, with the environment it adds (for messages).
pub fn describe(cmd: &Command) -> String {
    let mut s = String::new();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            s += &format!("{}={} ", k.to_string_lossy(), v.to_string_lossy());
        }
    }
    s += &cmd.get_program().to_string_lossy();
    for a in cmd.get_args() {
        s.push(' ');
        s += &a.to_string_lossy();
    }
    s
}

/// What `what` did when it failed: its status and output.
pub fn failure(what: &str, out: &Output) -> String {
    format!(
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd` (no input), which must succeed; what it did. Panics with the
/// command, where it ran and its output otherwise.
pub fn succeed(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", describe(cmd)));
    if !out.status.success() {
        let at = cmd
            .get_current_dir()
            .map(|d| format!(" in {}", d.display()))
            .unwrap_or_default();
        panic!("{}", failure(&format!("{}{at}", describe(cmd)), &out));
    }
    out
}

/// What `cmd` prints on stdout; it must succeed.
pub fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    succeed(cmd).stdout
}

/// Runs `cmd` in `dir` with `env` added, which must succeed; its stdout.
pub fn ok_in(dir: &Path, cmd: &mut Command, env: &[(&str, &str)]) -> String {
    let out = stdout_of(cmd.current_dir(dir).envs(env.iter().copied()));
    String::from_utf8_lossy(&out).into_owned()
}

/// The stdout of a `pathprof` that must have succeeded.
pub fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", failure("pathprof", &out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `pathprof ARGS` in `dir`, with `vars` in its environment; what it did,
/// whatever its status.
pub fn pathprof_env(dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(PATHPROF)
        .current_dir(dir)
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap()
}

/// `pathprof ARGS` in `dir` (relative names in `args` are under it); what it
/// did, whatever its status.
pub fn pathprof(dir: &Path, args: &[&str]) -> Output {
    pathprof_env(dir, &[], args)
}

/// Runs `pathprof ARGS` where the test runs and returns its output, whatever
/// the status.
pub fn pathprof_output<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(PATHPROF)
        .args(args)
        .output()
        .expect("run pathprof")
}

/// Runs `pathprof ARGS`, which must succeed, and returns its standard output.
pub fn pathprof_ok<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let out = pathprof_output(&args);
    assert!(
        out.status.success(),
        "{}",
        failure(&format!("pathprof {args:?}"), &out)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// `pathprof ARGS`: its stdout and stderr as text, and whether it succeeded.
pub fn pathprof_text(args: &[&str]) -> (String, String, bool) {
    let out = pathprof_output(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// `cargo`, or `pathprof cargo FLAGS` when `flags` is given (running the
/// same cargo), with none of the caller's rustc flags or target directory in
/// its environment: the build's flags are cargo's and pathprof's alone.
pub fn cargo_command(flags: Option<&[&str]>) -> Command {
    let mut cmd = match flags {
        Some(flags) => {
            let mut c = Command::new(PATHPROF);
            c.arg("cargo").args(flags);
            c
        }
        None => Command::new(env!("CARGO")),
    };
    cmd.env("CARGO", env!("CARGO"));
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Whether `tool` runs (`tool VERSION_FLAG` succeeds).
pub fn have(tool: &str, version_flag: &str) -> bool {
    Command::new(tool)
        .arg(version_flag)
        .output()
        .is_ok_and(|o| o.status.success())
}
