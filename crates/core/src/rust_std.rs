//! How rustc records the sources of Rust's standard library in debug
//! information: `/rustc/<commit>/library/<file>`, where `<commit>` is the
//! toolchain's 40-hex-digit commit. Instrumentation leaves these functions
//! out unless asked; reports find the files in the `rust-src` component.

/// The file inside std's `library/` directory that `path` names, when
/// `path` is a standard-library source as rustc records it.
pub fn library_file(path: &str) -> Option<&str> {
    let (commit, file) = path.strip_prefix("/rustc/")?.split_once("/library/")?;
    let is_commit = commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    is_commit.then_some(file)
}

#[cfg(test)]
mod tests {
    use super::library_file;

    #[test]
    fn std_sources_are_told_by_their_recorded_path() {
        let commit = "59807616e1fa2540724bfbac14d7976d7e4a3860";
        let vec = format!("/rustc/{commit}/library/alloc/src/vec/mod.rs");
        assert_eq!(library_file(&vec), Some("alloc/src/vec/mod.rs"));
        for other in [
            "/tmp/rs/src/main.rs",
            "/rustc/abc/library/core/src/lib.rs",
            &format!("/rustc/{commit}/compiler/rustc/src/main.rs"),
            &format!("/rustc/{commit}x/library/core/src/lib.rs"),
        ] {
            assert_eq!(library_file(other), None, "{other}");
        }
    }
}
