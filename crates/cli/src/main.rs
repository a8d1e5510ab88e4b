//! The `pathprof` binary: a thin dispatcher. `cc` and `c++` take raw clang
//! arguments and go to the compiler driver, `cargo` raw cargo arguments, and
//! a link line from rustc under `pathprof cargo` (it carries
//! [`driver::cargo::LINKER_MARKER`]) goes to the driver too; everything else
//! is parsed by clap.
//! Exit codes are decided here: 0 success, 1 failure with a message, and a
//! compiler's own status passed through.

mod cli;
mod commands;
mod driver;
mod p3;
#[cfg(test)]
mod reference;
mod report;
mod toolchain;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1).map(String::as_str) {
        Some("cc") => driver::run(false, &args[2..]),
        Some("c++") => driver::run(true, &args[2..]),
        Some("cargo") => driver::cargo::run(&args[2..]),
        _ if args.iter().any(|a| a == driver::cargo::LINKER_MARKER) => {
            driver::cargo::link(&args[1..])
        }
        _ => commands::run(cli::Cli::parse()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("pathprof: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
