//! Running the K copies at once on one input. Standard input that is a
//! regular file or a device (`/dev/null`) is opened again for every copy,
//! at the position ours has, so each reads it itself as `prog < file`
//! does; other input (a pipe) is read once and fed to every copy through a
//! pipe; a terminal gives the copies none. Every copy's standard output and
//! error are regular files of its own, so that copies which ask what their
//! output is (`isatty`, `fstat`: xz writes a pipe otherwise than a file,
//! and shows progress on a terminal) all get one answer and run alike; copy
//! 0's are followed as they grow and shown on ours, the others' kept for
//! comparison (and shown when such a copy fails). A copy that cannot be
//! started ends the run: the copies already started are killed and waited
//! for.

use anyhow::{Context as _, Result};
use std::fs::File;
use std::io::{IsTerminal as _, Read, Seek as _, SeekFrom, Write};
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How one copy ended.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    /// Its standard output, whole.
    pub stdout: PathBuf,
    /// Its standard error (`None` for copy 0, whose was shown on ours).
    pub stderr: Option<PathBuf>,
}

/// One started copy.
struct Running {
    child: Child,
    threads: Vec<JoinHandle<()>>,
    /// Set once the copy has ended: its output files grow no more.
    ended: Arc<AtomicBool>,
    stdout: PathBuf,
    stderr: Option<PathBuf>,
}

impl Running {
    /// Waits for the copy, then for the threads feeding and following it.
    fn finish(mut self) -> std::io::Result<(ExitStatus, Running)> {
        let status = self.child.wait();
        self.ended.store(true, Ordering::Release);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        Ok((status?, self))
    }
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
                    let _ = r.finish();
                }
                return Err(e);
            }
        }
    }
    running
        .into_iter()
        .enumerate()
        .map(|(copy, r)| {
            let (status, r) = r
                .finish()
                .with_context(|| format!("waiting for copy {copy}"))?;
            Ok(Outcome {
                status,
                stdout: r.stdout,
                stderr: r.stderr,
            })
        })
        .collect()
}

/// What the copies read: nothing, a regular file or a device from a
/// position, or the bytes of our standard input.
#[derive(Clone)]
enum Input {
    Nothing,
    File { path: PathBuf, position: u64 },
    Bytes(Arc<Vec<u8>>),
}

/// Our standard input: nothing when it is a terminal, the file and our
/// position in it when it is a regular file or a device, else its bytes,
/// whole.
fn read_input() -> Result<Input> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(Input::Nothing);
    }
    let path = PathBuf::from("/proc/self/fd/0");
    let reopens = File::open(&path).is_ok_and(|f| {
        f.metadata()
            .is_ok_and(|m| m.is_file() || m.file_type().is_char_device())
    });
    if let (true, Some(position)) = (reopens, stdin_position()) {
        return Ok(Input::File { path, position });
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("reading the standard input the copies are to share")?;
    Ok(Input::Bytes(Arc::new(bytes)))
}

/// Where our standard input stands (`pos:` of `/proc/self/fdinfo/0`).
fn stdin_position() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/self/fdinfo/0").ok()?;
    let pos = info.lines().find_map(|l| l.strip_prefix("pos:"))?;
    pos.trim().parse().ok()
}

/// Starts copy `copy` with its standard output and error in files of
/// `scratch`, with a thread that feeds it `input` and, for copy 0, threads
/// that follow its output files onto ours.
fn start(copy: usize, cmd: &mut Command, input: Input, scratch: &Path) -> Result<Running> {
    let stdout = scratch.join(format!("stdout.{copy}"));
    let stderr = scratch.join(format!("stderr.{copy}"));
    cmd.stdin(match &input {
        Input::Nothing => Stdio::null(),
        Input::File { path, position } => {
            let mut file = File::open(path).context("opening standard input again for a copy")?;
            if *position > 0 {
                file.seek(SeekFrom::Start(*position))?;
            }
            Stdio::from(file)
        }
        Input::Bytes(_) => Stdio::piped(),
    });
    cmd.stdout(File::create(&stdout)?)
        .stderr(File::create(&stderr)?);
    let mut child = cmd.spawn().with_context(|| {
        format!(
            "copy {copy} could not be started ({})",
            super::describe(cmd)
        )
    })?;
    let ended = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    if let (Input::Bytes(bytes), Some(mut pipe)) = (input, child.stdin.take()) {
        // A copy that stops reading early closes the pipe: not an error.
        threads.push(std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        }));
    }
    if copy == 0 {
        threads.push(follow_in_thread(&stdout, &ended, std::io::stdout()));
        threads.push(follow_in_thread(&stderr, &ended, std::io::stderr()));
    }
    Ok(Running {
        child,
        threads,
        ended,
        stdout,
        stderr: (copy > 0).then_some(stderr),
    })
}

/// [`follow`] in a thread of its own.
fn follow_in_thread(
    path: &Path,
    ended: &Arc<AtomicBool>,
    echo: impl Write + Send + 'static,
) -> JoinHandle<()> {
    let (path, ended) = (path.to_path_buf(), ended.clone());
    std::thread::spawn(move || follow(&path, &ended, echo))
}

/// How long [`follow`] waits before it looks for more output.
const FOLLOW_PERIOD: Duration = Duration::from_millis(20);

/// Shows on `echo` what a copy writes to the file `path`, as it grows, until
/// the copy has `ended` and all of it is shown (as long as `echo` takes it:
/// a closed standard output stops only the echo).
fn follow(path: &Path, ended: &AtomicBool, mut echo: impl Write) {
    let Ok(mut file) = File::open(path) else {
        return;
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut echoing = true;
    loop {
        // Read after looking: once the copy has ended, one more pass reads
        // everything it wrote.
        let last = ended.load(Ordering::Acquire);
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) if echoing => {
                    echoing = echo.write_all(&buf[..n]).and_then(|_| echo.flush()).is_ok();
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
        if last {
            return;
        }
        std::thread::sleep(FOLLOW_PERIOD);
    }
}
