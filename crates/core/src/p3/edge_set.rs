//! A set of one DAG's edges, as a dense side table indexed by [`DagEdgeId`]:
//! the *interesting edges* of PSPP (Afraz et al. 2015, Algorithm 1's `EI`),
//! a task's `T.E` and a copy's `C_i.E` of Algorithm 2.
//!
//! A path is *within* a set when every edge of it is in the set; under PSPP
//! those are the interesting paths.

use crate::ids::DagEdgeId;
use std::fmt;

/// A subset of the edges `0..universe` of one DAG.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EdgeSet {
    bits: Vec<bool>,
}

impl EdgeSet {
    /// No edge of a DAG with `universe` edges.
    pub fn empty(universe: usize) -> EdgeSet {
        EdgeSet {
            bits: vec![false; universe],
        }
    }

    /// Every edge of a DAG with `universe` edges.
    pub fn full(universe: usize) -> EdgeSet {
        EdgeSet {
            bits: vec![true; universe],
        }
    }

    /// The set whose members are the `true` entries.
    pub fn from_bits(bits: Vec<bool>) -> EdgeSet {
        EdgeSet { bits }
    }

    /// The set of the given edges of a DAG with `universe` edges.
    pub fn of(universe: usize, edges: impl IntoIterator<Item = DagEdgeId>) -> EdgeSet {
        let mut set = EdgeSet::empty(universe);
        for e in edges {
            set.insert(e);
        }
        set
    }

    /// Per DAG edge, whether it is a member.
    pub fn as_bits(&self) -> &[bool] {
        &self.bits
    }

    /// How many edges the DAG has (members or not).
    pub fn universe(&self) -> usize {
        self.bits.len()
    }

    pub fn contains(&self, e: DagEdgeId) -> bool {
        self.bits[e.index()]
    }

    pub fn insert(&mut self, e: DagEdgeId) {
        self.bits[e.index()] = true;
    }

    /// Adds every member of `other` (a set over the same DAG).
    pub fn union_with(&mut self, other: &EdgeSet) {
        assert_eq!(self.universe(), other.universe(), "sets of one DAG");
        for (mine, &theirs) in self.bits.iter_mut().zip(&other.bits) {
            *mine |= theirs;
        }
    }

    /// How many edges are members.
    pub fn count(&self) -> usize {
        self.bits.iter().filter(|&&b| b).count()
    }

    pub fn is_empty(&self) -> bool {
        !self.bits.contains(&true)
    }

    /// Whether every edge of the DAG is a member.
    pub fn is_full(&self) -> bool {
        !self.bits.contains(&false)
    }

    /// The members, by increasing id.
    pub fn iter(&self) -> impl Iterator<Item = DagEdgeId> + '_ {
        (0..self.bits.len())
            .filter(|&i| self.bits[i])
            .map(DagEdgeId::new)
    }

    /// Whether the path (DAG edges) is within the set.
    pub fn contains_path(&self, edges: &[DagEdgeId]) -> bool {
        edges.iter().all(|&e| self.contains(e))
    }
}

impl fmt::Debug for EdgeSet {
    /// `{d0, d3}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
