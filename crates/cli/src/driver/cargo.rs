//! `pathprof cargo`: any cargo command (`build`, `run`, `test`, `install`...)
//! with pathprof as rustc's linker. rustc built on LLVM 22 leaves bitcode in
//! its objects under `-Clinker-plugin-lto`; the link goes through `pathprof
//! cc`'s whole-program route, which links every crate's bitcode into one
//! module, instruments it, optimises it and links it with the runtime.
//!
//! What it adds to the user's own `RUSTFLAGS` (and `RUSTDOCFLAGS`, for
//! doctests), so cargo rebuilds when the mode changes:
//! `-Clinker-plugin-lto`, `-Cno-prepopulate-passes` (rustc's LLVM passes left
//! to the link, after instrumenting, so the counted functions are the
//! source's, as for C), pathprof as the linker (`-Clinker`, gcc flavour),
//! v0 symbol names (generic instances read apart), line tables, and
//! pathprof's flags as link arguments behind [`LINKER_MARKER`].
//!
//! Build scripts and proc-macros run inside the build: they are linked
//! without instrumentation. After cargo, each executable it made or installed
//! gets its map beside it as `<binary>.ppmap` (read from the binary, where
//! the map travels), and `--mode=p3` copies beside it too.

use super::args;
use anyhow::{bail, Context as _, Result};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::SystemTime;

/// The link argument that tells `pathprof` it is rustc's linker under
/// `pathprof cargo` (the rest of the line is clang's, as for `pathprof cc`).
pub const LINKER_MARKER: &str = "--pathprof-cargo-linker";

/// What `pathprof cargo --help` prints.
fn usage() -> String {
    format!(
        "\
pathprof cargo: cargo, building profiled programs.

Usage: pathprof cargo [--FLAG=VALUE...] CARGO-COMMAND [CARGO-ARGS...]
  pathprof cargo --mode=path build --release
  PATHPROF_FILE=run.pprof target/release/mytool args
  pathprof report --map target/release/mytool run.pprof

Every crate of the program (dependencies too, and the generic code of std they
use) is instrumented at the link, as one module; std's own compiled code is
not. Build scripts and proc-macros are not instrumented. Each executable gets
its map beside it (`<binary>.ppmap`); the binary itself serves as the map too.
Your RUSTFLAGS are kept and pathprof's added (rustflags from cargo's config
files are not read when RUSTFLAGS is set, so put yours in RUSTFLAGS).

pathprof's flags, before the cargo command (also from the environment):
{}",
        args::flags_help()
    )
}

