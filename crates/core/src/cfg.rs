//! The control-flow graph of one function, as the profiler sees it.
//!
//! Terms: a *block* is a basic block; an *edge* is one successor slot of a block's
//! terminator, so a `switch` with two cases to one block makes two edges (a
//! multi-edge). A block with no successors (return, `unreachable`, `resume`) is an
//! *exit*. Self loops and irreducible loops are allowed. A *resume* edge follows
//! a call that may return more than once or in another process (`fork`,
//! `setjmp`, `vfork`...): its source block ends with that call, so the edge is
//! taken once per *return*, which may differ from the source's own count (a
//! `fork` returns in two processes, a `setjmp` again on every `longjmp`). Flow is
//! not conserved across it: paths end before the call and start after it.
//!
//! A block's *counted calls* ([`Cfg::calls`]) are the calls it makes that might
//! not return (to `exit`, `longjmp`...), the sites of early-termination
//! counting. Usually they come before the terminator; in a block whose
//! terminator is itself such a call (an `invoke`, [`Cfg::ends_in_call`]) the
//! last of them is the terminator, which runs after the block's end code.
//!
//! Invariants: blocks are `0..num_blocks`, the entry is a block, edges are dense
//! `0..edges.len()` in the order given. Blocks unreachable from the entry are kept
//! (ids stay those of the function as linked) but every analysis ignores them.

use crate::ids::{BlockId, EdgeId};

/// One CFG edge: `from`'s terminator successor number `slot` goes to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CfgEdge {
    pub from: BlockId,
    pub to: BlockId,
    /// Which successor operand of `from`'s terminator makes this edge.
    pub slot: u32,
    /// False when no code can be inserted on the edge itself (an `indirectbr`,
    /// `callbr` or exception edge): probes then go in a block, never on the edge.
    pub splittable: bool,
    /// A resume edge (see the module doc): `from` ends with a call that may
    /// return more than once, and this edge is its only way on.
    pub resume: bool,
}

/// Why a [`Cfg`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CfgError {
    #[error("a function must have at least one block")]
    NoBlocks,
    #[error("the entry block {entry} is not one of the {num_blocks} blocks")]
    BadEntry { entry: BlockId, num_blocks: usize },
    #[error("edge {edge} goes from {from} to {to}, but the function has only {num_blocks} blocks")]
    BadEdge {
        edge: EdgeId,
        from: BlockId,
        to: BlockId,
        num_blocks: usize,
    },
    #[error("resume edge {0} must be its block's only out-edge, splittable and not a self loop")]
    BadResume(EdgeId),
    #[error("call counts are given for {found} blocks, but the function has {num_blocks}")]
    BadCalls { found: usize, num_blocks: usize },
    #[error(
        "block {0} is said to end in a counted call, but it has none, or no unsplittable out-edge"
    )]
    BadTerminatorCall(BlockId),
    #[error("the function has {0} blocks or edges, more than the 2^31 pathprof supports")]
    TooLarge(usize),
}

/// A function's control-flow graph with dense side tables of successors and
/// predecessors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    num_blocks: usize,
    entry: BlockId,
    edges: Vec<CfgEdge>,
    succs: Vec<Vec<EdgeId>>,
    preds: Vec<Vec<EdgeId>>,
    reachable: Vec<bool>,
    calls: Vec<u32>,
    /// Per block: whether its terminator is its last counted call.
    terminator_calls: Vec<bool>,
}

