//! From raw counters back to block, edge and path counts, for every mode: block
//! counts directly; edge counts from chord counters by flow conservation; edge and
//! block counts from a path profile by regenerating each path (the verifier of the
//! LLVM path-profiling notes), with unsplittable edges recovered by flow.
//!
//! Derivation fails only when the counters cannot belong to the map (another
//! number of slots, a path id out of range). Counts that do not balance are
//! returned with an account of where ([`FunctionCounts::imbalance`]).

use crate::cfg::Cfg;
use crate::counts::sum_by_id;
use crate::dag::{DagEdgeKind, EdgeClass};
use crate::flow::{Clamp, FlowCounts, Guess, Network, Solution};
pub use crate::flow::{FlowNode, Imbalance, Unbalanced};
use crate::layout::{FlowEdge, Layout};
use crate::regen::{regenerate, Path, RegenError};

/// One executed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathCount {
    pub id: u64,
    pub count: u64,
    pub path: Path,
}

/// Everything known about one function's execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCounts {
    /// Calls.
    pub entry: u64,
    /// Per block.
    pub blocks: Vec<u64>,
    /// Per CFG edge; `None` in block mode.
    pub edges: Option<Vec<u64>>,
    /// Per block, how often control left the function from it: returns (and
    /// `unreachable`, `resume`), and, with early-exit counting, activations
    /// that ended inside one of its calls. `None` in block mode.
    pub exits: Option<Vec<u64>>,
    /// Per block, activations that went on in the middle of it after one of
    /// its calls returned although their count up to that call had been
    /// written: a fork child returning from a call its parent was in at the
    /// fork, or an activation a dump taken during the call counted among
    /// `exits` (the profile's resumes, early-exit counting only). `None` in
    /// block mode.
    pub starts: Option<Vec<u64>>,
    /// Executed paths by id (path mode), sorted by id.
    pub paths: Vec<PathCount>,
    /// Path mode: paths ending in a call whose count there was taken back
    /// after it was written, by id, with how often (see `starts`): subtract
    /// them from `paths` for what ran.
    pub resumed: Vec<PathCount>,
    /// Path mode: executions whose path in progress was never counted because
    /// the process ended inside a call (build with early-exit counting to see
    /// them); 0 when the counts are complete.
    pub lost: u64,
    /// Where flow does not balance beyond what `lost` explains (edge and path
    /// modes; always balanced in block mode).
    pub imbalance: Imbalance,
}

impl FunctionCounts {
    /// Block counts alone (block mode's every-block counters): no edges,
    /// exits, starts or paths, nothing lost, balanced.
    pub fn of_blocks(entry: u64, blocks: Vec<u64>) -> Self {
        FunctionCounts {
            entry,
            blocks,
            edges: None,
            exits: None,
            starts: None,
            paths: Vec::new(),
            resumed: Vec::new(),
            lost: 0,
            imbalance: Imbalance::default(),
        }
    }
}

/// Why counters could not be interpreted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeriveError {
    #[error("the profile has {found} counters for this function but its map says {expected} (profile from another build?)")]
    SlotCount { expected: usize, found: usize },
    #[error(transparent)]
    Regen(#[from] RegenError),
}

/// A function's resumes (`pathprof_format`'s): how often a counter's count,
/// already written, was taken back, by slot and by path id.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resumes<'a> {
    pub slots: &'a [(u64, u64)],
    pub paths: &'a [(u64, u64)],
}

/// Interprets one function's counters (a profile without resumes).
pub fn derive(
    cfg: &Cfg,
    layout: &Layout,
    slots: &[u64],
    paths: &[(u64, u64)],
) -> Result<FunctionCounts, DeriveError> {
    derive_with_resumes(cfg, layout, slots, paths, Resumes::default(), None)
}

