//! Test-side plans, written independently of pathprof-core's planners: a counter
//! per block, a counter per edge, and textbook Ball-Larus path numbering (Ball &
//! Larus 1996, Figure 5; backedges v->w replaced by ENTRY->w and v->EXIT as in
//! section 3.3), with checks that relate the counters of one run.
//!
//! Slot layout of [`counting_plan`]: `0..B` blocks (at `BlockStart`), `B..B+E`
//! edges (on `Edge`, for every edge that can carry a probe), `B+E` calls (at
//! `FunctionEntry`).

use pathprof_core::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use pathprof_core::{BlockId, Cfg, EdgeId};
use std::collections::BTreeMap;

/// `CountSlot(b)` at `BlockStart(b)` for every block.
pub fn block_plan(cfg: &Cfg) -> FunctionPlan {
    let ops = cfg
        .blocks()
        .map(|b| (ProbeSite::BlockStart(b), Op::CountSlot(b.0)));
    FunctionPlan::from_ops(cfg.num_blocks() as u32, PathStorage::None, ops)
}

/// Whether an `Edge(e)` probe can be placed (docs/formats.md §1).
pub fn placeable(cfg: &Cfg, e: EdgeId) -> bool {
    let edge = cfg.edge(e);
    cfg.succs(edge.from).len() == 1 || cfg.preds(edge.to).len() == 1 || edge.splittable
}

/// How path counts are stored in [`counting_plan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paths {
    None,
    Array,
    Hash,
}

/// One DAG edge of the numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Entry,
    Cfg(EdgeId),
    Exit(BlockId),
    BackEntry(EdgeId),
    BackExit(EdgeId),
}

/// A Ball-Larus numbering: nodes are the blocks, then ENTRY, then EXIT.
pub struct Numbering {
    /// (from, to, kind, val)
    edges: Vec<(usize, usize, Kind, u64)>,
    /// Out-edges per node, in increasing `val`.
    out: Vec<Vec<usize>>,
    pub num_paths: u64,
    pub back: Vec<bool>,
}

impl Numbering {
    pub fn new(cfg: &Cfg) -> Numbering {
        let n = cfg.num_blocks();
        let (entry, exit) = (n, n + 1);
        // Backedges: edges to a block on the DFS stack.
        let mut back = vec![false; cfg.edges().len()];
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut stack = vec![(cfg.entry(), 0usize)];
        state[cfg.entry().index()] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&e) = cfg.succs(b).get(*next) {
                *next += 1;
                let to = cfg.edge(e).to;
                match state[to.index()] {
                    0 => {
                        state[to.index()] = 1;
                        stack.push((to, 0));
                    }
                    1 => back[e.index()] = true,
                    _ => {}
                }
            } else {
                state[b.index()] = 2;
                stack.pop();
            }
        }
        let mut edges = vec![(entry, cfg.entry().index(), Kind::Entry, 0)];
        for b in cfg.blocks().filter(|&b| cfg.is_reachable(b)) {
            if cfg.is_exit(b) {
                edges.push((b.index(), exit, Kind::Exit(b), 0));
            }
            for &e in cfg.succs(b) {
                let to = cfg.edge(e).to.index();
                if back[e.index()] {
                    edges.push((b.index(), exit, Kind::BackExit(e), 0));
                    edges.push((entry, to, Kind::BackEntry(e), 0));
                } else {
                    edges.push((b.index(), to, Kind::Cfg(e), 0));
                }
            }
        }
        let mut out = vec![Vec::new(); n + 2];
        let mut indegree = vec![0usize; n + 2];
        for (i, &(from, to, _, _)) in edges.iter().enumerate() {
            out[from].push(i);
            indegree[to] += 1;
        }
        // Topological order (Kahn), then NumPaths in reverse.
        let mut order = Vec::new();
        let mut ready: Vec<usize> = (0..n + 2).filter(|&v| indegree[v] == 0).collect();
        while let Some(v) = ready.pop() {
            order.push(v);
            for &i in &out[v] {
                let to = edges[i].1;
                indegree[to] -= 1;
                if indegree[to] == 0 {
                    ready.push(to);
                }
            }
        }
        assert_eq!(order.len(), n + 2, "the DAG has a cycle");
        let mut paths = vec![0u64; n + 2];
        for &v in order.iter().rev() {
            if v == exit {
                paths[v] = 1;
                continue;
            }
            let mut sum = 0;
            for &i in &out[v] {
                edges[i].3 = sum;
                sum += paths[edges[i].1];
            }
            paths[v] = sum;
        }
        Numbering {
            edges,
            out,
            num_paths: paths[entry],
            back,
        }
    }

    fn val(&self, kind: Kind) -> u64 {
        self.edges
            .iter()
            .find(|e| e.2 == kind)
            .expect("a DAG edge")
            .3
    }

    /// The DAG edges of path `id`, from ENTRY to EXIT.
    pub fn decode(&self, id: u64) -> Vec<Kind> {
        let entry = self.out.len() - 2;
        let exit = self.out.len() - 1;
        let (mut v, mut rest, mut path) = (entry, id, Vec::new());
        while v != exit {
            let &i = self.out[v]
                .iter()
                .rev()
                .find(|&&i| self.edges[i].3 <= rest)
                .expect("an out-edge");
            rest -= self.edges[i].3;
            path.push(self.edges[i].2);
            v = self.edges[i].1;
        }
        assert_eq!(rest, 0, "path id {id} does not decode");
        path
    }
}

