//! End-to-end tests of pathprof-llvm on real clang-22 bitcode: extraction of known
//! shapes, and instrumentation checked by running the program against a fake
//! runtime (`fake_rt.c`) that prints every counter at exit.
//!
//! clang is `$PATHPROF_CLANG`, else `/usr/lib/llvm-22/bin/clang`, else `clang-22`.

mod ball_larus;
mod early_exit;
mod extraction;
mod harness;
mod instrumentation;
mod planners;
mod ppp;
mod stress;
