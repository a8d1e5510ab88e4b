//! Test kit: an evaluator that executes a [`FunctionPlan`] along a walk of the CFG
//! exactly as the instrumented code would, and the reference answers computed
//! directly from the walk.

#![allow(dead_code)]

pub mod arb;

use pathprof_core::dag::{Dag, DagEdgeKind, EdgeClass};
use pathprof_core::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use pathprof_core::regen::path_id;
use pathprof_core::{BlockId, Cfg, DagEdgeId, EdgeId};
use std::collections::BTreeMap;

/// Counters after running a plan.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counters {
    pub slots: Vec<u64>,
    pub paths: BTreeMap<u64, u64>,
    /// How many counts (and undos) went into PPP slots.
    pub ppp_hits: u64,
}

impl Counters {
    pub fn path_list(&self) -> Vec<(u64, u64)> {
        self.paths.iter().map(|(&k, &v)| (k, v)).collect()
    }
}

/// Executes probes like the LLVM transcription does.
pub struct Evaluator<'a> {
    plan: &'a FunctionPlan,
    by_site: BTreeMap<ProbeSite, &'a [Op]>,
    pub counters: Counters,
    r: u64,
    /// The PPP register.
    q: u64,
    /// What a PPP count compares with ([`pathprof_core::plan::PppSlots::table`]).
    ppp_table: Vec<u64>,
}

impl<'a> Evaluator<'a> {
    pub fn new(plan: &'a FunctionPlan) -> Self {
        let by_site = plan.probes.iter().map(|p| (p.site, &p.ops[..])).collect();
        Evaluator {
            plan,
            by_site,
            counters: Counters {
                slots: vec![0; plan.num_slots as usize],
                paths: BTreeMap::new(),
                ppp_hits: 0,
            },
            r: 0,
            q: 0,
            ppp_table: plan.ppp.as_ref().map_or_else(Vec::new, |t| t.table()),
        }
    }

    /// Runs the ops of `site` on `r` (or, for a call site, on a copy of it),
    /// adding `delta` to every counter they count.
    fn run_with(&mut self, site: ProbeSite, delta: i64) {
        let Some(ops) = self.by_site.get(&site) else {
            return;
        };
        let saved = (self.r, self.q);
        for op in ops.iter() {
            match *op {
                Op::SetPath(c) => self.r = c as u64,
                Op::AddPath(c) => self.r = self.r.wrapping_add(c as u64),
                Op::SetPpp(c) => self.q = c as u64,
                Op::AddPpp(c) => self.q = self.q.wrapping_add(c as u64),
                Op::CountPpp { bl, ppp } => {
                    let id = self.r.wrapping_add(bl as u64);
                    let p = self.q.wrapping_add(ppp as u64);
                    self.count_ppp(p, id, id, delta);
                }
                Op::CountPacked(c) => {
                    let packing = self.plan.ppp.as_ref().and_then(|t| t.packing);
                    let packing = packing.expect("CountPacked with a packing");
                    let key = packing.key(self.r.wrapping_add(c as u64));
                    let (p, id) = packing.split(key);
                    self.count_ppp(p, key, id, delta);
                }
                Op::CountPath(c) => {
                    let id = self.r.wrapping_add(c as u64);
                    self.count_path(id, delta);
                }
                Op::CountSlot(k) => {
                    let c = &mut self.counters.slots[k as usize];
                    *c = c
                        .checked_add_signed(delta)
                        .expect("slot stays non-negative");
                }
            }
        }
        if matches!(site, ProbeSite::Call(..)) {
            (self.r, self.q) = saved;
        }
    }

    /// A PPP function's count of the path with PPP sum `p`, compared as `key`
    /// with its slot's owner, Ball-Larus id `id`: `slots[base + p] += delta`
    /// when interesting, else `paths[id] += delta`.
    fn count_ppp(&mut self, p: u64, key: u64, id: u64, delta: i64) {
        let table = self.plan.ppp.as_ref().expect("a PPP count in a PPP plan");
        match table.classify(&self.ppp_table, p, key) {
            Some(slot) => {
                self.counters.ppp_hits += 1;
                let c = &mut self.counters.slots[table.base as usize + slot];
                *c = c
                    .checked_add_signed(delta)
                    .expect("slot stays non-negative");
            }
            None => self.count_path(id, delta),
        }
    }

