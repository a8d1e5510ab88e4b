//! Compiles the plugin's C++ half (src/register.cpp) against LLVM 22's headers,
//! found as llvm-sys finds them (`LLVM_SYS_221_PREFIX`, else /usr/lib/llvm-22),
//! with that LLVM's clang++ (a fresh machine may have no other C++ compiler).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=src/register.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_SYS_221_PREFIX");
    let prefix = std::env::var_os("LLVM_SYS_221_PREFIX")
        .map_or_else(|| PathBuf::from("/usr/lib/llvm-22"), PathBuf::from);
    let config = prefix.join("bin/llvm-config");
    let output = Command::new(&config)
        .arg("--cxxflags")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", config.display()));
    let flags = String::from_utf8(output.stdout).expect("llvm-config prints UTF-8");
    let mut build = cc::Build::new();
    build.cpp(true).file("src/register.cpp").warnings(false);
    // LLVM's own clang++ (installed with clang-22) unless CXX chooses.
    let clangxx = prefix.join("bin/clang++");
    if std::env::var_os("CXX").is_none() && clangxx.exists() {
        build.compiler(clangxx);
    }
    for flag in flags.split_whitespace() {
        build.flag(flag);
    }
    // LLVM's own libraries are built without RTTI; the pass must match.
    build.flag("-fno-rtti");
    build.compile("pathprof_plugin_register");
}
