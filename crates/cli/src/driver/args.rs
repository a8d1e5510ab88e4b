//! Reading a clang command line: pathprof's own flags out, the rest classified
//! (inputs, output, what the invocation does) without changing it.

use crate::cli::{parse_path, parse_switch, InstrumentOptions};
use clap::error::{ContextKind, ContextValue};
use clap::parser::ValueSource;
use clap::{ArgAction, Args, FromArgMatches as _};
use std::path::{Path, PathBuf};

/// pathprof's own options for `pathprof cc`: `pathprof instrument`'s
/// ([`InstrumentOptions`], one definition for both) plus `--whole-program`,
/// given as `--mode=path`-style flags anywhere among the clang arguments, or
/// through the environment (`PATHPROF_MODE`, ...) for build systems that only
/// let you set `CC`.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct Options {
    #[command(flatten)]
    pub instrument: InstrumentOptions,
    /// Compile to bitcode and instrument the linked program as one module.
    #[arg(long, env = "PATHPROF_WHOLE_PROGRAM", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub whole_program: bool,
    /// Build optimised with a profile's counts instead of instrumenting:
    /// FILE is a profile an instrumented build wrote (.pprof) or an indexed
    /// profile (`pathprof index`, .ppdata). No probes, no runtime.
    #[arg(long, value_name = "FILE", env = "PATHPROF_PROFILE_USE", value_parser = parse_path)]
    pub profile_use: Option<PathBuf>,
    /// With --profile-use=PROFILE.pprof: the instrumented program, library
    /// or .ppmap that reads it (repeatable, or a colon-separated list;
    /// default: the programs and libraries the profile names).
    #[arg(long, value_name = "FILE", env = "PATHPROF_PROFILE_MAP", value_delimiter = ':',
          action = ArgAction::Append, value_parser = parse_path)]
    pub profile_map: Vec<PathBuf>,
    /// With --profile-use and a path-mode profile: copy the tails of hot
    /// paths where their branches correlate, so that each copy's branches
    /// get the weights of the paths through it (at most 5% more
    /// instructions).
    #[arg(long, env = "PATHPROF_DUPLICATE_HOT_PATHS", action = ArgAction::SetTrue,
          default_missing_value = "1", value_parser = parse_switch)]
    pub duplicate_hot_paths: bool,
    /// Whether `--mode` (or `PATHPROF_MODE`) was given, not defaulted (set by
    /// [`parse`]).
    #[arg(skip)]
    pub mode_given: bool,
    /// Whether this is rustc's link under `pathprof cargo` (set by
    /// [`super::cargo::link`]): build scripts and proc-macros link
    /// uninstrumented.
    #[arg(skip)]
    pub cargo_link: bool,
}

impl Options {
    /// Whether the build goes the whole-program route: `--whole-program`,
    /// or `--mode=p3`, which needs the whole program's call graph.
    pub fn whole_program_route(&self) -> bool {
        self.whole_program || self.instrument.mode.p3()
    }
}

/// `options.mode`, `options.atomic`...: the shared flags read as the driver's
/// own.
impl std::ops::Deref for Options {
    type Target = InstrumentOptions;
    fn deref(&self) -> &InstrumentOptions {
        &self.instrument
    }
}

/// The command that parses [`Options`]: pathprof's flags only, whose values
/// follow `=` (`--mode=edge`: clang's arguments after a flag are never taken
/// for its value), the last of a flag given twice winning, as in clang.
pub fn options_command() -> clap::Command {
    let cmd = clap::Command::new("pathprof cc")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args_override_self(true);
    Options::augment_args(cmd).mut_args(|arg| {
        if arg.get_action().takes_values() {
            arg.require_equals(true)
        } else {
            arg
        }
    })
}

/// The long names of pathprof's flags (`--mode`, ...), aliases included, as
/// [`options_command`] defines them.
pub(super) fn flag_names(cmd: &clap::Command) -> Vec<String> {
    cmd.get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
        })
        .map(|l| format!("--{l}"))
        .collect()
}

