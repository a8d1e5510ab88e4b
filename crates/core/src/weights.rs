//! Static edge weights for choosing maximum spanning trees (Ball-Larus 1996
//! footnote 1; Ball & Larus 1994): an edge's weight estimates how often it runs,
//! so the tree keeps hot edges free of instrumentation.
//!
//! Two estimates, each for the modes it serves best (measured with
//! `bench/callgrind.py`; see `docs/benchmarks.md`):
//! - [`Weights::estimate`], path mode's: a block nested in `d` loops runs
//!   `10^d` times per call; a block's weight is split evenly among its
//!   out-edges. Loops are the natural loops of the depth-first backedges
//!   ([`crate::dag::backedges`], the DAG's too; for an irreducible loop, the
//!   blocks that reach the backedge's source without passing its target).
//! - [`Weights::flow_estimate`], block and edge mode's: the function is
//!   entered once; a block's frequency flows out evenly over its out-edges,
//!   and a block receives what its forward in-edges carry (so a branch
//!   inside a branch is colder than the function's entry), times 10 at the
//!   target of a backedge (a loop runs 10 times per entry, so a block nested
//!   in `d` loops runs up to `10^d` times per call; a loop entered away from
//!   that block, irreducible, gets no factor there). Counters then go on
//!   the edges a branch makes rare, where the loop-depth estimate sees every
//!   block of a loop alike, and block and edge mode run fewer instructions.
//!   Path mode keeps the loop-depth estimate, under which its probes run
//!   fewer instructions than under this one.
//!
//! Measured counts, when a profile is given, replace either.

use crate::cfg::Cfg;
use crate::ids::{BlockId, EdgeId};

/// An estimated or measured execution frequency for every CFG edge and block.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub edges: Vec<f64>,
    pub blocks: Vec<f64>,
}

impl Weights {
    /// The loop-depth estimate (see the module doc).
    pub fn estimate(cfg: &Cfg) -> Weights {
        let depth = loop_depths(cfg);
        let blocks: Vec<f64> = depth
            .iter()
            .map(|&d| 10f64.powi(d.min(12) as i32))
            .collect();
        Weights::split_evenly(cfg, blocks)
    }

    /// The flow estimate (see the module doc).
    pub fn flow_estimate(cfg: &Cfg) -> Weights {
        let back = crate::dag::backedges(cfg);
        let n = cfg.num_blocks();
        let mut headers = vec![false; n];
        for e in cfg.edge_ids().filter(|e| back[e.index()]) {
            headers[cfg.edge(e).to.index()] = true;
        }
        // Forward edges in topological order (Kahn), from the entry.
        let mut waiting: Vec<usize> = vec![0; n];
        for e in cfg.edge_ids().filter(|e| !back[e.index()]) {
            if cfg.is_reachable(cfg.edge(e).from) {
                waiting[cfg.edge(e).to.index()] += 1;
            }
        }
        let mut blocks = vec![0f64; n];
        let mut inflow = vec![0f64; n];
        inflow[cfg.entry().index()] = 1.0;
        let mut ready = vec![cfg.entry()];
        while let Some(b) = ready.pop() {
            let factor = if headers[b.index()] { 10.0 } else { 1.0 };
            let freq = inflow[b.index()] * factor;
            blocks[b.index()] = freq;
            let out = cfg.succs(b);
            for &e in out {
                if back[e.index()] {
                    continue;
                }
                let to = cfg.edge(e).to;
                inflow[to.index()] += freq / out.len() as f64;
                waiting[to.index()] -= 1;
                if waiting[to.index()] == 0 {
                    ready.push(to);
                }
            }
        }
        Weights::split_evenly(cfg, blocks)
    }

    /// `blocks`' weights, each split evenly among its block's out-edges.
    fn split_evenly(cfg: &Cfg, blocks: Vec<f64>) -> Weights {
        let edges = cfg
            .edges()
            .iter()
            .map(|e| blocks[e.from.index()] / cfg.succs(e.from).len() as f64)
            .collect();
        Weights { edges, blocks }
    }

