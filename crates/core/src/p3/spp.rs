//! Selective path profiling (SPP, Apiwattanapong & Harrold 2002) as Afraz et
//! al. 2015 describe it (section 2.2): the three steps of
//! [`super::labeling`] with a node's interesting out-edges visited in the
//! order the DAG lists them.
//!
//! Kept as the reference that shows the flaw PSPP fixes (section 3.1,
//! Examples 1 and 2): visiting the uninteresting out-edges first keeps an
//! uninteresting path that leaves `v` by one of them below every interesting
//! path through `v`, but nothing keeps an uninteresting path that leaves `v`
//! by an *interesting* edge off an interesting path's id once absorption has
//! lowered it. Interesting paths still get distinct ids (condition (a)), but
//! not always ids of their own (condition (b)): a profile would count the
//! uninteresting path's executions as the interesting one's.

use super::edge_set::EdgeSet;
use super::labeling::{Labeling, Order};
use crate::dag::Dag;

/// SPP's labeling of `dag` for the paths within `interesting`.
pub fn spp(dag: &Dag, interesting: &EdgeSet) -> Labeling {
    Labeling::compute(dag, interesting, Order::AsListed)
}