/// The name part of `--name=value` (all of `--name`).
fn flag_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

/// Whether `arg` is one of pathprof's flags: `--name` or `--name=value` for
/// one of `names`.
pub(super) fn is_pathprof_flag(names: &[String], arg: &str) -> bool {
    names.iter().any(|n| n == flag_name(arg))
}

/// pathprof's options from its flags (`flags`, in order, all pathprof's) and
/// the environment.
fn parse_options(flags: &[String]) -> Result<Options, ArgError> {
    let cmd = options_command();
    let matches = cmd
        .clone()
        .try_get_matches_from(flags)
        .map_err(|e| clap_error(&e, &cmd, flags))?;
    let mut options =
        Options::from_arg_matches(&matches).map_err(|e| clap_error(&e, &cmd, flags))?;
    options.mode_given = matches!(
        matches.value_source("mode"),
        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
    );
    options.instrument.p3_copies().map_err(ArgError)?;
    Ok(options)
}

/// clap's error as one line, naming the environment variable when the value
/// came from there.
fn clap_error(e: &clap::Error, cmd: &clap::Command, flags: &[String]) -> ArgError {
    let rendered = e.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    let mut message = line.strip_prefix("error: ").unwrap_or(line).to_string();
    if let Some(ContextValue::String(invalid)) = e.get(ContextKind::InvalidArg) {
        // `--mode=<block|edge|path>`: the flag's name ends at `=` or a space.
        let name = invalid.split(['=', ' ']).next().unwrap_or_default();
        let given = flags.iter().any(|f| flag_name(f) == name);
        let var = cmd
            .get_arguments()
            .find(|a| a.get_long().is_some_and(|l| name == format!("--{l}")))
            .and_then(|a| a.get_env());
        if let (false, Some(var)) = (given, var) {
            message.push_str(&format!(" (from {})", var.to_string_lossy()));
        }
    }
    ArgError(message)
}

