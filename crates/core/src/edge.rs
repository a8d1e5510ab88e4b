//! The edge-profiling planner (Ball & Larus 1994, the QPT2 scheme Ball-Larus 1996
//! compares against): a maximum spanning tree of the flow graph (see
//! [`crate::flow`]) under the static weights; only its chords get counters, every
//! other edge is derived by flow conservation. Unsplittable edges are forced onto
//! the tree, as gcov keeps abnormal edges on its tree. A resume edge (after a
//! call that returns more than once, see [`crate::cfg`]) joins "outside" to its
//! target, and its source gets an exit edge of its own (counted before the
//! call): flow is conserved in every process that way.
//!
//! Block mode uses the same plan with [`CallExits::Net`] (Knuth and
//! Stevenson's counting on chords; gcov's fake edges): every block with calls
//! that might not return gets an exit edge, so activations that end inside
//! its calls (`exit`, `longjmp`) keep every count exact, and block counts
//! follow from the edges. Such an exit on the tree is never counted (its net
//! count follows by conservation); one that is a chord is counted around the
//! calls as with early-exit counting, where the tree found that cheaper.

use crate::cfg::Cfg;
use crate::ids::BlockId;
use crate::layout::{FlowEdge, Layout};
use crate::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use crate::spantree::{max_spanning_tree, TreeEdge};
use crate::weights::Weights;

/// Why an edge plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EdgePlanError {
    #[error(
        "unsplittable edges {0} form a cycle, so one of them would need a counter no code can hold"
    )]
    UnsplittableCycle(String),
}

/// What an edge plan does about activations that end inside a call that
/// never returns (`exit`, `longjmp`; a thread or process ending there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallExits {
    /// Nothing: such an activation leaves its flow unbalanced (edge mode).
    Ignored,
    /// Each such block's exit edge is counted around each call and uncounted
    /// when the call returns (edge mode with early-exit counting).
    Counted,
    /// Each such block's exit edge is a flow edge weighted by what counting
    /// it around the calls would cost: on the spanning tree it is never
    /// counted and its net count follows by conservation; as a chord it is
    /// counted as with `Counted` (block mode).
    Net,
}

/// The flow graph's edges over reachable code, in a fixed order. With
/// `call_exits`, blocks with calls that might not return get an exit edge too.
pub fn flow_edges(cfg: &Cfg, call_exits: bool) -> Vec<FlowEdge> {
    let mut edges = vec![FlowEdge::Entry];
    edges.extend(
        cfg.edge_ids()
            .filter(|&e| cfg.is_reachable(cfg.edge(e).from))
            .map(FlowEdge::Cfg),
    );
    edges.extend(
        cfg.blocks()
            .filter(|&b| {
                cfg.is_reachable(b)
                    && (cfg.is_exit(b) || cfg.ends_in_resume(b) || (call_exits && cfg.calls(b) > 0))
            })
            .map(FlowEdge::Exit),
    );
    edges
}

