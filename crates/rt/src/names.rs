//! Profile file names: `$PATHPROF_FILE` (default `default.pprof`) with `%p`
//! (process id), `%h` (host name) and `%%` expanded at dump time, relative
//! names resolved against the working directory of that moment.
//!
//! * Every module of every build writes that one file (a section per build).
//! * When a file cannot be merged into (damaged, of an older format version,
//!   locked for too long), the counts go to the side file
//!   `<stem>.<pid>.pprof`, where `<stem>` is the name without a final
//!   `.pprof`.

use crate::mem::MapVec;
use crate::os;
use crate::registry::Config;
use pathprof_format::decimal;

/// Expands `cfg.pattern` into `out`, NUL-terminated.
pub(crate) fn profile_path(cfg: &Config, out: &mut MapVec<u8>) -> bool {
    out.clear();
    let mut ok = true;
    let mut it = cfg.pattern.iter().copied();
    while let Some(c) = it.next() {
        if c != b'%' {
            ok &= out.push(c);
            continue;
        }
        match it.next() {
            Some(b'p') => ok &= out.extend_from_slice(decimal(os::pid().into(), &mut [0; 20])),
            Some(b'h') => {
                let mut host = [0u8; 65];
                let n = os::hostname(&mut host);
                ok &= out.extend_from_slice(&host[..n]);
            }
            Some(b'%') => ok &= out.push(b'%'),
            Some(other) => ok &= out.extend_from_slice(&[b'%', other]),
            None => ok &= out.push(b'%'),
        }
    }
    ok && out.push(0)
}

/// The side file for `path` (NUL-terminated) into `out`, NUL-terminated.
pub(crate) fn side_path(path: &[u8], out: &mut MapVec<u8>) -> bool {
    out.clear();
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    let stem = path.strip_suffix(b".pprof").unwrap_or(path);
    out.extend_from_slice(stem)
        && out.push(b'.')
        && out.extend_from_slice(decimal(os::pid().into(), &mut [0; 20]))
        && out.extend_from_slice(b".pprof\0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(pattern: &str) -> String {
        let cfg = Config {
            pattern: pattern.as_bytes().to_vec().leak(),
            continuous: false,
            continuous_from_env: false,
            verbose: false,
            interval_s: 0,
            write_delay_us: 0,
        };
        let mut out = MapVec::new();
        assert!(profile_path(&cfg, &mut out));
        String::from_utf8(out.as_slice().to_vec()).unwrap()
    }

    #[test]
    fn patterns() {
        let pid = std::process::id();
        assert_eq!(name("a-%p.pprof"), format!("a-{pid}.pprof\0"));
        assert_eq!(name("100%%-%x%"), "100%-%x%\0");
        assert!(!name("%h").starts_with('%'));
        assert_eq!(name("x.pprof"), "x.pprof\0");
        let mut out = MapVec::new();
        assert!(side_path(b"dir/x.pprof\0", &mut out));
        assert_eq!(out.as_slice(), format!("dir/x.{pid}.pprof\0").as_bytes());
        assert!(side_path(b"prof\0", &mut out));
        assert_eq!(out.as_slice(), format!("prof.{pid}.pprof\0").as_bytes());
    }
}
