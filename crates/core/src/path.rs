//! The path-profiling planner: DAG and numbering ([`crate::dag`]), spanning tree
//! and chord increments ([`crate::increments`]), Figure 8 placement
//! ([`crate::placement`]), transcribed to probes on CFG sites.
//!
//! DAG edge → CFG site: ENTRY→entry is `FunctionEntry`; a forward edge is its CFG
//! edge; a block's exit is `BlockEnd`; a backedge's or cut's dummy pair both go on
//! the CFG edge, the path-ending part first; an unsplittable block's dummy exit is
//! `BlockEnd` (followed by `r = 0` for the paths that start at its targets); self
//! loops (section 4.1) count on their own slot. A resume edge's path-ending part
//! goes at `BlockEnd` of its source (which the LLVM side puts before the call
//! that returns more than once) and its path-starting part on the edge (after
//! the call); the edge also counts its returns on a slot of its own, so a path
//! lost after a return (a fork child that ends inside a call) shows as
//! imbalance instead of vanishing. With early-exit counting, a block whose
//! terminator is a call (an `invoke`; its path ended before it) counts the
//! activations that end inside that call on a slot of its own, undone when the
//! call returns or unwinds, so its flow still balances.

use crate::cfg::Cfg;
use crate::dag::{Dag, DagEdgeKind, DagError, DagOptions, EdgeClass};
use crate::ids::{BlockId, DagEdgeId, EdgeId};
use crate::increments::ChordIncrements;
use crate::layout::Layout;
use crate::placement::{place, Placement};
use crate::plan::{FunctionPlan, Op, PathStorage, PppSlots, ProbeSite};
use crate::ppp::{Packing, PppError, PppNumbering};
use crate::weights::Weights;

/// Options of the path planner.
#[derive(Clone, Copy, Debug)]
pub struct PathOptions {
    pub dag: DagOptions,
    /// Functions with at most this many paths count into an array; others hash.
    pub array_limit: u64,
    /// Preferential path profiling numbers the interesting paths of
    /// functions with more than this many potential paths (`None`:
    /// `array_limit`, so exactly where path mode would hash; below it path
    /// mode's array counts every path with one increment, which PPP's range
    /// check and compare cannot beat).
    pub ppp_min_paths: Option<u64>,
    /// The largest PPP interval a numbered function may have (`None`:
    /// `array_limit`): above it the interesting paths would need a table
    /// too, and the function is profiled as in path mode (section 5's hash
    /// table usage policy).
    pub ppp_interval_limit: Option<u64>,
    /// Preferential path profiling leaves a function whose Ball-Larus ids
    /// hash to path mode when it has at most this many interesting paths
    /// (`None`: [`PPP_CACHE_PATHS`]): path mode's inline cache then holds
    /// them, and ends each at a PPP array's price without PPP's second
    /// register.
    pub ppp_cache_paths: Option<u64>,
    /// Keep the PPP and Ball-Larus registers in two words, as section 5
    /// does, even where they fit one ([`crate::ppp::packing`]): an ablation.
    /// Without it they are packed only in functions with more paths than
    /// `array_limit`: in a smaller function LLVM folds a path end whose PPP
    /// sum is constant to one compare of the Ball-Larus register, which
    /// packing would undo, so that the function runs more instructions
    /// (with every function numbered, `--ppp-min-paths=0`).
    pub ppp_two_registers: bool,
}

/// The default of [`PathOptions::ppp_cache_paths`]: a sixteenth of the
/// instrumented code's inline cache (16384 slots, `pathprof_format::abi`),
/// where a function's hot paths rarely share a slot. There the cache ends
/// a path in eight instructions, as PPP's array does, and path mode runs
/// fewer instructions than PPP, whose packed register adds 64-bit constants
/// at its chords and crowds a dispatch loop's registers (SQLite's
/// `sqlite3VdbeExec`, 196 interesting paths; measured with
/// `bench/callgrind.py`, see `docs/benchmarks.md`).
pub const PPP_CACHE_PATHS: u64 = 1024;

