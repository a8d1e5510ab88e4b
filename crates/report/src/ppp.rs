//! Preferential path profiling's models: the interesting paths of a
//! path-mode training profile (`pathprof interesting`), and the check of an
//! interesting-path list against the program it is given to (`pathprof cc
//! --mode=ppp --interesting`, `pathprof p3`'s training list): the functions
//! it names that the program does not have, and the warnings that says.

use crate::load::Loaded;
use anyhow::{bail, Context as _, Result};
use pathprof_core::layout::Layout;
use pathprof_core::map::{base_name, MapFile};
use pathprof_core::ppp::{select_paths, InterestingList, ListEntry, Selection};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// The interesting paths of a path-mode profile: per function, the executed
/// paths `selection` keeps, with their counts.
pub fn interesting(loaded: &Loaded, selection: &Selection) -> Result<InterestingList> {
    let map = &loaded.map;
    if map.mode != pathprof_core::Mode::Path {
        bail!(
            "{} holds a {} profile; interesting paths come from a program built with --mode=path",
            loaded.map_path.display(),
            map.mode.name()
        );
    }
    let mut entries = Vec::new();
    for (f, counts) in map.functions.iter().zip(&loaded.counts) {
        let Layout::Path { dag, .. } = &f.layout else {
            continue;
        };
        let executed: Vec<(u64, u64)> = counts.paths.iter().map(|p| (p.id, p.count)).collect();
        let file = map.file_name(f.file).unwrap_or_default();
        for (id, count) in select_paths(&executed, selection) {
            let entry = ListEntry::for_path(&f.name, file, &f.cfg, dag, id, Some(count))
                .with_context(|| format!("{}: path {id}", f.name))?;
            entries.push(entry);
        }
    }
    Ok(InterestingList { entries })
}

/// The functions a list names that a program or library (its map
/// fragments) does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// Whether it has none of the functions the list names.
    pub none_known: bool,
    /// Those of source files it compiles (or of no file named; any source
    /// file, when it was built without debug info) that it does not have:
    /// renamed or removed since the list was made, or misspelt.
    pub here: Vec<&'a str>,
    /// Those of source files it does not compile, and of headers (inline
    /// and template functions, which a program has only where it uses
    /// them): the functions of a project's other programs and libraries,
    /// when the list is the project's.
    pub elsewhere: usize,
}

/// The functions `list` names that none of `maps` has.
pub fn unknown_functions<'a>(list: &'a InterestingList, maps: &[&MapFile]) -> Unknown<'a> {
    let known: BTreeSet<&str> = maps
        .iter()
        .flat_map(|m| m.functions.iter().map(|f| f.name.as_str()))
        .collect();
    // The file names of the source files it compiles, once: a listed file
    // is one of them when its name is (`ppp::list`'s same file).
    let compiled: BTreeSet<String> = maps
        .iter()
        .flat_map(|m| m.files.iter().map(|f| base_name(f)))
        .collect();
    // Built without debug info, a module names no files: any source file
    // may be one it compiles.
    let files_known = maps.iter().all(|m| !m.files.is_empty());
    let listed = list.functions();
    let mut here = BTreeSet::new();
    let mut elsewhere = 0;
    let unknown: Vec<_> = listed
        .iter()
        .filter(|(name, _)| !known.contains(name))
        .collect();
    for &&(name, file) in &unknown {
        let file_name = base_name(file);
        let compiles = !files_known || compiled.contains(&file_name);
        if file.is_empty() || !is_header(&file_name) && compiles {
            here.insert(name);
        } else {
            elsewhere += 1;
        }
    }
    Unknown {
        none_known: !listed.is_empty() && unknown.len() == listed.len(),
        here: here.into_iter().collect(),
        elsewhere,
    }
}

/// Whether the file named `name` ([`base_name`]) is a header: an extension
/// of C's and C++'s headers, or none (`<vector>`).
fn is_header(name: &str) -> bool {
    match name.rsplit_once('.') {
        None => true,
        Some((_, ext)) => matches!(
            ext,
            "h" | "hh" | "hpp" | "hxx" | "h++" | "H" | "inc" | "inl" | "ipp" | "tcc" | "def"
        ),
    }
}

