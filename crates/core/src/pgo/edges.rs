//! One function's counts as an optimiser wants them: calls, blocks, and
//! every CFG edge's count where the profile determines it. Edge, path and
//! block modes give every edge (block mode counts a spanning tree's chords);
//! `--every-block` gives the blocks alone, and the edges follow where flow
//! alone decides them (an edge that is its source's only
//! successor or its target's only predecessor, and so on by elimination);
//! the others stay unknown, and a branch with an unknown successor gets no
//! weights. Path mode's profile also keeps its executed paths, in CFG terms
//! ([`ProfiledPath`]), for path-guided duplication ([`super::duplicate`]).

use crate::cfg::Cfg;
use crate::derive::FunctionCounts;
use crate::ids::BlockId;
use serde::{Deserialize, Serialize};

/// One function's counts for the optimiser.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionProfile {
    /// Calls.
    pub entry: u64,
    /// Per block.
    pub blocks: Vec<u64>,
    /// Per CFG edge; `None` where the profile does not determine it.
    pub edges: Vec<Option<u64>>,
    /// Path mode: every executed path, sorted by start and edges, one entry
    /// per path (empty in the other modes, or where the paths of some
    /// counted runs are not known).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<ProfiledPath>,
}

/// One executed acyclic path in CFG terms: where it starts and the CFG
/// edges it takes (none: a path of one block), ending with the backedge or
/// cut it leaves by, if it does (the next path starts at its target), with
/// how often it ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfiledPath {
    pub start: u32,
    pub edges: Vec<u32>,
    pub count: u64,
}

impl FunctionProfile {
    /// The profile of a function with CFG `cfg` and derived counts `counts`.
    pub fn of(cfg: &Cfg, counts: &FunctionCounts) -> Self {
        let edges = match &counts.edges {
            Some(edges) => edges.iter().copied().map(Some).collect(),
            None => edges_by_flow(cfg, counts.entry, &counts.blocks),
        };
        FunctionProfile {
            entry: counts.entry,
            blocks: counts.blocks.clone(),
            edges,
            paths: Vec::new(),
        }
    }

    /// The profile with `paths` (any order, a path repeated or not) as its
    /// executed paths.
    pub fn with_paths(mut self, paths: impl IntoIterator<Item = ProfiledPath>) -> Self {
        self.paths = sorted_paths(paths);
        self
    }

    /// Whether it fits a CFG of `cfg`'s size.
    pub fn fits(&self, cfg: &Cfg) -> bool {
        self.blocks.len() == cfg.num_blocks() && self.edges.len() == cfg.edges().len()
    }

    /// Counts multiplied by `weight` (saturating).
    pub fn scaled(&self, weight: u64) -> Self {
        FunctionProfile {
            entry: self.entry.saturating_mul(weight),
            blocks: self
                .blocks
                .iter()
                .map(|c| c.saturating_mul(weight))
                .collect(),
            edges: self
                .edges
                .iter()
                .map(|c| c.map(|c| c.saturating_mul(weight)))
                .collect(),
            paths: self
                .paths
                .iter()
                .map(|p| ProfiledPath {
                    count: p.count.saturating_mul(weight),
                    ..p.clone()
                })
                .collect(),
        }
    }

    /// Adds `other`'s counts (of the same shape) into these (saturating); an
    /// edge unknown in either stays unknown, and so do the paths when one
    /// side ran without them being known (a count of another mode).
    pub fn add(&mut self, other: &FunctionProfile) {
        let paths_known = |p: &FunctionProfile| p.entry == 0 || !p.paths.is_empty();
        self.paths = if paths_known(self) && paths_known(other) {
            sorted_paths(self.paths.drain(..).chain(other.paths.iter().cloned()))
        } else {
            Vec::new()
        };
        self.entry = self.entry.saturating_add(other.entry);
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            *a = a.saturating_add(*b);
        }
        for (a, b) in self.edges.iter_mut().zip(&other.edges) {
            *a = match (*a, *b) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                _ => None,
            };
        }
    }

    /// The counts of `block`'s successor slots in slot order (`None` when
    /// one of them is unknown).
    pub fn successor_counts(&self, cfg: &Cfg, block: BlockId) -> Option<Vec<u64>> {
        let mut slots: Vec<(u32, u64)> = cfg
            .succs(block)
            .iter()
            .map(|&e| Some((cfg.edge(e).slot, self.edges[e.index()]?)))
            .collect::<Option<_>>()?;
        slots.sort_unstable();
        Some(slots.into_iter().map(|(_, c)| c).collect())
    }
}

/// `paths` sorted by start and edges, the counts of one path added.
fn sorted_paths(paths: impl IntoIterator<Item = ProfiledPath>) -> Vec<ProfiledPath> {
    let mut paths: Vec<ProfiledPath> = paths.into_iter().collect();
    paths.sort_unstable_by(|a, b| (a.start, &a.edges).cmp(&(b.start, &b.edges)));
    let mut out: Vec<ProfiledPath> = Vec::with_capacity(paths.len());
    for p in paths {
        match out.last_mut() {
            Some(last) if last.start == p.start && last.edges == p.edges => {
                last.count = last.count.saturating_add(p.count)
            }
            _ => out.push(p),
        }
    }
    out
}

