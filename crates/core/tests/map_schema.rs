//! The map file format, pinned: the exact JSON body of a small map of each
//! mode, as literal strings written by map format version 3 before the format
//! had a schema of its own (`pathprof_core::map::schema`). A change to the
//! schema, or to how the algorithms' types convert to it, fails here; one
//! that is meant changes the file format, so it needs a new `MAP_VERSION`
//! (and a reader for this one) before these strings may change.
//!
//! Together the maps hold every field and every variant of the schema: a
//! block layout with a calls slot, an edge layout with entry, CFG and exit
//! edges, and path layouts with a loop and a self loop, then with an
//! unsplittable edge, a resume edge, counted calls (one of them a block's
//! terminator), an unreachable block and early exits, and one truncated.

use pathprof_core::cfg::CfgEdge;
use pathprof_core::hash::fnv64;
use pathprof_core::map::{schema, BlockInfo, LineSpan, MapFile, MapFunction, P3Build, MAP_VERSION};
use pathprof_core::planner::{plan_function, PlanOptions};
use pathprof_core::{BlockId, Cfg, Mode};

/// A function of `cfg` planned in `mode`, its block `b` on line `10 + b` of
/// file `b % 2`.
fn function(name: &str, cfg: Cfg, mode: Mode, options: &PlanOptions) -> MapFunction {
    let (_, layout) = plan_function(&cfg, mode, options).unwrap();
    let blocks = (0..cfg.num_blocks() as u32)
        .map(|b| BlockInfo {
            line: (b != 1).then_some(10 + b),
            instructions: b + 1,
            lines: vec![LineSpan {
                file: b % 2,
                line: 10 + b,
                instructions: b + 1,
            }],
        })
        .collect();
    MapFunction {
        name: name.to_string(),
        display_name: None,
        file: Some(0),
        line: Some(9),
        hash: cfg.shape_hash(),
        cfg,
        blocks,
        layout,
        entry_calls: Vec::new(),
        entries_by_callers: false,
    }
}

fn map(mode: Mode, functions: Vec<MapFunction>) -> MapFile {
    let files = vec!["/src/t.c".to_string(), "/src/t.h".to_string()];
    MapFile {
        mode,
        build_id: MapFile::compute_build_id(mode, &files, &functions),
        files,
        file_digests: vec![Some(0x1234), None],
        functions,
        atomic: mode == Mode::Edge,
        per_thread: false,
        p3: None,
    }
}

/// Block mode: the entry block heads a loop, so calls get a slot of their
/// own; a demangled name.
fn block_map() -> MapFile {
    let cfg = Cfg::from_edge_list(3, &[(0, 1), (1, 0), (1, 2)]).unwrap();
    let every = PlanOptions::default().with_every_block(true);
    let mut f = function("_ZN1f", cfg, Mode::Block, &every);
    f.display_name = Some("ns::f".into());
    f.file = None;
    f.line = None;
    map(Mode::Block, vec![f])
}

/// Edge mode: the entry block heads a loop measured hot, so that the entry
/// edge is counted too; a call that may not return counted (early exits);
/// atomic counters.
fn edge_map() -> MapFile {
    let mut cfg = Cfg::from_edge_list(3, &[(0, 1), (1, 0), (1, 2)]).unwrap();
    cfg.set_calls(vec![0, 1, 0]).unwrap();
    let options = PlanOptions {
        edge_counts: Some(vec![2, 100, 5]),
        ..PlanOptions::default()
    }
    .with_early_exit(true);
    map(Mode::Edge, vec![function("g", cfg, Mode::Edge, &options)])
}

/// Path mode: a loop and a self loop; an `invoke` (a counted call ending
/// block 0, with an unsplittable edge), a `fork` (a resume edge out of block
/// 3), another counted call, an unreachable block and early exits; four
/// diamonds in a row (16 paths) truncated to 12.
fn path_map() -> MapFile {
    let loops = Cfg::from_edge_list(4, &[(0, 1), (1, 1), (1, 2), (2, 1), (2, 3)]).unwrap();
    let edge = |from: u32, to: u32, slot: u32, splittable: bool, resume: bool| CfgEdge {
        from: BlockId(from),
        to: BlockId(to),
        slot,
        splittable,
        resume,
    };
    let mut special = Cfg::new(
        7,
        BlockId(0),
        vec![
            edge(0, 1, 0, true, false),
            edge(0, 2, 1, false, false),
            edge(1, 3, 0, true, false),
            edge(2, 3, 0, true, false),
            edge(3, 4, 0, true, true),
            edge(4, 5, 0, true, false),
            edge(4, 5, 1, true, false),
            edge(6, 5, 0, true, false),
        ],
    )
    .unwrap();
    special.set_calls(vec![1, 0, 0, 0, 1, 0, 0]).unwrap();
    special.set_terminator_calls(&[BlockId(0)]).unwrap();
    let diamonds: Vec<(u32, u32)> = (0..4)
        .flat_map(|i| [(3 * i, 3 * i + 1), (3 * i, 3 * i + 2)])
        .flat_map(|(from, to)| [(from, to), (to, from / 3 * 3 + 3)])
        .collect();
    let diamonds = Cfg::from_edge_list(13, &diamonds).unwrap();
    let early_exit = PlanOptions::default().with_early_exit(true);
    let cut = PlanOptions::default().with_max_paths(12);
    map(
        Mode::Path,
        vec![
            function("loops", loops, Mode::Path, &PlanOptions::default()),
            function("special", special, Mode::Path, &early_exit),
            function("diamonds", diamonds, Mode::Path, &cut),
        ],
    )
}