impl PathOptions {
    /// The largest PPP interval that counts in an array.
    pub fn interval_limit(&self) -> u64 {
        self.ppp_interval_limit.unwrap_or(self.array_limit)
    }

    /// The most interesting paths PPP leaves to path mode's inline cache.
    pub fn cache_paths(&self) -> u64 {
        self.ppp_cache_paths.unwrap_or(PPP_CACHE_PATHS)
    }

    /// Whether PPP leaves a function of `num_paths` potential paths and
    /// `interesting` interesting paths to path mode's inline cache (see
    /// [`PathOptions::ppp_cache_paths`]).
    pub fn ppp_leaves_to_cache(&self, num_paths: u64, interesting: usize) -> bool {
        num_paths > self.array_limit && interesting as u64 <= self.cache_paths()
    }

    /// Whether [`plan_ppp`] numbers a function of `num_paths` potential
    /// paths whose interesting paths got `numbering`, and if not, why.
    pub fn ppp_choice(&self, num_paths: u64, numbering: &PppNumbering) -> PppChoice {
        let min_paths = self.ppp_min_paths.unwrap_or(self.array_limit);
        if numbering.is_empty() {
            PppChoice::NoneInteresting
        } else if num_paths <= min_paths {
            PppChoice::FewPaths { min_paths }
        } else if self.ppp_leaves_to_cache(num_paths, numbering.len()) {
            PppChoice::Cached {
                most: self.cache_paths(),
            }
        } else if numbering.interval() > self.interval_limit() {
            PppChoice::IntervalAbove {
                limit: self.interval_limit(),
            }
        } else {
            PppChoice::Numbered
        }
    }
}

/// What preferential path profiling does with one function
/// ([`PathOptions::ppp_choice`]): number its interesting paths, or leave it
/// to path mode's plan, for one of these reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PppChoice {
    /// Its interesting paths count in an array of the PPP interval.
    Numbered,
    /// It has no interesting path.
    NoneInteresting,
    /// At most `min_paths` potential paths (`--ppp-min-paths`): path mode's
    /// array counts every path with one increment.
    FewPaths { min_paths: u64 },
    /// Its ids hash, and it has at most `most` interesting paths
    /// (`--ppp-cache-paths`): path mode's inline cache holds them.
    Cached { most: u64 },
    /// Its PPP interval is above `limit` (`--ppp-interval-limit`): the
    /// interesting paths would not fit an array either.
    IntervalAbove { limit: u64 },
}

impl Default for PathOptions {
    fn default() -> Self {
        PathOptions {
            dag: DagOptions::default(),
            array_limit: 1 << 17,
            ppp_min_paths: None,
            ppp_interval_limit: None,
            ppp_cache_paths: None,
            ppp_two_registers: false,
        }
    }
}

/// Plans path profiling of one function.
pub fn plan_paths(
    cfg: &Cfg,
    weights: &Weights,
    options: &PathOptions,
) -> Result<(FunctionPlan, Layout), DagError> {
    let dag = Dag::build(cfg, options.dag)?;
    let incs = chord_increments(cfg, &dag, weights);
    Ok(transcribe(cfg, dag, &incs, options))
}

/// The spanning tree and chord increments the planner uses for `dag` under
/// `weights` (reports ask [`crate::planner::planned_increments`] for the ones
/// a map's instrumentation used).
pub fn chord_increments(cfg: &Cfg, dag: &Dag, weights: &Weights) -> ChordIncrements {
    ChordIncrements::compute(dag, |id| dag_weight(cfg, dag, weights, id))
}

