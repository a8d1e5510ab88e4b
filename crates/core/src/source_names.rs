//! The names of source files and functions as a person reads them: one
//! spelling per source file however the debug info wrote it, a file's name
//! without its directory, and a function's linkage name without LLVM's
//! renaming suffixes.

/// The lexical normal form of a source file name, so that one file has one name
/// however the debug info spelled it (`dir/./x.h`, `dir/sub/../x.h`, `dir//x.h`
/// are all `dir/x.h`): no empty (`//`, trailing `/`) or `.` components, and a
/// `..` removes the normal component before it. A `..` that has nothing to
/// remove stays at the start of a relative path and disappears at the root
/// (`/..` is `/`). Lexical only: symbolic links are not resolved, so `sub/..` is
/// taken to mean the directory `sub` is in, as a compiler searching include
/// paths does. An empty path stays empty; a relative path that cancels out is `.`.
pub fn normalize_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) if !path.is_empty() => ".".to_string(),
        (false, _) => joined,
    }
}

/// The file name a source file's path ends in, after [`normalize_path`]
/// (`src/./a.c` and `/build/src/a.c` both end in `a.c`).
pub fn base_name(path: &str) -> String {
    let normal = normalize_path(path);
    normal.rsplit('/').next().unwrap_or("").to_string()
}

/// Whether two names of source files name one file, built in one place or
/// in two: the same file name ([`base_name`]), as the same path after
/// [`normalize_path`] also has.
pub fn same_file(a: &str, b: &str) -> bool {
    base_name(a) == base_name(b)
}

/// `name` without LLVM's renaming suffixes: trailing `.N` (digits) and
/// `.llvm.N`, however many; a name that is nothing but suffixes is kept.
pub fn without_rename_suffixes(name: &str) -> &str {
    let mut rest = name;
    while let Some((head, tail)) = rest.rsplit_once('.') {
        let numeric = !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit());
        if head.is_empty() || !(numeric || tail == "llvm") {
            break;
        }
        rest = head;
    }
    rest
}
