//! Small valid maps, the seeds of the map mutation tests (`tests/mutations.rs`)
//! and of the map fuzz target (`fuzz/src/make_seeds.rs` includes this file by
//! path): every layout kind, truncation, early exits, an unsplittable edge and
//! a block that ends in a counted `invoke`.

use pathprof_core::map::{schema, BlockInfo, LineSpan, MapFile, MapFunction};
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::{Cfg, Mode};

/// Small CFGs covering what layouts hold: a loop, a self loop, an unreachable
/// block, an unsplittable edge and calls that may not return (the `invoke`
/// that ends block 0 among them).
pub fn cfgs() -> Vec<Cfg> {
    // Written as the map's JSON (its schema) so that the seeds do not depend
    // on every field of `CfgEdge`.
    let unsplittable = r#"{"num_blocks":5,"entry":0,"edges":[
        {"from":0,"to":1,"slot":0,"splittable":true},
        {"from":0,"to":2,"slot":1,"splittable":false},
        {"from":1,"to":3,"slot":0,"splittable":true},
        {"from":2,"to":3,"slot":0,"splittable":true},
        {"from":3,"to":4,"slot":0,"splittable":true}],
        "calls":[1,0,0,2,0],"terminator_calls":[0]}"#;
    vec![
        Cfg::from_edge_list(1, &[]).unwrap(),
        Cfg::from_edge_list(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)]).unwrap(),
        Cfg::from_edge_list(4, &[(0, 1), (1, 1), (1, 2), (0, 2), (3, 2)]).unwrap(),
        Cfg::try_from(serde_json::from_str::<schema::Cfg>(unsplittable).unwrap()).unwrap(),
    ]
}

/// A map of [`cfgs`] planned in `mode` (in block mode where paths do not fit,
/// as the compiler driver does), its blocks spread over two files.
pub fn map(mode: Mode, options: &PlanOptions) -> MapFile {
    let functions: Vec<MapFunction> = cfgs()
        .into_iter()
        .enumerate()
        .map(|(i, cfg)| {
            let (_, layout) = plan_function(&cfg, mode, options)
                .or_else(|_| plan_function(&cfg, Mode::Block, options))
                .unwrap();
            let blocks = (0..cfg.num_blocks() as u32)
                .map(|b| BlockInfo {
                    line: Some(b + 2),
                    instructions: b + 1,
                    lines: vec![LineSpan {
                        file: (b % 2),
                        line: b + 2,
                        instructions: b + 1,
                    }],
                })
                .collect();
            MapFunction {
                name: format!("f{i}"),
                display_name: None,
                file: Some(0),
                line: Some(1),
                hash: cfg.shape_hash(),
                cfg,
                blocks,
                layout,
                entry_calls: Vec::new(),
                entries_by_callers: false,
            }
        })
        .collect();
    // Through JSON, so that fields added later keep their defaults.
    let build_id = MapFile::compute_build_id(mode, &[], &functions);
    serde_json::from_value(serde_json::json!({
        "mode": mode,
        "build_id": build_id,
        "files": ["t.c", "t.h"],
        "file_digests": [null, 3],
        "functions": functions,
    }))
    .unwrap()
}

/// A valid map of every mode and layout: block (a counter in every block,
/// and on a spanning tree's chords), edge, path, and path truncated to 3
/// paths per function with early exits.
pub fn maps() -> [(&'static str, MapFile); 5] {
    let cut = PlanOptions::default()
        .with_max_paths(3)
        .with_early_exit(true);
    [
        (
            "block",
            map(Mode::Block, &PlanOptions::default().with_every_block(true)),
        ),
        ("edge", map(Mode::Edge, &PlanOptions::default())),
        ("path", map(Mode::Path, &PlanOptions::default())),
        ("path-cut-early-exit", map(Mode::Path, &cut)),
        ("block-chords", map(Mode::Block, &PlanOptions::default())),
    ]
}
