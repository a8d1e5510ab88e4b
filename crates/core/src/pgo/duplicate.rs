//! Path-guided tail duplication: superblocks along the hottest paths (Hwu et
//! al.'s superblocks, Young and Smith's path-based duplication, Ammons and
//! Larus' hot-path graph), formed where the path profile shows that the way
//! into a branch decides it, with every block's weights taken from the paths
//! through it.
//!
//! An edge profile gives each branch one ratio; where branches correlate, the
//! direction a branch takes depends on how control reached it, which only
//! the paths know. Copying the tail of a hot path from its first side
//! entrance (so that the trace is entered only at its head: a superblock)
//! gives the copies the counts of the executions that came that way and the
//! originals the rest. A tail is worth copying for the branches in it that
//! the way in decides (the copy's branch always goes one way: the optimiser
//! can lay it out straight, and fold it where the condition follows from
//! the trace), measured in branch decisions the weights mispredict (those not
//! taken the heavier way: `pathprof predict`'s measure) that the copy
//! removes; it is copied when they are at least [`Limits::min_gain`], only
//! as far as the last such branch, and within the budget. Never copied: the
//! entry, loop headers and path starts, and the latch of a loop with one
//! latch (a second latch costs the loop passes more than the copy gains:
//! measured on zlib's `longest_match`, 25% more instructions).
//!
//! The graph after duplication ([`Duplicated`]) keeps the original blocks
//! as they were numbered and appends the copies; each block says which
//! original it copies and where each of its successor slots goes. An
//! executed path (original blocks and edges) runs through it one way: from
//! its start block, never copied, each edge's slot leads on. Each slot's
//! count is the paths that take it, plus, on an original block, what of the
//! original edge's count no recorded path explains (a path lost to a kill),
//! so the counts of an original edge's images always add up to its count.
//!
//! Nothing here knows LLVM: `pathprof-llvm`'s `duplicate` says which blocks
//! can be copied and what each costs, and copies them as the [`Tail`]s say.

use super::edges::{FunctionProfile, ProfiledPath};
use crate::cfg::Cfg;
use crate::dag::backedges;
use crate::ids::EdgeId;

/// What a function's duplication may do.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Per block: the instructions a copy of it adds.
    pub sizes: Vec<u32>,
    /// Per block: whether its code can be copied at all (no exception pads,
    /// no token values, no calls that must not be duplicated...).
    pub copyable: Vec<bool>,
    /// The instructions all copies together may add.
    pub budget: u64,
    /// The smallest number of mispredicted branch decisions a tail must
    /// remove, at the branches the way in decides, to be copied.
    pub min_gain: u64,
    /// The most tails copied.
    pub max_tails: usize,
    /// The most paths followed as candidate traces (the hottest first).
    pub max_traces: usize,
}

/// One copied tail: `blocks` (of the graph as it was before this tail, in
/// trace order) are copied, `from`'s successor `slot` goes to the first
/// copy instead of `blocks[0]`, and the copy of `blocks[i]` takes
/// `slots[i]` to the copy of `blocks[i + 1]`; every other slot of a copy
/// goes where the copied block's goes (a later tail's copy of `from` goes
/// to the first copy too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    pub from: u32,
    pub slot: u32,
    pub blocks: Vec<u32>,
    pub slots: Vec<u32>,
}

/// A function's blocks after duplication, with their counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicated {
    /// Per block: the original block it is (a block below the CFG's
    /// `num_blocks`) or copies.
    pub origin: Vec<u32>,
    /// Per block, per successor slot: the block it goes to.
    pub targets: Vec<Vec<u32>>,
    /// Per block, per successor slot: how often it was taken.
    pub counts: Vec<Vec<u64>>,
    /// The tails copied, in the order they were.
    pub tails: Vec<Tail>,
    /// The instructions the copies add.
    pub added: u64,
    /// Mispredicted branch decisions before and after.
    pub mispredicted_before: u64,
    pub mispredicted_after: u64,
}