    /// `paths[id] += delta` (path mode's count, a PPP function's residual one).
    fn count_path(&mut self, id: u64, delta: i64) {
        match self.plan.paths {
            PathStorage::Array { len } => {
                assert!(id < len, "array index {id} out of 0..{len}")
            }
            PathStorage::Hash { num_paths } => assert!(id < num_paths),
            PathStorage::None => panic!("path op without path storage"),
        }
        let c = self.counters.paths.entry(id).or_default();
        *c = c
            .checked_add_signed(delta)
            .expect("counter stays non-negative");
        if *c == 0 {
            self.counters.paths.remove(&id);
        }
    }

    fn run(&mut self, site: ProbeSite) {
        self.run_with(site, 1);
    }

    /// The calls of block `b`: each counts and, when it returns, uncounts; the
    /// one numbered `dies_in` never returns. Returns whether the process ended.
    fn calls(&mut self, cfg: &Cfg, b: BlockId, dies_in: Option<u32>) -> bool {
        for k in 0..cfg.inner_calls(b) {
            self.run(ProbeSite::Call(b, k));
            if dies_in == Some(k) {
                return true;
            }
            self.run_with(ProbeSite::Call(b, k), -1);
        }
        false
    }

    /// The call that terminates block `b`, if it has one (after its end code):
    /// counts and, unless `dies`, uncounts (it returns or unwinds).
    fn terminator_call(&mut self, cfg: &Cfg, b: BlockId, dies: bool) {
        if cfg.ends_in_call(b) {
            let k = cfg.calls(b) - 1;
            self.run(ProbeSite::Call(b, k));
            if !dies {
                self.run_with(ProbeSite::Call(b, k), -1);
            }
        }
    }

    /// One call of the function following `walk` (CFG edges from the entry to an
    /// exit block).
    pub fn call(&mut self, cfg: &Cfg, walk: &[EdgeId]) {
        self.call_ending(cfg, walk, None);
    }

    /// Runs `walk` (connected edges from block `at`), each block's calls
    /// returning; returns the block it ends in.
    fn follow(&mut self, cfg: &Cfg, mut at: BlockId, walk: &[EdgeId]) -> BlockId {
        for &e in walk {
            assert!(!self.calls(cfg, at, None));
            let ce = cfg.edge(e);
            assert_eq!(ce.from, at, "walk is connected");
            self.run(ProbeSite::BlockEnd(ce.from));
            self.terminator_call(cfg, ce.from, false);
            self.run(ProbeSite::Edge(e));
            self.run(ProbeSite::BlockStart(ce.to));
            at = ce.to;
        }
        at
    }

    /// A second return from the call that ends the source of resume edge `e`
    /// (a `fork` child, or a `longjmp` back to a `setjmp`): `r` holds whatever
    /// it held (here: junk), then the walk goes on from `e` along `rest` (edges
    /// from `e`'s target to an exit block).
    pub fn resume(&mut self, cfg: &Cfg, e: EdgeId, rest: &[EdgeId]) {
        assert!(cfg.edge(e).resume, "{e} is not a resume edge");
        self.r = 0x5eed_5eed_5eed;
        self.q = 0x5eed_0000_5eed;
        self.run(ProbeSite::Edge(e));
        self.run(ProbeSite::BlockStart(cfg.edge(e).to));
        let at = self.follow(cfg, cfg.edge(e).to, rest);
        assert!(!self.calls(cfg, at, None));
        assert!(cfg.is_exit(at), "walk ends at an exit");
        self.run(ProbeSite::BlockEnd(at));
    }