/// Runs `pathprof cargo ARGS`.
pub fn run(raw_args: &[String]) -> Result<ExitCode> {
    let (flags, cargo_args) = split_flags(raw_args);
    if cargo_args.is_empty() || flags.iter().any(|f| f == "--help") {
        crate::commands::print(&usage())?;
        return Ok(if cargo_args.is_empty() && flags.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    // Check the flags now, not at the first link.
    args::parse(&flags)?;
    let pathprof = std::env::current_exe().context("cannot find the pathprof executable")?;
    let mut flags = flags;
    flags.extend(flags_from_environment(&flags, |var| {
        std::env::var(var).ok()
    }));
    let ours = rustflags(&pathprof, &flags);
    let started = SystemTime::now();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(&cargo_args)
        .env(
            "CARGO_ENCODED_RUSTFLAGS",
            joined(user_flags("RUSTFLAGS"), &ours),
        )
        .env(
            "CARGO_ENCODED_RUSTDOCFLAGS",
            joined(user_flags("RUSTDOCFLAGS"), &ours),
        )
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTDOCFLAGS")
        .status()
        .with_context(|| format!("cannot run {}", Path::new(&cargo).display()))?;
    let code = super::exit_code(status);
    for dir in output_dirs(&cargo, &cargo_args) {
        place_maps(&dir, started);
    }
    Ok(code)
}

/// pathprof's flags at the front of `args` (`--mode=path`...) and the cargo
/// command line after them.
fn split_flags(args: &[String]) -> (Vec<String>, Vec<String>) {
    let names = args::flag_names(&args::options_command());
    let n = args
        .iter()
        .take_while(|a| *a == "--help" || args::is_pathprof_flag(&names, a))
        .count();
    (args[..n].to_vec(), args[n..].to_vec())
}

/// pathprof's flags that the environment sets (`PATHPROF_MODE=edge` as
/// `--mode=edge`, `PATHPROF_ATOMIC=1` as `--atomic`) and `given` does not:
/// on rustc's command line they make cargo relink when they change.
fn flags_from_environment(given: &[String], var: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args::options_command().get_arguments() {
        let (Some(long), Some(env)) = (arg.get_long(), arg.get_env()) else {
            continue;
        };
        let flag = format!("--{long}");
        if given
            .iter()
            .any(|g| g.split('=').next() == Some(flag.as_str()))
        {
            continue;
        }
        let Some(value) = var(&env.to_string_lossy()) else {
            continue;
        };
        if arg.get_action().takes_values() {
            out.push(format!("{flag}={value}"));
        } else if value == "1" {
            out.push(flag);
        }
    }
    out
}

/// The flags `pathprof cargo` adds to rustc's (and rustdoc's): see the
/// module's documentation.
fn rustflags(pathprof: &Path, flags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = [
        "-Clinker-plugin-lto",
        "-Cno-prepopulate-passes",
        "-Clinker-flavor=gcc",
        "-Csymbol-mangling-version=v0",
        "-Cdebuginfo=line-tables-only",
    ]
    .map(String::from)
    .into();
    out.push(format!("-Clinker={}", pathprof.display()));
    out.push(format!("-Clink-arg={LINKER_MARKER}"));
    out.extend(flags.iter().map(|f| format!("-Clink-arg={}", absolute(f))));
    out
}

/// `flag` with its file or directory made absolute (the flags whose value
/// is a `FILE` or `DIR`: `--interesting`, `--map`, `--dot-dir`): rustc links
/// in a directory of cargo's choosing.
fn absolute(flag: &str) -> String {
    let Some((name, value)) = flag.split_once('=') else {
        return flag.to_string();
    };
    let takes_path = args::options_command().get_arguments().any(|arg| {
        arg.get_long()
            .is_some_and(|long| name == format!("--{long}"))
            && arg
                .get_value_names()
                .is_some_and(|v| v.iter().any(|n| n == "FILE" || n == "DIR"))
    });
    if !takes_path {
        return flag.to_string();
    }
    let path = std::env::current_dir().unwrap_or_default().join(value);
    format!("{name}={}", path.display())
}

/// The user's own flags for rustc (`var` is `RUSTFLAGS`) or rustdoc, from
/// `CARGO_ENCODED_<var>` (separated by 0x1f) or `<var>` (by spaces), as
/// cargo reads them.
fn user_flags(var: &str) -> Vec<String> {
    if let Ok(encoded) = std::env::var(format!("CARGO_ENCODED_{var}")) {
        return encoded
            .split('\x1f')
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect();
    }
    std::env::var(var)
        .map(|v| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// `user`'s flags then `ours`, where a flag the user set already (the
/// symbol names or the debug information) stays the user's.
fn joined(user: Vec<String>, ours: &[String]) -> String {
    let setting = |f: &str| {
        f.split_once('=')
            .map(|(name, _)| name.to_string())
            .unwrap_or_default()
    };
    let user_sets = |name: &str| user.iter().any(|u| setting(u) == name);
    let mut all = user.clone();
    for f in ours {
        let name = setting(f);
        let kept = matches!(name.as_str(), "-Csymbol-mangling-version" | "-Cdebuginfo")
            && user_sets(&name);
        if !kept {
            all.push(f.clone());
        }
    }
    all.join("\x1f")
}

/// Whether this link (under `pathprof cargo`) makes a program that runs
/// inside the build, which is not instrumented: a build script (cargo names
/// its crate `build_script_*`) or a proc-macro (its module declares
/// `__rustc_proc_macro_decls_*`).
pub(super) fn is_build_time_code(module: &pathprof_llvm::Module<'_>) -> bool {
    std::env::var("CARGO_CRATE_NAME").is_ok_and(|n| n.starts_with("build_script_"))
        || module.get_globals().any(|g| {
            g.get_name()
                .to_bytes()
                .starts_with(b"__rustc_proc_macro_decls_")
        })
}

/// Where cargo puts executables for `cargo_args`: the target directory's
/// profile directories (and their `examples/`), and for `install` the
/// installation's `bin/`.
fn output_dirs(cargo: &std::ffi::OsStr, cargo_args: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if cargo_args.first().is_some_and(|c| c == "install") {
        if let Some(root) = install_root(cargo_args) {
            dirs.push(root.join("bin"));
        }
    }
    let Some(target) = target_dir(cargo, cargo_args) else {
        return dirs;
    };
    let subdirs = |dir: &Path| -> Vec<PathBuf> {
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        entries.map(|e| e.path()).filter(|p| p.is_dir()).collect()
    };
    // target/<profile>/, or target/<triple>/<profile>/ when cross-compiling.
    for profile in subdirs(&target) {
        for dir in subdirs(&profile).into_iter().chain([profile]) {
            if dir.join("deps").is_dir() {
                dirs.push(dir.join("examples"));
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The target directory: `--target-dir`, else what `cargo metadata` says
/// (it reads `CARGO_TARGET_DIR` and cargo's configuration).
fn target_dir(cargo: &std::ffi::OsStr, cargo_args: &[String]) -> Option<PathBuf> {
    if let Some(dir) = value_of(cargo_args, "--target-dir") {
        return Some(PathBuf::from(dir));
    }
    let mut metadata = Command::new(cargo);
    metadata.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(manifest) = value_of(cargo_args, "--manifest-path") {
        metadata.args(["--manifest-path", &manifest]);
    }
    let out = metadata.stderr(std::process::Stdio::null()).output().ok()?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    json["target_directory"].as_str().map(PathBuf::from)
}

/// Where `cargo install` installs: `--root`, `CARGO_INSTALL_ROOT`,
/// `CARGO_HOME` or `~/.cargo` (an `install.root` in cargo's configuration
/// is not read).
fn install_root(cargo_args: &[String]) -> Option<PathBuf> {
    value_of(cargo_args, "--root")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("CARGO_INSTALL_ROOT").map(PathBuf::from))
        .or_else(|| std::env::var_os("CARGO_HOME").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
}

/// The value of cargo's `--name VALUE` or `--name=VALUE` in `args` (before
/// a `--`).
fn value_of(args: &[String], name: &str) -> Option<String> {
    let args = &args[..args.iter().position(|a| a == "--").unwrap_or(args.len())];
    args.iter().enumerate().find_map(|(i, a)| {
        if a == name {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(name)?.strip_prefix('=').map(String::from)
        }
    })
}

/// Writes `<binary>.ppmap` beside each executable in `dir` written since
/// `since` that carries a map, and places its P3 copies beside it (from the
/// `deps/` file it is a hard link of).
fn place_maps(dir: &Path, since: SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        let new = meta.modified().is_ok_and(|m| m >= since);
        let executable = meta.is_file() && meta.mode() & 0o111 != 0;
        if !new || !executable || path.extension().is_some() {
            continue;
        }
        if let Err(e) = place_map(&path, &meta) {
            eprintln!("pathprof: warning: {e:#}");
        }
    }
}

/// Writes `binary`'s map beside it, and its P3 copies.
fn place_map(binary: &Path, meta: &std::fs::Metadata) -> Result<()> {
    let Some(fragments) = super::linked_map(binary)? else {
        return Ok(());
    };
    let map = super::default_map_path(binary);
    pathprof_io::map::write_fragments(&map, &fragments)
        .with_context(|| format!("cannot write the map file {}", map.display()))?;
    if let Some(linked) = deps_original(binary, meta) {
        place_copies(&linked, binary)?;
    }
    Ok(())
}

/// The file in `deps/` that `binary` (cargo's uplifted copy, a hard link)
/// is, if any.
fn deps_original(binary: &Path, meta: &std::fs::Metadata) -> Option<PathBuf> {
    let deps = binary.parent()?.join("deps");
    let entries = std::fs::read_dir(deps).ok()?;
    entries.flatten().map(|e| e.path()).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.ino() == meta.ino() && m.dev() == meta.dev())
    })
}

/// Copies `original`'s P3 copies (`original.p3.<i>`) to `binary.p3.<i>`.
fn place_copies(original: &Path, binary: &Path) -> Result<()> {
    for i in 0.. {
        let copy = super::copy_name(original, i);
        if !copy.exists() {
            break;
        }
        let to = super::copy_name(binary, i);
        let _ = std::fs::remove_file(&to);
        std::fs::hard_link(&copy, &to)
            .or_else(|_| std::fs::copy(&copy, &to).map(|_| ()))
            .with_context(|| format!("cannot place {}", to.display()))?;
    }
    Ok(())
}

/// Runs rustc's link line `raw_args` (with [`LINKER_MARKER`]) as `pathprof
/// cc` does.
pub fn link(raw_args: &[String]) -> Result<ExitCode> {
    let args: Vec<String> = raw_args
        .iter()
        .filter(|a| *a != LINKER_MARKER)
        .cloned()
        .collect();
    if !args.iter().any(|a| a == "-o") {
        bail!("pathprof was called as rustc's linker without an output (-o)");
    }
    super::run_linker_for_cargo(&args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn pathprof_flags_come_before_the_cargo_command() {
        let (flags, cargo) = split_flags(&strings(&[
            "--mode=edge",
            "--early-exit",
            "build",
            "--release",
            "--mode=x",
        ]));
        assert_eq!(flags, ["--mode=edge", "--early-exit"]);
        assert_eq!(cargo, ["build", "--release", "--mode=x"]);
    }

    #[test]
    fn flags_from_the_environment_reach_rustc_unless_given() {
        let env = |var: &str| match var {
            "PATHPROF_MODE" => Some("edge".to_string()),
            "PATHPROF_ATOMIC" => Some("1".to_string()),
            "PATHPROF_EARLY_EXIT" => Some("0".to_string()),
            "PATHPROF_MAX_PATHS" => Some("64".to_string()),
            _ => None,
        };
        let flags = flags_from_environment(&strings(&["--mode=path"]), env);
        assert_eq!(flags, ["--max-paths=64", "--atomic"]);
    }

    #[test]
    fn the_users_flags_stay_and_win_where_both_set_one() {
        let ours = rustflags(
            Path::new("/bin/pathprof"),
            &strings(&["--mode=edge", "--interesting=/abs/list", "--dot-dir=dags"]),
        );
        let all = joined(strings(&["-Ctarget-cpu=native", "-Cdebuginfo=2"]), &ours);
        let all: Vec<&str> = all.split('\x1f').collect();
        assert_eq!(&all[..2], ["-Ctarget-cpu=native", "-Cdebuginfo=2"]);
        assert!(!all.contains(&"-Cdebuginfo=line-tables-only"));
        for f in [
            "-Clinker-plugin-lto",
            "-Clinker=/bin/pathprof",
            "-Clink-arg=--pathprof-cargo-linker",
            "-Clink-arg=--mode=edge",
            "-Csymbol-mangling-version=v0",
            "-Clink-arg=--interesting=/abs/list",
        ] {
            assert!(all.contains(&f), "{f} in {all:?}");
        }
        let dags = std::env::current_dir().unwrap().join("dags");
        let dags = format!("-Clink-arg=--dot-dir={}", dags.display());
        assert!(all.contains(&dags.as_str()), "{dags} in {all:?}");
    }

    #[test]
    fn cargo_options_are_read_in_both_spellings_before_a_double_dash() {
        let args = strings(&[
            "install",
            "--root=/r",
            "--target-dir",
            "t",
            "--",
            "--root",
            "x",
        ]);
        assert_eq!(value_of(&args, "--root").as_deref(), Some("/r"));
        assert_eq!(value_of(&args, "--target-dir").as_deref(), Some("t"));
        assert_eq!(value_of(&args, "--manifest-path"), None);
        let after = strings(&["run", "--", "--target-dir", "t"]);
        assert_eq!(value_of(&after, "--target-dir"), None);
    }
}
