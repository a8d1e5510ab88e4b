//! `pathprof verify`: the verifier of the LLVM path-profiling notes. The edge
//! profile derived from a path profile must equal, edge for edge, the profile of
//! the independent edge instrumentation of the same program run on the same input.

use super::load::Loaded;
use anyhow::{bail, Result};
use std::collections::HashMap;
use std::fmt::Write as _;

/// What `verify` found.
pub struct Outcome {
    pub matched: bool,
    pub text: String,
}

/// Compares the path-derived edge counts of `paths` with `edges`.
pub fn verify(paths: &Loaded, edges: &Loaded) -> Result<Outcome> {
    if paths.map.mode != pathprof_core::Mode::Path {
        bail!(
            "{} is not a path-mode map (it is {}); pass the path build's map with --map",
            paths.map_path.display(),
            paths.map.mode.name()
        );
    }
    if edges.map.mode == pathprof_core::Mode::Block {
        bail!(
            "{} is a block-mode map; --edge-map needs an edge- or path-mode build",
            edges.map_path.display()
        );
    }
    let by_name: HashMap<&str, usize> = edges
        .map
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut text = String::new();
    let mut differing = 0usize;
    let mut compared = 0usize;
    for (i, f) in paths.map.functions.iter().enumerate() {
        let Some(&j) = by_name.get(f.name.as_str()) else {
            let _ = writeln!(text, "{}: only in the path build", f.name);
            differing += 1;
            continue;
        };
        let g = &edges.map.functions[j];
        if f.hash != g.hash {
            let _ = writeln!(
                text,
                "{}: the two builds have different control flow (compile both with the same flags)",
                f.name
            );
            differing += 1;
            continue;
        }
        let (Some(a), Some(b)) = (&paths.counts[i].edges, &edges.counts[j].edges) else {
            continue;
        };
        for (e, (x, y)) in a.iter().zip(b).enumerate() {
            compared += 1;
            if x != y {
                differing += 1;
                let ce = &f.cfg.edges()[e];
                let line = |b: pathprof_core::BlockId| {
                    f.blocks[b.index()]
                        .line
                        .map_or(String::new(), |l| format!(":{l}"))
                };
                let _ = writeln!(
                    text,
                    "{}: edge e{e} {}{} -> {}{}: from paths {x}, edge profile {y}",
                    f.display_name.as_deref().unwrap_or(&f.name),
                    ce.from,
                    line(ce.from),
                    ce.to,
                    line(ce.to)
                );
            }
        }
    }
    for g in &edges.map.functions {
        if !paths.map.functions.iter().any(|f| f.name == g.name) {
            let _ = writeln!(text, "{}: only in the edge build", g.name);
            differing += 1;
        }
    }
    let matched = differing == 0;
    if matched {
        let _ = writeln!(
            text,
            "verified: {compared} edge counts of {} functions derived from the path profile equal the edge profile",
            paths.map.functions.len()
        );
    } else {
        let _ = writeln!(
            text,
            "MISMATCH: {differing} differences ({compared} edges compared)"
        );
    }
    Ok(Outcome { matched, text })
}
