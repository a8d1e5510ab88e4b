//! Core's modules form layers, no cycle: a module's non-test code names
//! (`crate::NAME`) only modules below it. This reads the crate's own
//! sources, so a change that makes two modules use each other fails here,
//! naming them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module `file` belongs to (`map` for `map/schema.rs`).
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The modules `text` names as `crate::NAME`, outside comments and before
/// its test module.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut found = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let name: String = line[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn core_modules_use_each_other_in_layers_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        // A module's test files (`ppp/tests.rs`) are test code.
        if module == "lib" || file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let used = uses(&std::fs::read_to_string(file).unwrap());
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(used.into_iter().filter(|u| *u != module));
    }
    assert!(graph.len() > 20, "the modules were found: {graph:?}");
    // Peel off modules that use only peeled ones; what is left lies on or
    // above a cycle.
    let mut peeled: BTreeSet<String> = BTreeSet::new();
    loop {
        let next: Vec<String> = graph
            .iter()
            .filter(|(m, used)| {
                !peeled.contains(*m)
                    && used
                        .iter()
                        .all(|u| peeled.contains(u) || !graph.contains_key(u))
            })
            .map(|(m, _)| m.clone())
            .collect();
        if next.is_empty() {
            break;
        }
        peeled.extend(next);
    }
    let left: BTreeMap<&String, Vec<&String>> = graph
        .iter()
        .filter(|(m, _)| !peeled.contains(*m))
        .map(|(m, used)| (m, used.iter().filter(|u| !peeled.contains(*u)).collect()))
        .collect();
    assert!(left.is_empty(), "modules that use each other: {left:?}");
}
