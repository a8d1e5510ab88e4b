//! The note a build gives about the functions whose paths all count in hash
//! tables (a lookup at every path end, path mode's dearest probe), and how to
//! avoid it: given once per link, for what the link put together, so that a
//! function every translation unit compiles (a C++ header's inline and
//! template functions, a C header's `static inline` ones) is named once, not
//! once per compile.

use crate::cli::InstrumentOptions;
use pathprof_core::layout::Layout;
use pathprof_core::map::{MapFile, MapFunction};
use std::collections::HashSet;

/// How many functions the note names before it says how many more there are.
const SHOWN: usize = 5;

/// Notes the functions of `maps` (the fragments of `output`, or the module
/// `pathprof instrument` wrote there) that count all their paths in a hash
/// table, each once: a PPP function's residual paths hash too, but its
/// interesting ones count in an array, so it is not listed. `o` are the
/// build's options, for the limits the advice names.
pub fn note(maps: &[MapFile], output: &str, o: &InstrumentOptions) {
    let options = o.settings().plan_options().path;
    // Each function once: a copy in another fragment has its name, shape and file.
    let mut hashed: Vec<(&MapFunction, u64)> = Vec::new();
    let mut seen: HashSet<(&str, u64, Option<&str>)> = HashSet::new();
    for (m, f) in maps
        .iter()
        .flat_map(|m| m.functions.iter().map(move |f| (m, f)))
    {
        let Layout::Path {
            dag,
            hashed: true,
            ppp_owners,
            ..
        } = &f.layout
        else {
            continue;
        };
        if ppp_owners.is_empty() && seen.insert((&f.name, f.hash, m.file_name(f.file))) {
            hashed.push((f, dag.num_paths()));
        }
    }
    if hashed.is_empty() {
        return;
    }
    let mut names: Vec<String> = hashed
        .iter()
        .take(SHOWN)
        .map(|(f, n)| format!("{} ({n} paths)", f.shown_name()))
        .collect();
    if hashed.len() > SHOWN {
        names.push(format!("{} more", hashed.len() - SHOWN));
    }
    let limit = options.array_limit;
    let one = hashed.len() == 1;
    eprintln!(
        "pathprof: note: {} function{} more than {limit} potential paths (--array-limit) and \
         count{} paths in a hash table, a lookup at every path end (an inline cache holds \
         the hottest ids): {} in {output}; to count in arrays, build with --mode=ppp and a \
         training run's paths (pathprof interesting; and --ppp-cache-paths=0 for functions \
         of at most {} interesting paths), or cut paths with --max-paths={limit}",
        hashed.len(),
        if one { " has" } else { "s have" },
        if one { "s its" } else { " their" },
        names.join(", "),
        options.cache_paths()
    );
}
