//! Both registers updated on chords only (Vaswani et al. 2007, section 5,
//! "counter optimizations": "we ensure that both PPP and Ball-Larus counter
//! updates occur on the same edges").
//!
//! Event counting (Ball-Larus 1996 section 3.3, [`crate::increments`]) moves
//! any per-edge values onto the chords of a spanning tree of the DAG without
//! changing any ENTRY→EXIT path's sum. Path mode's tree already carries the
//! Ball-Larus register's chord increments; the PPP register's go on the chords
//! of that same tree, so every tree edge is free of both and Figure 8's
//! placement ([`crate::placement`]) serves both registers.

use super::numbering::PppNumbering;
use crate::dag::Dag;
use crate::increments::ChordIncrements;

impl PppNumbering {
    /// The PPP increments moved onto the chords of `tree`, path mode's
    /// spanning tree of `dag` ([`crate::path::chord_increments`], or
    /// [`crate::planner::planned_increments`] for a map's): the same tree
    /// (`in_tree`) with the PPP register's increments (`inc`, 0 on tree edges),
    /// beside `tree.inc`, the Ball-Larus register's. Along every ENTRY→EXIT
    /// path they sum to the path's PPP sum ([`PppNumbering::path_sum`]).
    pub fn chord_increments(&self, dag: &Dag, tree: &ChordIncrements) -> ChordIncrements {
        ChordIncrements::with_tree_values(dag, tree.in_tree.clone(), |e| self.increment(e) as u64)
    }
}
