//! Small hand-built [`Loaded`] values for renderers' unit tests (feature
//! `fixtures`): one path-mode function from an edge list, with known paths.

use crate::load::Loaded;
use pathprof_core::dag::{Dag, DagEdgeKind};
use pathprof_core::derive::derive;
use pathprof_core::layout::Layout;
use pathprof_core::map::{BlockInfo, LineSpan, MapFile, MapFunction};
use pathprof_core::regen::regenerate;
use pathprof_core::{BlockId, Cfg, Mode};

/// A one-function path-mode `Loaded` from an edge list; block `b` is on line
/// `10 + b` of `t.c` with `b + 1` instructions; `runs` gives executed paths as
/// block sequences with counts, plus self-loop counts.
pub fn loaded(
    blocks: usize,
    edges: &[(u32, u32)],
    runs: &[(&[u32], u64)],
    self_loop_counts: &[u64],
) -> Loaded {
    let cfg = Cfg::from_edge_list(blocks, edges).unwrap();
    let dag = Dag::build(&cfg, Default::default()).unwrap();
    let self_loops: Vec<_> = cfg
        .edge_ids()
        .filter(|e| dag.classes()[e.index()] == pathprof_core::dag::EdgeClass::SelfLoop)
        .collect();
    let paths: Vec<(u64, u64)> = runs
        .iter()
        .map(|(want, count)| (path_id_of(&dag, want), *count))
        .collect();
    let layout = Layout::Path {
        dag,
        self_loops,
        resumes: vec![],
        call_exits: vec![],
        ppp_owners: vec![],
        interesting: vec![],
        hashed: false,
    };
    let counts = derive(&cfg, &layout, self_loop_counts, &paths).unwrap();
    let infos = (0..blocks as u32)
        .map(|b| BlockInfo {
            line: Some(10 + b),
            instructions: b + 1,
            lines: vec![LineSpan {
                file: 0,
                line: 10 + b,
                instructions: b + 1,
            }],
        })
        .collect();
    let f = MapFunction {
        name: "f".into(),
        display_name: None,
        file: Some(0),
        line: Some(9),
        hash: cfg.shape_hash(),
        cfg,
        blocks: infos,
        layout,
        entry_calls: Vec::new(),
        entries_by_callers: false,
    };
    let functions = vec![f];
    let map = MapFile {
        mode: Mode::Path,
        build_id: MapFile::compute_build_id(Mode::Path, &[], &functions),
        files: vec!["t.c".into()],
        file_digests: vec![None],
        functions,
        atomic: false,
        per_thread: true,
        p3: None,
    };
    Loaded {
        map,
        map_path: "t.ppmap".into(),
        counts: vec![counts],
        facts: Default::default(),
        qualified_names: Vec::new(),
        objects: Vec::new(),
    }
}

/// The id of the path whose blocks are `want`, starting at the function entry
/// when `want[0]` is 0 and after a backedge otherwise.
pub fn path_id_of(dag: &Dag, want: &[u32]) -> u64 {
    let want: Vec<BlockId> = want.iter().map(|&b| BlockId(b)).collect();
    (0..dag.num_paths())
        .find(|&id| {
            let p = regenerate(dag, id).unwrap();
            p.blocks(dag) == want
                && (want[0] != BlockId(0)
                    || matches!(dag.edge(p.edges[0]).kind, DagEdgeKind::Entry))
        })
        .unwrap_or_else(|| panic!("no path {want:?}"))
}

/// Two copies of one function (as a header's `static inline` function has
/// in two translation units): `f` on lines 10.. of file 0, which took the
/// path b0 b1 b2 three times, and `g`, the same blocks on the same lines of
/// file `g_file`, which took b0 b2 twice. The map names two files, both
/// spellings of `/src/dir/t.c`.
pub fn two_copies(g_file: u32) -> Loaded {
    let edges = [(0, 1), (0, 2), (1, 2), (3, 1), (3, 2)];
    let mut l = loaded(4, &edges, &[(&[0, 1, 2], 3)], &[]);
    let other = loaded(4, &edges, &[(&[0, 2], 2)], &[]);
    let mut g = other.map.functions[0].clone();
    g.name = "g".into();
    g.file = Some(g_file);
    for span in g.blocks.iter_mut().flat_map(|b| &mut b.lines) {
        span.file = g_file;
    }
    l.map.functions.push(g);
    l.counts.push(other.counts[0].clone());
    l.map.files = vec!["/src/dir/./t.c".into(), "/src/dir/sub/../t.c".into()];
    l.map.file_digests = vec![None, None];
    l
}

/// The edges of [`diamond_chain`].
pub const DIAMOND_CHAIN: [(u32, u32); 7] = [(0, 1), (0, 2), (1, 5), (2, 3), (2, 4), (3, 5), (4, 5)];

/// The `classify` shape (b0 tests, b1/b2 arms, b2 tests again, b3/b4 arms,
/// b5 returns; slots: b0: 0→b1, 1→b2; b2: 0→b3, 1→b4) through [`loaded`],
/// which ran `runs`; one build whatever the runs, so two of them can be
/// compared.
///
/// ```text
///      b0
///     /  \
///   b1    b2
///    |   /  \
///    |  b3   b4
///     \ |   /
///       b5
/// ```
pub fn diamond_chain(runs: &[(&[u32], u64)]) -> Loaded {
    loaded(6, &DIAMOND_CHAIN, runs, &[])
}
