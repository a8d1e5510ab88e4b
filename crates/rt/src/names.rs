//! Profile file names: `$PATHPROF_FILE` (default `default.pprof`) with `%p`
//! (process id), `%h` (host name) and `%%` expanded at dump time, relative
//! names resolved against the working directory of that moment.
//!
//! * The first build registered in a process writes the name itself; a module
//!   of another build writes `<name>.<build id, 16 hex digits>` (and a module
//!   of the first build with another mode `<name>.<build id>.m<mode>`).
//! * When a file cannot be merged into (another build, damaged, locked for
//!   too long), the counts go to the side file `<stem>.<pid>.pprof`, where
//!   `<stem>` is the name without a final `.pprof`.

use crate::abi::PpModule;
use crate::mem::MapVec;
use crate::os;
use crate::registry::Config;
use std::fmt::Write;

/// Expands `cfg.pattern` for `module` into `out`, NUL-terminated.
pub(crate) fn profile_path(cfg: &Config, module: &PpModule, out: &mut MapVec<u8>) -> bool {
    out.clear();
    let mut ok = true;
    let mut it = cfg.pattern.iter().copied();
    while let Some(c) = it.next() {
        if c != b'%' {
            ok &= out.push(c);
            continue;
        }
        match it.next() {
            Some(b'p') => ok &= write!(out, "{}", os::pid()).is_ok(),
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
    let (build, mode) = (module.build_id, module.mode);
    if (build, mode) != cfg.first {
        ok &= write!(out, ".{build:016x}").is_ok();
        if build == cfg.first.0 {
            ok &= write!(out, ".m{mode}").is_ok();
        }
    }
    ok && out.push(0)
}

/// The side file for `path` (NUL-terminated) into `out`, NUL-terminated.
pub(crate) fn side_path(path: &[u8], out: &mut MapVec<u8>) -> bool {
    out.clear();
    let path = path.strip_suffix(&[0]).unwrap_or(path);
    let stem = path.strip_suffix(b".pprof").unwrap_or(path);
    out.extend_from_slice(stem) && write!(out, ".{}.pprof\0", os::pid()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(build_id: u64, mode: u32) -> PpModule {
        PpModule {
            abi_version: 1,
            mode,
            build_id,
            num_functions: 0,
            functions: std::ptr::null(),
        }
    }

    fn name(pattern: &str, m: &PpModule) -> String {
        let cfg = Config {
            pattern: pattern.as_bytes().to_vec(),
            verbose: false,
            first: (0xab, 2),
            interval_s: 0,
            write_delay_us: 0,
        };
        let mut out = MapVec::new();
        assert!(profile_path(&cfg, m, &mut out));
        String::from_utf8(out.as_slice().to_vec()).unwrap()
    }

    #[test]
    fn patterns_and_builds() {
        let pid = std::process::id();
        let m = module(0xab, 2);
        assert_eq!(name("a-%p.pprof", &m), format!("a-{pid}.pprof\0"));
        assert_eq!(name("100%%-%x%", &m), "100%-%x%\0");
        assert!(!name("%h", &m).starts_with('%'));
        assert_eq!(
            name("x.pprof", &module(0x12, 2)),
            "x.pprof.0000000000000012\0"
        );
        assert_eq!(
            name("x.pprof", &module(0xab, 1)),
            "x.pprof.00000000000000ab.m1\0"
        );
        let mut out = MapVec::new();
        assert!(side_path(b"dir/x.pprof\0", &mut out));
        assert_eq!(out.as_slice(), format!("dir/x.{pid}.pprof\0").as_bytes());
        assert!(side_path(b"prof\0", &mut out));
        assert_eq!(out.as_slice(), format!("prof.{pid}.pprof\0").as_bytes());
    }
}
