//! How one function's raw counters map back to blocks, edges and paths: the part
//! of a plan that reports need, stored in the map file.

use crate::dag::Dag;
use crate::ids::{BlockId, EdgeId};

/// An edge of the *flow graph* used by edge profiling and flow conservation: the
/// CFG plus one virtual node standing for "outside the function".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlowEdge {
    /// A CFG edge.
    Cfg(EdgeId),
    /// Outside → entry block: one per call of the function.
    Entry,
    /// Exit block → outside: one per return (or `unreachable`/`resume`) from it.
    Exit(BlockId),
}

/// The counter layout of one function.
#[derive(Clone, Debug, PartialEq, Eq)]
// One per function, held in the map's vector: boxing the DAG would save a few
// dozen bytes per block- or edge-mode function and cost every path-mode access.
#[allow(clippy::large_enum_variant)]
pub enum Layout {
    /// Slot `k` counts the block whose `slot_of_block` is `Some(k)`; unreachable
    /// blocks have no slot. `calls_slot` counts calls when the entry block has
    /// predecessors (else calls are the entry block's count).
    Block {
        slot_of_block: Vec<Option<u32>>,
        calls_slot: Option<u32>,
    },
    /// Slot `k` counts `counted[k]`; every other flow edge is derived by flow
    /// conservation. With `net_call_exits` (block mode's plan, gcov's fake
    /// edges), every block with calls that might not return also has an exit
    /// edge, never counted: conservation derives how many activations ended
    /// inside its calls (less those that went on there without having come
    /// in, see [`crate::flow::FlowCounts::solve_net_exits`]).
    ///
    /// `entry_replaces`: in a function whose callers give its entry count
    /// ([`crate::callers`]), the chord of the plan that counts its entries
    /// (`counted` with it is that plan's) that the entry count replaces.
    Edge {
        counted: Vec<FlowEdge>,
        net_call_exits: bool,
        entry_replaces: Option<FlowEdge>,
    },
    /// Path counters are indexed by Ball-Larus path id over `dag`; slot `k`
    /// counts self loop `self_loops[k]` (section 4.1), slot
    /// `self_loops.len() + k` the returns along resume edge `resumes[k]`, and
    /// slot `self_loops.len() + resumes.len() + k` the activations that ended
    /// inside the call that terminates block `call_exits[k]` (early-exit
    /// counting of an `invoke`). With preferential path profiling, slot
    /// `self_loops.len() + resumes.len() + call_exits.len() + p` counts the
    /// interesting path whose Ball-Larus id is `ppp_owners[p]` (PPP id `p`;
    /// [`crate::ppp::classify::HOLE`]: no path, never counted); every other
    /// path counts by its Ball-Larus id. Empty: plain path mode, or a PPP
    /// build's function that is not numbered. `interesting`: in a PPP build,
    /// the function's interesting paths (sorted Ball-Larus ids), numbered or
    /// not (path mode's array already counts them cheaply, or their interval
    /// was too large); empty elsewhere. `hashed`: the paths counted by
    /// Ball-Larus id (all of them, or a PPP function's residual ones) go to a
    /// hash table, not an array (more potential paths than the array limit).
    Path {
        dag: Dag,
        self_loops: Vec<EdgeId>,
        resumes: Vec<EdgeId>,
        call_exits: Vec<BlockId>,
        ppp_owners: Vec<u64>,
        interesting: Vec<u64>,
        hashed: bool,
    },
}

impl Layout {
    /// The Ball-Larus ids of the interesting paths of a function of a PPP
    /// build, sorted (empty for any other function).
    pub fn interesting(&self) -> &[u64] {
        match self {
            Layout::Path { interesting, .. } => interesting,
            _ => &[],
        }
    }

    /// Whether Ball-Larus path `id` is one of the function's interesting
    /// paths (in a PPP build; else a residual path).
    pub fn is_interesting(&self, id: u64) -> bool {
        self.interesting().binary_search(&id).is_ok()
    }

    /// Whether a function with this layout can have its entry count given by
    /// its callers instead of counted (see [`crate::callers`]): an edge
    /// layout with a chord the entry count replaces, or a path
    /// layout with one potential path and no other counters, whose one count
    /// is the entry count.
    pub fn takes_entry_from_callers(&self) -> bool {
        match self {
            Layout::Block { .. } => false,
            Layout::Edge { entry_replaces, .. } => entry_replaces.is_some(),
            Layout::Path { dag, .. } => dag.num_paths() == 1 && self.num_slots() == 0,
        }
    }

    /// How many slot counters a function with this layout has (path counts
    /// aside).
    pub fn num_slots(&self) -> usize {
        match self {
            Layout::Block {
                slot_of_block,
                calls_slot,
            } => slot_of_block.iter().flatten().count() + calls_slot.iter().count(),
            Layout::Edge { counted, .. } => counted.len(),
            Layout::Path {
                self_loops,
                resumes,
                call_exits,
                ppp_owners,
                ..
            } => self_loops.len() + resumes.len() + call_exits.len() + ppp_owners.len(),
        }
    }
}