/// Plans edge profiling of one function. With [`CallExits::Counted`], a
/// block's exit edge is always counted when the block has calls that might
/// not return: once around each call (undone when it returns) and once before
/// its return. With [`CallExits::Net`], it is counted that way only where
/// that is cheaper than leaving it uncounted on the spanning tree, which
/// makes some other edge a chord: its weight is what counting it would cost.
///
/// With `entry_from_callers` (the function's callers' counts give its entry
/// count, see [`crate::callers`]), the entry edge is known, so one chord of
/// the plan that counts it is not counted (none at all is left in a function
/// of one block): the layout names it (`entry_replaces`), so that a reader
/// can turn the counts into that plan's ([`crate::materialize::materialize`]).
pub fn plan_edges(
    cfg: &Cfg,
    weights: &Weights,
    call_exits: CallExits,
    entry_from_callers: bool,
) -> Result<(FunctionPlan, Layout), EdgePlanError> {
    let outside = cfg.num_blocks();
    let flow = flow_edges(cfg, call_exits != CallExits::Ignored);
    let call_exit = |fe: FlowEdge| matches!(fe, FlowEdge::Exit(b) if cfg.calls(b) > 0);
    let exit_weight = |b: BlockId| match call_exits {
        CallExits::Net if cfg.calls(b) > 0 => {
            let counts = 2 * cfg.calls(b) + u32::from(cfg.is_exit(b) || cfg.ends_in_resume(b));
            weights.block(b) * f64::from(counts)
        }
        _ => weights.block(b),
    };
    let tree_edges: Vec<TreeEdge> = flow
        .iter()
        .map(|&fe| match fe {
            FlowEdge::Entry => TreeEdge {
                a: outside,
                b: cfg.entry().index(),
                weight: weights.block(cfg.entry()),
                forced: false,
            },
            FlowEdge::Cfg(e) => {
                let ce = cfg.edge(e);
                TreeEdge {
                    a: if ce.resume { outside } else { ce.from.index() },
                    b: ce.to.index(),
                    weight: weights.edge(e),
                    forced: !ce.splittable,
                }
            }
            FlowEdge::Exit(b) => TreeEdge {
                a: b.index(),
                b: outside,
                weight: exit_weight(b),
                forced: false,
            },
        })
        .collect();
    // With `Counted`, the exits of blocks with calls are left off the tree
    // so that they are chords; the rest stays connected through the entry
    // and the CFG edges.
    let left_out = |fe: FlowEdge| call_exits == CallExits::Counted && call_exit(fe);
    let kept: Vec<usize> = (0..flow.len()).filter(|&i| !left_out(flow[i])).collect();
    let sub: Vec<TreeEdge> = kept.iter().map(|&i| tree_edges[i]).collect();
    let sub_tree = max_spanning_tree(outside + 1, &sub);
    let mut in_tree = vec![false; flow.len()];
    for (k, &i) in kept.iter().enumerate() {
        in_tree[i] = sub_tree[k];
    }
    // An exit of a block with calls that is a chord is counted around them.
    let terminates = |fe: FlowEdge| call_exits != CallExits::Ignored && call_exit(fe);
    // Such an exit keeps its count (its resumes are a fork child's starts).
    let entry_replaces = if entry_from_callers {
        replaced_chord(&tree_edges, &in_tree, |i| !terminates(flow[i]), outside)
    } else {
        None
    };
    if let Some(r) = entry_replaces {
        in_tree[r] = true; // not counted: it follows from the entry count
    }
    let mut counted = Vec::new();
    let mut ops = Vec::new();
    let mut stuck = Vec::new();
    for (i, &fe) in flow.iter().enumerate() {
        if in_tree[i] {
            continue;
        }
        let slot = counted.len() as u32;
        if let (true, FlowEdge::Exit(b)) = (terminates(fe), fe) {
            for k in 0..cfg.calls(b) {
                ops.push((ProbeSite::Call(b, k), Op::CountSlot(slot)));
            }
            if cfg.is_exit(b) || cfg.ends_in_resume(b) {
                ops.push((ProbeSite::BlockEnd(b), Op::CountSlot(slot)));
            }
            counted.push(fe);
            continue;
        }
        let site = match fe {
            FlowEdge::Entry => ProbeSite::FunctionEntry,
            FlowEdge::Exit(b) => ProbeSite::BlockEnd(b),
            FlowEdge::Cfg(e) => {
                let ce = cfg.edge(e);
                if ce.splittable {
                    ProbeSite::Edge(e)
                } else if cfg.succs(ce.from).len() == 1 {
                    ProbeSite::BlockEnd(ce.from)
                } else if cfg.preds(ce.to).len() == 1 && ce.to != cfg.entry() {
                    ProbeSite::BlockStart(ce.to)
                } else {
                    stuck.push(format!("{e} ({}->{})", ce.from, ce.to));
                    continue;
                }
            }
        };
        ops.push((site, Op::CountSlot(slot)));
        counted.push(fe);
    }
    if !stuck.is_empty() {
        return Err(EdgePlanError::UnsplittableCycle(stuck.join(", ")));
    }
    Ok((
        FunctionPlan::from_ops(counted.len() as u32, PathStorage::None, ops),
        Layout::Edge {
            counted,
            net_call_exits: call_exits == CallExits::Net,
            entry_replaces: entry_replaces.map(|r| flow[r]),
        },
    ))
}

/// The chord a known entry count replaces, given the tree `in_tree` of the
/// flow graph's edges `tree_edges` (the entry first): the entry itself when
/// it is a chord; else, of the chords `candidate` allows, the heaviest that
/// joins the two parts the tree falls into without the entry, so that the
/// tree less the entry plus that chord spans the graph less the entry, as
/// heavily as any tree can (a maximum spanning tree less one edge, plus the
/// heaviest edge across its cut, is a maximum spanning tree of the rest).
/// `None` when no chord joins them (a function that never returns).
fn replaced_chord(
    tree_edges: &[TreeEdge],
    in_tree: &[bool],
    candidate: impl Fn(usize) -> bool,
    outside: usize,
) -> Option<usize> {
    const ENTRY: usize = 0;
    if !in_tree[ENTRY] {
        return Some(ENTRY);
    }
    let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); outside + 1];
    for (i, e) in tree_edges.iter().enumerate().skip(1) {
        if in_tree[i] {
            adjacent[e.a].push(e.b);
            adjacent[e.b].push(e.a);
        }
    }
    let mut outer = vec![false; outside + 1];
    outer[outside] = true;
    let mut stack = vec![outside];
    while let Some(n) = stack.pop() {
        for &m in &adjacent[n] {
            if !std::mem::replace(&mut outer[m], true) {
                stack.push(m);
            }
        }
    }
    let mut best: Option<usize> = None;
    for (i, e) in tree_edges.iter().enumerate() {
        let across = outer[e.a] != outer[e.b];
        if !in_tree[i]
            && across
            && candidate(i)
            && best.is_none_or(|b| e.weight > tree_edges[b].weight)
        {
            best = Some(i);
        }
    }
    best
}