impl Unknown<'_> {
    /// The warnings, one line each, about the functions the list (at
    /// `list_path`) names that the program does not have and should:
    /// functions of the source files (not headers) it compiles (renamed or
    /// removed since the list was made, or misspelt), or every function of
    /// the list (a list made for another program). The functions of other
    /// source files are a project's other programs and libraries, said only
    /// with `verbose`. Never fatal.
    pub fn warnings(&self, list_path: &Path, verbose: bool) -> Vec<String> {
        let list_path = list_path.display();
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        if self.none_known {
            return vec![format!(
                "pathprof: warning: {list_path}: none of the functions it lists is in this \
                 program: the list was made for another program, or its training ran none of \
                 this one's code; ignored"
            )];
        }
        let mut out = Vec::new();
        if !self.here.is_empty() {
            const SHOWN: usize = 5;
            let here = &self.here;
            let mut names = here[..here.len().min(SHOWN)].join(", ");
            if here.len() > SHOWN {
                let _ = write!(names, " and {} more", here.len() - SHOWN);
            }
            out.push(format!(
                "pathprof: warning: {list_path}: {} of source files this program compiles {} not \
                 in it (renamed or removed since the list was made, or compiled out here by \
                 other macros), ignored: {names}",
                plural(here.len(), "function", "functions"),
                if here.len() == 1 { "is" } else { "are" },
            ));
        }
        if verbose && self.elsewhere > 0 {
            out.push(format!(
                "pathprof: {list_path}: {} of source files this program does not compile (other \
                 programs or libraries of the list's), ignored",
                plural(self.elsewhere, "function", "functions")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::loaded;

    /// A list naming functions (name, file), one entry each.
    fn list(functions: &[(&str, &str)]) -> InterestingList {
        let entries = functions
            .iter()
            .map(|&(function, file)| ListEntry {
                function: function.into(),
                file: file.into(),
                shape: 0,
                id: 0,
                blocks: vec![pathprof_core::BlockId(0)],
                count: None,
                note: None,
            })
            .collect();
        InterestingList { entries }
    }

    #[test]
    fn only_functions_that_should_be_here_are_unknown() {
        // The program has f of t.c, and includes t.h.
        let mut l = loaded(2, &[(0, 1)], &[(&[0, 1], 1)], &[]);
        l.map.files.push("t.h".into());
        l.map.file_digests.push(None);
        let maps = [&l.map];
        let of = |functions: &[(&str, &str)]| {
            let list = list(functions);
            let u = unknown_functions(&list, &maps);
            (u.none_known, u.here.join(" "), u.elsewhere)
        };
        assert_eq!(of(&[("f", "t.c")]), (false, String::new(), 0));
        // Renamed in a file it compiles (built elsewhere), or of no file.
        assert_eq!(
            of(&[("f", "t.c"), ("g", "/src/./t.c"), ("g", ""), ("h", "")]),
            (false, "g h".into(), 0)
        );
        // A project's other program's function, and a header's inline or
        // template functions this program does not use.
        assert_eq!(
            of(&[
                ("f", "t.c"),
                ("main", "u.c"),
                ("inl", "t.h"),
                ("tpl", "/usr/include/c++/12/vector")
            ]),
            (false, String::new(), 3)
        );
        // A list made for another program: none of its functions is here.
        assert_eq!(of(&[("g", "t.c"), ("g", "v.c")]), (true, "g".into(), 1));
        assert_eq!(of(&[]), (false, String::new(), 0));
        // Built without debug info: any source file may be one it compiles.
        l.map.files.clear();
        l.map.file_digests.clear();
        l.map.functions[0].file = None;
        let maps = [&l.map];
        let list = list(&[("f", "t.c"), ("main", "u.c"), ("inl", "t.h")]);
        let u = unknown_functions(&list, &maps);
        assert_eq!(
            (u.none_known, u.here, u.elsewhere),
            (false, vec!["main"], 1)
        );
    }
}
