//! Placement: decides, from the CFG alone, where each probe's ops end up in IR,
//! before anything is edited (docs/formats.md §1).
//!
//! Terms: the *start* of a block is after its phis and exception pad, its *end* is
//! just before its terminator. An `Edge(e)` probe goes
//! 1. at the end of `from` when `e` is `from`'s only successor slot (and not a
//!    resume edge, whose source's end is before its `fork`/`setjmp` call), else
//! 2. at the start of `to` when `e` is `to`'s only predecessor edge (a block
//!    reached twice from one `switch` has two predecessor edges), else
//! 3. in a new block split into `e` (which must then be splittable).
//!
//! Order at one edge: `BlockEnd(from)` ops, then `Edge(e)` ops, then
//! `BlockStart(to)` ops; so a block's start runs its in-edge's ops before its own
//! `BlockStart` ops, and its end runs its own `BlockEnd` ops before its out-edge's.
//! `FunctionEntry` ops run before the entry block's `BlockStart` ops.
//!
//! A `Call(b, k)` probe stays with its call: it must name one of block `b`'s
//! [`Cfg::calls`] counted calls. In the block its code runs after the block's
//! start ops and before its end ops (calls sit between the two).

use pathprof_core::plan::{FunctionPlan, Op, PathStorage, ProbeSite};
use pathprof_core::{BlockId, Cfg, EdgeId};

/// Where every op of one function goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Placement {
    /// Ops at function entry (top of the entry block, before its start ops).
    pub entry: Vec<Op>,
    /// Per block: ops at its start.
    pub start: Vec<Vec<Op>>,
    /// Per block: ops at its end.
    pub end: Vec<Vec<Op>>,
    /// Edges to split, in edge order, with the ops of their new block.
    pub splits: Vec<(EdgeId, Vec<Op>)>,
    /// `Call(b, k)` probes, sorted by block then call, with their ops.
    pub calls: Vec<(BlockId, u32, Vec<Op>)>,
}

impl Placement {
    /// Every op, wherever it goes.
    fn all_ops(&self) -> impl Iterator<Item = &Op> {
        self.start
            .iter()
            .chain(&self.end)
            .chain(self.splits.iter().map(|(_, ops)| ops))
            .chain(self.calls.iter().map(|(_, _, ops)| ops))
            .chain(std::iter::once(&self.entry))
            .flatten()
    }

    /// Whether any op reads or writes the path register.
    pub fn uses_path_register(&self) -> bool {
        self.all_ops().any(|op| !matches!(op, Op::CountSlot(_)))
    }

    /// How many ops increment a counter in memory (each call probe's
    /// counts once: its undo reuses the address).
    pub fn counts(&self) -> usize {
        self.all_ops()
            .filter(|op| {
                matches!(
                    op,
                    Op::CountPath(_) | Op::CountSlot(_) | Op::CountPpp { .. } | Op::CountPacked(_)
                )
            })
            .count()
    }

    /// Whether a `CountPath` op runs inside a loop, at a block's start or end
    /// or on an edge (a call probe's counts, undone after the call, stay
    /// plain increments).
    pub fn ends_path_in_loop(&self, cfg: &Cfg, depth: &[u32]) -> bool {
        self.in_loop(cfg, depth)
            .any(|ops| ops.iter().any(|op| matches!(op, Op::CountPath(_))))
    }

    /// The op lists of block starts, block ends and split edges inside a
    /// loop (of a block `depth` puts in one, or an edge between two).
    fn in_loop<'a>(&'a self, cfg: &'a Cfg, depth: &'a [u32]) -> impl Iterator<Item = &'a [Op]> {
        let blocks = cfg
            .blocks()
            .filter(move |&b| in_loop(depth, b))
            .flat_map(|b| [&self.start[b.index()][..], &self.end[b.index()][..]]);
        let splits = self
            .splits
            .iter()
            .filter_map(move |(e, ops)| edge_in_loop(cfg, depth, *e).then_some(&ops[..]));
        blocks.chain(splits)
    }

    /// Whether any op reads or writes the PPP register.
    pub fn uses_ppp_register(&self) -> bool {
        self.all_ops()
            .any(|op| matches!(op, Op::SetPpp(_) | Op::AddPpp(_) | Op::CountPpp { .. }))
    }
}

/// Whether block `b` is inside a loop (`depth`: loop depth per block,
/// [`pathprof_core::weights::loop_depths`]).
pub(crate) fn in_loop(depth: &[u32], b: BlockId) -> bool {
    depth[b.index()] > 0
}

/// Whether edge `e` runs inside a loop: both its blocks are inside one
/// (not necessarily the same one).
pub(crate) fn edge_in_loop(cfg: &Cfg, depth: &[u32], e: EdgeId) -> bool {
    let edge = cfg.edge(e);
    in_loop(depth, edge.from) && in_loop(depth, edge.to)
}

