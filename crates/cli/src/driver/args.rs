//! Reading a clang command line: pathprof's own flags out, the rest classified
//! (inputs, output, what the invocation does) without changing it.

use pathprof_core::Mode;
use std::path::{Path, PathBuf};

/// pathprof's own options, given as `--mode=path`-style flags before or among the
/// clang arguments, or through the environment (`PATHPROF_MODE`, ...) for build
/// systems that only let you set `CC`.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub mode: Mode,
    /// Whether `--mode` (or `PATHPROF_MODE`) was given, not defaulted.
    pub mode_given: bool,
    pub map: Option<PathBuf>,
    pub max_paths: Option<u64>,
    pub array_limit: Option<u64>,
    pub atomic: bool,
    pub early_exit: bool,
    pub verbose: bool,
    /// `--whole-program`: compile to bitcode and instrument the linked program
    /// as one module at the link step, instead of each object as it compiles.
    pub whole_program: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Path,
            mode_given: false,
            map: None,
            max_paths: None,
            array_limit: None,
            atomic: false,
            early_exit: false,
            verbose: false,
            whole_program: false,
        }
    }
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

fn number(flag: &str, value: &str) -> Result<u64, ArgError> {
    value
        .parse()
        .map_err(|_| ArgError(format!("{flag} takes a positive number, not `{value}`")))
}

/// Applies one `--name=value` pathprof flag; `Ok(false)` when it is not one.
fn apply_option(options: &mut Options, arg: &str) -> Result<bool, ArgError> {
    let (name, value) = arg
        .split_once('=')
        .map_or((arg, None), |(n, v)| (n, Some(v)));
    fn need<'a>(name: &str, v: Option<&'a str>) -> Result<&'a str, ArgError> {
        v.ok_or_else(|| ArgError(format!("{name} needs a value: {name}=...")))
    }
    match name {
        "--mode" => {
            options.mode = need(name, value)?.parse().map_err(ArgError)?;
            options.mode_given = true;
        }
        "--map" => options.map = Some(PathBuf::from(need(name, value)?)),
        "--max-paths" => options.max_paths = Some(number(name, need(name, value)?)?),
        "--array-limit" => options.array_limit = Some(number(name, need(name, value)?)?),
        "--atomic" => options.atomic = true,
        "--early-exit" => options.early_exit = true,
        "--pathprof-verbose" => options.verbose = true,
        "--whole-program" => options.whole_program = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// Options from the environment: `PATHPROF_MODE`, `PATHPROF_MAP`,
/// `PATHPROF_MAX_PATHS`, `PATHPROF_ARRAY_LIMIT`, `PATHPROF_ATOMIC=1`,
/// `PATHPROF_EARLY_EXIT=1`, `PATHPROF_VERBOSE=1`, `PATHPROF_WHOLE_PROGRAM=1`.
pub fn options_from_env() -> Result<Options, ArgError> {
    let mut options = Options::default();
    for (var, flag) in [
        ("PATHPROF_MODE", "--mode"),
        ("PATHPROF_MAP", "--map"),
        ("PATHPROF_MAX_PATHS", "--max-paths"),
        ("PATHPROF_ARRAY_LIMIT", "--array-limit"),
    ] {
        if let Ok(v) = std::env::var(var) {
            apply_option(&mut options, &format!("{flag}={v}"))?;
        }
    }
    options.atomic = std::env::var("PATHPROF_ATOMIC").is_ok_and(|v| v == "1");
    options.early_exit = std::env::var("PATHPROF_EARLY_EXIT").is_ok_and(|v| v == "1");
    options.verbose = std::env::var("PATHPROF_VERBOSE").is_ok_and(|v| v == "1");
    options.whole_program = std::env::var("PATHPROF_WHOLE_PROGRAM").is_ok_and(|v| v == "1");
    Ok(options)
}

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

/// Parses `args` (everything after `pathprof cc`).
pub fn parse(args: &[String], mut options: Options) -> Result<Invocation, ArgError> {
    let args = expand_response_files(args)?;
    let mut clang_args = Vec::with_capacity(args.len());
    for a in &args {
        if !apply_option(&mut options, a)? {
            clang_args.push(a.clone());
        }
    }
    let mut inputs = Vec::new();
    let mut output = None;
    let mut compile = false;
    let mut pass_through = false;
    let mut language: Option<String> = None;
    let mut opt_level = "O0".to_string();
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
            opt_level = match level {
                "" | "1" | "g" => "O1",
                "0" => "O0",
                "2" => "O2",
                "3" | "fast" | "4" => "O3",
                "s" => "Os",
                "z" => "Oz",
                _ => "O2",
            }
            .to_string();
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
        opt_level,
        libraries,
        library_dirs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Invocation {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&args, Options::default()).unwrap()
    }

    #[test]
    fn classifies_invocations() {
        let inv = p("--mode=block -O2 -g prog.c util.c -o prog -lm");
        assert_eq!(inv.options.mode, Mode::Block);
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
    fn response_files_are_expanded() {
        assert_eq!(
            split_response("-O2 \"a b.c\" 'c d.c' e\\ f.c\n-o out"),
            ["-O2", "a b.c", "c d.c", "e f.c", "-o", "out"]
        );
        let dir = std::env::temp_dir().join(format!("pathprof-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rsp = dir.join("args.rsp");
        std::fs::write(&rsp, "-c main.c -o main.o").unwrap();
        let inv = parse(
            &[format!("@{}", rsp.display()), "-g".into()],
            Options::default(),
        )
        .unwrap();
        assert_eq!(inv.action, Action::Compile);
        assert_eq!(inv.inputs[0].path, "main.c");
        assert_eq!(inv.args, ["-c", "main.c", "-o", "main.o", "-g"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rejects_bad_pathprof_flags() {
        let args = vec!["--mode=fast".to_string()];
        let err = parse(&args, Options::default()).unwrap_err();
        assert!(err.0.contains("unknown mode `fast`"), "{err}");
        let args = vec!["--max-paths=lots".to_string()];
        assert!(parse(&args, Options::default()).is_err());
    }
}
