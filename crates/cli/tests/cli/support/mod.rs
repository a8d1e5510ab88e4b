//! What the tests share, by job:
//!
//! - [`command`]: running `pathprof` subcommands (and any command that must
//!   succeed), with the messages they fail with;
//! - [`build`]: the compilers, the data directories, building the end-to-end
//!   programs and the report fixtures, what a built library exports;
//! - [`run`]: running built programs, with a time limit or into a profile;
//! - [`report`]: reading the JSON report (the contract's types, or untyped)
//!   and other reports' text;
//! - [`checks`]: the invariants every report must satisfy and the end-to-end
//!   tests' `expect_*` machinery.

pub mod build;
pub mod checks;
pub mod command;
pub mod report;
pub mod run;