/// Places every probe of `plan` on `cfg`; `Err` says how the plan is invalid.
pub(crate) fn place(cfg: &Cfg, plan: &FunctionPlan) -> Result<Placement, String> {
    let n = cfg.num_blocks();
    let mut entry = Vec::new();
    let mut block_start = vec![Vec::new(); n];
    let mut block_end = vec![Vec::new(); n];
    let mut edge_ops: Vec<Vec<Op>> = vec![Vec::new(); cfg.edges().len()];
    let mut calls = Vec::new();
    for probe in &plan.probes {
        for op in &probe.ops {
            check_op(plan, *op)?;
        }
        match probe.site {
            ProbeSite::FunctionEntry => entry.extend_from_slice(&probe.ops),
            ProbeSite::BlockStart(b) | ProbeSite::BlockEnd(b) | ProbeSite::Call(b, _)
                if b.index() >= n =>
            {
                return Err(format!(
                    "a probe is at block {b}, but the function has {n} blocks"
                ));
            }
            ProbeSite::BlockStart(b) => block_start[b.index()].extend_from_slice(&probe.ops),
            ProbeSite::BlockEnd(b) => block_end[b.index()].extend_from_slice(&probe.ops),
            ProbeSite::Edge(e) if e.index() >= cfg.edges().len() => {
                return Err(format!(
                    "a probe is on edge {e}, but the function has {} edges",
                    cfg.edges().len()
                ));
            }
            ProbeSite::Edge(e) => edge_ops[e.index()].extend_from_slice(&probe.ops),
            ProbeSite::Call(b, k) if k >= cfg.calls(b) => {
                return Err(format!(
                    "a probe is at call {k} of block {b}, but the block has {} counted calls",
                    cfg.calls(b)
                ));
            }
            ProbeSite::Call(b, k) => calls.push((b, k, probe.ops.clone())),
        }
    }
    calls.sort_by_key(|&(b, k, _)| (b, k));

    // Edge ops first collected per destination so each list keeps the order rules.
    let mut start_in = vec![Vec::new(); n];
    let mut end_out = vec![Vec::new(); n];
    let mut splits = Vec::new();
    for (e, ops) in edge_ops.into_iter().enumerate() {
        if ops.is_empty() {
            continue;
        }
        let e = EdgeId::new(e);
        let edge = cfg.edge(e);
        // A resume edge's source ends before its fork/setjmp call: its ops go
        // after the call, in the target or on the edge.
        if cfg.succs(edge.from).len() == 1 && !edge.resume {
            end_out[edge.from.index()] = ops;
        } else if cfg.preds(edge.to).len() == 1 {
            start_in[edge.to.index()] = ops;
        } else if edge.splittable {
            splits.push((e, ops));
        } else {
            return Err(format!(
                "edge {e} ({} -> {}) carries a probe but cannot be split (indirectbr, callbr or exception edge) and is neither its source's only out-edge nor its target's only in-edge",
                edge.from, edge.to
            ));
        }
    }
    let start = start_in
        .into_iter()
        .zip(block_start)
        .map(|(mut a, b)| {
            a.extend(b);
            a
        })
        .collect();
    let end = block_end
        .into_iter()
        .zip(end_out)
        .map(|(mut a, b)| {
            a.extend(b);
            a
        })
        .collect();
    Ok(Placement {
        entry,
        start,
        end,
        splits,
        calls,
    })
}