    /// Like [`Evaluator::call`], but with `dies_in = Some(k)` the process ends
    /// inside call `k` of the walk's last block (which need not be an exit).
    pub fn call_ending(&mut self, cfg: &Cfg, walk: &[EdgeId], dies_in: Option<u32>) {
        self.r = 0;
        self.q = 0;
        self.run(ProbeSite::FunctionEntry);
        self.run(ProbeSite::BlockStart(cfg.entry()));
        let at = self.follow(cfg, cfg.entry(), walk);
        if self.calls(cfg, at, dies_in) {
            return;
        }
        if cfg.ends_in_call(at) && dies_in == Some(cfg.calls(at) - 1) {
            self.run(ProbeSite::BlockEnd(at));
            self.terminator_call(cfg, at, true);
            return;
        }
        assert!(cfg.is_exit(at), "walk ends at an exit");
        self.run(ProbeSite::BlockEnd(at));
    }
}

/// The acyclic paths a walk takes through `dag`, as DAG edge lists; with
/// `dies_in`, the last ends inside that call of the walk's last block.
pub fn walk_paths_ending(
    cfg: &Cfg,
    dag: &Dag,
    walk: &[EdgeId],
    dies_in: Option<u32>,
) -> Vec<Vec<DagEdgeId>> {
    let mut paths = walk_paths(cfg, dag, walk);
    if let Some(k) = dies_in {
        let last = walk.last().map_or(cfg.entry(), |&e| cfg.edge(e).to);
        let path = paths.last_mut().unwrap();
        path.pop(); // the exit edge
                    // Inside a terminator call, the path has ended before it.
        let end = if k < cfg.inner_calls(last) {
            DagEdgeKind::CallExit(last, k)
        } else {
            DagEdgeKind::UnsplitExit(last)
        };
        let call = dag
            .edge_ids()
            .find(|&d| dag.edge(d).kind == end)
            .expect("call exit edge");
        path.push(call);
    }
    paths
}

/// The acyclic paths a walk takes through `dag`, as DAG edge lists.
pub fn walk_paths(cfg: &Cfg, dag: &Dag, walk: &[EdgeId]) -> Vec<Vec<DagEdgeId>> {
    let find = |pred: &dyn Fn(DagEdgeKind) -> bool| -> DagEdgeId {
        dag.edge_ids()
            .find(|&d| pred(dag.edge(d).kind))
            .expect("dag edge exists")
    };
    let mut paths = Vec::new();
    let mut cur = vec![find(&|k| k == DagEdgeKind::Entry)];
    for &e in walk {
        let ce = cfg.edge(e);
        match dag.classes()[e.index()] {
            EdgeClass::Forward => cur.push(find(&|k| k == DagEdgeKind::Cfg(e))),
            EdgeClass::SelfLoop => {}
            EdgeClass::Back | EdgeClass::Cut | EdgeClass::Resume => {
                cur.push(find(&|k| k == DagEdgeKind::BackExit(e)));
                paths.push(std::mem::take(&mut cur));
                cur.push(find(&|k| k == DagEdgeKind::BackEntry(e)));
            }
            EdgeClass::Sibling => {
                cur.push(find(&|k| k == DagEdgeKind::UnsplitExit(ce.from)));
                paths.push(std::mem::take(&mut cur));
                cur.push(find(&|k| k == DagEdgeKind::BackEntry(e)));
            }
            EdgeClass::Unsplit => {
                cur.push(find(&|k| k == DagEdgeKind::UnsplitExit(ce.from)));
                paths.push(std::mem::take(&mut cur));
                cur.push(find(&|k| k == DagEdgeKind::UnsplitEntry(ce.to)));
            }
            EdgeClass::Unreachable => panic!("walk through unreachable code"),
        }
    }
    let last = walk.last().map_or(cfg.entry(), |&e| cfg.edge(e).to);
    // A walk cut short has no exit edge; `walk_paths_ending` replaces this one.
    let exit = dag
        .edge_ids()
        .find(|&d| dag.edge(d).kind == DagEdgeKind::Exit(last))
        .unwrap_or(DagEdgeId(u32::MAX));
    cur.push(exit);
    paths.push(cur);
    paths
}

/// Path-id counts of a set of walks, computed from the walks alone.
pub fn expected_path_counts(cfg: &Cfg, dag: &Dag, walks: &[Vec<EdgeId>]) -> BTreeMap<u64, u64> {
    let walks: Vec<(Vec<EdgeId>, Option<u32>)> = walks.iter().map(|w| (w.clone(), None)).collect();
    expected_path_counts_ending(cfg, dag, &walks)
}

