//! Writes seed inputs for the fuzz targets: `make_seeds <corpus dir>` fills
//! `<dir>/map`, `<dir>/raw_profile` and `<dir>/raw_merge` with small valid
//! files (behind the targets' flag byte 0: "fix the checksum").

use pathprof_core::cfg::Cfg;
use pathprof_core::map::{BlockInfo, LineSpan, MapFile, MapFunction};
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::Mode;
use pathprof_format::{RawFunction, RawProfile};
use std::path::Path;

/// A few small CFGs: a loop, a diamond, a self loop, an unsplittable edge, calls.
fn cfgs() -> Vec<Cfg> {
    let mut out = vec![
        Cfg::from_edge_list(1, &[]).unwrap(),
        Cfg::from_edge_list(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)]).unwrap(),
        Cfg::from_edge_list(4, &[(0, 1), (1, 1), (1, 2), (0, 2), (3, 2)]).unwrap(),
    ];
    // Unsplittable edges (an `invoke`'s unwind edge, the invoke a counted call
    // that terminates its block) are written as JSON so
    // that the seeds do not depend on every field of `CfgEdge`.
    let json = r#"{"num_blocks":5,"entry":0,"edges":[
        {"from":0,"to":1,"slot":0,"splittable":true},
        {"from":0,"to":2,"slot":1,"splittable":false},
        {"from":1,"to":3,"slot":0,"splittable":true},
        {"from":2,"to":3,"slot":0,"splittable":true},
        {"from":3,"to":4,"slot":0,"splittable":true}],
        "calls":[1,0,0,2,0],"terminator_calls":[0]}"#;
    out.push(serde_json::from_str(json).unwrap());
    out
}

fn map(mode: Mode, options: &PlanOptions) -> MapFile {
    let functions: Vec<MapFunction> = cfgs()
        .into_iter()
        .enumerate()
        .map(|(i, cfg)| {
            // As the compiler driver does: too many paths, count blocks.
            let (_, layout) = plan_function(&cfg, mode, options)
                .or_else(|_| plan_function(&cfg, Mode::Block, options))
                .unwrap();
            let blocks = (0..cfg.num_blocks() as u32)
                .map(|b| BlockInfo {
                    line: Some(b + 2),
                    instructions: b + 1,
                    lines: vec![LineSpan {
                        file: 0,
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
            }
        })
        .collect();
    // Through JSON, so that fields added later keep their defaults.
    let build_id = MapFile::compute_build_id(mode, &functions);
    serde_json::from_value(serde_json::json!({
        "mode": mode,
        "build_id": build_id,
        "files": ["t.c"],
        "file_digests": [null],
        "functions": functions,
    }))
    .unwrap()
}

fn profiles() -> Vec<RawProfile> {
    let f = |index, slots: &[u64], paths: &[(u64, u64)]| RawFunction {
        index,
        hash: 0x1000 + u64::from(index),
        slots: slots.to_vec(),
        paths: paths.to_vec(),
    };
    vec![
        RawProfile::new(7, 2),
        RawProfile {
            functions: vec![f(0, &[1, 2], &[(0, 3), (5, 1)]), f(2, &[], &[(1, 9)])],
            ..RawProfile::new(7, 2)
        },
        RawProfile {
            processes: 3,
            forked: 2,
            threads: u64::MAX,
            functions: vec![f(0, &[4, 0], &[(5, u64::MAX)]), f(1, &[3], &[])],
            ..RawProfile::new(7, 2)
        },
    ]
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut input = vec![0u8];
    input.extend_from_slice(bytes);
    std::fs::write(dir.join(name), input).unwrap();
}

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let root = Path::new(&root);
    let path_options = PlanOptions::default()
        .with_early_exit(true)
        .with_max_paths(3);
    let maps = [
        ("block", map(Mode::Block, &PlanOptions::default())),
        ("edge", map(Mode::Edge, &PlanOptions::default())),
        ("path", map(Mode::Path, &PlanOptions::default())),
        ("path-cut-early-exit", map(Mode::Path, &path_options)),
    ];
    for (name, m) in &maps {
        let read = MapFile::from_bytes(&m.to_bytes(), name).expect("a written map reads back");
        assert_eq!(&read, m);
        write(
            &root.join("map"),
            name,
            pathprof_fuzz::map_body(&m.to_bytes()),
        );
    }
    let profiles = profiles();
    for (i, p) in profiles.iter().enumerate() {
        write(&root.join("raw_profile"), &format!("p{i}"), &p.encode());
    }
    for (i, a) in profiles.iter().enumerate() {
        for (j, b) in profiles.iter().enumerate() {
            let (a, b) = (a.encode(), b.encode());
            let mut input = (a.len() as u16).to_le_bytes().to_vec();
            input.extend_from_slice(&a);
            input.extend_from_slice(&b);
            write(&root.join("raw_merge"), &format!("m{i}{j}"), &input);
        }
    }
}