impl Cfg {
    /// Builds a CFG, checking that every edge names existing blocks.
    pub fn new(num_blocks: usize, entry: BlockId, edges: Vec<CfgEdge>) -> Result<Self, CfgError> {
        if num_blocks == 0 {
            return Err(CfgError::NoBlocks);
        }
        if num_blocks > (i32::MAX as usize) || edges.len() > (i32::MAX as usize) {
            return Err(CfgError::TooLarge(num_blocks.max(edges.len())));
        }
        if entry.index() >= num_blocks {
            return Err(CfgError::BadEntry { entry, num_blocks });
        }
        let mut succs = vec![Vec::new(); num_blocks];
        let mut preds = vec![Vec::new(); num_blocks];
        for (i, e) in edges.iter().enumerate() {
            if e.from.index() >= num_blocks || e.to.index() >= num_blocks {
                return Err(CfgError::BadEdge {
                    edge: EdgeId::new(i),
                    from: e.from,
                    to: e.to,
                    num_blocks,
                });
            }
            succs[e.from.index()].push(EdgeId::new(i));
            preds[e.to.index()].push(EdgeId::new(i));
        }
        for (i, e) in edges.iter().enumerate() {
            if e.resume && (succs[e.from.index()].len() != 1 || !e.splittable || e.from == e.to) {
                return Err(CfgError::BadResume(EdgeId::new(i)));
            }
        }
        let mut reachable = vec![false; num_blocks];
        let mut stack = vec![entry];
        reachable[entry.index()] = true;
        while let Some(b) = stack.pop() {
            for &e in &succs[b.index()] {
                let to = edges[e.index()].to;
                if !reachable[to.index()] {
                    reachable[to.index()] = true;
                    stack.push(to);
                }
            }
        }
        Ok(Cfg {
            num_blocks,
            entry,
            edges,
            succs,
            preds,
            reachable,
            calls: vec![0; num_blocks],
            terminator_calls: vec![false; num_blocks],
        })
    }

    /// Records, per block, how many calls it makes that might not return (to
    /// `exit`, `longjmp`, ...): the sites of early-termination counting. Clears
    /// the record of [`set_terminator_calls`](Self::set_terminator_calls).
    pub fn set_calls(&mut self, calls: Vec<u32>) -> Result<(), CfgError> {
        if calls.len() != self.num_blocks {
            return Err(CfgError::BadCalls {
                found: calls.len(),
                num_blocks: self.num_blocks,
            });
        }
        self.calls = calls;
        self.terminator_calls = vec![false; self.num_blocks];
        Ok(())
    }

    /// Calls in block `b` that might not return.
    pub fn calls(&self, b: BlockId) -> u32 {
        self.calls[b.index()]
    }

    /// Records the blocks whose terminator is their last counted call (an
    /// `invoke`). Such a block must have a counted call and an unsplittable
    /// out-edge (its paths end before the terminator); set after
    /// [`set_calls`](Self::set_calls). Replaces any earlier record.
    pub fn set_terminator_calls(&mut self, blocks: &[BlockId]) -> Result<(), CfgError> {
        let mut ends = vec![false; self.num_blocks];
        for &b in blocks {
            let ok = b.index() < self.num_blocks
                && self.calls[b.index()] > 0
                && self.succs[b.index()]
                    .iter()
                    .any(|&e| !self.edges[e.index()].splittable);
            if !ok {
                return Err(CfgError::BadTerminatorCall(b));
            }
            ends[b.index()] = true;
        }
        self.terminator_calls = ends;
        Ok(())
    }

    /// Whether `b`'s terminator is its last counted call (call number
    /// `calls(b) - 1`), which runs after the block's end code.
    pub fn ends_in_call(&self, b: BlockId) -> bool {
        self.terminator_calls[b.index()]
    }

    /// Counted calls of `b` before its terminator.
    pub fn inner_calls(&self, b: BlockId) -> u32 {
        self.calls(b) - u32::from(self.ends_in_call(b))
    }

    /// Two diamonds in a row, 0 -> {1, 2} -> 3 -> {4, 5} -> 6, edges
    /// numbered in that order (0->1, 0->2, 1->3, 2->3, 3->4, 3->5, 4->6,
    /// 5->6): the smallest CFG with two branches that can correlate. For
    /// tests.
    #[cfg(test)]
    pub(crate) fn two_diamonds() -> Self {
        let pairs = [
            (0, 1),
            (0, 2),
            (1, 3),
            (2, 3),
            (3, 4),
            (3, 5),
            (4, 6),
            (5, 6),
        ];
        Cfg::from_edge_list(7, &pairs).expect("a valid CFG")
    }