/// `--every-block`: edge counts from block counts where flow decides them. Every
/// block's count is its incoming edges' sum (plus the calls, at the entry)
/// and, for a block with successors, its outgoing edges' sum; an equation
/// with one unknown edge left gives it, until none does. An edge whose value
/// would be negative (counts that do not balance: an exit or a longjmp from
/// a call) stays unknown.
fn edges_by_flow(cfg: &Cfg, entry: u64, blocks: &[u64]) -> Vec<Option<u64>> {
    let mut edges: Vec<Option<u64>> = vec![None; cfg.edges().len()];
    if blocks.len() != cfg.num_blocks() {
        return edges;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for b in cfg.blocks() {
            let count = blocks[b.index()];
            let into = count.checked_sub(if b == cfg.entry() { entry } else { 0 });
            let sides = [(cfg.preds(b), into), (cfg.succs(b), Some(count))];
            for (side, total) in sides {
                let Some(total) = total else { continue };
                let unknown: Vec<_> = side.iter().filter(|e| edges[e.index()].is_none()).collect();
                if unknown.len() != 1 {
                    continue;
                }
                let known: u64 = side.iter().filter_map(|e| edges[e.index()]).sum();
                if let Some(rest) = total.checked_sub(known) {
                    edges[unknown[0].index()] = Some(rest);
                    changed = true;
                }
            }
        }
    }
    edges
}

/// `counts` as 32-bit weights in the same ratios: divided by the one scale
/// that brings the largest within `u32` (LLVM's `branch_weights` are 32-bit;
/// clang's IR PGO scales the same way).
pub fn scale_to_u32(counts: &[u64]) -> Vec<u32> {
    let max = counts.iter().copied().max().unwrap_or(0);
    let scale = if max < u64::from(u32::MAX) {
        1
    } else {
        max / u64::from(u32::MAX) + 1
    };
    counts.iter().map(|&c| (c / scale) as u32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_counts(entry: u64, blocks: Vec<u64>) -> FunctionCounts {
        FunctionCounts::of_blocks(entry, blocks)
    }

    #[test]
    fn block_mode_edges_follow_from_flow_where_they_can() {
        // A diamond: 0 -> {1, 2} -> 3. Every edge is determined.
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        let p = FunctionProfile::of(&cfg, &block_counts(10, vec![10, 7, 3, 10]));
        assert_eq!(p.edges, vec![Some(7), Some(3), Some(7), Some(3)]);
        assert_eq!(p.successor_counts(&cfg, BlockId(0)), Some(vec![7, 3]));
    }

    #[test]
    fn block_mode_leaves_undetermined_edges_unknown() {
        // 0 -> {1, 2}, 1 -> {2, 3}, 2 -> 3: block 1 has one predecessor,
        // which gives 0->1, then 0->2 from block 0, 1->2 from block 2's
        // in-flow, 1->3 from block 1 and 2->3 from block 2.
        let cfg = Cfg::from_edge_list(4, &[(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]).unwrap();
        let p = FunctionProfile::of(&cfg, &block_counts(10, vec![10, 6, 7, 10]));
        assert_eq!(p.edges[0], Some(6));
        assert_eq!(p.edges[1], Some(4));
        assert_eq!(p.edges[2], Some(3)); // block 2's in-flow 7 minus 4
        assert_eq!(p.edges[3], Some(3));
        assert_eq!(p.edges[4], Some(7));
        // A loop 0 -> 1 -> {1, 2} with two unknowns at each equation of 1.
        let cfg = Cfg::from_edge_list(3, &[(0, 1), (1, 1), (1, 2), (0, 2)]).unwrap();
        let p = FunctionProfile::of(&cfg, &block_counts(5, vec![5, 40, 5]));
        assert_eq!(p.edges, vec![None, None, None, None]);
        assert_eq!(p.successor_counts(&cfg, BlockId(1)), None);
    }

    #[test]
    fn weights_keep_their_ratios_in_32_bits() {
        assert_eq!(scale_to_u32(&[3, 1]), vec![3, 1]);
        let big = 1u64 << 40;
        let w = scale_to_u32(&[big, big / 4, 0]);
        assert!(w[0] > 1 << 30, "the largest keeps most of the 32 bits");
        assert_eq!(w[0] / w[1], 4);
        assert_eq!(w[2], 0);
        assert_eq!(
            scale_to_u32(&[u64::MAX, 1])[0],
            (u64::MAX / (u64::MAX / u64::from(u32::MAX) + 1)) as u32
        );
    }

    #[test]
    fn profiles_add_and_scale_saturating() {
        let mut a = FunctionProfile {
            entry: 1,
            blocks: vec![1, u64::MAX],
            edges: vec![Some(1), None],
            paths: Vec::new(),
        };
        let b = a.scaled(3);
        assert_eq!(b.blocks, vec![3, u64::MAX]);
        a.add(&b);
        assert_eq!(a.entry, 4);
        assert_eq!(a.edges, vec![Some(4), None]);
    }

    #[test]
    fn paths_add_by_path_and_are_dropped_beside_a_profile_without_them() {
        let path = |start, edges: &[u32], count| ProfiledPath {
            start,
            edges: edges.to_vec(),
            count,
        };
        let profile = |paths: Vec<ProfiledPath>| {
            FunctionProfile {
                entry: 5,
                blocks: vec![5, 5],
                edges: vec![Some(5)],
                paths: Vec::new(),
            }
            .with_paths(paths)
        };
        let mut a = profile(vec![path(0, &[0], 2), path(1, &[], 1), path(0, &[0], 2)]);
        assert_eq!(a.paths, vec![path(0, &[0], 4), path(1, &[], 1)]);
        a.add(&profile(vec![path(1, &[], 6)]).scaled(2));
        assert_eq!(a.paths, vec![path(0, &[0], 4), path(1, &[], 13)]);
        // An edge-mode run of the same function: which paths it took is not
        // known, so neither are the sum's.
        a.add(&profile(vec![]));
        assert!(a.paths.is_empty());
    }
}