/// Why a function's paths cannot drive duplication.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    #[error("the profile has no paths, or some edge counts are unknown")]
    NoPaths,
    #[error("a path does not follow the function's edges")]
    PathOffGraph,
    #[error("the limits do not have one entry per block")]
    BadLimits,
}

/// The tails worth copying in a function with CFG `cfg` and path-mode
/// profile `profile`, within `limits`, and the graph and counts after
/// copying them (none copied: the CFG and its edge counts as they were).
pub fn plan(
    cfg: &Cfg,
    profile: &FunctionProfile,
    limits: &Limits,
) -> Result<Duplicated, PlanError> {
    let n = cfg.num_blocks();
    if limits.sizes.len() != n || limits.copyable.len() != n {
        return Err(PlanError::BadLimits);
    }
    let edge_counts: Vec<u64> = profile
        .edges
        .iter()
        .copied()
        .collect::<Option<_>>()
        .ok_or(PlanError::NoPaths)?;
    if profile.paths.is_empty() || !profile.fits(cfg) {
        return Err(PlanError::NoPaths);
    }
    let mut graph = Graph::of(cfg, &edge_counts);
    for p in &profile.paths {
        graph.walk(cfg, p).ok_or(PlanError::PathOffGraph)?;
    }
    // Never copied: the entry, loop headers (a copy would make the loop
    // irreducible) and every block a path starts at (its executions start
    // at the original, so the copies' counts are the paths').
    let mut copyable = limits.copyable.clone();
    copyable[cfg.entry().index()] = false;
    // Nor the latch of a loop with one latch: a copy would give it a
    // second, which costs the loop passes (rotation, unrolling,
    // vectorisation) more than the copy gains. A loop with many latches
    // (an interpreter's dispatch) has them merged already.
    let back: Vec<EdgeId> = backedges(cfg)
        .into_iter()
        .enumerate()
        .filter(|&(_, back)| back)
        .map(|(e, _)| EdgeId(e as u32))
        .collect();
    let mut latches = vec![0u32; cfg.num_blocks()];
    for &e in &back {
        latches[cfg.edge(e).to.index()] += 1;
    }
    for &e in &back {
        let edge = cfg.edge(e);
        copyable[edge.to.index()] = false;
        if latches[edge.to.index()] == 1 {
            copyable[edge.from.index()] = false;
        }
    }
    for p in &profile.paths {
        copyable[p.start as usize] = false;
    }
    let mut counts = graph.counts(cfg, &profile.paths);
    let before = total_mispredicted(&counts);
    let mut hottest: Vec<&ProfiledPath> = profile.paths.iter().collect();
    hottest.sort_by_key(|p| std::cmp::Reverse(p.count));
    hottest.truncate(limits.max_traces);
    let mut added = 0u64;
    for trace in hottest {
        if graph.tails.len() >= limits.max_tails || trace.count < limits.min_gain {
            break;
        }
        let Some(tail) = graph.best_tail(cfg, trace, &profile.paths, &counts, &copyable, limits)
        else {
            continue;
        };
        let cost: u64 = tail
            .blocks
            .iter()
            .map(|&b| u64::from(limits.sizes[graph.origin[b as usize] as usize]).max(1))
            .sum();
        if added + cost > limits.budget {
            continue;
        }
        added += cost;
        graph.copy(tail);
        counts = graph.counts(cfg, &profile.paths);
    }
    Ok(Duplicated {
        mispredicted_before: before,
        mispredicted_after: total_mispredicted(&counts),
        origin: graph.origin,
        targets: graph.targets,
        counts,
        tails: graph.tails,
        added,
    })
}

/// The graph being duplicated.
struct Graph {
    /// Per block: the original it copies.
    origin: Vec<u32>,
    /// Per block, per slot: the target.
    targets: Vec<Vec<u32>>,
    /// Per original block, per slot: the CFG edge.
    edge_of: Vec<Vec<EdgeId>>,
    /// Per CFG edge: its count.
    edge_counts: Vec<u64>,
    tails: Vec<Tail>,
}

/// One step of a path's run through the graph: a block and the slot it
/// leaves by.
type Step = (u32, u32);