    /// Builds a CFG from `(from, to)` pairs with block 0 as entry, every edge
    /// splittable and slots numbered in order per source block. For tests and
    /// examples.
    pub fn from_edge_list(num_blocks: usize, pairs: &[(u32, u32)]) -> Result<Self, CfgError> {
        let mut next_slot = vec![0u32; num_blocks];
        let edges = pairs
            .iter()
            .map(|&(from, to)| {
                let slot = next_slot.get_mut(from as usize).map_or(0, |s| {
                    *s += 1;
                    *s - 1
                });
                CfgEdge {
                    from: BlockId(from),
                    to: BlockId(to),
                    slot,
                    splittable: true,
                    resume: false,
                }
            })
            .collect();
        Cfg::new(num_blocks, BlockId(0), edges)
    }

    pub fn num_blocks(&self) -> usize {
        self.num_blocks
    }

    pub fn entry(&self) -> BlockId {
        self.entry
    }

    pub fn edges(&self) -> &[CfgEdge] {
        &self.edges
    }

    pub fn edge(&self, e: EdgeId) -> &CfgEdge {
        &self.edges[e.index()]
    }

    /// Outgoing edges of `b`, in successor-slot order.
    pub fn succs(&self, b: BlockId) -> &[EdgeId] {
        &self.succs[b.index()]
    }

    /// Incoming edges of `b`.
    pub fn preds(&self, b: BlockId) -> &[EdgeId] {
        &self.preds[b.index()]
    }

    /// Whether `b` can be reached from the entry.
    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.reachable[b.index()]
    }

    /// Whether `b` leaves the function (has no successors).
    pub fn is_exit(&self, b: BlockId) -> bool {
        self.succs[b.index()].is_empty()
    }

    /// Whether `b` ends with a call that may return more than once (its only
    /// out-edge is a resume edge): flow leaves the function's accounting there.
    pub fn ends_in_resume(&self, b: BlockId) -> bool {
        self.succs[b.index()]
            .first()
            .is_some_and(|&e| self.edges[e.index()].resume)
    }

    pub fn blocks(&self) -> impl Iterator<Item = BlockId> + '_ {
        (0..self.num_blocks).map(BlockId::new)
    }

    pub fn edge_ids(&self) -> impl Iterator<Item = EdgeId> + '_ {
        (0..self.edges.len()).map(EdgeId::new)
    }

    /// A stable 64-bit hash of the graph's shape (FNV-1a), used to tell a
    /// function's profile from another build's.
    pub fn shape_hash(&self) -> u64 {
        let mut h = crate::hash::Fnv64::new();
        h.write_u64(self.num_blocks as u64);
        h.write_u64(self.entry.0 as u64);
        for e in &self.edges {
            h.write_u64(e.from.0 as u64);
            h.write_u64(e.to.0 as u64);
            h.write_u64(e.slot as u64);
            if e.resume {
                h.write_u64(u64::MAX);
            }
        }
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_edges() {
        let err = Cfg::from_edge_list(2, &[(0, 5)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "edge e0 goes from b0 to b5, but the function has only 2 blocks"
        );
        assert_eq!(Cfg::from_edge_list(0, &[]).unwrap_err(), CfgError::NoBlocks);
    }

    #[test]
    fn multi_edges_and_reachability() {
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 1), (1, 1), (3, 1)]).unwrap();
        assert_eq!(cfg.succs(BlockId(0)).len(), 2);
        assert_eq!(cfg.edge(EdgeId(1)).slot, 1);
        assert!(cfg.is_reachable(BlockId(1)));
        assert!(!cfg.is_reachable(BlockId(3)));
        assert!(cfg.is_exit(BlockId(2)));
    }
}