/// The flag lines of `pathprof cc --help`, from [`options_command`]: each
/// flag as it is written there, its help, its environment variable and its
/// default.
pub fn flags_help() -> String {
    const COLUMN: usize = 26;
    const WIDTH: usize = 80;
    let mut out = String::new();
    for arg in options_command().get_arguments() {
        let Some(long) = arg.get_long() else {
            continue;
        };
        let takes_value = arg.get_action().takes_values();
        let mut form = format!("  --{long}");
        if takes_value {
            let names = arg.get_value_names().unwrap_or_default();
            form.push('=');
            form.push_str(names.first().map_or("VALUE", |n| n.as_str()));
        }
        let mut notes = Vec::new();
        if let Some(var) = arg.get_env() {
            let var = var.to_string_lossy();
            notes.push(if takes_value {
                var.into_owned()
            } else {
                format!("{var}=1")
            });
        }
        if let (true, Some(default)) = (takes_value, arg.get_default_values().first()) {
            notes.push(format!("default {}", default.to_string_lossy()));
        }
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let mut text = help.trim_end_matches('.').to_string();
        if !notes.is_empty() {
            text.push_str(&format!(" ({})", notes.join("; ")));
        }
        // The help starts in COLUMN (on the next line after a long flag)
        // and wraps at WIDTH.
        let mut line = form;
        if line.len() + 2 > COLUMN {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        line.push_str(&" ".repeat(COLUMN - line.len()));
        let mut empty = true;
        for word in text.split_whitespace() {
            if !empty && line.len() + 1 + word.len() > WIDTH {
                out.push_str(&line);
                out.push('\n');
                line = " ".repeat(COLUMN);
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// What kind of file an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// C, C++, Objective-C or preprocessed source: compiled to bitcode.
    Source,
    /// Assembly: compiled natively.
    Assembly,
    /// Anything else on the link line (objects, archives, shared libraries).
    Linker,
}

/// One input file on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// Index in [`Invocation::args`].
    pub index: usize,
    pub path: String,
    pub kind: InputKind,
    /// The `-x` language in force for it, if any.
    pub language: Option<String>,
}

/// What the invocation asks clang to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Preprocess, emit assembly, print information...: run clang unchanged.
    PassThrough,
    /// `-c`: compile to (bitcode) objects.
    Compile,
    /// Link (compiling any sources first).
    Link,
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub options: Options,
    /// The clang arguments, pathprof's removed.
    pub args: Vec<String>,
    pub inputs: Vec<Input>,
    /// Index of the `-o` flag in `args` (the value follows, or is joined).
    pub output: Option<(usize, String)>,
    pub action: Action,
    /// The last `-O` level given.
    pub opt_level: String,
    /// `-lNAME` libraries: index of the flag in `args`, the name, and whether
    /// the name is the next argument (`-l NAME`).
    pub libraries: Vec<(usize, String, bool)>,
    /// `-L` directories, in order.
    pub library_dirs: Vec<String>,
}

/// Clang flags whose value is the next argument.
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-isysroot",
    "--sysroot",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-x",
    "-MF",
    "-MT",
    "-MQ",
    "-L",
    "-l",
    "-Xlinker",
    "-Xclang",
    "-Xassembler",
    "-Xpreprocessor",
    "-mllvm",
    "-target",
    "-arch",
    "-T",
    "-u",
    "-z",
    "-e",
    "-dependency-file",
    "-gcc-toolchain",
    "-resource-dir",
    "-serialize-diagnostics",
    "-main-file-name",
    "-install_name",
    "-F",
    "-framework",
    "-Xopenmp-target",
    "-ivfsoverlay",
    "-working-directory",
    "-B",
];

/// Flags after which clang does not compile and link.
fn is_pass_through_flag(a: &str) -> bool {
    matches!(
        a,
        "-E" | "-S"
            | "-M"
            | "-MM"
            | "-fsyntax-only"
            | "--version"
            | "-###"
            | "--help"
            | "-help"
            | "-emit-ast"
    ) || a.starts_with("-print-")
        || a.starts_with("--print-")
        || a.starts_with("-dump")
}

const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cp", "cpp", "cxx", "c++", "C", "CC", "CPP", "i", "ii", "m", "mm", "M",
];
const ASSEMBLY_EXTENSIONS: &[&str] = &["s", "S", "sx", "asm"];

fn kind_of(path: &str, language: Option<&str>) -> InputKind {
    if let Some(lang) = language {
        return if lang.starts_with("assembler") {
            InputKind::Assembly
        } else {
            InputKind::Source
        };
    }
    let ext = Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if SOURCE_EXTENSIONS.contains(&ext) {
        InputKind::Source
    } else if ASSEMBLY_EXTENSIONS.contains(&ext) {
        InputKind::Assembly
    } else {
        InputKind::Linker
    }
}

/// Why the pathprof part of a command line is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct ArgError(pub String);

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgError {}

/// Splits a response file's text into arguments as GCC and clang do: on
/// whitespace, with single and double quotes and backslash escapes.
fn split_response(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_arg = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (_, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_arg = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_arg = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_arg {
                    out.push(std::mem::take(&mut cur));
                    in_arg = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_arg = true;
            }
        }
    }
    if in_arg {
        out.push(cur);
    }
    out
}

/// Replaces every `@file` argument by the arguments the file holds (nested
/// up to a depth of 16), as clang does, so that sources listed there are seen.
pub fn expand_response_files(args: &[String]) -> Result<Vec<String>, ArgError> {
    fn expand(args: &[String], depth: u32, out: &mut Vec<String>) -> Result<(), ArgError> {
        for a in args {
            match a.strip_prefix('@') {
                Some(path) if !path.is_empty() && std::path::Path::new(path).is_file() => {
                    if depth >= 16 {
                        return Err(ArgError(format!("response file {path} nests too deeply")));
                    }
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| ArgError(format!("cannot read response file {path}: {e}")))?;
                    expand(&split_response(&text), depth + 1, out)?;
                }
                _ => out.push(a.clone()),
            }
        }
        Ok(())
    }
    let mut out = Vec::with_capacity(args.len());
    expand(args, 0, &mut out)?;
    Ok(out)
}