fn check_op(plan: &FunctionPlan, op: Op) -> Result<(), String> {
    if let Some(t) = &plan.ppp {
        let end = u64::from(t.base) + t.owners.len() as u64;
        if t.owners.is_empty() || end > u64::from(plan.num_slots) {
            return Err(format!(
                "PPP slots {}..{end} but the function has {} slots",
                t.base, plan.num_slots
            ));
        }
    }
    match op {
        Op::CountSlot(k) if k >= plan.num_slots => Err(format!(
            "CountSlot({k}) but the function has {} slots",
            plan.num_slots
        )),
        Op::CountPpp { .. } if plan.ppp.is_none() => {
            Err("CountPpp in a plan without PPP slots".to_string())
        }
        Op::CountPacked(_) if plan.ppp.as_ref().and_then(|t| t.packing).is_none() => {
            Err("CountPacked in a plan without a packing of PPP's registers".to_string())
        }
        Op::CountPath(_) | Op::CountPpp { .. } | Op::CountPacked(_)
            if matches!(
                plan.paths,
                PathStorage::None | PathStorage::Array { len: 0 }
            ) =>
        {
            Err(format!("CountPath with path storage {:?}", plan.paths))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pathprof_core::{BlockId, CfgEdge};

    fn plan(ops: Vec<(ProbeSite, Op)>) -> FunctionPlan {
        FunctionPlan::from_ops(4, PathStorage::Array { len: 8 }, ops)
    }

    // b0 -> b1, b0 -> b2 (twice, a multi-edge), b1 -> b2, b2 -> b3
    //
    //      b0
    //     /  \\ (e1, e2)
    //   b1 -> b2 -> b3
    fn diamond() -> Cfg {
        Cfg::from_edge_list(4, &[(0, 1), (0, 2), (0, 2), (1, 2), (2, 3)]).unwrap()
    }

    #[test]
    fn edges_go_to_block_end_block_start_or_a_split() {
        let cfg = diamond();
        let p = place(
            &cfg,
            &plan(vec![
                (ProbeSite::Edge(EdgeId(0)), Op::CountSlot(0)), // b1's only in-edge
                (ProbeSite::Edge(EdgeId(1)), Op::CountSlot(1)), // multi-edge: split
                (ProbeSite::Edge(EdgeId(2)), Op::CountSlot(2)), // multi-edge: split
                (ProbeSite::Edge(EdgeId(3)), Op::AddPath(5)),   // b1's only out-edge
                (ProbeSite::BlockEnd(BlockId(1)), Op::SetPath(1)),
                (ProbeSite::BlockStart(BlockId(1)), Op::CountSlot(3)),
            ]),
        )
        .unwrap();
        assert_eq!(p.start[1], vec![Op::CountSlot(0), Op::CountSlot(3)]);
        assert_eq!(p.end[1], vec![Op::SetPath(1), Op::AddPath(5)]);
        assert_eq!(
            p.splits,
            vec![
                (EdgeId(1), vec![Op::CountSlot(1)]),
                (EdgeId(2), vec![Op::CountSlot(2)])
            ]
        );
        assert!(p.uses_path_register());
    }

    #[test]
    fn rejects_bad_plans() {
        let cfg = diamond();
        let err = place(
            &cfg,
            &plan(vec![(ProbeSite::BlockStart(BlockId(9)), Op::CountSlot(0))]),
        );
        assert_eq!(
            err.unwrap_err(),
            "a probe is at block b9, but the function has 4 blocks"
        );
        let err = place(
            &cfg,
            &plan(vec![(ProbeSite::FunctionEntry, Op::CountSlot(4))]),
        );
        assert_eq!(
            err.unwrap_err(),
            "CountSlot(4) but the function has 4 slots"
        );
        let none = FunctionPlan::from_ops(
            0,
            PathStorage::None,
            [(ProbeSite::FunctionEntry, Op::CountPath(0))],
        );
        assert!(place(&cfg, &none).is_err());

        // An unsplittable critical edge cannot carry a probe.
        let mut edges = cfg.edges().to_vec();
        edges[1] = CfgEdge {
            splittable: false,
            ..edges[1]
        };
        let cfg = Cfg::new(4, BlockId(0), edges).unwrap();
        let err = place(
            &cfg,
            &plan(vec![(ProbeSite::Edge(EdgeId(1)), Op::CountSlot(0))]),
        );
        assert!(err
            .unwrap_err()
            .starts_with("edge e1 (b0 -> b2) carries a probe but cannot be split"));
    }

    #[test]
    fn call_probes_stay_with_their_calls() {
        let mut cfg = diamond();
        cfg.set_calls(vec![2, 0, 1, 0]).unwrap();
        let p = place(
            &cfg,
            &plan(vec![
                (ProbeSite::Call(BlockId(2), 0), Op::CountSlot(0)),
                (ProbeSite::Call(BlockId(0), 1), Op::AddPath(3)),
                (ProbeSite::Call(BlockId(0), 1), Op::CountPath(0)),
            ]),
        )
        .unwrap();
        assert_eq!(
            p.calls,
            vec![
                (BlockId(0), 1, vec![Op::AddPath(3), Op::CountPath(0)]),
                (BlockId(2), 0, vec![Op::CountSlot(0)])
            ]
        );
        assert!(p.uses_path_register());
        assert!(p.start.iter().chain(&p.end).all(|ops| ops.is_empty()));

        let err = place(
            &cfg,
            &plan(vec![(ProbeSite::Call(BlockId(1), 0), Op::CountSlot(0))]),
        );
        assert_eq!(
            err.unwrap_err(),
            "a probe is at call 0 of block b1, but the block has 0 counted calls"
        );
        let err = place(
            &cfg,
            &plan(vec![(ProbeSite::Call(BlockId(4), 0), Op::CountSlot(0))]),
        );
        assert_eq!(
            err.unwrap_err(),
            "a probe is at block b4, but the function has 4 blocks"
        );
    }

    #[test]
    fn block_counters_need_no_path_register() {
        let cfg = diamond();
        let ops = (0..4).map(|b| (ProbeSite::BlockStart(BlockId(b)), Op::CountSlot(b)));
        let p = place(&cfg, &FunctionPlan::from_ops(4, PathStorage::None, ops)).unwrap();
        assert!(!p.uses_path_register());
        assert!(p.splits.is_empty());
        assert_eq!(p.start[3], vec![Op::CountSlot(3)]);
    }
}