/// The counters of a PPP function as path mode's: the last
/// `owners.len()` slots become path counts of their owners' Ball-Larus ids,
/// their resumes path resumes (the path list and the resumes sorted by id,
/// one entry per id).
#[allow(clippy::type_complexity)]
fn fold_ppp(
    slots: &[u64],
    paths: &[(u64, u64)],
    resumes: Resumes<'_>,
    owners: &[u64],
) -> (Vec<u64>, Vec<(u64, u64)>, Vec<(u64, u64)>, Vec<(u64, u64)>) {
    let base = slots.len() - owners.len();
    let owned = |k: u64| {
        let p = (k as usize).checked_sub(base)?;
        owners
            .get(p)
            .copied()
            .filter(|&o| o != crate::ppp::classify::HOLE)
    };
    let mut all = paths.to_vec();
    all.extend((base..slots.len()).filter_map(|k| owned(k as u64).map(|id| (id, slots[k]))));
    let mut path_resumes = resumes.paths.to_vec();
    path_resumes.extend(
        resumes
            .slots
            .iter()
            .filter_map(|&(k, n)| owned(k).map(|id| (id, n))),
    );
    let slot_resumes = resumes
        .slots
        .iter()
        .copied()
        .filter(|&(k, _)| (k as usize) < base)
        .collect();
    (
        slots[..base].to_vec(),
        sum_by_id(all),
        slot_resumes,
        sum_by_id(path_resumes),
    )
}

