//! Random CFGs for the property tests (`properties.rs`, `ppp_properties.rs`).

use pathprof_core::{BlockId, Cfg, CfgEdge};
use proptest::prelude::*;

/// A random CFG: up to 10 blocks with 0–4 successors each (any target, so loops,
/// self loops, multi-edges and irreducible regions all occur). Unsplittable edges
/// come as real code has them: one `indirectbr`-like block whose distinct targets
/// are all unsplittable, and `invoke`-like blocks whose last edge is (and whose
/// terminator is a call that might not return, after any others the block
/// makes). A quarter of the blocks make calls that might not return.
pub fn arb_cfg() -> impl Strategy<Value = Cfg> {
    (1usize..10).prop_flat_map(|n| {
        (
            prop::collection::vec(
                (
                    prop::collection::vec(0..n as u32, 0..5),
                    prop::bool::weighted(0.1),
                ),
                n,
            ),
            prop::option::weighted(0.2, 0..n),
            prop::collection::vec(prop_oneof![3 => Just(0u32), 1 => 1u32..3], n),
            prop::collection::vec(prop::bool::weighted(0.3), n),
        )
            .prop_map(move |(succs, indirect, mut calls, resumes)| {
                let mut edges = Vec::new();
                let mut invokes = Vec::new();
                for (from, (list, invoke)) in succs.into_iter().enumerate() {
                    let mut list = list;
                    let is_indirect = indirect == Some(from);
                    if is_indirect {
                        list.sort();
                        list.dedup();
                    }
                    let len = list.len();
                    if invoke && len >= 2 && !is_indirect {
                        calls[from] += 1;
                        invokes.push(BlockId(from as u32));
                    }
                    for (slot, to) in list.into_iter().enumerate() {
                        let unwind = invoke && len >= 2 && slot == len - 1;
                        edges.push(CfgEdge {
                            from: BlockId(from as u32),
                            to: BlockId(to),
                            slot: slot as u32,
                            splittable: !(is_indirect || unwind),
                            resume: false,
                        });
                    }
                }
                // A block with one splittable way on, to another block, may end
                // in a call that returns more than once (`fork`, `setjmp`).
                for (from, &resume) in resumes.iter().enumerate() {
                    let out: Vec<usize> = (0..edges.len())
                        .filter(|&i| edges[i].from.index() == from)
                        .collect();
                    if let [i] = out[..] {
                        edges[i].resume =
                            resume && edges[i].splittable && edges[i].to.index() != from;
                    }
                }
                let mut cfg = Cfg::new(n, BlockId(0), edges).unwrap();
                cfg.set_calls(calls).unwrap();
                cfg.set_terminator_calls(&invokes).unwrap();
                cfg
            })
    })
}