/// The spanning-tree weight of a DAG edge; `None` forces it onto the tree.
pub fn dag_weight(cfg: &Cfg, dag: &Dag, weights: &Weights, id: DagEdgeId) -> Option<f64> {
    Some(match dag.edge(id).kind {
        DagEdgeKind::Entry => weights.block(cfg.entry()),
        DagEdgeKind::Cfg(e) | DagEdgeKind::BackEntry(e) | DagEdgeKind::BackExit(e) => {
            weights.edge(e)
        }
        DagEdgeKind::Exit(b) | DagEdgeKind::UnsplitExit(b) => weights.block(b),
        // Taken (and undone) around every call: keep it off the tree.
        DagEdgeKind::CallExit(..) => 0.0,
        DagEdgeKind::UnsplitEntry(_) => return None,
    })
}

/// Plans preferential path profiling of one function (Vaswani et al. 2007):
/// path mode's DAG and spanning tree, so the same Ball-Larus ids, and the PPP
/// numbering of `interesting` (Ball-Larus ids) on the same chords. Returns
/// the numbering too; the plan uses it only where
/// [`PathOptions::ppp_choice`] says [`PppChoice::Numbered`] (else it is
/// path mode's plan). The layout records the interesting paths either way.
pub fn plan_ppp(
    cfg: &Cfg,
    weights: &Weights,
    options: &PathOptions,
    interesting: &[u64],
) -> Result<(FunctionPlan, Layout, PppNumbering), PppPlanError> {
    let dag = Dag::build(cfg, options.dag)?;
    let incs = chord_increments(cfg, &dag, weights);
    let numbering = PppNumbering::compute(&dag, interesting)?;
    let fits = options.ppp_choice(dag.num_paths(), &numbering) == PppChoice::Numbered;
    // Packed only where Ball-Larus ids hash (see `PathOptions::ppp_two_registers`).
    let packs = !options.ppp_two_registers && dag.num_paths() > options.array_limit;
    let ppp_incs = fits.then(|| {
        let packing = packs.then(|| Packing::fit(&dag, &numbering)).flatten();
        (numbering.chord_increments(&dag, &incs), packing)
    });
    let ppp = ppp_incs.as_ref().map(|(incs, packing)| PppRegisters {
        numbering: &numbering,
        incs,
        packing: *packing,
    });
    let (plan, mut layout) = transcribe_ppp(cfg, dag, &incs, ppp, options);
    if let Layout::Path { interesting, .. } = &mut layout {
        *interesting = numbering.paths().iter().map(|n| n.bl).collect();
        interesting.sort_unstable();
    }
    Ok((plan, layout, numbering))
}

/// Why [`plan_ppp`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PppPlanError {
    #[error(transparent)]
    Dag(#[from] DagError),
    #[error(transparent)]
    Ppp(#[from] PppError),
}

/// Turns the placement into probes.
pub fn transcribe(
    cfg: &Cfg,
    dag: Dag,
    incs: &ChordIncrements,
    options: &PathOptions,
) -> (FunctionPlan, Layout) {
    transcribe_ppp(cfg, dag, incs, None, options)
}

/// A PPP function's second numbering, as [`transcribe_ppp`] instruments it.
#[derive(Clone, Copy, Debug)]
pub struct PppRegisters<'a> {
    pub numbering: &'a PppNumbering,
    /// Its increments on the chords of path mode's tree.
    pub incs: &'a ChordIncrements,
    /// Both registers in one word ([`crate::ppp::packing`]), or two.
    pub packing: Option<Packing>,
}

/// Turns the placement into probes; with `ppp` (a numbering and its
/// increments on `incs`' chords) in two registers: path mode's `r` and the
/// PPP register `q`, both set where Figure 8 initialises, each added to on
/// the chords where its own increment is not 0, and every count a
/// [`Op::CountPpp`] of both (interesting paths into the slots after path
/// mode's, the others by Ball-Larus id as in path mode). With a packing the
/// two are one word in `r`: every constant is the pair's word and every
/// count an [`Op::CountPacked`].
pub fn transcribe_ppp(
    cfg: &Cfg,
    dag: Dag,
    incs: &ChordIncrements,
    ppp: Option<PppRegisters>,
    options: &PathOptions,
) -> (FunctionPlan, Layout) {
    let placement = place(&dag, incs);
    transcribe_placed(cfg, dag, incs, placement, ppp, options)
}

