//! Continuous mode (`PATHPROF_CONTINUOUS=1`): counters in live files that
//! survive SIGKILL. Programs that count known steps, saying each finished
//! one on a pipe, are killed at random moments, 16 at a time, in every mode,
//! with threads and with fork children killed too: the profile the next
//! report merges holds exactly the steps the processes said they finished,
//! up to the one in progress per counting thread, none counted twice, and
//! `pathprof info` says how many processes were killed. A shell `timeout -s
//! KILL` runner gets its test's coverage.

use crate::support::build::cc;
use crate::support::command::{ok, PATHPROF};
use crate::support::report::json_report_in;
use pathprof_core::layout::Layout;
use pathprof_core::map::MapFile;
use serde_json::Value;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/continuous")
        .join(name)
}

/// Builds `killed.c` into `dir/name` with `pathprof cc --mode=MODE` and
/// `flags`: the executable and its map file.
fn build_killed(dir: &Path, name: &str, mode: &str, flags: &[&str]) -> (PathBuf, PathBuf) {
    let exe = dir.join(name);
    let src = source("killed.c");
    let mut args = vec!["-O1", src.to_str().unwrap(), "-lpthread"];
    args.extend_from_slice(flags);
    let map = cc(dir, mode, &args, &exe);
    (exe, map)
}

/// `step`'s entry count in `profile` (the report merges the live files).
fn steps(dir: &Path, profile: &str, exe: &Path) -> u64 {
    let r = json_report_in(dir, profile, &[exe]);
    r["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["name"] == "step")
        .map(|f| f["entry_count"].as_u64().unwrap())
        .sum()
}

/// `pathprof info --format json PROFILE`'s first section's totals.
fn info(dir: &Path, profile: &str) -> Value {
    let out = Command::new(PATHPROF)
        .current_dir(dir)
        .args(["info", "--format", "json", profile])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&ok(out)).unwrap();
    v["files"][0]["programs"][0].clone()
}

/// Live files left in `dir`.
fn live_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".live"))
        .count()
}

/// Runs 16 copies of `exe THREADS FORK` at once, each killed (its process
/// group, so a fork child too) after a pseudo-random 20 to 180 ms: the steps
/// they said they finished.
fn kill_sixteen(exe: &Path, dir: &Path, profile: &str, threads: u32, fork: bool, seed: u64) -> u64 {
    let mut rng = seed;
    let mut next = || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        rng >> 33
    };
    let runs: Vec<_> = (0..16)
        .map(|_| {
            let mut child = Command::new(exe)
                .current_dir(dir)
                .args([threads.to_string(), u32::from(fork).to_string()])
                .env("PATHPROF_FILE", profile)
                .env("PATHPROF_CONTINUOUS", "1")
                .stdout(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let mut out = child.stdout.take().unwrap();
            let reader = std::thread::spawn(move || {
                let mut n = 0u64;
                let mut buf = [0u8; 65536];
                while let Ok(k) = out.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    n += k as u64;
                }
                n
            });
            (child, reader, 20 + next() % 160)
        })
        .collect();
    let mut done = 0;
    for (mut child, reader, ms) in runs {
        std::thread::sleep(Duration::from_millis(ms / 4));
        let st = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status()
            .unwrap();
        assert!(st.success());
        child.wait().unwrap();
        done += reader.join().unwrap();
    }
    done
}

#[test]
fn killed_processes_lose_nothing_in_every_mode_with_threads_and_fork_children() {
    let dir = tempfile::tempdir().unwrap();
    // `path-hash`: `step`'s 1024 paths count in a hash table, which grows
    // in the live file while the program runs.
    let builds: [(&str, &str, &[&str]); 4] = [
        ("block", "block", &[]),
        ("edge", "edge", &[]),
        ("path", "path", &[]),
        ("path-hash", "path", &["--array-limit=64"]),
    ];
    for (name, mode, flags) in builds {
        let (exe, map) = build_killed(dir.path(), &format!("killed-{name}"), mode, flags);
        let map = MapFile::from_bytes(&std::fs::read(&map).unwrap(), "map").unwrap();
        let hashed = map
            .functions
            .iter()
            .any(|f| f.name == "step" && matches!(f.layout, Layout::Path { hashed: true, .. }));
        assert_eq!(hashed, !flags.is_empty(), "{name}: hash tables where asked");
        for (round, (threads, fork)) in [(0, false), (3, false), (2, true)].into_iter().enumerate()
        {
            let profile = format!("{name}-{round}.pprof");
            let said = kill_sixteen(&exe, dir.path(), &profile, threads, fork, round as u64 + 7);
            let counted = steps(dir.path(), &profile, &exe);
            let counting = 16 * u64::from(threads + 1) * if fork { 2 } else { 1 };
            let ctx = format!("{name}, {threads} threads, fork {fork}");
            assert!(said > 0, "{ctx}: the programs ran");
            assert!(
                (said..=said + counting).contains(&counted),
                "{ctx}: {counted} steps counted, {said} said done, at most {counting} in progress"
            );
            assert_eq!(
                live_files(dir.path()),
                0,
                "{ctx}: every live file merged and removed"
            );
            let totals = info(dir.path(), &profile);
            let killed = totals["killed"].as_u64().unwrap();
            // A fork child killed before its live file was set up counted nothing.
            assert!(
                (16..=if fork { 32 } else { 16 }).contains(&killed),
                "{ctx}: {killed} killed processes"
            );
            assert_eq!(totals["processes"], totals["killed"], "{ctx}");
            // Read again: nothing is merged twice.
            assert_eq!(
                steps(dir.path(), &profile, &exe),
                counted,
                "{ctx}: merged once"
            );
        }
    }
}

