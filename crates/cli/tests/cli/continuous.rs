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
    let src = source("killed.c");
    for mode in ["block", "edge", "path"] {
        let exe = dir.path().join(format!("killed-{mode}"));
        cc(
            dir.path(),
            mode,
            &["-O1", src.to_str().unwrap(), "-lpthread"],
            &exe,
        );
        for (round, (threads, fork)) in [(0, false), (3, false), (2, true)].into_iter().enumerate()
        {
            let profile = format!("{mode}-{round}.pprof");
            let said = kill_sixteen(&exe, dir.path(), &profile, threads, fork, round as u64 + 7);
            let counted = steps(dir.path(), &profile, &exe);
            let counting = 16 * u64::from(threads + 1) * if fork { 2 } else { 1 };
            let ctx = format!("{mode}, {threads} threads, fork {fork}");
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
    let exe = dir.path().join("killed");
    cc(
        dir.path(),
        "edge",
        &["-O1", source("killed.c").to_str().unwrap(), "-lpthread"],
        &exe,
    );
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