/// The level `-O<level>` names.
fn level_name(level: &str) -> &'static str {
    match level {
        "" | "1" | "g" => "O1",
        "0" => "O0",
        "2" => "O2",
        "3" | "fast" | "4" => "O3",
        "s" => "Os",
        "z" => "Oz",
        _ => "O2",
    }
}

/// The link-time optimisation level a linker flag asks its LTO plugin for
/// (`-Wl,-plugin-opt=O3`, as rustc passes it under `-Clinker-plugin-lto`;
/// also `--lto-O3`): the level of a whole-program link that has no `-O`.
fn lto_level_of(arg: &str) -> Option<&str> {
    arg.strip_prefix("-Wl,")?.split(',').find_map(|part| {
        let part = part.trim_start_matches('-');
        part.strip_prefix("plugin-opt=O")
            .or_else(|| part.strip_prefix("lto-O"))
    })
}

/// Parses `args` (everything after `pathprof cc`): pathprof's own flags
/// (wherever they are, response files included) and the environment make the
/// options, the other arguments are clang's, untouched and in order.
pub fn parse(args: &[String]) -> Result<Invocation, ArgError> {
    let args = expand_response_files(args)?;
    let names = flag_names(&options_command());
    let (flags, clang_args): (Vec<String>, Vec<String>) =
        args.into_iter().partition(|a| is_pathprof_flag(&names, a));
    let options = parse_options(&flags)?;
    let mut inputs = Vec::new();
    let mut output = None;
    let mut compile = false;
    let mut pass_through = false;
    let mut language: Option<String> = None;
    let mut opt_level = None;
    let mut lto_level = None;
    let mut libraries = Vec::new();
    let mut library_dirs = Vec::new();
    let mut i = 0;
    while i < clang_args.len() {
        let a = clang_args[i].as_str();
        if a == "-c" {
            compile = true;
        } else if is_pass_through_flag(a) {
            pass_through = true;
        } else if let Some(level) = a.strip_prefix("-O") {
            opt_level = Some(level_name(level));
        } else if let Some(level) = lto_level_of(a) {
            lto_level = Some(level_name(level));
        } else if a == "-o" {
            if let Some(v) = clang_args.get(i + 1) {
                output = Some((i, v.clone()));
            }
            i += 1;
        } else if let Some(v) = a.strip_prefix("-o") {
            output = Some((i, v.to_string()));
        } else if a == "-l" || a == "-L" {
            if let Some(v) = clang_args.get(i + 1) {
                if a == "-l" {
                    libraries.push((i, v.clone(), true));
                } else {
                    library_dirs.push(v.clone());
                }
            }
            i += 1;
        } else if let Some(name) = a.strip_prefix("-l") {
            libraries.push((i, name.to_string(), false));
        } else if let Some(dir) = a.strip_prefix("-L") {
            library_dirs.push(dir.to_string());
        } else if a == "-x" {
            language = clang_args.get(i + 1).filter(|l| *l != "none").cloned();
            i += 1;
        } else if let Some(l) = a.strip_prefix("-x") {
            language = (l != "none").then(|| l.to_string());
        } else if TAKES_VALUE.contains(&a) {
            i += 1;
        } else if a == "-" || !a.starts_with('-') {
            inputs.push(Input {
                index: i,
                path: a.to_string(),
                kind: if a == "-" {
                    InputKind::Source
                } else {
                    kind_of(a, language.as_deref())
                },
                language: language.clone(),
            });
        }
        i += 1;
    }
    let action = if pass_through || inputs.is_empty() {
        Action::PassThrough
    } else if compile {
        Action::Compile
    } else {
        Action::Link
    };
    Ok(Invocation {
        options,
        args: clang_args,
        inputs,
        output,
        action,
        opt_level: opt_level.or(lto_level).unwrap_or("O0").to_string(),
        libraries,
        library_dirs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_core::Mode;
    use std::sync::{Mutex, MutexGuard};

    /// The variables pathprof's options read.
    const VARS: &[&str] = &[
        "PATHPROF_MODE",
        "PATHPROF_MAP",
        "PATHPROF_MAX_PATHS",
        "PATHPROF_ARRAY_LIMIT",
        "PATHPROF_ATOMIC",
        "PATHPROF_CONTINUOUS",
        "PATHPROF_EARLY_EXIT",
        "PATHPROF_EVERY_BLOCK",
        "PATHPROF_COUNT_STD",
        "PATHPROF_COUNT_ENTRIES",
        "PATHPROF_VERBOSE",
        "PATHPROF_TIME_REPORT",
        "PATHPROF_WHOLE_PROGRAM",
        "PATHPROF_COPIES",
        "PATHPROF_P3_TRAIN",
    ];

    /// Parsing reads the environment: the tests that parse hold this lock,
    /// with none of pathprof's variables set but those `vars` sets (until
    /// the guard drops).
    struct Env(#[allow(dead_code)] MutexGuard<'static, ()>);

    fn env(vars: &[(&str, &str)]) -> Env {
        static LOCK: Mutex<()> = Mutex::new(());
        let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        for v in VARS {
            std::env::remove_var(v);
        }
        for (k, v) in vars {
            std::env::set_var(k, v);
        }
        Env(guard)
    }

    impl Drop for Env {
        fn drop(&mut self) {
            for v in VARS {
                std::env::remove_var(v);
            }
        }
    }

    fn split(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    fn p(line: &str) -> Invocation {
        let _env = env(&[]);
        parse(&split(line)).unwrap()
    }

    /// `line`'s options with the environment `vars`, or its error.
    fn options(vars: &[(&str, &str)], line: &str) -> Result<Options, String> {
        let _env = env(vars);
        parse(&split(line)).map(|i| i.options).map_err(|e| e.0)
    }

    #[test]
    fn classifies_invocations() {
        let inv = p("--mode=block -O2 -g prog.c util.c -o prog -lm");
        assert_eq!(inv.options.instrument.mode, Mode::Block);
        assert_eq!(inv.action, Action::Link);
        assert_eq!(inv.opt_level, "O2");
        assert_eq!(inv.output, Some((4, "prog".into())));
        assert_eq!(
            inv.inputs
                .iter()
                .map(|i| i.path.as_str())
                .collect::<Vec<_>>(),
            ["prog.c", "util.c"]
        );
        // A link with no -O optimises as its LTO plugin is told to (rustc's
        // line under -Clinker-plugin-lto); an -O wins.
        assert_eq!(
            p("a.o -Wl,-plugin-opt=O3,-plugin-opt=mcpu=x86-64 -o a").opt_level,
            "O3"
        );
        assert_eq!(p("a.o -Wl,--lto-O1 -o a").opt_level, "O1");
        assert_eq!(p("-Os a.o -Wl,-plugin-opt=O3 -o a").opt_level, "Os");
        assert_eq!(p("a.o -Wl,-O1 -o a").opt_level, "O0");
        assert_eq!(p("-c -I inc a.c -o a.o").action, Action::Compile);
        assert_eq!(p("-c -I inc a.c -o a.o").inputs.len(), 1);
        assert_eq!(p("-E a.c").action, Action::PassThrough);
        assert_eq!(p("-MM a.c").action, Action::PassThrough);
        assert_eq!(p("--version").action, Action::PassThrough);
        assert_eq!(p("a.o b.a -o prog").inputs[1].kind, InputKind::Linker);
        assert_eq!(p("-x c conftest.txt").inputs[0].kind, InputKind::Source);
        assert_eq!(p("start.S x.c").inputs[0].kind, InputKind::Assembly);
        let libs = p("main.o -L. -Llib -lm2 -l z -o prog");
        assert_eq!(libs.library_dirs, [".", "lib"]);
        assert_eq!(
            libs.libraries,
            [(3, "m2".to_string(), false), (4, "z".to_string(), true)]
        );
    }

    #[test]
    fn pathprofs_flags_anywhere_clangs_untouched_in_order() {
        let inv = p(
            "-O2 --mode=edge -g --map=out.map a.c --max-paths=100 --array-limit=7 \
             --atomic -o prog --early-exit --pathprof-verbose --whole-program --dot-dir=dots \
             --every-block -lm --time-report",
        );
        assert_eq!(inv.args, split("-O2 -g a.c -o prog -lm"));
        let o = &inv.options.instrument;
        assert_eq!(o.mode, Mode::Edge);
        assert_eq!(o.map.as_deref(), Some(Path::new("out.map")));
        assert_eq!((o.max_paths, o.array_limit), (Some(100), Some(7)));
        assert!(o.atomic && o.early_exit && o.verbose && inv.options.whole_program);
        assert!(o.every_block && o.settings().plan_options().every_block);
        assert!(o.time_report);
        assert_eq!(o.dot_dir.as_deref(), Some(Path::new("dots")));
        assert!(inv.options.mode_given);
        // Nothing given: the defaults.
        let inv = p("-c a.c");
        assert_eq!(inv.args, split("-c a.c"));
        let o = &inv.options.instrument;
        assert_eq!(o.mode, Mode::Path);
        assert!(!inv.options.mode_given);
        assert_eq!(
            (o.map.as_ref(), o.max_paths, o.array_limit),
            (None, None, None)
        );
        assert!(!o.atomic && !o.early_exit && !o.verbose && !inv.options.whole_program);
        assert!(!o.every_block && !o.settings().plan_options().every_block);
        assert!(!o.time_report);
        assert_eq!(o.dot_dir, None);
        // clang's look-alikes (one dash, other names, a value as the next
        // argument) are clang's.
        let clangs = "-mode=x --mapfile=y -map --atomics --verbose -Wl,--map=z \
                      --dot-directory -mllvm --max-paths-x=1 -ftime-report --time-trace a.c";
        assert_eq!(p(clangs).args, split(clangs));
        assert_eq!(p(clangs).options, p("a.c").options);
        // The last of a flag given twice wins, as in clang.
        let o = p("--mode=block --mode=edge --atomic --atomic a.c").options;
        assert_eq!(o.instrument.mode, Mode::Edge);
        assert!(o.instrument.atomic);
    }

    #[test]
    fn the_environment_gives_what_flags_do_not() {
        let all = [
            ("PATHPROF_MODE", "block"),
            ("PATHPROF_MAP", "env.ppmap"),
            ("PATHPROF_MAX_PATHS", "64"),
            ("PATHPROF_ARRAY_LIMIT", "8"),
            ("PATHPROF_ATOMIC", "1"),
            ("PATHPROF_CONTINUOUS", "1"),
            ("PATHPROF_EARLY_EXIT", "1"),
            ("PATHPROF_EVERY_BLOCK", "1"),
            ("PATHPROF_COUNT_STD", "1"),
            ("PATHPROF_COUNT_ENTRIES", "1"),
            ("PATHPROF_VERBOSE", "1"),
            ("PATHPROF_TIME_REPORT", "1"),
            ("PATHPROF_WHOLE_PROGRAM", "1"),
        ];
        let o = options(&all, "-c a.c").unwrap();
        let i = &o.instrument;
        assert_eq!(i.mode, Mode::Block);
        assert!(o.mode_given, "PATHPROF_MODE counts as given");
        assert_eq!(i.map.as_deref(), Some(Path::new("env.ppmap")));
        assert_eq!((i.max_paths, i.array_limit), (Some(64), Some(8)));
        assert!(i.atomic && i.early_exit && i.verbose && i.time_report && o.whole_program);
        assert!(i.every_block && i.count_std && i.count_entries && i.continuous);
        // Flags win over the environment.
        let o = options(&all, "--mode=edge --map=flag.ppmap --max-paths=2 -c a.c").unwrap();
        assert_eq!(o.instrument.mode, Mode::Edge);
        assert_eq!(o.instrument.map.as_deref(), Some(Path::new("flag.ppmap")));
        assert_eq!(o.instrument.max_paths, Some(2));
        // A switch's variable counts only when it is `1`; a flag turns it on
        // whatever the variable says.
        for value in ["0", "", "true", "yes", "2", "01"] {
            let vars: Vec<(&str, &str)> = [
                "PATHPROF_ATOMIC",
                "PATHPROF_CONTINUOUS",
                "PATHPROF_EARLY_EXIT",
                "PATHPROF_VERBOSE",
                "PATHPROF_TIME_REPORT",
                "PATHPROF_WHOLE_PROGRAM",
            ]
            .iter()
            .map(|v| (*v, value))
            .collect();
            let o = options(&vars, "-c a.c").unwrap();
            let i = &o.instrument;
            assert!(
                !i.atomic && !i.early_exit && !i.verbose && !i.time_report && !o.whole_program,
                "{value:?}"
            );
            assert!(!i.continuous, "{value:?}");
            let o = options(
                &vars,
                "--atomic --continuous --early-exit --pathprof-verbose --time-report \
                 --whole-program -c a.c",
            )
            .unwrap();
            let i = &o.instrument;
            assert!(i.atomic && i.early_exit && i.verbose && i.time_report && o.whole_program);
            assert!(i.continuous);
        }
        // An empty map variable is an (empty) map name, as it always was.
        let o = options(&[("PATHPROF_MAP", "")], "-c a.c").unwrap();
        assert_eq!(o.instrument.map.as_deref(), Some(Path::new("")));
    }

    #[test]
    fn p3_needs_copies_and_takes_the_whole_program_route() {
        let o = options(&[], "--mode=p3 --copies=4 -c a.c").unwrap();
        assert!(o.instrument.mode.p3() && o.whole_program_route());
        assert_eq!(o.instrument.p3_copies(), Ok(Some(4)));
        assert_eq!(o.instrument.settings().mode, Mode::Path);
        assert!(!o.instrument.settings().ppp);
        let env = [("PATHPROF_MODE", "p3"), ("PATHPROF_COPIES", "2")];
        assert_eq!(
            options(&env, "-c a.c").unwrap().instrument.p3_copies(),
            Ok(Some(2))
        );
        // The training list, from the flag or the environment.
        let o = options(&[], "--mode=p3 --copies=2 --p3-train=t.paths a.c").unwrap();
        assert_eq!(
            o.instrument.p3_train,
            Some(std::path::PathBuf::from("t.paths"))
        );
        let o = options(
            &[("PATHPROF_P3_TRAIN", "u.paths")],
            "--mode=p3 --copies=2 a.c",
        )
        .unwrap();
        assert_eq!(
            o.instrument.p3_train,
            Some(std::path::PathBuf::from("u.paths"))
        );
        // Copies without P3 count for nothing; P3 without copies is refused.
        let o = options(&[("PATHPROF_COPIES", "2")], "-c a.c").unwrap();
        assert!(!o.whole_program_route() && o.instrument.p3_copies() == Ok(None));
        let err = options(&[], "--mode=p3 a.c").unwrap_err();
        assert!(err.contains("--mode=p3 needs --copies=K"), "{err}");
        for bad in ["0", "257", "two"] {
            let err = options(&[], &format!("--mode=p3 --copies={bad} a.c")).unwrap_err();
            assert!(err.contains("from 1 to 256"), "{err}");
        }
    }

    #[test]
    fn response_files_are_expanded() {
        assert_eq!(
            split_response("-O2 \"a b.c\" 'c d.c' e\\ f.c\n-o out"),
            ["-O2", "a b.c", "c d.c", "e f.c", "-o", "out"]
        );
        let dir = std::env::temp_dir().join(format!("pathprof-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rsp = dir.join("args.rsp");
        std::fs::write(&rsp, "-c main.c --mode=edge -o main.o").unwrap();
        let _env = env(&[]);
        let inv = parse(&[format!("@{}", rsp.display()), "-g".into()]).unwrap();
        assert_eq!(inv.action, Action::Compile);
        assert_eq!(inv.inputs[0].path, "main.c");
        assert_eq!(inv.args, ["-c", "main.c", "-o", "main.o", "-g"]);
        assert_eq!(inv.options.instrument.mode, Mode::Edge);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rejects_bad_pathprof_flags() {
        let err = options(&[], "--mode=fast").unwrap_err();
        assert!(err.contains("unknown mode `fast`"), "{err}");
        let err = options(&[], "--max-paths=lots").unwrap_err();
        assert!(
            err.contains("--max-paths") && err.contains("positive number"),
            "{err}"
        );
        let err = options(&[], "--array-limit=-1").unwrap_err();
        assert!(err.contains("positive number"), "{err}");
        // Values follow `=`: the next argument is clang's.
        let err = options(&[], "--mode edge a.c").unwrap_err();
        assert!(
            err.contains("--mode=") && err.contains("equal sign"),
            "{err}"
        );
        let err = options(&[], "--map").unwrap_err();
        assert!(err.contains("--map="), "{err}");
        // Switches take no value.
        let err = options(&[], "--atomic=1").unwrap_err();
        assert!(err.contains("--atomic"), "{err}");
        let err = options(&[], "--time-report=yes").unwrap_err();
        assert!(err.contains("--time-report"), "{err}");
        // A bad variable is named.
        let err = options(&[("PATHPROF_MODE", "fast")], "-c a.c").unwrap_err();
        assert!(
            err.contains("unknown mode `fast`") && err.contains("PATHPROF_MODE"),
            "{err}"
        );
        let err = options(&[("PATHPROF_MAX_PATHS", "x")], "-c a.c").unwrap_err();
        assert!(
            err.contains("positive number") && err.contains("PATHPROF_MAX_PATHS"),
            "{err}"
        );
        // A good flag hides a bad variable.
        assert!(options(&[("PATHPROF_MODE", "fast")], "--mode=edge a.c").is_ok());
        // Errors are one line.
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn help_lists_every_flag_as_written_with_its_variable() {
        let help = flags_help();
        let cmd = options_command();
        let flags: Vec<&clap::Arg> = cmd.get_arguments().collect();
        assert_eq!(flags.len(), 24, "{help}");
        for arg in flags {
            let long = arg.get_long().unwrap();
            let form = if arg.get_action().takes_values() {
                format!("  --{long}=")
            } else {
                format!("  --{long} ")
            };
            assert!(help.contains(&form), "{form} missing:\n{help}");
            if let Some(var) = arg.get_env() {
                assert!(help.contains(var.to_str().unwrap()), "{var:?}:\n{help}");
            }
        }
        // The help in a column, wrapped at 80 characters.
        for lines in [
            "  --mode=block|edge|path|ppp|p3\n\
             \x20                         What to count (ppp: path mode, the --interesting paths\n\
             \x20                         in arrays; p3: path mode, split over --copies programs\n\
             \x20                         run in parallel) (PATHPROF_MODE; default path)\n",
            "  --atomic                Thread-safe (atomic) counter updates\n\
             \x20                         (PATHPROF_ATOMIC=1)\n",
        ] {
            assert!(help.contains(lines), "{lines}:\n{help}");
        }
        assert!(help.lines().all(|l| l.len() <= 80), "{help}");
    }
}