/// Like [`expected_path_counts`] for walks that may end inside a call.
pub fn expected_path_counts_ending(
    cfg: &Cfg,
    dag: &Dag,
    walks: &[(Vec<EdgeId>, Option<u32>)],
) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for (w, dies_in) in walks {
        for p in walk_paths_ending(cfg, dag, w, *dies_in) {
            *out.entry(path_id(dag, &p)).or_default() += 1;
        }
    }
    out
}

/// Edge, block and call counts of a set of walks.
pub fn walk_counts(cfg: &Cfg, walks: &[Vec<EdgeId>]) -> (Vec<u64>, Vec<u64>, u64) {
    let mut edges = vec![0u64; cfg.edges().len()];
    let mut blocks = vec![0u64; cfg.num_blocks()];
    for w in walks {
        blocks[cfg.entry().index()] += 1;
        for &e in w {
            edges[e.index()] += 1;
            blocks[cfg.edge(e).to.index()] += 1;
        }
    }
    (edges, blocks, walks.len() as u64)
}

/// All ENTRY→EXIT paths of a DAG, or `None` when there are more than `limit`.
pub fn enumerate_paths(dag: &Dag, limit: usize) -> Option<Vec<Vec<DagEdgeId>>> {
    let mut out = Vec::new();
    let mut stack: Vec<(pathprof_core::NodeId, Vec<DagEdgeId>)> = vec![(dag.entry(), Vec::new())];
    while let Some((v, path)) = stack.pop() {
        if v == dag.exit() {
            out.push(path);
            if out.len() > limit {
                return None;
            }
            continue;
        }
        for &e in dag.succs(v) {
            let mut p = path.clone();
            p.push(e);
            stack.push((dag.edge(e).to, p));
        }
    }
    Some(out)
}

/// Blocks from which an exit block can be reached.
pub fn can_exit(cfg: &Cfg) -> Vec<bool> {
    let mut ok = vec![false; cfg.num_blocks()];
    let mut work: Vec<BlockId> = cfg.blocks().filter(|&b| cfg.is_exit(b)).collect();
    for b in &work {
        ok[b.index()] = true;
    }
    while let Some(b) = work.pop() {
        for &e in cfg.preds(b) {
            let f = cfg.edge(e).from;
            if !ok[f.index()] {
                ok[f.index()] = true;
                work.push(f);
            }
        }
    }
    ok
}

/// A deterministic walk from the entry to an exit driven by `choices`, at most
/// `max_steps` long before heading for the nearest exit.
pub fn make_walk(cfg: &Cfg, choices: &[u8], max_steps: usize) -> Option<Vec<EdgeId>> {
    let ok = can_exit(cfg);
    if !ok[cfg.entry().index()] {
        return None;
    }
    // distance to an exit, for the final approach
    let mut dist = vec![usize::MAX; cfg.num_blocks()];
    let mut queue: std::collections::VecDeque<BlockId> =
        cfg.blocks().filter(|&b| cfg.is_exit(b)).collect();
    for b in &queue {
        dist[b.index()] = 0;
    }
    while let Some(b) = queue.pop_front() {
        for &e in cfg.preds(b) {
            let f = cfg.edge(e).from;
            if dist[f.index()] == usize::MAX {
                dist[f.index()] = dist[b.index()] + 1;
                queue.push_back(f);
            }
        }
    }
    let mut at = cfg.entry();
    let mut walk = Vec::new();
    let mut i = 0;
    while !cfg.is_exit(at) {
        let options: Vec<EdgeId> = cfg
            .succs(at)
            .iter()
            .copied()
            .filter(|&e| ok[cfg.edge(e).to.index()])
            .collect();
        let e = if walk.len() < max_steps {
            let c = choices.get(i).copied().unwrap_or(0) as usize;
            i += 1;
            options[c % options.len()]
        } else {
            *options
                .iter()
                .min_by_key(|&&e| dist[cfg.edge(e).to.index()])
                .expect("a way out")
        };
        walk.push(e);
        at = cfg.edge(e).to;
    }
    Some(walk)
}