/// Interprets one function's counters and resumes. A resume of an
/// early-exit count (an edge-mode block exit, a path ending in a call, a
/// path-mode terminator call) is an activation that started in the middle
/// of that block: the path's edges up to the call are taken back and the
/// block gets a start; a resume of any other counter just takes back a count.
///
/// `known_entry`: the entry count of a function whose callers give it
/// ([`crate::callers`]; its layout [`Layout::takes_entry_from_callers`]):
/// an edge layout's entry edge, or a one-path layout's one path count.
pub fn derive_with_resumes(
    cfg: &Cfg,
    layout: &Layout,
    slots: &[u64],
    paths: &[(u64, u64)],
    resumes: Resumes<'_>,
    known_entry: Option<u64>,
) -> Result<FunctionCounts, DeriveError> {
    let expect_slots = layout.num_slots();
    // An all-zero function may be written without its slots.
    let zeros;
    let slots = if slots.is_empty() && expect_slots > 0 {
        zeros = vec![0; expect_slots];
        &zeros[..]
    } else {
        slots
    };
    if slots.len() != expect_slots {
        return Err(DeriveError::SlotCount {
            expected: expect_slots,
            found: slots.len(),
        });
    }
    // A PPP function's interesting paths count in slots: fold them (and their
    // resumes) into path counts by Ball-Larus id, so what follows sees a
    // path-mode profile.
    let folded;
    let (slots, paths, resumes) = match layout {
        Layout::Path { ppp_owners, .. } if !ppp_owners.is_empty() => {
            folded = fold_ppp(slots, paths, resumes, ppp_owners);
            let (slots, paths, slot_resumes, path_resumes) = &folded;
            let resumes = Resumes {
                slots: slot_resumes,
                paths: path_resumes,
            };
            (&slots[..], &paths[..], resumes)
        }
        _ => (slots, paths, resumes),
    };
    match layout {
        Layout::Block {
            slot_of_block,
            calls_slot,
        } => {
            let blocks: Vec<u64> = slot_of_block
                .iter()
                .map(|s| s.map_or(0, |k| slots[k as usize]))
                .collect();
            let entry = calls_slot.map_or(blocks[cfg.entry().index()], |k| slots[k as usize]);
            Ok(FunctionCounts::of_blocks(entry, blocks))
        }
        Layout::Edge {
            counted,
            net_call_exits,
            ..
        } => {
            let mut flow = FlowCounts::unknown(cfg);
            if *net_call_exits {
                for b in cfg
                    .blocks()
                    .filter(|&b| cfg.is_reachable(b) && cfg.calls(b) > 0)
                {
                    flow.exits[b.index()] = None;
                }
            }
            let mut net = slots.to_vec();
            for &(k, n) in resumes.slots {
                match counted.get(k as usize) {
                    Some(&FlowEdge::Exit(b)) => {
                        flow.starts[b.index()] = flow.starts[b.index()].saturating_add(n)
                    }
                    Some(_) => net[k as usize] = net[k as usize].saturating_sub(n),
                    None => {}
                }
            }
            for (&fe, &c) in counted.iter().zip(&net) {
                flow.set(fe, c);
            }
            if let Some(calls) = known_entry {
                flow.set(FlowEdge::Entry, calls);
            }
            // Every tree edge follows by conservation; only a count that
            // would be negative leaves its node unbalanced.
            let solution = if *net_call_exits {
                flow.solve_net_exits(cfg)
            } else {
                flow.solve(cfg, false)
            };
            Ok(finish(cfg, flow, Vec::new(), solution))
        }
        Layout::Path {
            dag,
            self_loops,
            resumes: resume_edges,
            call_exits,
            ..
        } => {
            let mut flow = FlowCounts::unknown(cfg);
            flow.entry = Some(0);
            for e in cfg.edge_ids() {
                if dag.classes()[e.index()] != EdgeClass::Unsplit
                    && cfg.is_reachable(cfg.edge(e).from)
                {
                    flow.edges[e.index()] = Some(0);
                }
            }
            for b in cfg.blocks() {
                flow.exits[b.index()] = Some(0);
            }
            let one_path;
            let paths = match known_entry {
                Some(calls) if paths.is_empty() => {
                    one_path = [(0, calls)];
                    &one_path[..calls.min(1) as usize]
                }
                _ => paths,
            };
            let mut executed = Vec::with_capacity(paths.len());
            // Paths ending before / starting after unsplittable edges, per block.
            let mut unsplit_out = vec![0u64; cfg.num_blocks()];
            let mut unsplit_in = vec![0u64; cfg.num_blocks()];
            let mut tally = PathTally {
                cfg,
                dag,
                flow: &mut flow,
                unsplit_out: &mut unsplit_out,
                unsplit_in: &mut unsplit_in,
            };
            for &(id, count) in paths {
                let path = regenerate(dag, id)?;
                tally.add(&path, count);
                executed.push(PathCount { id, count, path });
            }
            let mut resumed = Vec::with_capacity(resumes.paths.len());
            for &(id, count) in resumes.paths {
                let path = regenerate(dag, id)?;
                tally.take_back(&path, count);
                resumed.push(PathCount { id, count, path });
            }
            // Counters other than terminator calls' are never taken back by
            // the program: a resume of one just takes back a count.
            let mut net = slots.to_vec();
            for &(k, n) in resumes.slots {
                if (k as usize) < self_loops.len() + resume_edges.len() {
                    net[k as usize] = net[k as usize].saturating_sub(n);
                }
            }
            for (&e, &c) in self_loops.iter().zip(&net) {
                flow.set(FlowEdge::Cfg(e), c);
            }
            // Returns along resume edges are counted as they happen, so a path
            // lost after one shows as excess inflow into its target.
            for (&e, &c) in resume_edges.iter().zip(&net[self_loops.len()..]) {
                flow.set(FlowEdge::Cfg(e), c);
            }
            // Activations that ended inside a terminator call: their path
            // ended before it and went on along no edge.
            let ended_in = &slots[self_loops.len() + resume_edges.len()..];
            for (&b, &c) in call_exits.iter().zip(ended_in) {
                let exits = &mut flow.exits[b.index()];
                *exits = Some(exits.unwrap_or(0).saturating_add(c));
                unsplit_out[b.index()] = unsplit_out[b.index()].saturating_sub(c);
            }
            // A resumed terminator call: the activation came in from outside
            // and went on along one of its (unsplittable) edges.
            for &(k, n) in resumes.slots {
                let Some(call) = (k as usize).checked_sub(self_loops.len() + resume_edges.len())
                else {
                    continue;
                };
                if let Some(&b) = call_exits.get(call) {
                    flow.starts[b.index()] = flow.starts[b.index()].saturating_add(n);
                    unsplit_out[b.index()] = unsplit_out[b.index()].saturating_add(n);
                }
            }
            // Paths ending before a terminator went on along a sibling or an
            // unsplittable edge (more siblings than such paths: unbalanced,
            // which the check below reports).
            for e in cfg.edge_ids() {
                if dag.classes()[e.index()] == EdgeClass::Sibling {
                    let from = cfg.edge(e).from.index();
                    let sibling = flow.edges[e.index()].unwrap_or(0);
                    unsplit_out[from] = unsplit_out[from].saturating_sub(sibling);
                }
            }
            let guessed = solve_unsplittable(cfg, dag, &unsplit_out, &unsplit_in, &mut flow);
            // Every count is known now: solving only checks the balance.
            // Without early-exit counting, a process that ended inside a call
            // lost the paths it was on: tolerated, and reported as lost.
            let mut solution = flow.solve(cfg, true);
            solution.imbalance.guessed.splice(0..0, guessed);
            executed.sort_by_key(|p| p.id);
            let mut counts = finish(cfg, flow, executed, solution);
            counts.resumed = resumed;
            Ok(counts)
        }
    }
}