const BLOCK: &str = concat!(
    r#"{"mode":"block","build_id":4394386906888588817,"files":["/src/t.c","#,
    r#""/src/t.h"],"file_digests":[4660,null],"functions":[{"name":"_ZN1f","#,
    r#""display_name":"ns::f","file":null,"line":null,"hash":3377149286236924772,"#,
    r#""cfg":{"num_blocks":3,"entry":0,"edges":[{"from":0,"to":1,"slot":0,"#,
    r#""splittable":true},{"from":1,"to":0,"slot":0,"splittable":true},"#,
    r#"{"from":1,"to":2,"slot":1,"splittable":true}]},"blocks":[{"line":10,"#,
    r#""instructions":1,"lines":[{"file":0,"line":10,"instructions":1}]},"#,
    r#"{"line":null,"instructions":2,"lines":[{"file":1,"line":11,"instructions":2}]},"#,
    r#"{"line":12,"instructions":3,"lines":[{"file":0,"line":12,"instructions":3}]}],"#,
    r#""layout":{"kind":"block","slot_of_block":[0,1,2],"calls_slot":3}}],"#,
    r#""atomic":false}"#,
);

const EDGE: &str = concat!(
    r#"{"mode":"edge","build_id":4357951673756538819,"files":["/src/t.c","#,
    r#""/src/t.h"],"file_digests":[4660,null],"functions":[{"name":"g","#,
    r#""file":0,"line":9,"hash":3377149286236924772,"cfg":{"num_blocks":3,"#,
    r#""entry":0,"edges":[{"from":0,"to":1,"slot":0,"splittable":true},"#,
    r#"{"from":1,"to":0,"slot":0,"splittable":true},{"from":1,"to":2,"#,
    r#""slot":1,"splittable":true}],"calls":[0,1,0]},"blocks":[{"line":10,"#,
    r#""instructions":1,"lines":[{"file":0,"line":10,"instructions":1}]},"#,
    r#"{"line":null,"instructions":2,"lines":[{"file":1,"line":11,"instructions":2}]},"#,
    r#"{"line":12,"instructions":3,"lines":[{"file":0,"line":12,"instructions":3}]}],"#,
    r#""layout":{"kind":"edge","counted":["Entry",{"Cfg":0},{"Exit":1}]}}],"#,
    r#""atomic":true}"#,
);

