//! The program `tests/cli/rust.rs` builds with `pathprof cargo`; its counts
//! by hand. Each run: `fib(10)` makes 177 calls, in main and in each of 4
//! threads (885 in all); `largest` is called once for `u32`, once for
//! `f64`; `area` 12 times; `parse` 4 (two fail: "x" and "300"); `risky` 8 (`ROUNDS`, from the build script), twice
//! panicking (3 and 7), each panic caught and seen by the panic hook. Then,
//! by its argument: `exit` (`std::process::exit(3)`), `panic` (main panics:
//! the hook once more, exit status 101), `abort`, or `usr1` (SIGUSR1 to
//! itself, then SIGKILL).

use rustprog::{area, fib, largest, parse, risky, Shape, ROUNDS};
use std::panic;

fn main() {
    panic::set_hook(Box::new(|_| {}));
    let shapes: Vec<Shape> = (0..12)
        .map(|i| match i % 3 {
            0 => Shape::Circle(i),
            1 => Shape::Square(i),
            _ => Shape::Tri(i, 2),
        })
        .collect();
    let total: u32 = shapes.iter().map(area).sum();
    let squares = shapes
        .iter()
        .filter(|s| matches!(s, Shape::Square(_)))
        .count();
    let (mut ok, mut bad) = (0, 0);
    for w in ["1", "x", "300", " 7 "] {
        match parse(w) {
            Ok(v) => ok += v,
            Err(_) => bad += 1,
        }
    }
    let caught = (0..ROUNDS)
        .filter(|&i| panic::catch_unwind(|| risky(i)).is_err())
        .count();
    let threads: Vec<_> = (0..4).map(|_| std::thread::spawn(|| fib(10))).collect();
    let in_threads: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    println!(
        "{} {total} {squares} {ok} {bad} {caught} {} {in_threads} {} {}",
        shapes[0].describe(),
        fib(10),
        largest(&[3u32, 9, 4]),
        largest(&[1.5f64, -2.0]),
    );
    match std::env::args().nth(1).as_deref() {
        Some("exit") => std::process::exit(3),
        Some("panic") => panic!("main panics"),
        Some("abort") => std::process::abort(),
        Some("usr1") => {
            // The shell's own `kill` (no procps needed), one signal at a
            // time: the first is taken (the profile written) before the
            // shell that sent it is reaped.
            for signal in ["USR1", "KILL"] {
                std::process::Command::new("sh")
                    .args(["-c", &format!("kill -{signal} $PPID")])
                    .status()
                    .unwrap();
            }
        }
        _ => {}
    }
}