fn finish(
    cfg: &Cfg,
    flow: FlowCounts,
    paths: Vec<PathCount>,
    solution: Solution,
) -> FunctionCounts {
    let blocks = flow.block_counts(cfg);
    FunctionCounts {
        entry: flow.entry.unwrap_or(0),
        blocks,
        edges: Some(flow.edges.iter().map(|c| c.unwrap_or(0)).collect()),
        exits: Some(flow.exits.iter().map(|c| c.unwrap_or(0)).collect()),
        starts: Some(flow.starts),
        paths,
        resumed: Vec::new(),
        lost: solution.lost,
        imbalance: solution.imbalance,
    }
}

/// Adds executed paths into a path-mode function's flow counts (and takes
/// resumed ones back).
struct PathTally<'a> {
    cfg: &'a Cfg,
    dag: &'a crate::dag::Dag,
    flow: &'a mut FlowCounts,
    unsplit_out: &'a mut [u64],
    unsplit_in: &'a mut [u64],
}

impl PathTally<'_> {
    /// `count` executions of `path`.
    fn add(&mut self, path: &Path, count: u64) {
        self.apply(path, count, false);
    }

    /// `count` resumes of `path`, a path counted as ending in a call that
    /// then returned: its edges did not run for these activations, which
    /// start in the call's block instead.
    fn take_back(&mut self, path: &Path, count: u64) {
        self.apply(path, count, true);
    }

    fn apply(&mut self, path: &Path, count: u64, back: bool) {
        let (cfg, dag) = (self.cfg, self.dag);
        let add = |c: &mut u64| {
            *c = if back {
                c.saturating_sub(count)
            } else {
                c.saturating_add(count)
            }
        };
        let add_known = |slot: &mut Option<u64>| {
            let mut c = slot.unwrap_or(0);
            add(&mut c);
            *slot = Some(c);
        };
        let flow = &mut *self.flow;
        for &e in &path.edges {
            match dag.edge(e).kind {
                DagEdgeKind::UnsplitExit(b) => add(&mut self.unsplit_out[b.index()]),
                DagEdgeKind::UnsplitEntry(b) => add(&mut self.unsplit_in[b.index()]),
                DagEdgeKind::Entry => add_known(&mut flow.entry),
                // A path ending before a call that returns more than once
                // leaves the function's flow there.
                DagEdgeKind::BackExit(ce) if cfg.edge(ce).resume => {
                    add_known(&mut flow.exits[cfg.edge(ce).from.index()])
                }
                DagEdgeKind::Cfg(ce) | DagEdgeKind::BackExit(ce) => {
                    add_known(&mut flow.edges[ce.index()])
                }
                DagEdgeKind::CallExit(b, _) if back => {
                    flow.starts[b.index()] = flow.starts[b.index()].saturating_add(count)
                }
                DagEdgeKind::Exit(b) | DagEdgeKind::CallExit(b, _) => {
                    add_known(&mut flow.exits[b.index()])
                }
                DagEdgeKind::BackEntry(ce) => {
                    if dag.classes()[ce.index()] == EdgeClass::Sibling {
                        add_known(&mut flow.edges[ce.index()])
                    }
                }
            }
        }
    }
}

