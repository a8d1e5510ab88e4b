//! Running the K copies at once on one input: standard input read once
//! (when it is not a terminal; a terminal gives the copies none) and fed to
//! every copy; copy 0's standard output goes to ours as it comes and into a
//! file, the others' into files, for comparison; copy 0's standard error is
//! ours, the others' go into files (shown when such a copy fails). A copy
//! that cannot be started ends the run: the copies already started are
//! killed and waited for.

use anyhow::{Context as _, Result};
use std::fs::File;
use std::io::{IsTerminal as _, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How one copy ended.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    /// Its standard output, whole.
    pub stdout: PathBuf,
    /// Its standard error (`None` for copy 0, whose went to ours).
    pub stderr: Option<PathBuf>,
}

/// One started copy.
struct Running {
    child: Child,
    threads: Vec<JoinHandle<()>>,
    stdout: PathBuf,
    stderr: Option<PathBuf>,
}

/// Runs `commands` (copy `i`'s at `i`) at once, their outputs kept in
/// `scratch`, and waits for all of them.
pub fn run_all(commands: Vec<Command>, scratch: &Path) -> Result<Vec<Outcome>> {
    let input = read_input()?;
    let mut running: Vec<Running> = Vec::with_capacity(commands.len());
    for (copy, mut cmd) in commands.into_iter().enumerate() {
        match start(copy, &mut cmd, input.clone(), scratch) {
            Ok(r) => running.push(r),
            Err(e) => {
                for mut r in running {
                    let _ = r.child.kill();
                    let _ = r.child.wait();
                }
                return Err(e);
            }
        }
    }
    running
        .into_iter()
        .enumerate()
        .map(|(copy, mut r)| {
            let status = r
                .child
                .wait()
                .with_context(|| format!("waiting for copy {copy}"))?;
            for t in r.threads {
                let _ = t.join();
            }
            Ok(Outcome {
                status,
                stdout: r.stdout,
                stderr: r.stderr,
            })
        })
        .collect()
}

/// Our standard input, whole, unless it is a terminal.
fn read_input() -> Result<Option<Arc<Vec<u8>>>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("reading the standard input the copies are to share")?;
    Ok(Some(Arc::new(bytes)))
}

/// Starts copy `copy`, with threads that feed it `input` and copy its
/// standard output (copy 0's to ours as well).
fn start(
    copy: usize,
    cmd: &mut Command,
    input: Option<Arc<Vec<u8>>>,
    scratch: &Path,
) -> Result<Running> {
    let stdout = scratch.join(format!("stdout.{copy}"));
    let stderr = (copy > 0).then(|| scratch.join(format!("stderr.{copy}")));
    cmd.stdin(match input {
        Some(_) => Stdio::piped(),
        None => Stdio::null(),
    });
    match &stderr {
        None => cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()),
        Some(err) => cmd
            .stdout(File::create(&stdout)?)
            .stderr(File::create(err)?),
    };
    let mut child = cmd.spawn().with_context(|| {
        format!(
            "copy {copy} could not be started ({})",
            super::describe(cmd)
        )
    })?;
    let mut threads = Vec::new();
    if let (Some(bytes), Some(mut pipe)) = (input, child.stdin.take()) {
        // A copy that stops reading early closes the pipe: not an error.
        threads.push(std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        }));
    }
    if let Some(pipe) = child.stdout.take() {
        let file = File::create(&stdout)?;
        threads.push(std::thread::spawn(move || tee(pipe, file)));
    }
    Ok(Running {
        child,
        threads,
        stdout,
        stderr,
    })
}

/// Copies `from` into `file` and to our standard output (as long as that
/// takes it: a closed standard output stops only the echo).
fn tee(mut from: impl Read, mut file: File) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut echo = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if file.write_all(&buf[..n]).is_err() {
            break;
        }
        if echo {
            let mut out = std::io::stdout().lock();
            echo = out.write_all(&buf[..n]).and_then(|_| out.flush()).is_ok();
        }
    }
}
