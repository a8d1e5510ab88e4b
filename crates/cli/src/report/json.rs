//! `pathprof report --format json`: the machine-readable contract (format
//! `pathprof-report`, version 1) that tests and other tools rely on.

use super::load::Loaded;
use pathprof_core::derive::PathCount;
use pathprof_core::layout::Layout;
use pathprof_core::regen::PathEnd;
use serde_json::{json, Value};

/// The whole report.
pub fn report(loaded: &Loaded) -> Value {
    let map = &loaded.map;
    let functions: Vec<Value> = map
        .functions
        .iter()
        .zip(&loaded.counts)
        .map(|(f, c)| {
            let potential_paths = match &f.layout {
                Layout::Path { dag, .. } => json!(dag.num_paths()),
                _ => Value::Null,
            };
            let blocks: Vec<Value> = f
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let mut block = json!({"id": i, "line": b.line, "instructions": b.instructions, "count": c.blocks[i]});
                    if let Some(exits) = &c.exits {
                        // Returns, and activations that ended inside its calls
                        // (counted with --early-exit).
                        block["exits"] = json!(exits[i]);
                    }
                    if let Some(starts) = &c.starts {
                        // Activations that went on after one of its calls
                        // although their count up to it was written (a fork
                        // child returning into a frame of its parent's).
                        block["starts"] = json!(starts[i]);
                    }
                    block
                })
                .collect();
            let edges: Vec<Value> = f
                .cfg
                .edges()
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let count = c.edges.as_ref().map(|v| v[i]);
                    let mut edge = json!({"from": e.from.0, "to": e.to.0, "count": count});
                    if e.resume {
                        // After a call that returns more than once (fork,
                        // setjmp): taken once per return.
                        edge["resume"] = json!(true);
                    }
                    edge
                })
                .collect();
            let mut obj = json!({
                "name": f.name,
                "file": map.file_name(f.file),
                "line": f.line,
                "entry_count": c.entry,
                "potential_paths": potential_paths,
                "blocks": blocks,
                "edges": edges,
            });
            if let Some(d) = &f.display_name {
                obj["display_name"] = json!(d);
            }
            if let Layout::Path { dag, .. } = &f.layout {
                let end = |e: PathEnd| match e {
                    PathEnd::Function => Value::Null,
                    PathEnd::Edge(id) => {
                        let ce = f.cfg.edge(id);
                        json!([ce.from.0, ce.to.0])
                    }
                    PathEnd::Unsplittable(b) | PathEnd::Call(b, _) => json!([b.0, Value::Null]),
                };
                let start = |e: PathEnd| match e {
                    PathEnd::Unsplittable(b) => json!([Value::Null, b.0]),
                    other => end(other),
                };
                let listed = |paths: &[PathCount]| -> Vec<Value> {
                    paths
                        .iter()
                        .map(|p| {
                            json!({
                                "id": p.id,
                                "count": p.count,
                                "blocks": p.path.blocks(dag).iter().map(|b| b.0).collect::<Vec<_>>(),
                                "exit": end(p.path.end(dag)),
                                "start": start(p.path.start(dag)),
                                "terminated": matches!(p.path.end(dag), PathEnd::Call(..)),
                            })
                        })
                        .collect()
                };
                let paths = listed(&c.paths);
                obj["resumed_paths"] = json!(listed(&c.resumed));
                obj["paths"] = json!(paths);
            }
            if !matches!(f.layout, Layout::Block { .. }) {
                obj["lost_paths"] = json!(c.lost);
            }
            obj["flow_imbalance"] = json!(c.imbalance.total());
            obj
        })
        .collect();
    let facts = &loaded.facts;
    json!({
        "format": "pathprof-report",
        "version": 1,
        "mode": map.mode.name(),
        "build_id": format!("{:016x}", map.build_id),
        "processes": facts.processes,
        "forked_processes": facts.forked,
        "threads": facts.threads,
        "exact": facts.exact(),
        "functions": functions,
    })
}
