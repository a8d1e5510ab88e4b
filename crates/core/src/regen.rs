//! Path regeneration (Ball-Larus 1996 section 3.5): from a path id back to its
//! DAG edges, taking at each node the out-edge with the largest `Val ≤ R`.
//!
//! A regenerated path is a sequence of DAG edges from ENTRY to EXIT; its first
//! edge says where it started (function entry, after a backedge or cut, after an
//! unsplittable edge) and its last edge where it ended (return, a backedge or cut,
//! before an unsplittable terminator).

use crate::dag::{Dag, DagEdgeKind};
use crate::ids::{BlockId, DagEdgeId, EdgeId};

/// Why a path id could not be regenerated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegenError {
    #[error("path id {id} is out of range: the function has {num_paths} potential paths (profile from another build?)")]
    OutOfRange { id: u64, num_paths: u64 },
}

/// One regenerated acyclic path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub edges: Vec<DagEdgeId>,
}

/// How a path began or ended, in CFG terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathEnd {
    /// Function entry, or return from the function.
    Function,
    /// After / with a backedge or truncation cut.
    Edge(EdgeId),
    /// After an unsplittable edge into this block / before the unsplittable
    /// terminator of this block.
    Unsplittable(BlockId),
    /// Inside call `k` of the block, which never returned (early termination).
    Call(BlockId, u32),
}

impl Path {
    /// The blocks in order.
    pub fn blocks(&self, dag: &Dag) -> Vec<BlockId> {
        let mut out = Vec::with_capacity(self.edges.len());
        for &e in &self.edges {
            if let Some(b) = dag.block(dag.edge(e).to) {
                out.push(b);
            }
        }
        out
    }

    pub fn start(&self, dag: &Dag) -> PathEnd {
        match dag.edge(self.edges[0]).kind {
            DagEdgeKind::BackEntry(e) => PathEnd::Edge(e),
            DagEdgeKind::UnsplitEntry(b) => PathEnd::Unsplittable(b),
            _ => PathEnd::Function,
        }
    }

    pub fn end(&self, dag: &Dag) -> PathEnd {
        match dag
            .edge(*self.edges.last().expect("paths are non-empty"))
            .kind
        {
            DagEdgeKind::BackExit(e) => PathEnd::Edge(e),
            DagEdgeKind::UnsplitExit(b) => PathEnd::Unsplittable(b),
            DagEdgeKind::CallExit(b, k) => PathEnd::Call(b, k),
            _ => PathEnd::Function,
        }
    }
}

/// Regenerates path `id`.
pub fn regenerate(dag: &Dag, id: u64) -> Result<Path, RegenError> {
    regenerate_by(dag, id, |e| dag.val(e))
}

/// Regenerates path `id` under another numbering of `dag`'s paths: `val`
/// must be a Ball-Larus numbering (Figure 5 with any order of successors, as
/// [`Dag::from_numbering`] checks), such as PSPP's initial labeling
/// ([`crate::p3::pspp`]).
pub fn regenerate_by(
    dag: &Dag,
    id: u64,
    val: impl Fn(DagEdgeId) -> u64,
) -> Result<Path, RegenError> {
    if id >= dag.num_paths() {
        return Err(RegenError::OutOfRange {
            id,
            num_paths: dag.num_paths(),
        });
    }
    let mut r = id;
    let mut v = dag.entry();
    let mut edges = Vec::new();
    while v != dag.exit() {
        let e = dag
            .succs(v)
            .iter()
            .copied()
            .filter(|&e| val(e) <= r)
            .max_by_key(|&e| val(e))
            .expect("a node before EXIT has an edge with Val 0");
        r -= val(e);
        edges.push(e);
        v = dag.edge(e).to;
    }
    debug_assert_eq!(r, 0);
    Ok(Path { edges })
}

/// The id of a path given as DAG edges (the sum of its `Val`s).
pub fn path_id(dag: &Dag, edges: &[DagEdgeId]) -> u64 {
    edges.iter().map(|&e| dag.val(e)).sum()
}