/// A trace's run through the graph: its blocks, and the steps between them
/// (one fewer).
struct Trace<'a> {
    blocks: &'a [u32],
    steps: &'a [Step],
}

impl Graph {
    fn of(cfg: &Cfg, edge_counts: &[u64]) -> Self {
        let n = cfg.num_blocks();
        let mut edge_of: Vec<Vec<EdgeId>> = vec![Vec::new(); n];
        for b in cfg.blocks() {
            let mut slots: Vec<(u32, EdgeId)> = cfg
                .succs(b)
                .iter()
                .map(|&e| (cfg.edge(e).slot, e))
                .collect();
            slots.sort_unstable();
            edge_of[b.index()] = slots.into_iter().map(|(_, e)| e).collect();
        }
        let targets = edge_of
            .iter()
            .map(|es| es.iter().map(|&e| cfg.edge(e).to.0).collect())
            .collect();
        Graph {
            origin: (0..n as u32).collect(),
            targets,
            edge_of,
            edge_counts: edge_counts.to_vec(),
            tails: Vec::new(),
        }
    }

    /// The steps of `path` through the graph and the block it ends in;
    /// `None` when it leaves the CFG's edges.
    fn walk(&self, cfg: &Cfg, path: &ProfiledPath) -> Option<(Vec<Step>, u32)> {
        let mut at = path.start;
        if at as usize >= cfg.num_blocks() {
            return None;
        }
        let mut steps = Vec::with_capacity(path.edges.len());
        for &e in &path.edges {
            let edge = cfg.edges().get(e as usize)?;
            if edge.from.0 != self.origin[at as usize] {
                return None;
            }
            let next = *self.targets[at as usize].get(edge.slot as usize)?;
            steps.push((at, edge.slot));
            at = next;
        }
        Some((steps, at))
    }

    /// Per block, per slot: the paths that take it, and on an original
    /// block what of its edge's count the paths do not explain.
    fn counts(&self, cfg: &Cfg, paths: &[ProfiledPath]) -> Vec<Vec<u64>> {
        let mut counts: Vec<Vec<u64>> = self.targets.iter().map(|t| vec![0; t.len()]).collect();
        let mut explained = vec![0u64; self.edge_counts.len()];
        for p in paths {
            let (steps, _) = self.walk(cfg, p).expect("paths were checked");
            for (b, slot) in steps {
                let c = &mut counts[b as usize][slot as usize];
                *c = c.saturating_add(p.count);
                let e = self.edge_of[self.origin[b as usize] as usize][slot as usize];
                explained[e.index()] = explained[e.index()].saturating_add(p.count);
            }
        }
        for (b, es) in self.edge_of.iter().enumerate() {
            for (slot, e) in es.iter().enumerate() {
                let rest = self.edge_counts[e.index()].saturating_sub(explained[e.index()]);
                counts[b][slot] = counts[b][slot].saturating_add(rest);
            }
        }
        counts
    }

    /// Per block: how many slots lead to it.
    fn in_degrees(&self) -> Vec<u32> {
        let mut degrees = vec![0u32; self.targets.len()];
        for t in self.targets.iter().flatten() {
            degrees[*t as usize] += 1;
        }
        degrees
    }

    /// The tail of `trace` from its first side entrance (the superblock's
    /// tail), as long as removes the most mispredicted decisions at the
    /// branches the way in decides, if that is at least `limits.min_gain`.
    fn best_tail(
        &self,
        cfg: &Cfg,
        trace: &ProfiledPath,
        paths: &[ProfiledPath],
        counts: &[Vec<u64>],
        copyable: &[bool],
        limits: &Limits,
    ) -> Option<Tail> {
        let (steps, end) = self.walk(cfg, trace)?;
        let blocks: Vec<u32> = steps.iter().map(|s| s.0).chain([end]).collect();
        let degrees = self.in_degrees();
        let j = (1..blocks.len()).find(|&i| degrees[blocks[i] as usize] > 1)?;
        // Entered along the trace by an edge that can be moved (not an
        // `indirectbr`'s or an exception's).
        let (from, slot) = steps[j - 1];
        let entering = self.edge_of[self.origin[from as usize] as usize][slot as usize];
        if !cfg.edge(entering).splittable {
            return None;
        }
        let trace = Trace {
            blocks: &blocks,
            steps: &steps,
        };
        let (gain, tail) = self.tail_from(cfg, &trace, j, paths, counts, copyable)?;
        (gain >= limits.min_gain.max(1)).then_some(tail)
    }

