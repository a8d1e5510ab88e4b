//! From raw counters back to block, edge and path counts, for every mode: block
//! counts directly; edge counts from chord counters by flow conservation; edge and
//! block counts from a path profile by regenerating each path (the verifier of the
//! LLVM path-profiling notes), with unsplittable edges recovered by flow.

use crate::cfg::Cfg;
use crate::dag::{DagEdgeKind, EdgeClass};
use crate::flow::{FlowCounts, FlowError};
use crate::layout::{FlowEdge, Layout};
use crate::regen::{regenerate, Path, RegenError};

/// One executed path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathCount {
    pub id: u64,
    pub count: u64,
    pub path: Path,
}

/// Everything known about one function's execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCounts {
    /// Calls.
    pub entry: u64,
    /// Per block.
    pub blocks: Vec<u64>,
    /// Per CFG edge; `None` in block mode.
    pub edges: Option<Vec<u64>>,
    /// Executed paths by id (path mode), sorted by id.
    pub paths: Vec<PathCount>,
    /// Path mode: executions whose path in progress was never counted because
    /// the process ended inside a call (build with early-exit counting to see
    /// them); 0 when the counts are complete.
    pub lost: u64,
}

/// Why counters could not be interpreted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeriveError {
    #[error("the profile has {found} counters for this function but its map says {expected} (profile from another build?)")]
    SlotCount { expected: usize, found: usize },
    #[error(transparent)]
    Regen(#[from] RegenError),
    #[error(transparent)]
    Flow(#[from] FlowError),
}

/// Interprets one function's counters.
pub fn derive(
    cfg: &Cfg,
    layout: &Layout,
    slots: &[u64],
    paths: &[(u64, u64)],
) -> Result<FunctionCounts, DeriveError> {
    let expect_slots = match layout {
        Layout::Block {
            slot_of_block,
            calls_slot,
        } => slot_of_block.iter().flatten().count() + calls_slot.iter().count(),
        Layout::Edge { counted } => counted.len(),
        Layout::Path { self_loops, .. } => self_loops.len(),
    };
    // An all-zero function may be written without its slots.
    let zeros;
    let slots = if slots.is_empty() && expect_slots > 0 {
        zeros = vec![0; expect_slots];
        &zeros[..]
    } else {
        slots
    };
    if slots.len() != expect_slots {
        return Err(DeriveError::SlotCount {
            expected: expect_slots,
            found: slots.len(),
        });
    }
    match layout {
        Layout::Block {
            slot_of_block,
            calls_slot,
        } => {
            let blocks: Vec<u64> = slot_of_block
                .iter()
                .map(|s| s.map_or(0, |k| slots[k as usize]))
                .collect();
            Ok(FunctionCounts {
                entry: calls_slot.map_or(blocks[cfg.entry().index()], |k| slots[k as usize]),
                blocks,
                edges: None,
                paths: Vec::new(),
                lost: 0,
            })
        }
        Layout::Edge { counted } => {
            let mut flow = FlowCounts::unknown(cfg);
            for (&fe, &c) in counted.iter().zip(slots) {
                flow.set(fe, c);
            }
            flow.solve(cfg, false)?;
            Ok(finish(cfg, flow, Vec::new(), 0))
        }
        Layout::Path { dag, self_loops } => {
            let mut flow = FlowCounts::unknown(cfg);
            flow.entry = Some(0);
            for e in cfg.edge_ids() {
                if dag.classes()[e.index()] != EdgeClass::Unsplit
                    && cfg.is_reachable(cfg.edge(e).from)
                {
                    flow.edges[e.index()] = Some(0);
                }
            }
            for b in cfg.blocks() {
                flow.exits[b.index()] = Some(0);
            }
            let add =
                |slot: &mut Option<u64>, c: u64| *slot = Some(slot.unwrap_or(0).saturating_add(c));
            let mut executed = Vec::with_capacity(paths.len());
            // Paths ending before / starting after unsplittable edges, per block.
            let mut unsplit_out = vec![0u64; cfg.num_blocks()];
            let mut unsplit_in = vec![0u64; cfg.num_blocks()];
            for &(id, count) in paths {
                let path = regenerate(dag, id)?;
                for &e in &path.edges {
                    match dag.edge(e).kind {
                        DagEdgeKind::UnsplitExit(b) => {
                            unsplit_out[b.index()] = unsplit_out[b.index()].saturating_add(count)
                        }
                        DagEdgeKind::UnsplitEntry(b) => {
                            unsplit_in[b.index()] = unsplit_in[b.index()].saturating_add(count)
                        }
                        DagEdgeKind::Entry => add(&mut flow.entry, count),
                        DagEdgeKind::Cfg(ce) | DagEdgeKind::BackExit(ce) => {
                            add(&mut flow.edges[ce.index()], count)
                        }
                        DagEdgeKind::Exit(b) | DagEdgeKind::CallExit(b, _) => {
                            add(&mut flow.exits[b.index()], count)
                        }
                        DagEdgeKind::BackEntry(ce) => {
                            if dag.classes()[ce.index()] == EdgeClass::Sibling {
                                add(&mut flow.edges[ce.index()], count)
                            }
                        }
                    }
                }
                executed.push(PathCount { id, count, path });
            }
            for (&e, &c) in self_loops.iter().zip(slots) {
                flow.set(FlowEdge::Cfg(e), c);
            }
            // Paths ending before a terminator went on along a sibling or an
            // unsplittable edge.
            for e in cfg.edge_ids() {
                if dag.classes()[e.index()] == EdgeClass::Sibling {
                    let from = cfg.edge(e).from.index();
                    let sibling = flow.edges[e.index()].unwrap_or(0);
                    unsplit_out[from] =
                        unsplit_out[from].checked_sub(sibling).ok_or_else(|| {
                            FlowError::Inconsistent(format!(
                                "the edges out of block {}",
                                cfg.edge(e).from
                            ))
                        })?;
                }
            }
            solve_unsplittable(cfg, dag, &unsplit_out, &unsplit_in, &mut flow)?;
            // Without early-exit counting, a process that ended inside a call
            // lost the paths it was on: tolerated, and reported.
            let lost = flow.solve(cfg, true)?;
            executed.sort_by_key(|p| p.id);
            Ok(finish(cfg, flow, executed, lost))
        }
    }
}

fn finish(cfg: &Cfg, flow: FlowCounts, paths: Vec<PathCount>, lost: u64) -> FunctionCounts {
    let blocks = flow.block_counts(cfg);
    FunctionCounts {
        entry: flow.entry.unwrap_or(0),
        blocks,
        edges: Some(flow.edges.iter().map(|c| c.unwrap_or(0)).collect()),
        paths,
        lost,
    }
}

/// Counts of unsplittable edges from the paths that end before them (per source)
/// and start after them (per target): leaf elimination on the bipartite graph of
/// those edges, exact whenever it is a forest (one `indirectbr` block, `invoke`s).
fn solve_unsplittable(
    cfg: &Cfg,
    dag: &crate::dag::Dag,
    out_sums: &[u64],
    in_sums: &[u64],
    flow: &mut FlowCounts,
) -> Result<(), FlowError> {
    let n = cfg.num_blocks();
    let edges: Vec<crate::EdgeId> = cfg
        .edge_ids()
        .filter(|e| dag.classes()[e.index()] == EdgeClass::Unsplit)
        .collect();
    // side nodes: sources 0..n, targets n..2n
    let mut incident: Vec<Vec<usize>> = vec![Vec::new(); 2 * n];
    for (i, &e) in edges.iter().enumerate() {
        incident[cfg.edge(e).from.index()].push(i);
        incident[n + cfg.edge(e).to.index()].push(i);
    }
    let sum = |node: usize| {
        if node < n {
            out_sums[node]
        } else {
            in_sums[node - n]
        }
    };
    let mut value: Vec<Option<u64>> = vec![None; edges.len()];
    let mut work: Vec<usize> = (0..2 * n).collect();
    while let Some(node) = work.pop() {
        let unknown: Vec<usize> = incident[node]
            .iter()
            .copied()
            .filter(|&i| value[i].is_none())
            .collect();
        if unknown.len() != 1 {
            continue;
        }
        let known: u64 = incident[node]
            .iter()
            .filter_map(|&i| value[i])
            .fold(0, u64::saturating_add);
        let i = unknown[0];
        let v = sum(node).checked_sub(known).ok_or_else(|| {
            FlowError::Inconsistent(format!(
                "the unsplittable edges of block {}",
                crate::BlockId::new(node % n)
            ))
        })?;
        value[i] = Some(v);
        let ce = cfg.edge(edges[i]);
        work.push(ce.from.index());
        work.push(n + ce.to.index());
    }
    for (i, &e) in edges.iter().enumerate() {
        let ce = cfg.edge(e);
        let v = value[i].ok_or_else(|| {
            FlowError::Underdetermined(format!(
                "{e} ({}->{}): parallel unsplittable edges cannot be told apart",
                ce.from, ce.to
            ))
        })?;
        flow.set(FlowEdge::Cfg(e), v);
    }
    Ok(())
}
