//! How a copy is started: directly, or through a launcher (`--launcher`),
//! a command template run by `sh -c` in which `{}` is the copy's command
//! line, shell-quoted, with its environment in front (`env
//! PATHPROF_FILE=... PROGRAM.p3.<i> ARGS...`, so that it reaches the copy
//! through `ssh` or `srun` too), `{i}` the copy's index and `{host}` the
//! i-th of `--hosts`, round robin. Everything else in the template is the
//! user's shell text, as written.

use anyhow::{bail, Result};
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

/// How copies are started.
#[derive(Clone, Debug, Default)]
pub struct Launcher {
    /// `--launcher`: the template; `None` starts each copy directly.
    pub template: Option<String>,
    /// `--hosts`, for `{host}`.
    pub hosts: Vec<String>,
}

impl Launcher {
    /// A launcher for `template` and `hosts`, checked: the template must
    /// hold `{}`, and `{host}` needs hosts.
    pub fn new(template: Option<String>, hosts: Vec<String>) -> Result<Launcher> {
        if let Some(t) = &template {
            if !t.contains("{}") {
                bail!(
                    "--launcher `{t}` has no `{{}}`: write where the copy's command line goes, \
                     e.g. --launcher 'srun -N1 -n1 {{}}'"
                );
            }
            if t.contains("{host}") && hosts.is_empty() {
                bail!("--launcher `{t}` uses {{host}}: name the hosts with --hosts h1,h2,...");
            }
        } else if !hosts.is_empty() {
            bail!("--hosts names hosts for a --launcher template's {{host}}; give --launcher too");
        }
        Ok(Launcher { template, hosts })
    }

    /// The command that runs copy `copy`: `program` with `args`, its counts
    /// going to `profile`. Started directly, the copy gets `arg0` (the
    /// program's name as the user wrote it) for its `argv[0]`, so that it
    /// sees the name the program would (programs that look at their name,
    /// or count its characters, run as the program); a launcher starts the
    /// copy by its own file name.
    pub fn command(
        &self,
        copy: usize,
        program: &Path,
        arg0: &OsStr,
        args: &[OsString],
        profile: &Path,
    ) -> Command {
        let Some(template) = &self.template else {
            let mut cmd = Command::new(program);
            cmd.arg0(arg0).args(args).env("PATHPROF_FILE", profile);
            return cmd;
        };
        let mut words = vec![
            "env".to_string(),
            quote(&format!("PATHPROF_FILE={}", profile.display())),
            quote(&program.display().to_string()),
        ];
        words.extend(args.iter().map(|a| quote(&a.to_string_lossy())));
        let host = (!self.hosts.is_empty()).then(|| self.hosts[copy % self.hosts.len()].as_str());
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(expand(template, &words.join(" "), copy, host));
        cmd
    }
}

/// `template` with `{}`, `{i}` and `{host}` replaced, in one pass (what
/// they are replaced by is never read again).
fn expand(template: &str, command_line: &str, copy: usize, host: Option<&str>) -> String {
    let mut out = String::with_capacity(template.len() + command_line.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let (with, len) = if rest.starts_with("{}") {
            (Some(command_line.to_string()), 2)
        } else if rest.starts_with("{i}") {
            (Some(copy.to_string()), 3)
        } else if let (true, Some(h)) = (rest.starts_with("{host}"), host) {
            (Some(h.to_string()), 6)
        } else {
            (None, 1)
        };
        match with {
            Some(w) => out.push_str(&w),
            None => out.push('{'),
        }
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

/// `word` quoted for a POSIX shell: as is when it holds only characters no
/// shell treats specially, else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_what_the_shell_would_split_or_expand() {
        assert_eq!(quote("/a/prog.p3.0"), "/a/prog.p3.0");
        assert_eq!(quote("PATHPROF_FILE=/x y"), "'PATHPROF_FILE=/x y'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn expands_the_template_once() {
        let line = "env PATHPROF_FILE=/w/m.p3.1.pprof /w/prog.p3.1 '{i}'";
        assert_eq!(
            expand("ssh {host} \"cd /w && {}\" # {i} {x}", line, 1, Some("b")),
            format!("ssh b \"cd /w && {line}\" # 1 {{x}}")
        );
        assert_eq!(expand("{{}}", "c", 0, None), "{c}");
    }

    #[test]
    fn templates_are_checked() {
        assert!(Launcher::new(Some("srun".into()), vec![]).is_err());
        assert!(Launcher::new(Some("ssh {host} {}".into()), vec![]).is_err());
        assert!(Launcher::new(None, vec!["a".into()]).is_err());
        let l = Launcher::new(Some("ssh {host} {}".into()), vec!["a".into(), "b".into()]).unwrap();
        let cmd = l.command(
            3,
            Path::new("/w/p.p3.3"),
            OsStr::new("./p"),
            &["x y".into()],
            Path::new("/w/m.p3.3.pprof"),
        );
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-c",
                "ssh b env PATHPROF_FILE=/w/m.p3.3.pprof /w/p.p3.3 'x y'"
            ]
        );
    }
}