/// Slots for every block, every placeable edge and the calls, plus (when `paths`
/// is not `None` and every edge that needs path code can carry it) Ball-Larus
/// path counting. Returns the numbering when paths are counted.
pub fn counting_plan(cfg: &Cfg, paths: Paths) -> (FunctionPlan, Option<Numbering>) {
    let nb = cfg.num_blocks() as u32;
    let ne = cfg.edges().len() as u32;
    let mut ops = Vec::new();
    for b in cfg.blocks() {
        ops.push((ProbeSite::BlockStart(b), Op::CountSlot(b.0)));
    }
    ops.push((ProbeSite::FunctionEntry, Op::CountSlot(nb + ne)));
    let numbering = Numbering::new(cfg);
    let needs_code = |e: EdgeId| numbering.back[e.index()] || numbering.val(Kind::Cfg(e)) != 0;
    let reachable_edges: Vec<EdgeId> = cfg
        .edge_ids()
        .filter(|&e| cfg.is_reachable(cfg.edge(e).from))
        .collect();
    let path_ok = paths != Paths::None
        && reachable_edges
            .iter()
            .all(|&e| !needs_code(e) || placeable(cfg, e));
    if path_ok {
        // Exercise negative, wrapping constants: r = v + 1000 - 1000.
        let v = numbering.val(Kind::Entry) as i64;
        ops.push((ProbeSite::FunctionEntry, Op::SetPath(v + 1000)));
        ops.push((ProbeSite::FunctionEntry, Op::AddPath(-1000)));
        for &e in &reachable_edges {
            if numbering.back[e.index()] {
                let end = numbering.val(Kind::BackExit(e)) as i64;
                let start = numbering.val(Kind::BackEntry(e)) as i64;
                ops.push((ProbeSite::Edge(e), Op::CountPath(end)));
                ops.push((ProbeSite::Edge(e), Op::SetPath(start)));
            } else if numbering.val(Kind::Cfg(e)) != 0 {
                ops.push((
                    ProbeSite::Edge(e),
                    Op::AddPath(numbering.val(Kind::Cfg(e)) as i64),
                ));
            }
        }
        for b in cfg
            .blocks()
            .filter(|&b| cfg.is_reachable(b) && cfg.is_exit(b))
        {
            ops.push((
                ProbeSite::BlockEnd(b),
                Op::CountPath(numbering.val(Kind::Exit(b)) as i64),
            ));
        }
    }
    for e in cfg.edge_ids().filter(|&e| placeable(cfg, e)) {
        ops.push((ProbeSite::Edge(e), Op::CountSlot(nb + e.0)));
    }
    let storage = match (path_ok, paths) {
        (false, _) | (_, Paths::None) => PathStorage::None,
        (true, Paths::Array) => PathStorage::Array {
            len: numbering.num_paths,
        },
        (true, Paths::Hash) => PathStorage::Hash {
            num_paths: numbering.num_paths,
        },
    };
    let plan = FunctionPlan::from_ops(nb + ne + 1, storage, ops);
    (plan, path_ok.then_some(numbering))
}

/// Checks flow conservation on the slots of a [`counting_plan`]: a block's count
/// is its calls (entry) or the sum of its in-edges, and the sum of its out-edges,
/// wherever all those edges are counted. `name` is for messages.
pub fn check_flow(name: &str, cfg: &Cfg, slots: &[u64]) {
    let nb = cfg.num_blocks();
    let ne = cfg.edges().len();
    let edge = |e: EdgeId| placeable(cfg, e).then(|| slots[nb + e.index()]);
    let sum = |es: &[EdgeId]| es.iter().map(|&e| edge(e)).sum::<Option<u64>>();
    for b in cfg.blocks() {
        let count = slots[b.index()];
        if !cfg.is_reachable(b) {
            assert_eq!(count, 0, "{name}: unreachable {b} ran");
            continue;
        }
        if b == cfg.entry() {
            assert_eq!(count, slots[nb + ne], "{name}: entry count vs calls");
        } else if let Some(into) = sum(cfg.preds(b)) {
            assert_eq!(count, into, "{name}: {b} vs its in-edges");
        }
        if !cfg.is_exit(b) {
            if let Some(out) = sum(cfg.succs(b)) {
                assert_eq!(count, out, "{name}: {b} vs its out-edges");
            }
        }
    }
}

/// Checks path counts against the edge slots of the same run: every forward edge
/// was taken as often as the paths through it, every backedge as often as the
/// paths it ends and the paths it starts, and the paths from the entry are the
/// calls. Holds when the function never unwinds.
pub fn check_paths(
    name: &str,
    cfg: &Cfg,
    numbering: &Numbering,
    slots: &[u64],
    paths: &BTreeMap<u64, u64>,
) {
    let nb = cfg.num_blocks();
    let ne = cfg.edges().len();
    let mut through: BTreeMap<Kind, u64> = BTreeMap::new();
    for (&id, &count) in paths {
        assert!(id < numbering.num_paths, "{name}: path {id} out of range");
        for kind in numbering.decode(id) {
            *through.entry(kind).or_default() += count;
        }
    }
    let got = |k: Kind| through.get(&k).copied().unwrap_or(0);
    let calls = slots[nb + ne];
    assert_eq!(
        got(Kind::Entry),
        calls,
        "{name}: paths from the entry vs calls"
    );
    let counted = |e: EdgeId| cfg.is_reachable(cfg.edge(e).from) && placeable(cfg, e);
    for e in cfg.edge_ids().filter(|&e| counted(e)) {
        let taken = slots[nb + e.index()];
        if numbering.back[e.index()] {
            assert_eq!(
                got(Kind::BackExit(e)),
                taken,
                "{name}: paths ending at backedge {e}"
            );
            assert_eq!(
                got(Kind::BackEntry(e)),
                taken,
                "{name}: paths starting at backedge {e}"
            );
        } else {
            assert_eq!(got(Kind::Cfg(e)), taken, "{name}: paths through {e}");
        }
    }
}