#[test]
fn a_runner_that_kills_a_test_on_a_timeout_gets_its_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let (exe, _) = build_killed(dir.path(), "killed", "edge", &[]);
    let script =
        "for t in 1 2 3; do timeout -s KILL 0.2 ./killed 1 0 > out.$t; done; cat out.* | wc -c";
    let out = Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", script])
        .env("PATHPROF_FILE", "suite.pprof")
        .env("PATHPROF_CONTINUOUS", "1")
        .output()
        .unwrap();
    let said: u64 = ok(out).trim().parse().unwrap();
    let counted = steps(dir.path(), "suite.pprof", &exe);
    assert!(said > 0);
    assert!(
        (said..=said + 6).contains(&counted),
        "{counted} counted, {said} said done"
    );
    assert_eq!(info(dir.path(), "suite.pprof")["killed"], 3);
}

/// Runs `./killed 0 0` in `dir` under `timeout -s KILL 0.2`, with
/// `PATHPROF_CONTINUOUS` as `continuous` says (`None`: unset): the steps it
/// said it finished.
fn killed_once(dir: &Path, profile: &str, continuous: Option<&str>) -> u64 {
    let mut sh = Command::new("sh");
    sh.current_dir(dir)
        .args(["-c", "timeout -s KILL 0.2 ./killed 0 0 | wc -c"])
        .env("PATHPROF_FILE", profile)
        .env_remove("PATHPROF_CONTINUOUS");
    if let Some(value) = continuous {
        sh.env("PATHPROF_CONTINUOUS", value);
    }
    ok(sh.output().unwrap()).trim().parse().unwrap()
}

#[test]
fn a_build_with_continuous_runs_continuous_unless_the_environment_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let (exe, _) = build_killed(dir.path(), "killed", "edge", &["--continuous"]);
    for (profile, continuous) in [("default.pprof", None), ("empty.pprof", Some(""))] {
        let said = killed_once(dir.path(), profile, continuous);
        let counted = steps(dir.path(), profile, &exe);
        assert!(said > 0);
        assert!(
            (said..=said + 1).contains(&counted),
            "{profile}: {counted} counted, {said} said done"
        );
        assert_eq!(info(dir.path(), profile)["killed"], 1, "{profile}");
    }
    // The environment wins: `0` is the default build's behaviour, a killed
    // process leaves nothing.
    assert!(killed_once(dir.path(), "off.pprof", Some("0")) > 0);
    assert!(!dir.path().join("off.pprof").exists());
    assert_eq!(live_files(dir.path()), 0);
}

#[test]
fn info_says_how_killed_processes_ended_where_known() {
    let dir = tempfile::tempdir().unwrap();
    build_killed(dir.path(), "killed", "edge", &[]);
    // One killed while running; one sent SIGTERM, whose final write the
    // test delay stretches past timeout's SIGKILL; one whose pipe closes
    // (SIGPIPE ignored: the failed write makes it `_exit`), killed in its
    // final write at exit.
    let script = "timeout -s KILL 0.2 ./killed 0 0 > /dev/null; \
                  timeout -s TERM -k 0.3 0.2 ./killed 0 0 > /dev/null; \
                  trap '' PIPE; timeout -s KILL 0.5 ./killed 0 0 | head -c 1000 > /dev/null; \
                  true";
    let out = Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", script])
        .env("PATHPROF_FILE", "suite.pprof")
        .env("PATHPROF_CONTINUOUS", "1")
        .env("PATHPROF_TEST_WRITE_DELAY_US", "3000000")
        .output()
        .unwrap();
    ok(out);
    let totals = info(dir.path(), "suite.pprof");
    assert_eq!(totals["killed"], 3, "{totals}");
    assert_eq!(totals["killed_at_exit"], 1, "{totals}");
    assert_eq!(totals["killed_in_signal"], 1, "{totals}");
    assert_eq!(totals["killed_signals"], serde_json::json!(["SIGTERM"]));
    let text = Command::new(PATHPROF)
        .current_dir(dir.path())
        .args(["info", "suite.pprof"])
        .output()
        .unwrap();
    let text = ok(text);
    let want = "3 processes, merged from live files: 1 while running (SIGKILL, the OOM killer, \
                or a fault no handler sees); 1 while writing at exit; 1 while writing for a \
                fatal signal (SIGTERM)";
    assert!(text.contains(want), "{text}");
}
