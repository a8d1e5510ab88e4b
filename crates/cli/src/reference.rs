//! The command reference, `docs/cli.md`, rendered from the one definition of
//! every command and flag: clap's [`crate::cli::Cli`] for the subcommands,
//! [`crate::driver::args::options_command`] for the flags `pathprof cc`,
//! `pathprof c++` and `pathprof cargo` take. A test compares the file with
//! what this renders, so the reference cannot drift from the code; run it
//! with `PATHPROF_BLESS=1` to write the file anew after changing a flag.

use clap::{Arg, Command, CommandFactory as _};
use std::fmt::Write as _;

/// The whole reference, as Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Command reference\n\n\
         Every `pathprof` command and flag, generated from their definitions in\n\
         `crates/cli/src/cli.rs` (a test fails when this file differs from them;\n\
         `PATHPROF_BLESS=1 cargo test -p pathprof --bin pathprof reference`\n\
         writes it anew).\n\
         `pathprof COMMAND --help` prints the same text.\n\n",
    );
    let mut root = crate::cli::Cli::command();
    root.build();
    out.push_str("## Contents\n\n");
    out.push_str("- [`pathprof cc`, `pathprof c++` and `pathprof cargo`](#the-compiler-wrapper)\n");
    for sub in visible_subcommands(&root) {
        let name = format!("pathprof {}", sub.get_name());
        let _ = writeln!(out, "- [`{name}`](#{})", anchor(&name));
        for inner in visible_subcommands(sub) {
            let name = format!("{name} {}", inner.get_name());
            let _ = writeln!(out, "  - [`{name}`](#{})", anchor(&name));
        }
    }
    out.push('\n');
    wrapper(&mut out);
    for sub in visible_subcommands(&root) {
        command(&mut out, "pathprof", sub);
    }
    out
}

/// The compiler wrapper's section: its flags come from
/// [`crate::driver::args::options_command`], not from clap's subcommands.
fn wrapper(out: &mut String) {
    out.push_str(
        "## The compiler wrapper\n\n\
         ```text\n\
         pathprof cc [--FLAG=VALUE...] CLANG-ARGS...\n\
         pathprof c++ [--FLAG=VALUE...] CLANG-ARGS...\n\
         pathprof cargo [--FLAG=VALUE...] CARGO-COMMAND [ARGS...]\n\
         ```\n\n\
         `pathprof cc` and `pathprof c++` are clang and clang++ that build an\n\
         instrumented program: every clang argument passes through, and\n\
         pathprof's own flags may stand anywhere on the line, their values after\n\
         `=` only. `pathprof cargo` runs any cargo command with every crate\n\
         instrumented at the link; its flags come before the cargo command.\n\
         Each flag has an environment variable, for build systems that only let\n\
         you set `CC`; a flag on the command line wins over it, and a switch's\n\
         variable counts only when it is `1`. Build-system probes (autoconf's\n\
         `conftest`, CMake's `try_compile`, meson's compiler checks) are built as\n\
         plain clang builds them.\n\n",
    );
    let mut options = crate::driver::args::options_command();
    options.build();
    for arg in visible_arguments(&options) {
        argument(out, arg, true);
    }
    out.push('\n');
}

/// The section of `cmd`, a subcommand of `parent`, and of its own
/// subcommands.
fn command(out: &mut String, parent: &str, cmd: &Command) {
    let name = format!("{parent} {}", cmd.get_name());
    let _ = writeln!(out, "## `{name}`\n");
    let about = cmd
        .get_long_about()
        .or_else(|| cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        let _ = writeln!(out, "{}\n", about.trim_end());
    }
    let usage = cmd
        .clone()
        .bin_name(&name)
        .render_usage()
        .to_string()
        .replace("Usage: ", "");
    let _ = writeln!(out, "```text\n{}\n```\n", usage.trim_end());
    let arguments: Vec<&Arg> = visible_arguments(cmd).collect();
    if !arguments.is_empty() {
        for arg in arguments {
            argument(out, arg, false);
        }
        out.push('\n');
    }
    for sub in visible_subcommands(cmd) {
        command(out, &name, sub);
    }
}

/// One bullet: the argument as it is written, its help, and its
/// environment variable, default and possible values.
fn argument(out: &mut String, arg: &Arg, equals: bool) {
    let values: Vec<String> = arg
        .get_value_names()
        .map(|v| v.iter().map(|n| n.to_string()).collect())
        .unwrap_or_default();
    let takes_value = arg.get_action().takes_values();
    let written = if arg.is_positional() {
        let name = values
            .first()
            .cloned()
            .unwrap_or_else(|| arg.get_id().to_string());
        let many = matches!(arg.get_num_args(), Some(r) if r.max_values() > 1);
        format!("{name}{}", if many { "..." } else { "" })
    } else {
        let mut forms = Vec::new();
        if let Some(short) = arg.get_short() {
            forms.push(format!("-{short}"));
        }
        if let Some(long) = arg.get_long() {
            forms.push(format!("--{long}"));
        }
        let mut written = forms.join(", ");
        if takes_value {
            let value = if values.is_empty() {
                arg.get_id().to_string().to_uppercase()
            } else {
                values.join(" ")
            };
            written.push(if equals { '=' } else { ' ' });
            written.push_str(&value);
        }
        written
    };
    let help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let mut facts = Vec::new();
    if let Some(env) = arg.get_env() {
        facts.push(format!("env `{}`", env.to_string_lossy()));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() {
        facts.push(format!("default `{}`", defaults.join(",")));
    }
    let possible: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if takes_value && !possible.is_empty() && values.len() <= 1 {
        facts.push(format!("one of {}", possible.join(", ")));
    }
    let help = help.trim_end().replace('\n', " ");
    let _ = write!(out, "- `{written}`: {help}");
    if !facts.is_empty() {
        let _ = write!(out, " ({})", facts.join("; "));
    }
    out.push('\n');
}

fn visible_subcommands(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
}

fn visible_arguments(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version"))
}

/// GitHub's anchor of a heading `` `text` ``.
fn anchor(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The committed reference is what the definitions render: a flag added,
    /// renamed or described anew without `docs/cli.md` fails here.
    #[test]
    fn reference_matches_the_flag_definitions() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
        let rendered = super::markdown();
        if std::env::var_os("PATHPROF_BLESS").is_some() {
            std::fs::write(&path, &rendered).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == rendered,
            "docs/cli.md differs from the flag definitions; write it anew with \
             `PATHPROF_BLESS=1 cargo test -p pathprof --bin pathprof reference`"
        );
    }

    /// Every flag of every command is in the reference, as it is written.
    #[test]
    fn reference_names_every_flag() {
        use clap::CommandFactory as _;
        let text = super::markdown();
        fn walk(cmd: &clap::Command, text: &str) {
            for arg in super::visible_arguments(cmd) {
                if let Some(long) = arg.get_long() {
                    assert!(text.contains(&format!("--{long}")), "--{long} missing");
                }
            }
            for sub in super::visible_subcommands(cmd) {
                assert!(
                    text.contains(&format!(" {}`", sub.get_name())),
                    "{}",
                    sub.get_name()
                );
                walk(sub, text);
            }
        }
        walk(&crate::cli::Cli::command(), &text);
        walk(&crate::driver::args::options_command(), &text);
    }
}