    /// Weights from measured edge counts (one per CFG edge); blocks get the sum
    /// of their out-edges (exit blocks their in-edges).
    pub fn measured(cfg: &Cfg, edge_counts: &[u64]) -> Weights {
        let edges: Vec<f64> = edge_counts.iter().map(|&c| c as f64).collect();
        let blocks = cfg
            .blocks()
            .map(|b| {
                let out = cfg.succs(b);
                let list = if out.is_empty() { cfg.preds(b) } else { out };
                list.iter().map(|e| edges[e.index()]).sum::<f64>()
            })
            .collect();
        Weights { edges, blocks }
    }

    pub fn edge(&self, e: EdgeId) -> f64 {
        self.edges[e.index()]
    }

    pub fn block(&self, b: BlockId) -> f64 {
        self.blocks[b.index()]
    }
}

/// Loop nesting depth of every block (0 outside loops and for unreachable blocks).
pub fn loop_depths(cfg: &Cfg) -> Vec<u32> {
    let n = cfg.num_blocks();
    let mut depth = vec![0u32; n];
    let back = crate::dag::backedges(cfg);
    let backedges: Vec<EdgeId> = cfg.edge_ids().filter(|e| back[e.index()]).collect();
    // Natural loop of each distinct header: blocks reaching a latch backwards
    // without passing the header.
    let mut headers: Vec<BlockId> = backedges.iter().map(|&e| cfg.edge(e).to).collect();
    headers.sort();
    headers.dedup();
    let mut in_loop = vec![false; n];
    for h in headers {
        in_loop.iter_mut().for_each(|x| *x = false);
        in_loop[h.index()] = true;
        let mut work: Vec<BlockId> = backedges
            .iter()
            .filter(|&&e| cfg.edge(e).to == h)
            .map(|&e| cfg.edge(e).from)
            .collect();
        while let Some(b) = work.pop() {
            if in_loop[b.index()] || !cfg.is_reachable(b) {
                continue;
            }
            in_loop[b.index()] = true;
            work.extend(cfg.preds(b).iter().map(|&e| cfg.edge(e).from));
        }
        for (d, &inside) in depth.iter_mut().zip(&in_loop) {
            if inside {
                *d += 1;
            }
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flow_estimate_makes_nested_branches_colder_and_loops_hotter() {
        // 0 branches to 1 and 2; 1 branches to 3 and 4; all join at 5,
        // which loops back to itself through 6 and returns.
        let cfg = Cfg::from_edge_list(
            7,
            &[
                (0, 1),
                (0, 2),
                (1, 3),
                (1, 4),
                (3, 5),
                (4, 5),
                (2, 5),
                (5, 6),
                (6, 5),
                (6, 6),
            ],
        )
        .unwrap();
        let w = Weights::flow_estimate(&cfg);
        assert_eq!(&w.blocks[..5], &[1.0, 0.5, 0.5, 0.25, 0.25]);
        // 5 heads the loop 5-6: ten rounds per entry; 6 heads its self loop.
        assert_eq!(w.blocks[5], 10.0);
        assert_eq!(w.blocks[6], 100.0);
        assert_eq!(w.edges[2], 0.25); // 1→3
                                      // The loop-depth estimate sees 3 as hot as the entry.
        let depth = Weights::estimate(&cfg);
        assert_eq!(depth.blocks[3], depth.blocks[0]);
    }

    #[test]
    fn the_flow_estimate_reaches_every_block_of_an_irreducible_loop() {
        // 0 enters the cycle 1 ⇄ 2 at both ends.
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 2), (2, 1), (2, 3)]).unwrap();
        let w = Weights::flow_estimate(&cfg);
        assert!(w.blocks.iter().all(|&b| b > 0.0), "{w:?}");
    }
}