const PATH: &str = concat!(
    r#"{"mode":"path","build_id":4680503889875392613,"files":["/src/t.c","#,
    r#""/src/t.h"],"file_digests":[4660,null],"functions":[{"name":"loops","#,
    r#""file":0,"line":9,"hash":1005680115881435425,"cfg":{"num_blocks":4,"#,
    r#""entry":0,"edges":[{"from":0,"to":1,"slot":0,"splittable":true},"#,
    r#"{"from":1,"to":1,"slot":0,"splittable":true},{"from":1,"to":2,"#,
    r#""slot":1,"splittable":true},{"from":2,"to":1,"slot":0,"splittable":true},"#,
    r#"{"from":2,"to":3,"slot":1,"splittable":true}]},"blocks":[{"line":10,"#,
    r#""instructions":1,"lines":[{"file":0,"line":10,"instructions":1}]},"#,
    r#"{"line":null,"instructions":2,"lines":[{"file":1,"line":11,"instructions":2}]},"#,
    r#"{"line":12,"instructions":3,"lines":[{"file":0,"line":12,"instructions":3}]},"#,
    r#"{"line":13,"instructions":4,"lines":[{"file":1,"line":13,"instructions":4}]}],"#,
    r#""layout":{"kind":"path","dag":{"num_blocks":4,"edges":[{"from":4,"#,
    r#""to":0,"kind":"Entry"},{"from":4,"to":1,"kind":{"BackEntry":3}},"#,
    r#"{"from":0,"to":1,"kind":{"Cfg":0}},{"from":1,"to":2,"kind":{"Cfg":2}},"#,
    r#"{"from":2,"to":5,"kind":{"BackExit":3}},{"from":2,"to":3,"kind":{"Cfg":4}},"#,
    r#"{"from":3,"to":5,"kind":{"Exit":3}}],"classes":["Forward","SelfLoop","#,
    r#""Forward","Back","Forward"],"val":[0,2,0,0,0,1,0]},"self_loops":[1]}},"#,
    r#"{"name":"special","file":0,"line":9,"hash":18392483438014399966,"#,
    r#""cfg":{"num_blocks":7,"entry":0,"edges":[{"from":0,"to":1,"slot":0,"#,
    r#""splittable":true},{"from":0,"to":2,"slot":1,"splittable":false},"#,
    r#"{"from":1,"to":3,"slot":0,"splittable":true},{"from":2,"to":3,"#,
    r#""slot":0,"splittable":true},{"from":3,"to":4,"slot":0,"splittable":true,"#,
    r#""resume":true},{"from":4,"to":5,"slot":0,"splittable":true},"#,
    r#"{"from":4,"to":5,"slot":1,"splittable":true},{"from":6,"to":5,"#,
    r#""slot":0,"splittable":true}],"calls":[1,0,0,0,1,0,0],"terminator_calls":[0]},"#,
    r#""blocks":[{"line":10,"instructions":1,"lines":[{"file":0,"line":10,"#,
    r#""instructions":1}]},{"line":null,"instructions":2,"lines":[{"file":1,"#,
    r#""line":11,"instructions":2}]},{"line":12,"instructions":3,"lines":[{"file":0,"#,
    r#""line":12,"instructions":3}]},{"line":13,"instructions":4,"lines":[{"file":1,"#,
    r#""line":13,"instructions":4}]},{"line":14,"instructions":5,"lines":[{"file":0,"#,
    r#""line":14,"instructions":5}]},{"line":15,"instructions":6,"lines":[{"file":1,"#,
    r#""line":15,"instructions":6}]},{"line":16,"instructions":7,"lines":[{"file":0,"#,
    r#""line":16,"instructions":7}]}],"layout":{"kind":"path","dag":{"num_blocks":7,"#,
    r#""edges":[{"from":7,"to":0,"kind":"Entry"},{"from":7,"to":1,"kind":{"BackEntry":0}},"#,
    r#"{"from":7,"to":4,"kind":{"BackEntry":4}},{"from":7,"to":2,"kind":{"UnsplitEntry":2}},"#,
    r#"{"from":0,"to":8,"kind":{"UnsplitExit":0}},{"from":1,"to":3,"#,
    r#""kind":{"Cfg":2}},{"from":2,"to":3,"kind":{"Cfg":3}},{"from":3,"#,
    r#""to":8,"kind":{"BackExit":4}},{"from":4,"to":5,"kind":{"Cfg":5}},"#,
    r#"{"from":4,"to":5,"kind":{"Cfg":6}},{"from":4,"to":8,"kind":{"CallExit":[4,"#,
    r#"0]}},{"from":5,"to":8,"kind":{"Exit":5}}],"classes":["Sibling","#,
    r#""Unsplit","Forward","Forward","Resume","Forward","Forward","Unreachable"],"#,
    r#""val":[0,1,3,2,0,0,0,0,0,1,2,0]},"self_loops":[],"resumes":[4],"#,
    r#""call_exits":[0]}},{"name":"diamonds","file":0,"line":9,"hash":13008513794704260264,"#,
    r#""cfg":{"num_blocks":13,"entry":0,"edges":[{"from":0,"to":1,"slot":0,"#,
    r#""splittable":true},{"from":1,"to":3,"slot":0,"splittable":true},"#,
    r#"{"from":0,"to":2,"slot":1,"splittable":true},{"from":2,"to":3,"#,
    r#""slot":0,"splittable":true},{"from":3,"to":4,"slot":0,"splittable":true},"#,
    r#"{"from":4,"to":6,"slot":0,"splittable":true},{"from":3,"to":5,"#,
    r#""slot":1,"splittable":true},{"from":5,"to":6,"slot":0,"splittable":true},"#,
    r#"{"from":6,"to":7,"slot":0,"splittable":true},{"from":7,"to":9,"#,
    r#""slot":0,"splittable":true},{"from":6,"to":8,"slot":1,"splittable":true},"#,
    r#"{"from":8,"to":9,"slot":0,"splittable":true},{"from":9,"to":10,"#,
    r#""slot":0,"splittable":true},{"from":10,"to":12,"slot":0,"splittable":true},"#,
    r#"{"from":9,"to":11,"slot":1,"splittable":true},{"from":11,"to":12,"#,
    r#""slot":0,"splittable":true}]},"blocks":[{"line":10,"instructions":1,"#,
    r#""lines":[{"file":0,"line":10,"instructions":1}]},{"line":null,"#,
    r#""instructions":2,"lines":[{"file":1,"line":11,"instructions":2}]},"#,
    r#"{"line":12,"instructions":3,"lines":[{"file":0,"line":12,"instructions":3}]},"#,
    r#"{"line":13,"instructions":4,"lines":[{"file":1,"line":13,"instructions":4}]},"#,
    r#"{"line":14,"instructions":5,"lines":[{"file":0,"line":14,"instructions":5}]},"#,
    r#"{"line":15,"instructions":6,"lines":[{"file":1,"line":15,"instructions":6}]},"#,
    r#"{"line":16,"instructions":7,"lines":[{"file":0,"line":16,"instructions":7}]},"#,
    r#"{"line":17,"instructions":8,"lines":[{"file":1,"line":17,"instructions":8}]},"#,
    r#"{"line":18,"instructions":9,"lines":[{"file":0,"line":18,"instructions":9}]},"#,
    r#"{"line":19,"instructions":10,"lines":[{"file":1,"line":19,"instructions":10}]},"#,
    r#"{"line":20,"instructions":11,"lines":[{"file":0,"line":20,"instructions":11}]},"#,
    r#"{"line":21,"instructions":12,"lines":[{"file":1,"line":21,"instructions":12}]},"#,
    r#"{"line":22,"instructions":13,"lines":[{"file":0,"line":22,"instructions":13}]}],"#,
    r#""layout":{"kind":"path","dag":{"num_blocks":13,"edges":[{"from":13,"#,
    r#""to":0,"kind":"Entry"},{"from":13,"to":4,"kind":{"BackEntry":4}},"#,
    r#"{"from":13,"to":5,"kind":{"BackEntry":6}},{"from":0,"to":1,"kind":{"Cfg":0}},"#,
    r#"{"from":0,"to":2,"kind":{"Cfg":2}},{"from":1,"to":3,"kind":{"Cfg":1}},"#,
    r#"{"from":2,"to":3,"kind":{"Cfg":3}},{"from":3,"to":14,"kind":{"BackExit":4}},"#,
    r#"{"from":3,"to":14,"kind":{"BackExit":6}},{"from":4,"to":6,"kind":{"Cfg":5}},"#,
    r#"{"from":5,"to":6,"kind":{"Cfg":7}},{"from":6,"to":7,"kind":{"Cfg":8}},"#,
    r#"{"from":6,"to":8,"kind":{"Cfg":10}},{"from":7,"to":9,"kind":{"Cfg":9}},"#,
    r#"{"from":8,"to":9,"kind":{"Cfg":11}},{"from":9,"to":10,"kind":{"Cfg":12}},"#,
    r#"{"from":9,"to":11,"kind":{"Cfg":14}},{"from":10,"to":12,"kind":{"Cfg":13}},"#,
    r#"{"from":11,"to":12,"kind":{"Cfg":15}},{"from":12,"to":14,"kind":{"Exit":12}}],"#,
    r#""classes":["Forward","Forward","Forward","Forward","Cut","Forward","#,
    r#""Cut","Forward","Forward","Forward","Forward","Forward","Forward","#,
    r#""Forward","Forward","Forward"],"val":[0,4,8,0,2,0,0,0,1,0,0,"#,
    r#"0,2,0,0,0,1,0,0,0]},"self_loops":[]}}],"atomic":false}"#,
);

