//! Static edge weights for choosing maximum spanning trees (Ball-Larus 1996
//! footnote 1; Ball & Larus 1994): an edge's weight estimates how often it runs,
//! so the tree keeps hot edges free of instrumentation.
//!
//! The estimate: a block nested in `d` loops runs `10^d` times per call; a block's
//! weight is split evenly among its out-edges. Loops are the natural loops of the
//! depth-first backedges ([`crate::dag::backedges`], the DAG's too; for an
//! irreducible loop, the blocks that reach the backedge's source without
//! passing its target). Measured counts, when a profile
//! is given, replace the estimate.

use crate::cfg::Cfg;
use crate::ids::{BlockId, EdgeId};

/// An estimated or measured execution frequency for every CFG edge and block.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub edges: Vec<f64>,
    pub blocks: Vec<f64>,
}

impl Weights {
    /// The loop-depth estimate.
    pub fn estimate(cfg: &Cfg) -> Weights {
        let depth = loop_depths(cfg);
        let blocks: Vec<f64> = depth
            .iter()
            .map(|&d| 10f64.powi(d.min(12) as i32))
            .collect();
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
