//! Preferential path profiling's commands: `pathprof interesting` (the
//! interesting-path list of a path-mode training profile) and `pathprof
//! residual` (the executed paths of a PPP profile that are not interesting),
//! and what `pathprof cc --mode=ppp` reads the list with.

use super::load::Loaded;
use super::paths::{describe_end, hot_paths, source_ranges};
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
struct Unknown<'a> {
    /// Whether it has none of the functions the list names.
    none_known: bool,
    /// Those of source files it compiles (or of no file named; any source
    /// file, when it was built without debug info) that it does not have:
    /// renamed or removed since the list was made, or misspelt.
    here: Vec<&'a str>,
    /// Those of source files it does not compile, and of headers (inline
    /// and template functions, which a program has only where it uses
    /// them): the functions of a project's other programs and libraries,
    /// when the list is the project's.
    elsewhere: usize,
}

fn unknown_functions<'a>(list: &'a InterestingList, maps: &[&MapFile]) -> Unknown<'a> {
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

/// Warns about the functions the list names that none of `maps` has, and
/// that should be there: functions of the source files (not headers) they
/// compile (renamed or removed since the list was made, or misspelt), or every
/// function of the list (a list made for another program). The functions
/// of other source files are a project's other programs and libraries,
/// said only with `verbose`. Never fatal.
pub fn warn_unknown(list: &InterestingList, list_path: &Path, maps: &[&MapFile], verbose: bool) {
    let unknown = unknown_functions(list, maps);
    let list_path = list_path.display();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if unknown.none_known {
        eprintln!(
            "pathprof: warning: {list_path}: none of the functions it lists is in this program: the list was made for another program, or its training ran none of this one's code; ignored"
        );
        return;
    }
    if !unknown.here.is_empty() {
        const SHOWN: usize = 5;
        let here = &unknown.here;
        let mut names = here[..here.len().min(SHOWN)].join(", ");
        if here.len() > SHOWN {
            let _ = write!(names, " and {} more", here.len() - SHOWN);
        }
        eprintln!(
            "pathprof: warning: {list_path}: {} of source files this program compiles {} not in it \
             (renamed or removed since the list was made, or compiled out here by other macros), ignored: {names}",
            plural(here.len(), "function", "functions"),
            if here.len() == 1 { "is" } else { "are" },
        );
    }
    if verbose && unknown.elsewhere > 0 {
        eprintln!(
            "pathprof: {list_path}: {} of source files this program does not compile (other programs or libraries of the list's), ignored",
            plural(unknown.elsewhere, "function", "functions")
        );
    }
}

/// `pathprof residual`: the executed paths that are not interesting.
pub fn residual(loaded: &Loaded, function: Option<&str>, top: usize) -> Result<String> {
    let map = &loaded.map;
    if !map.is_ppp() {
        bail!(
            "{} is not a PPP build: build with `pathprof cc --mode=ppp --interesting=FILE`",
            loaded.map_path.display()
        );
    }
    let paths = hot_paths(loaded, function)?;
    let total: u128 = paths.iter().map(|p| p.count as u128).sum();
    let residual: Vec<_> = paths
        .iter()
        .filter(|p| !p.function.layout.is_interesting(p.id))
        .collect();
    let executions: u128 = residual.iter().map(|p| p.count as u128).sum();
    let mut out = String::new();
    let share = |n: u128| {
        if total == 0 {
            0.0
        } else {
            100.0 * n as f64 / total as f64
        }
    };
    let _ = writeln!(
        out,
        "{} residual paths (executed, not interesting) of {} executed, {} executions ({:.2}% of {}), most executed first",
        residual.len(),
        paths.len(),
        executions,
        share(executions),
        total
    );
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>7} {:>6}  function / path",
        "rank", "count", "share", "blocks"
    );
    for (rank, p) in residual.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "{:>4} {:>12} {:>6.2}% {:>6}  {} (path {})",
            rank + 1,
            p.count,
            share(p.count as u128),
            p.path.blocks(p.dag).len(),
            p.name,
            p.id
        );
        let _ = writeln!(
            out,
            "{:>33}{}",
            "",
            source_ranges(map, p.function, p.dag, p.path)
        );
        for (end, starting) in [(p.path.start(p.dag), true), (p.path.end(p.dag), false)] {
            if let Some(text) = describe_end(p.function, end, starting) {
                let _ = writeln!(out, "{:>33}{text}", "");
            }
        }
    }
    if residual.len() > top {
        let _ = writeln!(out, "({} more)", residual.len() - top);
    }
    Ok(out)
}

/// `pathprof ppp-stats`: per PPP-numbered function (most interesting paths
/// first) its potential paths, |I|, PPP interval and δ, then δ's histogram
/// (the paper's Figure 16); functions with interesting paths that path
/// mode's array counts instead are counted, not listed.
pub fn stats(map: &MapFile) -> String {
    let mut rows: Vec<(&pathprof_core::map::MapFunction, u64, u64, u64)> = Vec::new();
    for f in &map.functions {
        let Layout::Path {
            dag, ppp_owners, ..
        } = &f.layout
        else {
            continue;
        };
        if ppp_owners.is_empty() {
            continue;
        }
        let interesting = f.layout.interesting().len() as u64;
        rows.push((f, dag.num_paths(), interesting, ppp_owners.len() as u64));
    }
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.name.cmp(&b.0.name)));
    let listed = map
        .functions
        .iter()
        .filter(|f| !f.layout.interesting().is_empty())
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{listed} of {} functions have interesting paths, {} numbered by PPP (the others count as \
         in path mode: in its arrays, or through its inline cache), most interesting paths first",
        map.functions.len(),
        rows.len()
    );
    let _ = writeln!(
        out,
        "{:>20} {:>8} {:>9} {:>7}  function",
        "potential paths", "|I|", "interval", "delta"
    );
    // Upper bounds of δ's buckets: 1 (compact), then up to 1.1, 1.5, 2, 4, more.
    const BOUNDS: [f64; 5] = [1.0, 1.1, 1.5, 2.0, 4.0];
    let mut histogram = [0usize; BOUNDS.len() + 1];
    for &(f, paths, interesting, interval) in &rows {
        let delta = interval as f64 / interesting as f64;
        let bucket = BOUNDS
            .iter()
            .position(|&b| delta <= b)
            .unwrap_or(BOUNDS.len());
        histogram[bucket] += 1;
        let _ = writeln!(
            out,
            "{paths:>20} {interesting:>8} {interval:>9} {delta:>7.3}  {}",
            f.shown_name()
        );
    }
    let labels = ["1", "(1, 1.1]", "(1.1, 1.5]", "(1.5, 2]", "(2, 4]", "> 4"];
    let _ = writeln!(out, "delta histogram (functions):");
    for (label, n) in labels.iter().zip(histogram) {
        let _ = writeln!(out, "{label:>12} {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_report::fixtures::loaded;

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