    /// The tail of `trace` from its block `j` that removes the most
    /// mispredicted decisions at the branches the way in decides (those
    /// whose copy always goes one way: where the paths show the way in
    /// decides the branch, the optimiser may fold it in the copy), the
    /// shortest such, and how many it removes.
    fn tail_from(
        &self,
        cfg: &Cfg,
        trace: &Trace<'_>,
        j: usize,
        paths: &[ProfiledPath],
        counts: &[Vec<u64>],
        copyable: &[bool],
    ) -> Option<(u64, Tail)> {
        let (blocks, steps) = (trace.blocks, trace.steps);
        let last = (j..blocks.len())
            .take_while(|&i| copyable[self.origin[blocks[i] as usize] as usize])
            .last()?;
        // Per tail block: the slot counts of the executions that come along
        // the trace from blocks[j - 1] (the copy's counts).
        let mut along: Vec<Vec<u64>> = (j..=last)
            .map(|i| vec![0; self.targets[blocks[i] as usize].len()])
            .collect();
        for p in paths {
            let (p_steps, _) = self.walk(cfg, p).expect("paths were checked");
            let Some(at) = p_steps.iter().position(|s| *s == steps[j - 1]) else {
                continue;
            };
            for (k, step) in p_steps[at + 1..].iter().enumerate() {
                let i = j + k;
                if i > last || step.0 != blocks[i] {
                    break;
                }
                let c = &mut along[k][step.1 as usize];
                *c = c.saturating_add(p.count);
                if i == last || step.1 != steps[i].1 {
                    break;
                }
            }
        }
        let mut best = (0u64, j);
        let mut gain = 0i128;
        for (k, copy) in along.iter().enumerate() {
            let b = blocks[j + k] as usize;
            let rest: Vec<u64> = counts[b]
                .iter()
                .zip(copy)
                .map(|(all, c)| all.saturating_sub(*c))
                .collect();
            if mispredicted(copy) == 0 {
                gain += i128::from(mispredicted(&counts[b])) - i128::from(mispredicted(&rest));
            }
            if gain > best.0 as i128 {
                best = (gain as u64, j + k);
            }
        }
        if best.0 == 0 {
            return None;
        }
        let k = best.1;
        Some((
            best.0,
            Tail {
                from: blocks[j - 1],
                slot: steps[j - 1].1,
                blocks: blocks[j..=k].to_vec(),
                slots: steps[j..k].iter().map(|s| s.1).collect(),
            },
        ))
    }

    /// Copies `tail`'s blocks, as [`Tail`] says.
    fn copy(&mut self, tail: Tail) {
        let first = self.targets.len() as u32;
        for (i, &b) in tail.blocks.iter().enumerate() {
            let mut targets = self.targets[b as usize].clone();
            if let Some(&slot) = tail.slots.get(i) {
                targets[slot as usize] = first + i as u32 + 1;
            }
            self.origin.push(self.origin[b as usize]);
            self.targets.push(targets);
        }
        self.targets[tail.from as usize][tail.slot as usize] = first;
        self.tails.push(tail);
    }
}

/// Branch decisions not taken the heavier way, over every block's slot
/// counts.
fn total_mispredicted(counts: &[Vec<u64>]) -> u64 {
    counts.iter().map(|c| mispredicted(c)).sum()
}

/// Decisions of a branch with slot counts `counts` not taken the heavier
/// way.
fn mispredicted(counts: &[u64]) -> u64 {
    if counts.len() < 2 {
        return 0;
    }
    let max = counts.iter().copied().max().unwrap_or(0);
    counts.iter().copied().fold(0u64, u64::saturating_add) - max
}

#[cfg(test)]
mod tests;