fn cases() -> [(&'static str, MapFile, &'static str); 3] {
    [
        ("block", block_map(), BLOCK),
        ("edge", edge_map(), EDGE),
        ("path", path_map(), PATH),
    ]
}

/// The header and body version 3 writes for `json`.
fn version_3(json: &str) -> Vec<u8> {
    let body = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 1);
    let mut out = format!(
        "pathprof-map 3 {:016x} {} {}\n",
        fnv64(&body),
        body.len(),
        json.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

#[test]
fn the_schema_writes_the_pinned_json() {
    assert_eq!(MAP_VERSION, 3, "a new version pins its own JSON here");
    for (name, map, json) in cases() {
        let written = serde_json::to_string(&schema::Fragment::from(&map)).unwrap();
        assert_eq!(written, json, "{name}");
        // `MapFile` serializes as its schema.
        assert_eq!(serde_json::to_string(&map).unwrap(), json, "{name}");
    }
}

#[test]
fn maps_write_the_bytes_version_3_wrote() {
    for (name, map, json) in cases() {
        assert_eq!(map.to_bytes(), version_3(json), "{name}");
    }
}

#[test]
fn the_pinned_json_reads_back_in_every_version() {
    for (name, map, json) in cases() {
        let fragment: schema::Fragment = serde_json::from_str(json).unwrap();
        assert_eq!(serde_json::to_string(&fragment).unwrap(), json, "{name}");
        assert_eq!(MapFile::try_from(fragment).unwrap(), map, "{name}");
        let mut v1 = format!("pathprof-map 1 {:016x}\n", fnv64(json.as_bytes())).into_bytes();
        v1.extend_from_slice(json.as_bytes());
        let mut v2 = format!(
            "pathprof-map 2 {:016x} {}\n",
            fnv64(json.as_bytes()),
            json.len()
        )
        .into_bytes();
        v2.extend_from_slice(json.as_bytes());
        for bytes in [v1, v2, version_3(json)] {
            assert_eq!(MapFile::from_bytes(&bytes, name).unwrap(), map, "{name}");
        }
    }
}

/// A `--mode=p3` build's map is path mode's plus one field at the end,
/// which older maps lack (and read as no P3 build); a record that does not
/// fit the map is refused.
/// Builds with per-thread counters say so in one field more; maps without it
/// (older builds, whose threads shared counters) read as such.
#[test]
fn per_thread_counters_are_one_field_more() {
    let mut map = path_map();
    map.per_thread = true;
    let json = serde_json::to_string(&map).unwrap();
    let want = format!("{},\"per_thread\":true}}", PATH.strip_suffix('}').unwrap());
    assert_eq!(json, want);
    assert_eq!(MapFile::from_bytes(&version_3(&json), "new").unwrap(), map);
    assert!(
        !MapFile::from_bytes(&version_3(PATH), "old")
            .unwrap()
            .per_thread
    );
}

#[test]
fn block_mode_on_chords_is_an_edge_layout_with_one_field_more() {
    let mut cfg = Cfg::from_edge_list(3, &[(0, 1), (1, 0), (1, 2)]).unwrap();
    cfg.set_calls(vec![0, 1, 0]).unwrap();
    let map = map(
        Mode::Block,
        vec![function("h", cfg, Mode::Block, &PlanOptions::default())],
    );
    let json = serde_json::to_string(&map).unwrap();
    assert!(
        json.contains(r#""layout":{"kind":"edge","counted":[{"Cfg":"#)
            && json.contains(r#"}],"net_call_exits":true}"#),
        "{json}"
    );
    assert_eq!(MapFile::from_bytes(&version_3(&json), "new").unwrap(), map);
    // Edge mode's layouts keep their bytes.
    assert!(!EDGE.contains("net_call_exits"));
}

#[test]
fn a_p3_record_is_one_field_more() {
    let mut map = path_map();
    map.p3 = Some(P3Build {
        copies: 4,
        call_sites: vec![0, 1, P3Build::MANY],
        trained: Vec::new(),
    });
    let json = serde_json::to_string(&map).unwrap();
    let want = format!(
        "{},\"p3\":{{\"copies\":4,\"call_sites\":[0,1,4294967295]}}}}",
        PATH.strip_suffix('}').unwrap()
    );
    assert_eq!(json, want);
    assert_eq!(MapFile::from_bytes(&version_3(&json), "p3").unwrap(), map);
    assert_eq!(
        MapFile::from_bytes(&version_3(PATH), "old").unwrap().p3,
        None
    );
    for bad in [
        r#""p3":{"copies":0,"call_sites":[0,1,2]}"#,
        r#""p3":{"copies":2,"call_sites":[0,1]}"#,
    ] {
        let json = format!("{},{bad}}}", PATH.strip_suffix('}').unwrap());
        let err = MapFile::from_bytes(&version_3(&json), "bad").unwrap_err();
        assert!(err.to_string().contains("P3 record"), "{err}");
    }
    let edge = format!(
        "{},\"p3\":{{\"copies\":2,\"call_sites\":[0]}}}}",
        EDGE.strip_suffix('}').unwrap()
    );
    let err = MapFile::from_bytes(&version_3(&edge), "edge").unwrap_err();
    assert!(err.to_string().contains("P3 record"), "{err}");
}