/// Counts of unsplittable edges from the paths that end before them (per source)
/// and start after them (per target): leaf elimination ([`Network::solve`]) on
/// the bipartite graph of those edges, exact whenever it is a forest (one
/// `indirectbr` block, `invoke`s). Never fails: where the sums do not balance a
/// count is at least 0 (and the caller's balance check reports the nodes);
/// where the edges form a cycle, one of them takes what its ends leave (the
/// smaller), and the edges so chosen are returned.
fn solve_unsplittable(
    cfg: &Cfg,
    dag: &crate::dag::Dag,
    out_sums: &[u64],
    in_sums: &[u64],
    flow: &mut FlowCounts,
) -> Vec<FlowEdge> {
    let n = cfg.num_blocks();
    let edges: Vec<crate::EdgeId> = cfg
        .edge_ids()
        .filter(|e| dag.classes()[e.index()] == EdgeClass::Unsplit)
        .collect();
    // Nodes: sources 0..n, into which the paths ending before their
    // unsplittable edges flow, and targets n..2n, out of which the paths
    // starting after them flow.
    let network = Network::new(
        2 * n,
        edges
            .iter()
            .map(|&e| [cfg.edge(e).from.index(), n + cfg.edge(e).to.index()])
            .collect(),
    );
    let supply: Vec<i128> = out_sums
        .iter()
        .map(|&s| i128::from(s))
        .chain(in_sums.iter().map(|&s| -i128::from(s)))
        .collect();
    let mut value: Vec<Option<i128>> = vec![None; edges.len()];
    let guessed = network.solve(&supply, &mut value, Guess::Smaller, Clamp::EachStep);
    for (i, &e) in edges.iter().enumerate() {
        flow.set(FlowEdge::Cfg(e), value[i].map_or(0, |v| v as u64));
    }
    guessed
        .into_iter()
        .map(|i| FlowEdge::Cfg(edges[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    //! Derivation from counters that do not balance, in each mode, on one loop:
    //!
    //! ```text
    //!   b0 ─e0─▶ b1 ─e1─▶ b2 ─e3─▶ b3 (returns)
    //!             ▲        │
    //!             └───e2───┘        (backedge)
    //! ```
    //! One call that loops twice runs b0 b1 b2 b1 b2 b3: e0 1, e1 2, e2 1, e3 1.

    use super::*;
    use crate::ids::{BlockId, EdgeId};
    use crate::planner::{plan_function, PlanOptions};
    use crate::Mode;

    fn looped() -> Cfg {
        Cfg::from_edge_list(4, &[(0, 1), (1, 2), (2, 1), (2, 3)]).unwrap()
    }

    fn node(b: usize, inflow: u64, outflow: u64) -> Unbalanced {
        Unbalanced {
            node: FlowNode::Block(BlockId::new(b)),
            inflow,
            outflow,
        }
    }

    #[test]
    fn block_counts_are_taken_as_counted() {
        let cfg = looped();
        let every = PlanOptions::default().with_every_block(true);
        let (_, layout) = plan_function(&cfg, Mode::Block, &every).unwrap();
        // b1 entered less often than b2: not a flow question with a counter
        // in every block.
        let c = derive(&cfg, &layout, &[1, 1, 5, 1], &[]).unwrap();
        assert_eq!(c.blocks, vec![1, 1, 5, 1]);
        assert!(c.imbalance.is_balanced());
    }

    #[test]
    fn block_mode_derives_blocks_from_chords_and_net_exits_of_calls() {
        let mut cfg = looped();
        // b2 calls something that might not return.
        cfg.set_calls(vec![0, 0, 1, 0]).unwrap();
        let (plan, layout) = plan_function(&cfg, Mode::Block, &PlanOptions::default()).unwrap();
        let Layout::Edge {
            counted,
            net_call_exits: true,
            ..
        } = &layout
        else {
            panic!("block mode counts chords: {layout:?}");
        };
        // Flow edges: entry, e0..e3, b2's net exit, b3's return; 5 nodes:
        // 3 chords, none of them b2's exit.
        assert_eq!(counted.len(), 3);
        assert_eq!(plan.num_slots, 3);
        assert!(!counted.contains(&FlowEdge::Exit(BlockId::new(2))));
        let slots_of = |edges: [u64; 4], calls: u64, returns: u64| -> Vec<u64> {
            counted
                .iter()
                .map(|fe| match fe {
                    FlowEdge::Entry => calls,
                    FlowEdge::Cfg(e) => edges[e.index()],
                    FlowEdge::Exit(b) if b.index() == 3 => returns,
                    FlowEdge::Exit(_) => unreachable!("b2's exit is never counted"),
                })
                .collect()
        };
        // Two calls: one went round the loop twice and returned, the other
        // entered b2 once and ended inside its call (exit, longjmp).
        let c = derive(&cfg, &layout, &slots_of([2, 2, 1, 1], 2, 1), &[]).unwrap();
        assert_eq!(c.blocks, vec![2, 3, 3, 1]);
        assert_eq!(c.entry, 2);
        assert_eq!(c.exits, Some(vec![0, 0, 1, 1]));
        assert!(c.imbalance.is_balanced());
        // A fork child returned from b2's call, which its parent was in: it
        // left b2 along e3 without having come in. Net exit -1: a start.
        let c = derive(&cfg, &layout, &slots_of([1, 1, 0, 2], 1, 2), &[]).unwrap();
        assert_eq!(c.blocks, vec![1, 1, 1, 2]);
        assert_eq!(c.starts, Some(vec![0, 0, 1, 0]));
        assert_eq!(c.exits, Some(vec![0, 0, 0, 2]));
        assert!(c.imbalance.is_balanced());
    }

    #[test]
    fn edge_mode_clamps_and_reports_where_counts_would_go_negative() {
        let cfg = looped();
        // Chords e1 and b3's return; the tree is entry, e0, e2, e3.
        let layout = Layout::Edge {
            counted: vec![
                FlowEdge::Cfg(EdgeId::new(1)),
                FlowEdge::Exit(BlockId::new(3)),
            ],
            net_call_exits: false,
            entry_replaces: None,
        };
        let exact = derive(&cfg, &layout, &[2, 1], &[]).unwrap();
        assert_eq!(exact.edges, Some(vec![1, 2, 1, 1]));
        assert_eq!(exact.blocks, vec![1, 2, 2, 1]);
        assert!(exact.imbalance.is_balanced());
        // e1 damaged to 0: solving from outside, entry 1 and e0 1; at b1,
        // e2 = e1 - e0 = -1, so 0; at b2, e3 = e1 - e2 = 0; then b1 has 1 in
        // and nothing out, b3 nothing in and 1 out.
        let damaged = derive(&cfg, &layout, &[0, 1], &[]).unwrap();
        assert_eq!(damaged.edges, Some(vec![1, 0, 0, 0]));
        assert_eq!(damaged.blocks, vec![1, 1, 0, 0]);
        assert_eq!(damaged.imbalance.nodes, vec![node(1, 1, 0), node(3, 0, 1)]);
        assert_eq!(damaged.imbalance.total(), 1);
        assert_eq!(damaged.lost, 0);
    }

    #[test]
    fn edge_mode_resumes_of_a_block_exit_are_starts() {
        let cfg = looped();
        let layout = Layout::Edge {
            counted: vec![
                FlowEdge::Cfg(EdgeId::new(1)),
                FlowEdge::Exit(BlockId::new(3)),
            ],
            net_call_exits: false,
            entry_replaces: None,
        };
        // b3's exit counted 2, taken back once: one activation started in b3
        // (a fork child returning there) and both left it.
        let resumes = Resumes {
            slots: &[(1, 1)],
            paths: &[],
        };
        let c = derive_with_resumes(&cfg, &layout, &[2, 2], &[], resumes, None).unwrap();
        assert_eq!(c.starts, Some(vec![0, 0, 0, 1]));
        assert_eq!(c.exits, Some(vec![0, 0, 0, 2]));
        assert_eq!(c.edges, Some(vec![1, 2, 1, 1]));
        assert!(c.imbalance.is_balanced());
        // Absurd resumes (a damaged profile that decodes) never overflow.
        let absurd = Resumes {
            slots: &[(1, u64::MAX), (1, u64::MAX)],
            paths: &[],
        };
        let c = derive_with_resumes(&cfg, &layout, &[2, 2], &[], absurd, None).unwrap();
        assert_eq!(c.starts.unwrap()[3], u64::MAX);
        assert!(!c.imbalance.is_balanced());
    }

    #[test]
    fn path_mode_counts_edges_from_paths_and_reports_excess_outflow() {
        let cfg = looped();
        let (_, layout) = plan_function(&cfg, Mode::Path, &PlanOptions::default()).unwrap();
        let Layout::Path { dag, .. } = &layout else {
            panic!("a path layout");
        };
        let id_of = |blocks: &[usize], starts_after_loop: bool| {
            (0..dag.num_paths())
                .find(|&id| {
                    let p = regenerate(dag, id).unwrap();
                    let bs: Vec<usize> = p.blocks(dag).iter().map(|b| b.index()).collect();
                    bs == blocks
                        && matches!(p.start(dag), crate::regen::PathEnd::Edge(_))
                            == starts_after_loop
                })
                .unwrap()
        };
        let first = id_of(&[0, 1, 2], false); // b0 b1 b2, ends with the backedge
        let last = id_of(&[1, 2, 3], true); // after the backedge: b1 b2 b3
        let mut paths = vec![(first, 1), (last, 1)];
        paths.sort();
        let exact = derive(&cfg, &layout, &[], &paths).unwrap();
        assert_eq!(exact.edges, Some(vec![1, 2, 1, 1]));
        assert_eq!(exact.blocks, vec![1, 2, 2, 1]);
        assert!(exact.imbalance.is_balanced());
        // The last path's counter damaged to 3: b1 is entered twice (e0 once,
        // e2 once, from the one path ending with it) but left 4 times.
        let paths: Vec<(u64, u64)> = paths
            .iter()
            .map(|&(id, c)| (id, if id == last { 3 } else { c }))
            .collect();
        let damaged = derive(&cfg, &layout, &[], &paths).unwrap();
        assert_eq!(damaged.edges, Some(vec![1, 4, 1, 3]));
        assert_eq!(damaged.blocks, vec![1, 2, 4, 3]);
        assert_eq!(damaged.imbalance.nodes, vec![node(1, 2, 4)]);
        assert_eq!(damaged.imbalance.total(), 2);
        assert_eq!(damaged.lost, 0);
        // The first path's counter damaged to 2 instead: b1 entered 3 times,
        // left twice; excess inflow is what a process ending inside a call
        // leaves, so it is counted lost, not unbalanced.
        let mut paths = vec![(first, 2), (last, 1)];
        paths.sort();
        let lost = derive(&cfg, &layout, &[], &paths).unwrap();
        assert_eq!(lost.lost, 1);
        assert!(lost.imbalance.is_balanced());
    }
}