/// [`transcribe_ppp`] with a placement of `incs` given (Figure 8's, or one
/// that leaves out counts only paths nobody reads end at, as a P3 copy's).
pub fn transcribe_placed(
    cfg: &Cfg,
    dag: Dag,
    incs: &ChordIncrements,
    placement: Placement,
    ppp: Option<PppRegisters>,
    options: &PathOptions,
) -> (FunctionPlan, Layout) {
    // The same tree, so the same init and count sites; only `add` differs.
    let ppp_placement = ppp.map(|p| {
        debug_assert_eq!(p.incs.in_tree, incs.in_tree);
        let pp = place(&dag, p.incs);
        debug_assert_eq!(pp.count_at_top, placement.count_at_top);
        pp
    });
    let site = |id: DagEdgeId| match dag.edge(id).kind {
        DagEdgeKind::Entry => ProbeSite::FunctionEntry,
        DagEdgeKind::BackExit(e) if cfg.edge(e).resume => ProbeSite::BlockEnd(cfg.edge(e).from),
        DagEdgeKind::Cfg(e) | DagEdgeKind::BackEntry(e) | DagEdgeKind::BackExit(e) => {
            ProbeSite::Edge(e)
        }
        DagEdgeKind::Exit(b) | DagEdgeKind::UnsplitExit(b) => ProbeSite::BlockEnd(b),
        DagEdgeKind::UnsplitEntry(b) => ProbeSite::BlockStart(b),
        DagEdgeKind::CallExit(b, k) => ProbeSite::Call(b, k),
    };
    let mut ops: Vec<(ProbeSite, Op)> = Vec::new();
    let emit = |id: DagEdgeId, ops: &mut Vec<(ProbeSite, Op)>| {
        let code = placement.code[id.index()];
        let inc = incs.inc[id.index()];
        let s = site(id);
        if let (Some(p), Some(pp)) = (ppp, &ppp_placement) {
            let pcode = pp.code[id.index()];
            let pinc = p.incs.inc[id.index()];
            debug_assert_eq!((pcode.init, pcode.count), (code.init, code.count));
            if let Some(packing) = p.packing {
                // Off the chords both increments are 0; on a chord `add`
                // is left out only where the increment is 0 or `init` sets it.
                let word = packing.word(inc, pinc);
                if code.init {
                    ops.push((s, Op::SetPath(word)));
                }
                if code.count {
                    ops.push((s, Op::CountPacked(if code.init { 0 } else { word })));
                } else if !code.init && word != 0 {
                    ops.push((s, Op::AddPath(word)));
                }
                return;
            }
            if code.init {
                ops.push((s, Op::SetPath(inc)));
                ops.push((s, Op::SetPpp(pinc)));
            }
            if code.count {
                let bl = if code.add { inc } else { 0 };
                let ppp = if pcode.add { pinc } else { 0 };
                ops.push((s, Op::CountPpp { bl, ppp }));
            } else {
                if code.add {
                    ops.push((s, Op::AddPath(inc)));
                }
                if pcode.add {
                    ops.push((s, Op::AddPpp(pinc)));
                }
            }
            return;
        }
        if code.init {
            ops.push((s, Op::SetPath(inc)));
        }
        match (code.count, code.add) {
            (true, true) => ops.push((s, Op::CountPath(inc))),
            (true, false) => ops.push((s, Op::CountPath(0))),
            (false, true) => ops.push((s, Op::AddPath(inc))),
            (false, false) => {}
        }
    };
    // Path-ending code before path-starting code on a shared site.
    let starts = |id: &DagEdgeId| {
        matches!(
            dag.edge(*id).kind,
            DagEdgeKind::BackEntry(_) | DagEdgeKind::UnsplitEntry(_)
        )
    };
    for id in dag.edge_ids().filter(|id| !starts(id)) {
        emit(id, &mut ops);
    }
    for id in dag.edge_ids().filter(starts) {
        if let DagEdgeKind::UnsplitEntry(_) = dag.edge(id).kind {
            continue; // pinned: handled below
        }
        emit(id, &mut ops);
    }
    // Paths starting after an unsplittable edge begin with r = 0 (their entry
    // edges are on the tree): set it before the terminator.
    for b in cfg.blocks() {
        if cfg
            .succs(b)
            .iter()
            .any(|&e| dag.classes()[e.index()] == EdgeClass::Unsplit)
        {
            ops.push((ProbeSite::BlockEnd(b), Op::SetPath(0)));
            if ppp.is_some_and(|p| p.packing.is_none()) {
                ops.push((ProbeSite::BlockEnd(b), Op::SetPpp(0)));
            }
        }
    }
    let count0 = match ppp {
        Some(PppRegisters {
            packing: Some(_), ..
        }) => Op::CountPacked(0),
        Some(_) => Op::CountPpp { bl: 0, ppp: 0 },
        None => Op::CountPath(0),
    };
    for v in (0..dag.num_blocks()).filter(|&v| placement.count_at_top[v]) {
        ops.push((ProbeSite::BlockStart(crate::BlockId::new(v)), count0));
    }
    let self_loops: Vec<EdgeId> = cfg
        .edge_ids()
        .filter(|e| dag.classes()[e.index()] == EdgeClass::SelfLoop)
        .collect();
    for (k, &e) in self_loops.iter().enumerate() {
        ops.push((ProbeSite::Edge(e), Op::CountSlot(k as u32)));
    }
    let resumes: Vec<EdgeId> = cfg
        .edge_ids()
        .filter(|e| dag.classes()[e.index()] == EdgeClass::Resume)
        .collect();
    for (k, &e) in resumes.iter().enumerate() {
        let slot = (self_loops.len() + k) as u32;
        ops.push((ProbeSite::Edge(e), Op::CountSlot(slot)));
    }
    let call_exits: Vec<BlockId> = if options.dag.early_exit {
        cfg.blocks().filter(|&b| cfg.ends_in_call(b)).collect()
    } else {
        Vec::new()
    };
    for (k, &b) in call_exits.iter().enumerate() {
        let slot = (self_loops.len() + resumes.len() + k) as u32;
        ops.push((ProbeSite::Call(b, cfg.calls(b) - 1), Op::CountSlot(slot)));
    }
    let num_paths = dag.num_paths();
    let storage = if num_paths <= options.array_limit {
        PathStorage::Array { len: num_paths }
    } else {
        PathStorage::Hash { num_paths }
    };
    let base = (self_loops.len() + resumes.len() + call_exits.len()) as u32;
    let ppp_owners: Vec<u64> = ppp.map_or_else(Vec::new, |p| {
        (0..p.numbering.interval())
            .map(|id| p.numbering.slot_owner(id).expect("inside the interval"))
            .collect()
    });
    let num_slots = base + ppp_owners.len() as u32;
    let mut plan = FunctionPlan::from_ops(num_slots, storage, ops);
    let hashed = matches!(storage, PathStorage::Hash { .. });
    if !ppp_owners.is_empty() {
        plan.ppp = Some(PppSlots {
            base,
            owners: ppp_owners.clone(),
            packing: ppp.and_then(|p| p.packing),
        });
    }
    (
        plan,
        Layout::Path {
            dag,
            self_loops,
            resumes,
            call_exits,
            ppp_owners,
            interesting: Vec::new(),
            hashed,
        },
    )
}
